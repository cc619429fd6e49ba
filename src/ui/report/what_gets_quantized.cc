// The report's "What gets quantized": a Torch plan's Linear modules per layer
// and kind; an ONNX plan's operators, weights, exclusions and subgraphs.
#include "ui/report/sections.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "catalog/catalog.h"
#include "common/strings.h"
#include "common/units.h"
#include "intake/module_names.h"
#include "plan/onnx_weights.h"
#include "ui/report/report_parts.h"
#include "ui/svg.h"

namespace quarkplan::ui::report_detail {

namespace {

// The first all-digit path component of a module name (its layer), or -1.
long layer_of(const std::string& name) {
  size_t start = 0;
  while (start <= name.size()) {
    size_t dot = name.find('.', start);
    if (dot == std::string::npos) dot = name.size();
    std::string part = name.substr(start, dot - start);
    if (!part.empty() && part.size() < 9 && part.find_first_not_of("0123456789") == std::string::npos) return std::stol(part);
    start = dot + 1;
  }
  return -1;
}

std::string kind_of(const std::string& name) {
  std::string out;
  size_t start = 0;
  while (start <= name.size()) {
    size_t dot = name.find('.', start);
    if (dot == std::string::npos) dot = name.size();
    std::string part = name.substr(start, dot - start);
    bool digits = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
    out += (out.empty() ? "" : ".") + (digits ? std::string("*") : part);
    start = dot + 1;
  }
  return out;
}

// How many names a collapsed module name ("layers.{0..31}.q_proj") stands
// for; nullopt when its ranges are malformed. Checked before expanding, so a
// hostile analysis cannot make the page (or its memory) unbounded.
std::optional<uint64_t> expanded_count(const std::string& c) {
  uint64_t n = 1;
  for (size_t open = c.find('{'); open != std::string::npos; open = c.find('{', open + 1)) {
    size_t dots = c.find("..", open), close = c.find('}', open);
    if (dots == std::string::npos || close == std::string::npos || dots > close) return n;  // no more ranges
    std::string lo = c.substr(open + 1, dots - open - 1), hi = c.substr(dots + 2, close - dots - 2);
    auto digits = [](const std::string& x) { return !x.empty() && x.size() <= 9 && x.find_first_not_of("0123456789") == std::string::npos; };
    if (!digits(lo) || !digits(hi) || std::stoul(lo) > std::stoul(hi)) return std::nullopt;
    n *= std::stoul(hi) - std::stoul(lo) + 1;
    if (n > 10000000) return std::nullopt;
  }
  return n;
}

}  // namespace

std::string torch_layers(const Json& plan, const Json& analysis, const std::string& catalog_dir) {
  std::string out = "<section id=\"layers\">\n<h2>What gets quantized</h2>\n";
  const Json* q = get(analysis, "quantization_targets");
  const Json& names = array_or_empty(get(q, "module_names"));
  if (analysis.is_null()) return out + omitted("The analysis is not available, so the model's modules cannot be shown.") + "</section>\n";
  if (names.empty())
    return out + omitted("The analysis lists no module names (it was made without them), so the quantized, excluded and overridden layers cannot be shown.") +
           "</section>\n";
  const Json& shapes = array_or_empty(get(q, "module_shapes"));
  std::vector<QuarkPattern> excl;
  std::vector<std::string> excl_text;
  const PatternMatch how = Catalog::for_plan(plan, catalog_dir).exclude_covers_children() ? PatternMatch::kWithChildren : PatternMatch::kVerbatim;
  for (const auto& p : array_or_empty(get(plan, "exclude_layers")))
    if (p.is_string()) excl.emplace_back(p.get<std::string>(), how), excl_text.push_back(p.get<std::string>());
  std::vector<std::pair<QuarkPattern, std::string>> overrides;
  if (auto lqc = get(plan, "layer_quant_config"); lqc && lqc->is_object())
    for (auto& [pat, sch] : lqc->items())
      if (sch.is_string()) overrides.emplace_back(QuarkPattern(pat, PatternMatch::kVerbatim), sch.get<std::string>());
  std::string global = str(get(plan, "global_scheme"));
  struct Group {
    std::string kind, status, detail;
    uint64_t modules = 0, params = 0;
  };
  std::map<std::tuple<std::string, std::string, std::string>, Group> groups;
  std::map<long, std::array<uint64_t, 3>> per_layer;  // quantized, overridden, excluded
  uint64_t totals[3] = {0, 0, 0};
  bool have_params = false;
  size_t expanded_total = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!names[i].is_string()) continue;
    uint64_t params = 0;
    if (i < shapes.size() && shapes[i].is_array() && !shapes[i].empty()) params = count(&shapes[i][0]).value_or(0);
    auto n_names = expanded_count(names[i].get<std::string>());
    if (!n_names || expanded_total + *n_names > 2000000) continue;  // malformed or unbounded: left out
    expanded_total += *n_names;
    have_params = have_params || params > 0;
    std::vector<std::string> expanded = expand_module_names({names[i].get<std::string>()});
    for (const auto& n : expanded) {
      int status = 0;
      std::string detail = global.empty() ? "no scheme chosen yet" : global;
      for (size_t k = 0; k < excl.size(); ++k)
        if (excl[k].matches(n)) {
          status = 2;
          detail = excl_text[k];
          break;
        }
      if (status == 0)
        for (const auto& [p, sch] : overrides)
          if (p.matches(n)) status = 1, detail = sch;
      uint64_t weight = params ? params : 1;
      auto& g = groups[{kind_of(n), status == 0 ? "quantized" : status == 1 ? "overridden" : "excluded", detail}];
      g.kind = kind_of(n);
      g.status = status == 0 ? "quantized" : status == 1 ? "overridden" : "excluded";
      g.detail = detail;
      ++g.modules;
      g.params += params;
      per_layer[layer_of(n)][static_cast<size_t>(status)] += weight;
      totals[status] += weight;
    }
  }
  const char* unit = have_params ? "parameters" : "modules";
  uint64_t all = totals[0] + totals[1] + totals[2];
  auto share = [&](uint64_t v) { return all ? fixed(100.0 * static_cast<double>(v) / static_cast<double>(all), 1) + "%" : "0%"; };
  auto amount = [&](uint64_t v) { return have_params ? format_params(v) + " parameters" : with_commas(v) + " modules"; };
  out += "<p>Linear modules only (embeddings and norms are never quantized): " + e(amount(totals[0])) + " quantized with <code>" +
         e(global.empty() ? "no scheme yet" : global) + "</code> (" + share(totals[0]) + "), " + e(amount(totals[1])) + " given their own scheme (" +
         share(totals[1]) + "), " + e(amount(totals[2])) + " excluded (" + share(totals[2]) + ").</p>\n";
  // Per-layer strip.
  svg::ColumnChart cc;
  cc.id = "chart-layers";
  cc.title = std::string("Linear ") + unit + " per layer, by what the plan does with them";
  std::vector<std::string> words;
  std::vector<std::pair<long, std::array<uint64_t, 3>>> ordered;
  for (const auto& [layer, v] : per_layer)
    if (layer >= 0) ordered.emplace_back(layer, v);
  if (per_layer.count(-1)) ordered.emplace_back(-1, per_layer[-1]);  // lm_head and the like, last
  for (const auto& [layer, v] : ordered) {
    svg::Column col;
    col.label = layer < 0 ? "other" : std::to_string(layer);
    std::string where = layer < 0 ? "outside the numbered layers" : "layer " + std::to_string(layer);
    col.segments = {{static_cast<double>(v[0]), "main", where + ": " + amount(v[0]) + " quantized"},
                    {static_cast<double>(v[1]), "alt", where + ": " + amount(v[1]) + " overridden"},
                    {static_cast<double>(v[2]), "hatch", where + ": " + amount(v[2]) + " excluded"}};
    cc.columns.push_back(col);
  }
  cc.legend = {{"main", "quantized (" + (global.empty() ? std::string("global scheme") : global) + ")"}, {"alt", "own scheme (layer_quant_config)"},
               {"hatch", "excluded (full precision)"}};
  cc.axis_label = std::string("Layer index (\"other\": modules outside the numbered layers, such as lm_head); height: ") + unit + ".";
  cc.desc = "Stacked columns, one per layer. Totals: " + amount(totals[0]) + " quantized, " + amount(totals[1]) + " with their own scheme, " +
            amount(totals[2]) + " excluded.";
  out += figure(svg::column_chart(cc), "Per layer: solid is quantized with the global scheme, dotted has its own scheme, hatched stays in full precision.");
  // Per module kind.
  std::vector<Group> list;
  for (auto& [k, g] : groups) list.push_back(g);
  std::stable_sort(list.begin(), list.end(), [&](const Group& a, const Group& b) { return (have_params ? a.params > b.params : a.modules > b.modules); });
  std::vector<std::vector<Cell>> rows;
  std::vector<std::string> classes;
  for (const auto& g : list) {
    uint64_t v = have_params ? g.params : g.modules;
    std::string status = g.status == "quantized" ? "with " + g.detail : g.status == "overridden" ? "with its own scheme " + g.detail : "by the pattern " + g.detail;
    rows.push_back({{"<code>" + e(g.kind) + "</code>", g.kind},
                    {with_commas(g.modules), std::to_string(g.modules)},
                    {have_params ? e(format_params(g.params)) : "", std::to_string(g.params)},
                    {share(v), std::to_string(v)},
                    {"<span class=\"badge " + g.status + "\">" + e(g.status) + "</span> " + e(status), g.status}});
    classes.push_back(g.status);
  }
  out += sortable_table("Module kinds (layer indices shown as *)", {"Module kind", "Modules", "Parameters", "Share", "What the plan does"}, rows, classes);
  return out + "</section>\n";
}

