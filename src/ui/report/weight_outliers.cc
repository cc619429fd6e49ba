// The report's weight outliers per layer (intake --weight-stats): the share
// of weights beyond 6 sigma, the flagged layers and those kept in float.
#include "ui/report/sections.h"

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "plan/onnx_exclusions.h"

#include "common/strings.h"
#include "common/units.h"
#include "ui/report/report_parts.h"
#include "ui/svg.h"

namespace quarkplan::ui::report_detail {

namespace {

// Four significant digits ("0.01963", "9"), or "" when not a number.
std::string significant(const Json* j) {
  auto v = number(j);
  if (!v) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", *v);
  return buf;
}

}  // namespace

std::string weight_stats(const Json& plan, const Json& analysis) {
  std::string out = "<section id=\"outliers\">\n<h2>Weight outliers per layer</h2>\n";
  const Json* ws = get(analysis, "weight_stats");
  if (analysis.is_null()) return out + omitted("The analysis is not available, so there are no weight statistics to show.") + "</section>\n";
  if (!ws || !ws->is_object())
    return out + omitted("The analysis was made without --weight-stats, so there are no per-layer statistics; run quarkplan intake MODEL --weight-stats to add them.") +
           "</section>\n";
  const Json* mods = get(ws, "top_modules");
  if (!mods) mods = get(ws, "modules");
  if (!mods || !mods->is_array() || mods->empty())
    return out + omitted("The weight scan found no weights it could read (BF16, F16 or F32), so there is nothing to chart.") + "</section>\n";
  std::set<std::string> flagged;
  for (const auto& x : array_or_empty(get(ws, "outlier_modules")))
    if (x.is_string()) flagged.insert(x.get<std::string>());
  double threshold = number(get(ws, "outlier_max_over_std")).value_or(50);
  // ONNX plans keep outlier layers in float by node name (nodes_to_exclude).
  const NodeExclusions kept(array_or_empty(get(get(plan, "onnx_specific"), "nodes_to_exclude")));
  svg::BarChart c;
  c.id = "chart-outliers";
  c.title = "Share of weights beyond 6 standard deviations, per layer";
  std::vector<std::string> words;
  std::vector<std::vector<Cell>> rows;
  std::vector<std::string> classes;
  size_t shown = 0;
  for (const auto& m : *mods) {
    std::string name = str(get(m, "module"), str(get(m, "name"), "?"));
    double ratio = number(get(m, "outlier_ratio_6sigma")).value_or(number(get(m, "outlier_ratio")).value_or(0));
    double mos = number(get(m, "max_over_std")).value_or(0);
    bool flag = flagged.count(name) > 0, float_kept = kept.excludes(name);
    std::string op = str(get(m, "op_type"));
    if (shown++ < 30) {
      svg::Bar b;
      b.label = name + (op.empty() ? "" : " (" + op + ")");
      b.emphasis = flag;
      b.segments.push_back({ratio * 100, flag ? "hatch" : "main", name + ": " + fixed(ratio * 100, 4) + "% beyond 6 sigma"});
      b.value_text = fixed(ratio * 100, 4) + "%, max " + fixed(mos, 0) + " sigma" + (flag ? ", FLAGGED" : "") + (float_kept ? ", kept in float" : "");
      c.bars.push_back(b);
      words.push_back(name + " " + fixed(ratio * 100, 4) + "%" + (flag ? " (flagged)" : "") + (float_kept ? " (kept in float)" : ""));
    }
    rows.push_back({{"<code>" + e(name) + "</code>" + (flag ? " <span class=\"badge flagged\">flagged</span>" : "") +
                         (float_kept ? " <span class=\"badge excluded\">kept in float</span>" : ""),
                     name},
                    {e(op), op},
                    {fixed(ratio * 100, 4) + "%", fixed(ratio, 9)},
                    {fixed(mos, 1), fixed(mos, 3)},
                    {significant(get(m, "max_abs")), fixed(number(get(m, "max_abs")).value_or(0), 9)},
                    {significant(get(m, "std")), fixed(number(get(m, "std")).value_or(0), 9)}});
    classes.push_back(flag ? "flagged" : "");
  }
  c.legend = {{"main", "within bounds"}, {"hatch", "flagged: max beyond " + fixed(threshold, 0) + " sigma"}};
  c.desc = "Horizontal bars, one per layer, most extreme first: " + join(words, "; ") + ".";
  // How many were scanned and how many are listed (intake keeps the most
  // extreme ones), so a short list is not read as the whole model.
  auto scanned = count(get(ws, "tensors"));
  std::string listed = scanned && *scanned > mods->size()
                           ? "The scan read " + with_commas(*scanned) + " weight tensors; the " + with_commas(mods->size()) +
                                 " with the most extreme weights are listed here. "
                           : std::string();
  std::string verdict =
      flagged.empty()
          ? "No layer is flagged: no weight sits more than " + fixed(threshold, 0) + " standard deviations out, the point where a per-tensor scale's range is wasted."
          : with_commas(flagged.size()) + (flagged.size() == 1 ? " layer is" : " layers are") + " flagged: " + (flagged.size() == 1 ? "its" : "their") +
                " largest weight sits more than " + fixed(threshold, 0) +
                " standard deviations out, which wastes a per-tensor scale's range. Flagged layers are hatched and marked FLAGGED.";
  out += "<p>" + listed + verdict +
         [&] {
           size_t n = 0;
           for (const auto& m : *mods) n += kept.excludes(str(get(m, "module"), str(get(m, "name"))));
           return n ? " The plan keeps " + with_commas(n) + " of these layers in float (nodes_to_exclude)." : std::string();
         }() +
         "</p>\n";
  out += figure(svg::bar_chart(c), "Weight outliers per layer (the layers with the most extreme weights first): the bar is the share of weights beyond 6 sigma.");
  out += sortable_table("Weight statistics", {"Layer", "Op", "Beyond 6 sigma", "Max / std", "Max |w|", "Std"}, rows, classes);
  return out + "</section>\n";
}

}  // namespace quarkplan::ui::report_detail
