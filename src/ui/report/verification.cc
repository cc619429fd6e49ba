// The report's verification section (report PLAN --verify OUTPUT): every check
// verify ran with its result, the modules or nodes grouped by the promise the
// plan made about them (kept / broken), and where the exported bytes went
// against the plan's estimate.
#include <string>
#include <vector>

#include "common/strings.h"
#include "common/units.h"
#include "ui/report/report_parts.h"
#include "ui/report/sections.h"
#include "ui/svg.h"

namespace quarkplan::ui::report_detail {

namespace {
std::string names_cell(const Json* names) {
  const Json& a = array_or_empty(names);
  std::string s;
  const size_t shown = std::min<size_t>(a.size(), 6);
  for (size_t i = 0; i < shown; ++i) s += (i ? "<br>" : "") + std::string("<code>") + e(str(&a[i])) + "</code>";
  if (a.size() > shown) s += "<br>and " + std::to_string(a.size() - shown) + " more";
  return s.empty() ? "—" : s;
}
}  // namespace

std::string verification_section(const Json& v) {
  if (v.is_null()) return "";
  std::string out = "<section id=\"verification\">\n<h2>Export verification</h2>\n";
  const bool ok = truthy(get(v, "verified"));
  uint64_t broken = count(get(v, "broken_promises")).value_or(0);
  out += "<p><span class=\"status " + std::string(ok ? "confirmed" : "draft") + "\">" +
         (ok ? std::string("EVERY PROMISE KEPT") : std::to_string(broken) + " BROKEN PROMISE" + (broken == 1 ? "" : "S")) + "</span> " +
         "<code class=\"path\">" + e(str(get(v, "output"))) + "</code></p>\n";
  out += "<p>What <code>quarkplan verify</code> found when it read the export Quark wrote (headers and scale tensors only) and held it to this plan.</p>\n";

  std::vector<std::vector<Cell>> rows;
  std::vector<std::string> classes;
  for (const auto& c : array_or_empty(get(v, "checks"))) {
    std::string result = str(get(&c, "result"));
    std::string detail;
    for (const auto& f : array_or_empty(get(&c, "failures")))
      detail += "<div><code>" + e(str(get(&f, "subject"))) + "</code>: the plan says " + e(str(get(&f, "expected"))) + "; the export holds " +
                e(str(get(&f, "found"))) + "</div>";
    if (detail.empty() && result == "not checked") detail = e(str(get(&c, "not_checked_because")));
    rows.push_back({{"<code>" + e(str(get(&c, "id"))) + "</code>", str(get(&c, "id"))},
                    {e(str(get(&c, "promise"))), ""},
                    {e(result), result},
                    {with_commas(count(get(&c, "checked")).value_or(0)), std::to_string(count(get(&c, "checked")).value_or(0))},
                    {detail, ""}});
    classes.push_back(result == "broken" ? "broken" : result == "kept" ? "chosen" : "");
  }
  out += sortable_table("Checks", {"Check", "Promise", "Result", "Checked", "What broke"}, rows, classes);

  std::vector<std::vector<Cell>> groups;
  std::vector<std::string> gclasses;
  for (const auto& g : array_or_empty(get(v, "modules"))) {
    uint64_t k = count(get(&g, "kept")).value_or(0), b = count(get(&g, "broken")).value_or(0);
    groups.push_back({{e(str(get(&g, "promise"))), ""},
                      {with_commas(k), std::to_string(k)},
                      {with_commas(b), std::to_string(b)},
                      {names_cell(get(&g, "broken_names")), ""},
                      {names_cell(get(&g, "kept_names")), ""}});
    gclasses.push_back(b ? "broken" : "");
  }
  if (!groups.empty()) out += sortable_table("Modules and nodes by promise", {"Promise", "Kept", "Broken", "Broken ones", "Kept ones"}, groups, gclasses);

  const Json* size = get(v, "size");
  uint64_t exported = count(get(size, "exported_bytes")).value_or(0), estimated = count(get(size, "estimated_bytes")).value_or(0);
  if (exported) {
    svg::BarChart c;
    c.id = "chart-verify-bytes";
    c.title = "Exported bytes against the plan's estimate";
    svg::Bar est;
    est.label = "the plan's estimate";
    est.segments.push_back({static_cast<double>(estimated), "hatch", est.label});
    est.value_text = estimated ? format_bytes(estimated) : "no estimate";
    svg::Bar got;
    got.label = "the export";
    got.emphasis = true;
    std::vector<std::string> words;
    const char* kinds[] = {"main", "alt", "hatch", "muted"};
    size_t i = 0;
    uint64_t sum = 0;
    for (const auto& b : array_or_empty(get(size, "by_kind"))) {
      uint64_t bytes = count(get(&b, "bytes")).value_or(0);
      std::string label = str(get(&b, "label"));
      got.segments.push_back({static_cast<double>(bytes), kinds[std::min<size_t>(i, 3)], label});
      c.legend.push_back({kinds[std::min<size_t>(i, 3)], label});
      words.push_back(label + " " + format_bytes(bytes));
      sum += bytes;
      ++i;
    }
    if (got.segments.empty()) got.segments.push_back({static_cast<double>(exported), "main", "the export"});
    got.value_text = format_bytes(exported);
    c.bars = {est, got};
    c.desc = "Two horizontal bars: the plan's estimate " + est.value_text + "; the export " + format_bytes(exported) + (words.empty() ? "" : ", of which " + join(words, ", ")) + ".";
    out += figure(svg::bar_chart(c), "Where the exported bytes went, against the plan's estimate (tolerance " +
                                         fixed(number(get(size, "tolerance")).value_or(0) * 100, 0) + " %).");
  }
  for (const auto& n : array_or_empty(get(v, "notes"))) out += "<p class=\"sub\">" + e(str(&n)) + "</p>\n";
  return out + "</section>\n";
}

}  // namespace quarkplan::ui::report_detail