std::string onnx_ops(const Json& plan, const Json& analysis, const std::string& catalog_dir) {
  std::string out = "<section id=\"layers\">\n<h2>What gets quantized</h2>\n";
  if (analysis.is_null()) return out + omitted("The analysis is not available, so the model's operators cannot be shown.") + "</section>\n";
  const Json* qo = get(get(analysis, "quantization_targets"), "onnx_specific");
  const Json* ops = get(qo, "op_counts");
  const Json* spec = get(plan, "onnx_specific");
  const Catalog& cat = Catalog::for_plan(plan, catalog_dir);
  std::string preset = str(get(plan, "preset"));
  const Json* pj = preset.empty() ? nullptr : cat.onnx_preset(preset);
  // The weights the preset's quantizer takes (catalog preset_op_sets), from
  // the analysis' weights per op type: main graph and If/Loop/Scan bodies.
  std::optional<PresetWeights> pw;
  if (const Json* wbo = get(get(analysis, "quantization_targets"), "weights_by_op_type"); pj && wbo && wbo->is_object()) {
    bool shaped = true;
    for (auto& [op, x] : wbo->items()) shaped = shaped && x.is_object();
    try {
      if (shaped) pw = preset_weights(analysis, cat, *pj);
    } catch (const Json::exception&) {
      pw.reset();  // counts of another type: say nothing rather than guess
    }
    if (pw && !pw->known) pw.reset();
  }
  // The op types the plan quantizes: its own list, else the preset's kind.
  std::set<std::string> quantized;
  std::string why;
  if (auto list = get(spec, "op_types_to_quantize"); list && list->is_array()) {
    for (const auto& x : *list)
      if (x.is_string()) quantized.insert(x.get<std::string>());
    why = "the plan's op_types_to_quantize";
  } else {
    // A weights-only preset quantizes exactly its op set's weights.
    bool weights_only = pj && !(*pj)["activation_type"].is_string();
    const Json& sets = cat.onnx()["preset_op_sets"];
    std::string op_set = pj ? pj->value("op_set", "static") : "static";
    const Json& pool = weights_only && sets.contains(op_set) ? sets[op_set]["ops"] : cat.onnx()["quantizable_op_types"];
    for (const auto& x : pool) quantized.insert(x.get<std::string>());
    why = preset.empty() ? "the op types Quark's QDQ presets quantize (no preset chosen yet)"
                         : std::string(weights_only ? "the weighted op types " : "the op types ") + preset + " quantizes";
  }
  if (!ops || !ops->is_object() || ops->empty()) {
    out += omitted("The analysis has no op histogram, so the operators cannot be charted.");
  } else {
    std::vector<std::pair<std::string, uint64_t>> sorted;
    for (auto& [op, n] : ops->items()) sorted.emplace_back(op, count(&n).value_or(0));
    std::stable_sort(sorted.begin(), sorted.end(), [](auto& a, auto& b) { return a.second > b.second; });
    const Json* wbo = get(get(analysis, "quantization_targets"), "weights_by_op_type");
    svg::BarChart c;
    c.id = "chart-ops";
    c.title = "Operators in the graph, by count";
    std::vector<std::string> words;
    std::vector<std::vector<Cell>> rows;
    std::vector<std::string> classes;
    uint64_t rest_types = 0, rest_nodes = 0;
    for (size_t i = 0; i < sorted.size(); ++i) {
      const auto& [op, n] = sorted[i];
      bool q = quantized.count(op) > 0;
      std::string weights;
      if (auto wp = count(get(get(wbo, op), "weight_params")); wp && *wp) {
        weights = format_params(*wp) + " weights";
        if (auto sub = count(get(get(wbo, op), "weight_params_in_subgraphs")); sub && *sub)
          weights += *sub >= *wp ? " (all in subgraphs)" : " (" + format_params(*sub) + " in subgraphs)";
      }
      if (i < 24) {
        svg::Bar b;
        b.label = op + (q ? " (quantized)" : "");
        b.emphasis = q;
        std::string nodes = with_commas(n) + (n == 1 ? " node" : " nodes");
        b.segments.push_back({static_cast<double>(n), q ? "main" : "muted", op + ": " + nodes});
        b.value_text = nodes + (weights.empty() ? "" : ", " + weights);
        c.bars.push_back(b);
        words.push_back(op + " " + with_commas(n) + (q ? " (quantized)" : ""));
      } else {
        ++rest_types;
        rest_nodes += n;
      }
      rows.push_back({{"<code>" + e(op) + "</code>", op},
                      {with_commas(n), std::to_string(n)},
                      {e(weights), std::to_string(count(get(get(wbo, op), "weight_params")).value_or(0))},
                      {q ? "<span class=\"badge quantized\">quantized</span>" : "stays float", q ? "1" : "0"}});
      classes.push_back(q ? "quantized" : "");
    }
    c.legend = {{"main", "quantized by the plan"}, {"muted", "stays in float"}};
    c.desc = "Horizontal bars, one per operator type: " + join(words, "; ") + ".";
    out += "<p>Highlighted: " + e(why) + ".</p>\n";
    // Node by node when the analysis has them: the plan's op types and
    // exclusions applied, as the estimate counts them.
    std::optional<PlanWeights> nw;
    bool into_subgraphs = false;
    if (pj && spec) {
      try {
        const Json* es = get(get(spec, "extra_options"), "EnableSubgraph");
        bool on = es && es->is_boolean() && es->get<bool>(), off = es && es->is_boolean() && !es->get<bool>();
        into_subgraphs = on || (!off && pw && pw->only_in_subgraphs()) || (pw && pw->recurses_into_subgraphs);
        PlanWeights w = plan_weights(analysis, cat, *pj, spec->value("op_types_to_quantize", Json()), spec->value("nodes_to_exclude", Json()),
                                     into_subgraphs, spec->value("op_types_to_exclude", Json()));
        if (w.known) nw = w;
      } catch (const Json::exception&) {
        nw.reset();
      }
    }
    if (nw) {
      std::vector<std::string> kept;
      if (nw->other_type_nodes)
        kept.push_back(format_params(nw->other_type_params) + " in " + with_commas(nw->other_type_nodes) + (nw->other_type_nodes == 1 ? " node" : " nodes") +
                       " outside op_types_to_quantize");
      if (nw->excluded_nodes)
        kept.push_back(format_params(nw->excluded_params) + " in " + with_commas(nw->excluded_nodes) + (nw->excluded_nodes == 1 ? " excluded node" : " excluded nodes"));
      if (pw && pw->sub_params && !into_subgraphs)
        kept.push_back(format_params(pw->sub_params) + " in " + with_commas(pw->sub_nodes) + (pw->sub_nodes == 1 ? " node" : " nodes") +
                       " inside If/Loop/Scan bodies");
      out += "<p>" + e(preset) + " quantizes " + e(pw ? pw->label : std::string("its op types")) + ": " +
             (nw->params ? e(format_params(nw->params)) + " weights in " + with_commas(nw->nodes) + (nw->nodes == 1 ? " node" : " nodes")
                         : std::string("none of this model's weights")) +
             (kept.empty() ? std::string() : "; kept in float: " + e(join(kept, ", "))) + ".</p>\n";
    } else if (pw) {
      uint64_t params = pw->main_params + pw->sub_params, nodes = pw->main_nodes + pw->sub_nodes;
      out += "<p>" + e(preset) + " quantizes " + e(pw->label) + ": " +
             (params ? e(format_params(params)) + " weights in " + with_commas(nodes) + (nodes == 1 ? " node" : " nodes") +
                           (pw->sub_params ? (pw->main_params ? ", " + e(format_params(pw->sub_params)) + " of them" : ", all of them") +
                                                 std::string(" inside If/Loop/Scan bodies")
                                           : std::string())
                     : std::string("this model holds none of them")) +
             ".</p>\n";
    }
    out += figure(svg::bar_chart(c), "Operator histogram (all graphs, subgraphs included); solid bars are quantized." +
                                         (rest_types ? " Not drawn: " + std::to_string(rest_types) + (rest_types == 1 ? " more op type with " : " more op types with ") + with_commas(rest_nodes) + " nodes (see the table)." : std::string()));
    out += sortable_table("Operators", {"Op type", "Nodes", "Weights", "Quantized"}, rows, classes);
  }
  // Exclusions.
  std::vector<std::string> items;
  auto names = [&](const char* key) {
    std::vector<std::string> v;
    for (const auto& x : array_or_empty(get(spec, key)))
      if (x.is_string()) v.push_back(x.get<std::string>());
    return v;
  };
  if (auto v = names("nodes_to_exclude"); !v.empty()) {
    std::string li;
    for (const auto& n : v) li += "<li><code>" + e(n) + "</code></li>";
    items.push_back("<h3>Nodes kept in float (" + std::to_string(v.size()) + ")</h3><ul class=\"nodes\">" + li + "</ul>");
  }
  if (auto v = names("nodes_to_quantize"); !v.empty()) {
    std::string li;
    for (const auto& n : v) li += "<li><code>" + e(n) + "</code></li>";
    items.push_back("<h3>Only these nodes are quantized (" + std::to_string(v.size()) + ")</h3><ul class=\"nodes\">" + li + "</ul>");
  }
  const Json& sg = array_or_empty(get(spec, "subgraphs_to_exclude"));
  if (!sg.empty()) {
    std::string li;
    for (const auto& pair : sg) {
      auto side = [&](size_t k) {
        std::vector<std::string> v;
        if (pair.is_array() && pair.size() > k)
          for (const auto& x : array_or_empty(&pair[k]))
            if (x.is_string()) v.push_back(x.get<std::string>());
        return e(join(v));
      };
      li += "<li>from <code>" + side(0) + "</code> to <code>" + side(1) + "</code></li>";
    }
    items.push_back("<h3>Subgraphs kept in float (" + std::to_string(sg.size()) + ")</h3><ul class=\"nodes\">" + li + "</ul>");
  }
  if (items.empty()) out += "<p>No nodes or subgraphs are excluded: every node of a quantized op type is quantized.</p>\n";
  for (const auto& i : items) out += i + "\n";
  if (auto sgc = count(get(get(get(analysis, "model"), "onnx_specific"), "subgraph_count")); sgc && *sgc) {
    bool on = truthy(get(get(spec, "extra_options"), "EnableSubgraph"));
    std::string text = "The graph holds " + with_commas(*sgc) + " subgraphs (If/Loop/Scan)";
    if (!pw) {
      text += std::string(": their ops ") + (on ? "are quantized too (EnableSubgraph)." : "stay in float unless EnableSubgraph is set.");
    } else if (pw->sub_params == 0) {
      text += "; none of the weights " + preset + " quantizes sits in them.";
    } else {
      text += ": " + format_params(pw->sub_params) + " of the weights " + preset + " quantizes (" + with_commas(pw->sub_nodes) +
              (pw->sub_nodes == 1 ? " node" : " nodes") + (pw->main_params ? "" : ", all of them") + ") sit in them";
      if (pw->recurses_into_subgraphs) text += " and are quantized too: Quark's MatMulNBits quantizer walks If/Loop bodies by itself.";
      else if (on) text += " and are quantized too (EnableSubgraph).";
      else text += std::string(" and stay in float unless EnableSubgraph is set") + (pw->main_params ? "." : ", so the plan quantizes no weight.");
    }
    out += "<p>" + e(text) + "</p>\n";
  }
  return out + "</section>\n";
}

}  // namespace quarkplan::ui::report_detail
