// The report page's own style (light, dark and print) and script (copy
// buttons, sortable tables): inline, since the page loads nothing.
#include "ui/report/sections.h"

namespace quarkplan::ui::report_detail {

const char* kStyle = R"CSS(
:root{--bg:#ffffff;--fg:#1c2128;--muted:#57606a;--line:#d0d7de;--card:#f6f8fa;--link:#0550ae;
--c-main:#b3262d;--c-muted:#aab4be;--c-alt:#f3c1c4;--c-hatch:#ffffff;--c-cross:#fde7b0;
--high:#a40e26;--med:#7d4e00;--low:#57606a;--user:#0b5cad;color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--bg:#0f1419;--fg:#e6edf3;--muted:#9aa5b1;--line:#3b434b;--card:#171d24;--link:#79b8ff;
--c-main:#ff6b6b;--c-muted:#59636e;--c-alt:#6b2d33;--c-hatch:#0f1419;--c-cross:#5a4a1a;--high:#ff8182;--med:#e3b341;--low:#9aa5b1;--user:#79b8ff}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0 auto;max-width:76rem;padding:1rem;background:var(--bg);color:var(--fg);
font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
h1,p,dd,li,figcaption,blockquote,.path{overflow-wrap:anywhere}
h1{font-size:1.6rem;margin:.2rem 0}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid var(--line);padding-bottom:.2rem}
h3{font-size:1.05rem}h4{font-size:.95rem;margin:.8rem 0 .2rem}
a{color:var(--link)}code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.88em}
.status{display:inline-block;padding:.1rem .5rem;border:2px solid currentColor;border-radius:.3rem;font-weight:700}
.status.draft{color:var(--med)}.status.confirmed{color:var(--fg)}
.sub{color:var(--muted);margin:.2rem 0}
nav ul{display:flex;flex-wrap:wrap;gap:.3rem 1rem;padding:0;margin:.6rem 0;list-style:none}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(11.5rem,1fr));gap:.6rem;margin:1rem 0}
.card{background:var(--card);border:1px solid var(--line);border-radius:.4rem;padding:.5rem .7rem}
.card .k{color:var(--muted);font-size:.8rem}.card .v{font-weight:600;overflow-wrap:anywhere}.card{min-width:0}
.banner{border:2px solid var(--med);border-radius:.4rem;padding:.5rem .8rem;margin:1rem 0}
dl.facts{display:grid;grid-template-columns:repeat(auto-fit,minmax(18rem,1fr));gap:.2rem 1.5rem;margin:.5rem 0}
dl.facts div.wide{grid-column:1/-1}
dl.facts div{display:flex;gap:.6rem;border-bottom:1px dotted var(--line);padding:.15rem 0}
dl.facts dt{color:var(--muted);min-width:8.5rem;flex:0 0 auto}dl.facts dd{margin:0;min-width:0}
.scroll{overflow-x:auto;max-width:100%;margin:.6rem 0}
.scroll td:last-child{min-width:14rem}
table{border-collapse:collapse;width:100%}caption{text-align:left;font-weight:600;padding:.3rem 0}
th,td{border:1px solid var(--line);padding:.3rem .5rem;text-align:left;vertical-align:top}
thead th{background:var(--card)}td.num{white-space:nowrap}
table.decisions{min-width:40rem}table.decisions th[scope=row]{font-weight:400;white-space:nowrap}
table.decisions td:nth-child(2){min-width:9rem;max-width:22rem}
td code{overflow-wrap:normal;word-break:normal}
tr.user th[scope=row]{border-left:4px solid var(--user)}
tr.broken td:first-child{border-left:4px solid var(--high)}tr.broken td:nth-child(3){color:var(--high);font-weight:700}
.badge{display:inline-block;font-size:.75rem;border:1px solid currentColor;border-radius:.7rem;padding:0 .45rem;white-space:nowrap}
.badge.user{color:var(--user)}.badge.flagged{color:var(--high);font-weight:700}.badge.excluded{color:var(--muted)}
button.sort{all:unset;cursor:pointer;font-weight:600}button.sort::after{content:" \2195";color:var(--muted)}
th[aria-sort=ascending] button.sort::after{content:" \2191"}th[aria-sort=descending] button.sort::after{content:" \2193"}
button.sort:focus-visible,button.copy:focus-visible{outline:2px solid var(--link);outline-offset:2px}
ul.risks{padding-left:0;list-style:none}ul.risks li{margin:.4rem 0;padding-left:.6rem;border-left:4px solid var(--line)}
.sev{font-weight:700;font-size:.8rem;margin-right:.3rem}
li.sev-high{border-left-color:var(--high)!important}li.sev-high .sev{color:var(--high)}
li.sev-medium{border-left-color:var(--med)!important}li.sev-medium .sev{color:var(--med)}
li.sev-low .sev{color:var(--low)}li.sev-handled .sev{color:var(--low)}.hint{color:var(--muted)}
.rule{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85em}
.omitted{color:var(--muted);font-style:italic;border-left:4px solid var(--line);padding-left:.6rem}
.verdict.nofit strong{color:var(--high)}
figure{margin:1rem 0}figcaption{color:var(--muted);font-size:.85rem}
svg.chart{width:100%;height:auto;display:block;max-width:60rem}
svg text{fill:var(--fg);font:12px system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif}
svg text.strong{font-weight:700}svg text.value,svg text.tick,svg text.legend,svg text.marker-label{font-size:11px}
svg text.marker-label{fill:var(--muted)}
svg text.marker-label{paint-order:stroke;stroke:var(--bg);stroke-width:3px;stroke-linejoin:round}.backdrop{fill:var(--bg)}
.seg-main{fill:var(--c-main)}.seg-muted{fill:var(--c-muted)}
.pat-bg-alt{fill:var(--c-alt)}.pat-bg-hatch{fill:var(--c-hatch)}.pat-bg-cross{fill:var(--c-cross)}
.pat-fg{fill:var(--fg)}.pat-line{stroke:var(--fg);stroke-width:1.4;fill:none}
.outline{fill:none;stroke:var(--fg);stroke-width:.6}.marker{stroke:var(--fg);stroke-width:1.2;stroke-dasharray:5 3}.axis{stroke:var(--line)}
.code{position:relative}pre{background:var(--card);border:1px solid var(--line);border-radius:.4rem;padding:.7rem;overflow-x:auto;white-space:pre}
button.copy{position:absolute;right:.4rem;top:.4rem;font:inherit;font-size:.8rem;padding:.15rem .6rem;border:1px solid var(--line);border-radius:.3rem;
background:var(--bg);color:var(--fg);cursor:pointer}
article.ruledoc{border-top:1px solid var(--line);padding-top:.3rem}article.ruledoc:target{outline:2px solid var(--link);outline-offset:4px}
.purpose{font-style:italic}blockquote{margin:.4rem 0;padding-left:.7rem;border-left:3px solid var(--line);color:var(--muted)}
footer{margin-top:2rem;color:var(--muted);font-size:.85rem;border-top:1px solid var(--line);padding-top:.5rem}
@media print{:root{--bg:#fff;--fg:#000;--muted:#333;--line:#999;--card:#fff;--c-main:#555;--c-muted:#ccc;--c-alt:#ddd;--c-hatch:#fff;--c-cross:#eee}
body{max-width:none;font-size:11pt}nav,button.copy{display:none}.scroll{overflow:visible}pre{white-space:pre-wrap}
section,figure,tr,li,article{break-inside:avoid}h2{break-after:avoid}a{color:inherit;text-decoration:none}details{display:block}details>*{display:block}}
)CSS";

const char* kScript = R"JS(
(function(){
function fallbackCopy(text,done){var a=document.createElement('textarea');a.value=text;a.setAttribute('readonly','');
a.style.position='fixed';a.style.top='0';a.style.opacity='0';document.body.appendChild(a);a.select();
try{if(document.execCommand('copy'))done();}catch(e){}document.body.removeChild(a);}
document.querySelectorAll('button.copy').forEach(function(b){b.addEventListener('click',function(){
var el=document.getElementById(b.getAttribute('data-copy'));if(!el)return;var text=el.textContent;
var done=function(){b.textContent='Copied';setTimeout(function(){b.textContent='Copy';},1500);};
if(navigator.clipboard&&window.isSecureContext){navigator.clipboard.writeText(text).then(done,function(){fallbackCopy(text,done);});}
else{fallbackCopy(text,done);}});});
document.querySelectorAll('table.sortable').forEach(function(t){var heads=t.querySelectorAll('thead th');
heads.forEach(function(th,i){var btn=th.querySelector('button.sort');if(!btn)return;btn.addEventListener('click',function(){
var asc=th.getAttribute('aria-sort')!=='ascending';heads.forEach(function(h){h.setAttribute('aria-sort','none');});
th.setAttribute('aria-sort',asc?'ascending':'descending');var body=t.tBodies[0];var rows=Array.prototype.slice.call(body.rows);
var key=function(r){var c=r.cells[i];if(!c)return '';var s=c.getAttribute('data-sort');return s!==null?s:c.textContent.trim();};
var numeric=rows.every(function(r){var k=key(r);return k===''||!isNaN(parseFloat(k))&&isFinite(k);});
rows.sort(function(a,b){var x=key(a),y=key(b);var d=numeric?(parseFloat(x||0)-parseFloat(y||0)):x.localeCompare(y);return asc?d:-d;});
rows.forEach(function(r){body.appendChild(r);});});});});
})();
)JS";

}  // namespace quarkplan::ui::report_detail
