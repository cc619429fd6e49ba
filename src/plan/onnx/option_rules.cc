// ONNX options: the onnx_specific settings and extra options, and the execution providers —
// onnx.external_data.over_2gb, onnx.nodes.check, onnx.op_types.check, onnx.opset.upgrade, onnx.fp16.convert,
// onnx.subgraphs, onnx.extra_options.check, onnx.execution_providers.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "common/strings.h"
#include "plan/fix_shapes.h"
#include "plan/onnx/rule_helpers.h"
#include "plan/onnx_exclusions.h"
#include "plan/onnx_weights.h"
#include "plan/rules.h"

namespace quarkplan::onnx_rules {

using detail::onnx_facts;
using detail::target;
using detail::preset;
using detail::spec;

void external_data(PlanState& s) {
  double gb = s.analysis["model"]["estimated_size_gb"].get<double>();
  bool want = gb > 2.0;
  if (const Json* c = s.choice("onnx_specific.use_external_data_format"); c && c->is_boolean() && c->get<bool>() != want) {
    if (want)
      s.conflict("onnx.external_data.over_2gb", "onnx_specific.use_external_data_format",
                 "The model is " + std::to_string(gb) + " GB: protobuf cannot hold more than 2 GB, so the quantized model must use external data.",
                 "use_external_data_format=true");
    else
      s.risk("onnx.external_data.over_2gb", "low", "External data chosen for a model under 2 GB: an extra .onnx_data file to ship.", "Keep it false unless your runtime needs it.");
    spec(s)["use_external_data_format"] = c->get<bool>();
    s.reason("onnx_specific.use_external_data_format", "onnx.external_data.over_2gb", "Your choice");
    return;
  }
  spec(s)["use_external_data_format"] = want;
  s.reason("onnx_specific.use_external_data_format", "onnx.external_data.over_2gb",
           want ? "Model is over 2 GB: the output needs external data" : "Model is under 2 GB");
}

// Quark's closure check of subgraphs_to_exclude (quant_utils.match_subgraphs), walked as Quark walks
// it on the analysis' main-graph edges: from each end node back through its inputs in order,
// stopping at a start node; a branch that meets a graph input first makes Quark raise ValueError
// ("... ensuring that its start and end nodes form a closed subgraph"), and an end node outside the
// main graph is a KeyError. The walk keeps Quark's quirks: one visited set over all pairs, and a node's
// remaining inputs are skipped once one is a graph input, already visited, or a start node's output.
// Quark lists initializers given as graph inputs among the inputs too; the analysis leaves those out.
std::string subgraph_closure_problem(const Json& facts, const std::vector<std::string>& names, const Json& pairs) {
  const Json g = facts.value("main_graph", Json(nullptr));
  if (!g.is_object()) return "";
  const Json& nodes = g["nodes"];
  const Json& inputs = g["inputs"];
  const Json& producers = g["tensor_producers"];
  std::map<std::string, size_t> main_by_name;
  for (size_t k = 0; k < nodes.size(); ++k)
    if (const int64_t at = nodes[k].get<int64_t>(); at >= 0 && static_cast<size_t>(at) < names.size()) main_by_name.emplace(names[static_cast<size_t>(at)], k);
  auto name_of = [&](size_t k) {
    const int64_t at = nodes[k].get<int64_t>();
    return at >= 0 && static_cast<size_t>(at) < names.size() ? names[static_cast<size_t>(at)] : std::string();
  };
  std::set<int64_t> visited;
  for (const auto& pair : pairs) {
    if (!pair.is_array() || pair.size() != 2) continue;
    const std::vector<std::string> starts = string_list(pair[0]), ends = string_list(pair[1]);
    const std::set<std::string> start_set(starts.begin(), starts.end());
    for (const auto& end : ends) {
      auto e = main_by_name.find(end);
      if (e == main_by_name.end()) {
        if (std::count(names.begin(), names.end(), end))
          return "end node '" + end + "' is inside a control-flow subgraph; Quark looks end nodes up among the main graph's nodes (KeyError)";
        continue;  // an unknown name: reported by the name check
      }
      bool reached_input = false;
      struct Frame {
        size_t node, pos;
      };
      std::vector<Frame> stack{{e->second, 0}};
      while (!stack.empty()) {
        Frame& fr = stack.back();
        const Json& ins = inputs[fr.node];
        if (fr.pos >= ins.size()) {
          stack.pop_back();
          continue;
        }
        const int64_t tensor = ins[fr.pos++].get<int64_t>();
        const int64_t producer = tensor >= 0 && static_cast<size_t>(tensor) < producers.size() ? producers[static_cast<size_t>(tensor)].get<int64_t>() : -2;
        if (producer == -1) {  // a graph input: Quark records it and leaves this node
          visited.insert(tensor);
          reached_input = true;
          stack.pop_back();
        } else if (visited.count(tensor)) {
          stack.pop_back();
        } else if (producer >= 0) {
          visited.insert(tensor);
          if (start_set.count(name_of(static_cast<size_t>(producer)))) stack.pop_back();
          else stack.push_back({static_cast<size_t>(producer), 0});
        }
      }
      if (reached_input)
        return "walking back from end node '" + end + "' reaches a graph input before any start node (" + join(starts) +
               "): the start and end nodes do not enclose a subgraph, and Quark's match_subgraphs raises ValueError ('... form a closed subgraph')";
    }
  }
  return "";
}

void node_names(PlanState& s) {
  std::vector<std::string> names = string_list(onnx_facts(s).value("node_names", Json::array()));
  std::set<std::string> known(names.begin(), names.end());
  // A '^...' exclusion is Quark's regular expression (re.search over node
  // names, plan/onnx_exclusions.h): it must be one Quark keeps, and match.
  std::vector<std::string> matched_notes;
  auto check = [&](const std::string& key, const Json& list, bool patterns_allowed = false) {
    for (const auto& n : list) {
      if (!n.is_string()) {
        s.error(key + " must list node names (strings)");
        continue;
      }
      const std::string entry = n.get<std::string>();
      if (patterns_allowed && NodeExclusions::is_pattern(entry)) {
        if (std::string why = NodeExclusions::pattern_problem(entry); !why.empty()) {
          s.error(key + ": '" + entry + "' " + why);
          continue;
        }
        const NodeExclusions one(Json::array({entry}));
        size_t hits = 0;
        for (const auto& name : names) hits += one.excludes(name);
        if (hits == 0) s.error(key + ": the regular expression '" + entry + "' matches no node of the graph (Quark raises ValueError when none of its patterns matches)");
        else matched_notes.push_back("'" + entry + "' matches " + std::to_string(hits) + (hits == 1 ? " node" : " nodes"));
        continue;
      }
      if (!known.count(n)) s.error(key + ": no node named '" + entry + "' in the graph" + did_you_mean(n, names));
    }
  };
  for (const char* key : {"onnx_specific.nodes_to_exclude", "onnx_specific.nodes_to_quantize"}) {
    std::string k = key;
    const Json* c = s.choice(k);
    std::string field = k.substr(k.find('.') + 1);
    if (!c || c->is_null()) {
      spec(s)[field] = nullptr;
      continue;
    }
    Json list = c->is_string() ? Json::array({*c}) : *c;
    // Quark's MatMulNBits quantizer takes no exclusion list (quantizers/interface.py
    // create_matmul_nbits_quantizer builds it without nodes_to_exclude).
    if (const Json* p = preset(s); p && (*p)["op_set"] == "matmul_nbits" && field == "nodes_to_exclude" && !list.empty()) {
      s.error("onnx_specific.nodes_to_exclude: " + (*p)["name"].get<std::string>() +
              " runs Quark's MatMulNBits quantizer, which ignores nodes_to_exclude (create_matmul_nbits_quantizer passes none): every 2-D MatMul gets 4-bit weights; "
              "choose an INT8 preset to keep layers in float");
      continue;
    }
    matched_notes.clear();
    check(k, list, field == "nodes_to_exclude");
    spec(s)[field] = list;
    s.reason(k, "onnx.nodes.check",
             "Your choice; every name found in the graph" +
                 (matched_notes.empty() ? std::string() : "; " + join(matched_notes, ", ") + " (Quark's regular expressions: re.search over node names)"));
  }
  spec(s)["subgraphs_to_exclude"] = Json::array();
  if (const Json* c = s.choice("onnx_specific.subgraphs_to_exclude")) {
    if (!c->is_array()) {
      s.error("onnx_specific.subgraphs_to_exclude must be a list of [start_nodes, end_nodes] pairs");
      return;
    }
    for (const auto& pair : *c) {
      if (!pair.is_array() || pair.size() != 2 || !pair[0].is_array() || !pair[1].is_array()) {
        s.error("onnx_specific.subgraphs_to_exclude: each entry is [[start nodes], [end nodes]]");
        continue;
      }
      check("onnx_specific.subgraphs_to_exclude", pair[0]);
      check("onnx_specific.subgraphs_to_exclude", pair[1]);
    }
    if (std::string problem = subgraph_closure_problem(onnx_facts(s), names, *c); !problem.empty())
      s.error("onnx_specific.subgraphs_to_exclude: " + problem);
    spec(s)["subgraphs_to_exclude"] = *c;
    s.reason("onnx_specific.subgraphs_to_exclude", "onnx.nodes.check", "Your choice; every boundary node found in the graph");
  }
  // exclude never contains a node the plan also quantizes.
  if (spec(s)["nodes_to_exclude"].is_array() && spec(s)["nodes_to_quantize"].is_array())
    for (const auto& n : spec(s)["nodes_to_exclude"])
      if (std::count(spec(s)["nodes_to_quantize"].begin(), spec(s)["nodes_to_quantize"].end(), n))
        s.error("node '" + n.get<std::string>() + "' is both in nodes_to_exclude and nodes_to_quantize");
}

// Op types kept in float: Quark's QConfig layer_type_config={None: [types]}
// (quark/onnx/quantization/config/config.py; maps.py turns it into
// TensorQuantOverrides), which only the QConfig route has.
static void op_types_to_exclude(PlanState& s) {
  spec(s)["op_types_to_exclude"] = nullptr;
  const Json* c = s.choice("onnx_specific.op_types_to_exclude");
  if (!c || c->is_null() || (c->is_array() && c->empty())) return;
  Json list = c->is_string() ? Json::array({*c}) : *c;
  const Json& counts = s.analysis["quantization_targets"]["onnx_specific"]["op_counts"];
  std::vector<std::string> present, said;
  for (auto& [k, v] : counts.items()) present.push_back(k);
  for (const auto& op : list) {
    if (!op.is_string() || !counts.contains(op.get<std::string>())) {
      s.error("onnx_specific.op_types_to_exclude: the graph has no '" + (op.is_string() ? op.get<std::string>() : op.dump()) + "' op" +
              (op.is_string() ? did_you_mean(op, present) : ""));
      continue;
    }
    said.push_back(std::to_string(counts[op.get<std::string>()].get<int64_t>()) + " " + op.get<std::string>());
  }
  // The legacy route has no layer_type_config: there the plan hands Quark the
  // op types it would quantize anyway, less these (plan/invocation_onnx.cc).
  // Dynamic quantization and MatMulNBits take neither.
  const Json* p = preset(s);
  if (p && ((*p)["dynamic"].get<bool>() || (*p)["op_set"] == "matmul_nbits"))
    s.error("onnx_specific.op_types_to_exclude: " + (*p)["name"].get<std::string>() + " runs " +
            ((*p)["dynamic"].get<bool>() ? std::string("ONNX Runtime's quantize_dynamic") : std::string("Quark's MatMulNBits quantizer")) +
            ", which takes no op-type exclusion: exclude its nodes by name or '^...' pattern instead");
  spec(s)["op_types_to_exclude"] = list;
  const bool legacy = detail::legacy_route(s);
  s.reason("onnx_specific.op_types_to_exclude", "onnx.op_types.check",
           "Your choice: every node of these op types stays in float (" + join(said, ", ") + " nodes; " +
               (legacy ? std::string("on the legacy route, op_types_to_quantize lists the op types Quark would quantize less these") : std::string("Quark's layer_type_config={None: [...]}")) + ")");
}

void op_types(PlanState& s) {
  op_types_to_exclude(s);
  const Json* c = s.choice("onnx_specific.op_types_to_quantize");
  if (!c || c->is_null()) {
    spec(s)["op_types_to_quantize"] = nullptr;
    s.reason("onnx_specific.op_types_to_quantize", "onnx.op_types.check", "null: every op type the preset supports");
    return;
  }
  Json list = c->is_string() ? Json::array({*c}) : *c;
  std::vector<std::string> present;
  for (auto& [k, v] : s.analysis["quantization_targets"]["onnx_specific"]["op_counts"].items()) present.push_back(k);
  for (const auto& op : list)
    if (!op.is_string() || !std::count(present.begin(), present.end(), op.get<std::string>()))
      s.error("onnx_specific.op_types_to_quantize: the graph has no '" + (op.is_string() ? op.get<std::string>() : op.dump()) +
              "' op" + (op.is_string() ? did_you_mean(op, present) : ""));
  spec(s)["op_types_to_quantize"] = list;
  s.reason("onnx_specific.op_types_to_quantize", "onnx.op_types.check", "Your choice; every op type is in the graph");
}

void opset_upgrade(PlanState& s) {
  // catalog opset_targets: 13 at least (per-axis QDQ), 17 on a Ryzen AI NPU (its recommendation).
  const Json& ot = s.cat.onnx()["opset_targets"];
  const std::string t = target(s);
  const bool npu = t == "npu_cnn" || t == "npu_transformer";
  const int64_t want = npu ? ot["npu"].get<int64_t>() : ot["minimum"].get<int64_t>();
  int64_t version = 0;
  for (const auto& o : onnx_facts(s)["opsets"])
    if (o["domain"] == "ai.onnx") version = o["version"].get<int64_t>();
  const Json* chosen = s.choice("onnx_specific.extra_options.ConvertOpsetVersion");
  if (version > 0 && version < want && !chosen) {
    spec(s)["extra_options"]["ConvertOpsetVersion"] = want;
    s.reason("onnx_specific.extra_options.ConvertOpsetVersion", "onnx.opset.upgrade",
             npu ? "ai.onnx opset " + std::to_string(version) + ": Ryzen AI recommends opset " + std::to_string(want) + " for the NPU (\"Models with ONNX opset 17 are recommended\"): Quark converts first"
                 : "ai.onnx opset " + std::to_string(version) + " is below 13, which QDQ needs: Quark converts to 13 first");
  }
  // 16-bit Q/DQ below opset 21: Quark writes com.microsoft Q/DQ (ONNX Runtime runs them).
  const Json* p = preset(s);
  int64_t effective = chosen && chosen->is_number_integer() ? chosen->get<int64_t>() : std::max(version, version < want ? want : version);
  if (p && effective > 0 && effective < ot["sixteen_bit_standard"].get<int64_t>()) {
    bool sixteen = false;
    for (const char* k : {"activation_type", "weight_type"})
      for (const auto& ty : ot["sixteen_bit_types"]) sixteen = sixteen || (*p)[k] == ty;
    if (sixteen)
      s.risk("onnx.opset.upgrade", "low",
             (*p)["name"].get<std::string>() + " quantizes to 16 bits at opset " + std::to_string(effective) +
                 ": below opset 21 Quark writes those QuantizeLinear/DequantizeLinear in the com.microsoft domain (ONNX adds int16 at QuantizeLinear-21), which ONNX Runtime runs but a runtime that takes only standard ONNX does not.",
             "Keep it for ONNX Runtime; for standard ONNX Q/DQ set onnx_specific.extra_options.ConvertOpsetVersion=21.");
  }
}

void fp16_model(PlanState& s) {
  if (!detail::fp16_only_model(s)) return;
  // Quark's planning guide converts an FP16 model to FP32 first; the Quark releases this catalog
  // describes cannot (catalog fp16_models: numpy 2 broke the conversion, which then leaves FP16
  // weights behind Cast nodes). Quark quantizes the FP16 model itself instead: INT8 weights, FP16 I/O.
  const Json& facts = s.cat.onnx()["fp16_models"];
  for (const auto& [option, why] : facts["broken_extra_options"].items()) {
    const Json* asked = s.choice("onnx_specific.extra_options." + option);
    if (asked && asked->is_boolean() && asked->get<bool>())
      s.conflict("onnx.fp16.convert", "onnx_specific.extra_options." + option, why.get<std::string>() + ".",
                 option + "=false: Quark quantizes the FP16 model as it is (QuantizeFP16)");
  }
  // What Quark cannot do on an FP16 model at all: a conflict --insist cannot keep.
  if (const Json* p = preset(s))
    if (const std::string why = detail::preset_fails_on_model(s, *p); !why.empty())
      s.conflict("onnx.fp16.convert", "preset", (*p)["name"].get<std::string>() + " on an FP16 model: " + why + ".",
                 facts["failing_alternative"].get<std::string>(), true);
  for (const auto& [option, value] : facts["default_extra_options"].items()) {
    if (s.choice("onnx_specific.extra_options." + option)) continue;
    spec(s)["extra_options"][option] = value;
    s.reason("onnx_specific.extra_options." + option, "onnx.fp16.convert",
             "FP16 model: Quark quantizes it as FP16 (" + option + ", which Quark also sets by itself; optimize_model off), writing INT8 weights and keeping FP16 inputs and outputs. "
             "Quark's planning guide converts to FP32 first (" + facts["guide"].get<std::string>() + "); that conversion fails under numpy 2 in this Quark and is skipped");
  }
}

void subgraphs(PlanState& s) {
  if (onnx_facts(s)["subgraph_count"].get<uint64_t>() == 0) return;
  const Json* p = preset(s);
  PresetWeights w = p ? preset_weights(s.analysis, s.cat, *p) : PresetWeights{};
  const Json* c = s.choice("onnx_specific.extra_options.EnableSubgraph");
  bool declined = c && c->is_boolean() && !c->get<bool>();
  if (w.recurses_into_subgraphs) return;  // MatMulNBits walks If/Loop bodies by itself
  std::string name = p ? (*p)["name"].get<std::string>() : "";
  if (w.only_in_subgraphs()) {
    std::string where = std::to_string(w.sub_params) + " weights (" + std::to_string(w.sub_nodes) + " nodes) that " + name +
                        " quantizes all sit inside If/Loop/Scan bodies";
    if (declined) {
      s.risk("onnx.subgraphs", "high", "The " + where + ", and EnableSubgraph is off: the plan quantizes nothing.",
             "Set EnableSubgraph=true, or quantize a model exported without control flow.");
      return;
    }
    if (!c) {
      spec(s)["extra_options"]["EnableSubgraph"] = true;
      s.reason("onnx_specific.extra_options.EnableSubgraph", "onnx.subgraphs",
               "The " + where + ": Quark quantizes them only with EnableSubgraph");
    }
    if (p && !(*p)["dynamic"].get<bool>())
      s.risk("onnx.subgraphs", "medium",
             "Quark (after ONNX Runtime) documents EnableSubgraph as supported in dynamic mode; static QDQ inside If bodies is not documented.",
             "Check the quantized model holds QDQ nodes inside its If bodies; if not, use UINT8_DYNAMIC_QUANT (cpu) or a model exported without If.");
    return;
  }
  if (c) return;
  if (w.known && w.sub_params == 0) return;  // nothing the preset quantizes lives in a subgraph
  std::string what = w.known ? std::to_string(w.sub_params) + " of the preset's weights (" + std::to_string(w.sub_nodes) + " nodes) sit"
                             : "Ops sit";
  s.risk("onnx.subgraphs", "low", what + " inside If/Loop/Scan subgraphs and stay in float unless EnableSubgraph is set.",
         "--set onnx_specific.extra_options.EnableSubgraph=true to quantize them too.");
}

void extra_options(PlanState& s) {
  Json& extra = spec(s)["extra_options"];
  const Json& known = s.cat.onnx()["extra_options"];
  std::vector<std::string> names;
  for (auto& [k, v] : known.items()) names.push_back(k);
  auto type_ok = [](const Json& v, const std::string& t) {
    return (t == "boolean" && v.is_boolean()) || (t == "string" && v.is_string()) || (t == "integer" && v.is_number_integer()) ||
           (t == "number" && v.is_number()) || (t == "array" && v.is_array()) || (t == "object" && v.is_object());
  };
  // Keys Quark would overwrite or ignore for this plan are refused, not kept.
  const Json& ru = s.cat.onnx()["extra_option_rules"];
  const Json* p = preset(s);
  bool qconfig_route = p && (*p)["quark_api"]["route"] == "qconfig" && !spec(s)["enable_npu_transformer"].get<bool>();
  auto set = [&](const std::string& key, const Json& value) {
    if (ru["overwritten_on_qconfig"].contains(key) && (qconfig_route || !known.contains(key))) {
      const Json hints = ru.value("overwritten_hint", Json::object());
      s.error("extra option " + key + " would be ignored: " + ru["overwritten_on_qconfig"][key].get<std::string>() +
              (hints.contains(key) ? "; " + hints[key].get<std::string>() : std::string()));
      return;
    }
    // Options Quark reads only with a route or data type of its own: on
    // another preset they change the route or are ignored.
    if (const Json np = ru.value("needs_preset_option", Json::object()); np.contains(key) && np[key].is_object()) {
      const Json& rule = np[key];
      std::string opt = rule["preset_option"];
      bool preset_has = p && (*p)["extra_options"].contains(opt);
      if (!preset_has && value != Json(false)) {
        s.conflict("onnx.extra_options.check", "onnx_specific.extra_options." + key,
                   "Extra option " + key + " on " + (p ? (*p)["name"].get<std::string>() : std::string("this preset")) + ": " +
                       rule["why"].get<std::string>() + ".",
                   rule["instead"].get<std::string>(), true);
        return;
      }
    }
    // A dict the preset already sets: Quark uses the given dict as-is, so the
    // user's keys go over the preset's (nothing dropped), and the keys that
    // define the preset's data type stay the preset's.
    if (const Json fk = ru.value("format_keys", Json::object()); p && value.is_object() && fk.contains(key) && (*p)["extra_options"].contains(key)) {
      const Json& base = (*p)["extra_options"][key];
      for (const auto& kj : fk[key]) {
        const std::string k = kj.get<std::string>();
        if (value.contains(k) && base.value(k, Json()) != value[k]) {
          s.conflict("onnx.extra_options.check", "onnx_specific.extra_options." + key,
                     "Extra option " + key + "." + k + "=" + value[k].dump() + " changes the data type " + (*p)["name"].get<std::string>() +
                         " is named for (" + k + "=" + base.value(k, Json()).dump() +
                         "): the table and the estimate would no longer say what Quark does.",
                     "the preset with the data type you want (quarkplan catalog onnx)", true);
          return;
        }
      }
      Json merged = base;
      for (auto& [k, v] : value.items()) merged[k] = v;
      extra[key] = merged;
      s.reason("onnx_specific.extra_options." + key, "onnx.extra_options.check",
               "Your keys over " + (*p)["name"].get<std::string>() + "'s own (the whole dict is printed: Quark uses a given dict as-is)");
      return;
    }
    // Calibration settings Quark reads only for their calibration method.
    if (const Json nc = ru.value("needs_calibration", Json::object()); nc.contains(key) && nc[key].is_array()) {
      const Json& m = s.plan["calibration"]["method"];
      if (!m.is_string() || !std::count(nc[key].begin(), nc[key].end(), m)) {
        std::vector<std::string> need = string_list(nc[key]);
        s.conflict("onnx.extra_options.check", "onnx_specific.extra_options." + key,
                   "Extra option " + key + " does nothing here: calibration is " + (m.is_string() ? m.get<std::string>() : std::string("not decided")) +
                       ", and Quark reads " + key + " only for " + join(need, " or ") + " calibration.",
                   "--set calibration.method=" + need[0] + " with it, or drop " + key, true);
        return;
      }
    }
    if (ru["needs_algorithm"].contains(key)) {
      std::vector<std::string> need = string_list(ru["needs_algorithm"][key]);
      bool have = false;
      for (const auto& a : need) {
        have = have || std::count(s.plan["algorithms"].begin(), s.plan["algorithms"].end(), a) > 0;
        if (p && (*p)["fast_finetune"] == a) have = true;
        if (p && a == "AutoMixprecision" && (*p)["auto_mixprecision"].get<bool>()) have = true;
      }
      if (!have) {
        s.error("extra option " + key + " does nothing without " + join(need, " or ") + " in the algorithms (Quark reads it only for them); add --algorithm " +
                need[0] + " instead");
        return;
      }
    }
    if (key == "EnableNPUCnn") {
      s.error("extra option EnableNPUCnn follows onnx_specific.enable_npu_cnn, which is tied to the deployment target; set the target instead");
      return;
    }
    // Keys Quark reads a plan row from (the plan writes the row into them):
    // a second value would contradict the row the table shows.
    if (const Json sbp = ru.value("set_by_plan", Json::object()); sbp.contains(key) && sbp[key].is_string()) {
      std::string row = sbp[key];
      s.error("extra option " + key + " is where Quark reads the plan's " + row + " row, which the plan fills in itself; choose it with --set " + row +
              "=... instead");
      return;
    }
    if (!known.contains(key)) {
      // An option of another Quark release: say which, so the user re-targets or drops it.
      std::vector<std::string> others;
      for (const auto& r : Catalog::release_versions(s.req.catalog_dir))
        if (r != s.cat.release() && Catalog::load(s.req.catalog_dir, r).onnx()["extra_options"].contains(key)) others.push_back(r);
      if (!others.empty())
        s.error("extra option '" + key + "' is read by Quark " + join(others, " and ") + " but not by Quark " + s.cat.release() +
                ", which this plan is for (Quark warns that it is an invalid parameter and ignores it); plan with --quark-version " +
                others.back() + ", or drop it");
      else
        s.error("unknown extra option '" + key + "'" + did_you_mean(key, names));
      return;
    }
    if (!type_ok(value, known[key])) {
      s.error("extra option " + key + " takes a " + known[key].get<std::string>() + ", not " + value.dump());
      return;
    }
    if (const Json av = ru.value("allowed_values", Json::object()); av.contains(key) && !std::count(av[key]["values"].begin(), av[key]["values"].end(), value)) {
      s.error("extra option " + key + " takes one of " + join(string_list(av[key]["values"])) + ", not " + value.dump() + ": " +
              av[key]["why"].get<std::string>());
      return;
    }
    extra[key] = value;
    s.reason("onnx_specific.extra_options." + key, "onnx.extra_options.check", "Your choice");
    if (const Json dep = ru.value("deprecated", Json::object()); dep.contains(key))
      s.risk("onnx.extra_options.check", "low", "Extra option " + key + " is deprecated in Quark " + s.cat.release() + ": " + dep[key]["why"].get<std::string>() + ".",
             "Use " + dep[key]["instead"].get<std::string>() + " instead (the same value).");
  };
  if (const Json* c = s.choice("onnx_specific.extra_options")) {
    if (!c->is_object()) s.error("onnx_specific.extra_options must be a JSON object");
    else
      for (auto& [k, v] : c->items()) set(k, v);
  }
  for (const auto& [k, v] : s.req.choices)
    if (k.rfind("onnx_specific.extra_options.", 0) == 0) set(k.substr(28), v);
  // An option that rewrites others (0.13's QuantizationPreference): the user's own value of one it rewrites does not hold.
  const Json rewriting = ru.value("allowed_values", Json::object());  // kept: items() refers to it
  for (auto& [key, rule] : rewriting.items()) {
    if (!extra.contains(key) || !rule.contains("rewrites") || !extra[key].is_string() || !rule["rewrites"].contains(extra[key].get<std::string>())) continue;
    std::vector<std::string> overridden;
    for (const auto& k : rule["rewrites"][extra[key].get<std::string>()])
      if (extra.contains(k.get<std::string>())) overridden.push_back(k);
    if (!overridden.empty())
      s.risk("onnx.extra_options.check", "medium",
             key + "=" + extra[key].get<std::string>() + " rewrites " + join(overridden) + " on top of your values: " + rule["why"].get<std::string>() + ".",
             "Drop " + key + " to keep your values, or drop " + join(overridden) + " and let it choose.");
  }
  s.reason("onnx_specific.extra_options", "onnx.extra_options.check",
           extra.empty() ? "None needed: the preset's own options apply" : "Only what this model needs; each key explained below");
}

namespace {
// "1.25.1" -> {1, 25, 1}; non-numeric parts (a local "+cpu" suffix) end the version.
std::vector<int> version_parts(const std::string& v) {
  std::vector<int> out;
  size_t i = 0;
  while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) {
    int n = 0;
    while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) n = n * 10 + (v[i++] - '0');
    out.push_back(n);
    if (i < v.size() && v[i] == '.') ++i;
    else break;
  }
  return out;
}
}  // namespace

void onnxruntime_range(PlanState& s) {
  const std::string& have = s.req.install_onnxruntime_version;
  const Json range = s.cat.onnx().value("onnxruntime_range", Json(nullptr));
  if (have.empty() || !range.is_object() || version_parts(have).empty()) return;
  auto in_range = [&](const Json& r) {
    auto v = version_parts(have);
    return !(v < version_parts(r["min"].get<std::string>())) && !(version_parts(r["max"].get<std::string>()) < v);
  };
  if (in_range(range)) return;
  std::string other;
  for (const auto& rel : Catalog::release_versions(s.req.catalog_dir))
    if (rel != s.cat.release()) {
      const Json r = Catalog::load(s.req.catalog_dir, rel).onnx().value("onnxruntime_range", Json(nullptr));
      if (r.is_object() && in_range(r)) other = rel;
    }
  const std::string want = "onnxruntime>=" + range["min"].get<std::string>() + ",<=" + range["max"].get<std::string>();
  s.risk("onnx.install.onnxruntime_range", "medium",
         "The installed onnxruntime " + have + " (--install-result) is outside what amd-quark " + s.cat.release() + " supports (" + want + ").",
         "pip install '" + want + "'" + (other.empty() ? std::string() : ", or plan for amd-quark " + other + " (--quark-version " + other + "), which supports it") + ".");
}

// The plan's Quark installs an ONNX Runtime that cannot open this model: with static input shapes it
// folds an If whose condition depends on shapes only, inlines the branch, and refuses a constant of
// min_bytes or more there (catalog onnxruntime_folded_if). Quark opens a session before quantizing.
void onnxruntime_folded_if(PlanState& s) {
  const Json defect = s.cat.onnx().value("onnxruntime_folded_if", Json(nullptr));
  const Json& o = s.analysis["model"]["onnx_specific"];
  if (!defect.is_object() || !defect.value("affected", false) || !o.is_object()) return;
  // Static as given, or made static by the plan's FixShapes (Quark fixes them before calibrating).
  const Json extra = spec(s).value("extra_options", Json::object());
  const bool fixed_by_plan = extra.is_object() && extra.contains("FixShapes") && extra["FixShapes"].is_string() && !extra["FixShapes"].get<std::string>().empty();
  if (o.value("has_dynamic_dims", true) && !fixed_by_plan) return;
  const uint64_t min_bytes = defect.value("min_bytes", uint64_t{128});
  const Json folding = defect.value("folding_ops", Json::array());
  for (const auto& f : o.value("shape_only_ifs", Json::array())) {
    std::string why;
    if (f.value("largest_branch_constant_bytes", uint64_t{0}) >= min_bytes)
      why = "a " + std::to_string(f.value("largest_branch_constant_bytes", uint64_t{0})) + "-byte constant";
    for (const auto& op : f.value("branch_folding_ops", Json::array()))
      if (why.empty() && std::count(folding.begin(), folding.end(), op)) why = "a " + op.get<std::string>() + " (it folds to a constant)";
    if (why.empty()) continue;
    std::string other;
    for (const auto& rel : Catalog::release_versions(s.req.catalog_dir))
      if (rel != s.cat.release() && !Catalog::load(s.req.catalog_dir, rel).onnx().value("onnxruntime_folded_if", Json::object()).value("affected", false)) other = rel;
    const Json range = s.cat.onnx().value("onnxruntime_range", Json::object());
    const std::string ort = "ONNX Runtime " + range.value("max", std::string("?"));
    s.conflict("onnx.install.ort_folded_if", "quark_release",
               "amd-quark " + s.cat.release() + " installs at most " + ort + ", which likely cannot open this model: its inputs are static" +
                   (o.value("has_dynamic_dims", true) ? std::string(" once the plan's FixShapes applies") : std::string()) + ", so it folds the condition of If '" +
                   f.value("node", std::string()) + "' (from " + f.value("condition_from", std::string()) + "), inlines the branch, and refuses " + why +
                   " there ('" + defect.value("error", std::string()) + "'); Quark opens such sessions before and while quantizing. "
                   "Which branch the condition picks and what a ConstantOfShape folds to are not worked out here: --insist if the folded tensors stay under " +
                   std::to_string(min_bytes) + " bytes.",
               other.empty() ? "keep an input dimension dynamic so the condition does not fold"
                             : "--quark-version " + other + " (its ONNX Runtime " + Catalog::load(s.req.catalog_dir, other).onnx().value("onnxruntime_range", Json::object()).value("max", std::string("?")) +
                                   " opens it)");
    return;
  }
}

void execution_providers(PlanState& s) {
  std::string t = target(s);
  const Json* tj = t.empty() ? nullptr : s.cat.onnx_target(t);
  Json eps = tj ? (*tj)["execution_providers"] : Json::array({"CPUExecutionProvider"});
  bool chosen = false;
  if (const Json* c = s.choice("onnx_specific.execution_providers"); c && c->is_array()) {
    eps = *c;
    chosen = true;
    // onnxruntime rejects a provider name it does not know when the session
    // is created: a misspelt name is an input error, not a plan.
    const Json& known = s.cat.onnx().value("known_execution_providers", Json::object()).value("names", Json::array());
    for (const auto& ep : *c) {
      std::string name = ep.is_string() ? ep.get<std::string>() : ep.dump();
      if (!known.empty() && std::find(known.begin(), known.end(), Json(name)) == known.end())
        s.error("onnx_specific.execution_providers names '" + name + "', which is not an onnxruntime execution provider" +
                did_you_mean(name, known.get<std::vector<std::string>>()));
    }
    if (c->empty()) s.error("onnx_specific.execution_providers is empty: onnxruntime needs at least one provider (CPUExecutionProvider)");
  }
  // The install result says which providers this onnxruntime has: calibration
  // can only use those, and the target's own must be there to run the result.
  std::string why = chosen ? "Your choice" : t.empty() ? "CPU until the target is known" : "The calibration providers of " + t;
  // A failed install: nothing quantizes on this machine until it is fixed.
  if (s.req.install_status == "failed")
    s.risk("onnx.execution_providers", "high",
           "onnx_install_result.json says the install failed" +
               (s.req.install_failure_reason.empty() ? std::string() : " (" + s.req.install_failure_reason + ")") +
               ": Quark and onnxruntime are not known to work on this machine, so the plan cannot run here yet.",
           "Fix the install with quark-onnx-install, then re-run with the new install result.");
  if (s.req.available_providers && tj) {
    const auto& have = *s.req.available_providers;
    auto present = [&](const std::string& ep) { return std::count(have.begin(), have.end(), ep) > 0; };
    Json usable = Json::array();
    std::vector<std::string> missing;
    for (const auto& ep : eps) {
      if (present(ep)) usable.push_back(ep);
      else missing.push_back(ep.get<std::string>());
    }
    if (!missing.empty() && !chosen) {
      eps = usable.empty() ? Json::array({"CPUExecutionProvider"}) : usable;
      why += "; " + join(missing) + " missing from this onnxruntime (onnx_install_result.json), so calibration runs on " + join(string_list(eps));
    }
    std::vector<std::string> deploy = string_list(tj->value("deployment_execution_providers", Json::array()));
    bool any = deploy.empty();
    for (const auto& d : deploy) any = any || present(d);
    // The provider the install result's accelerator tag is expected to give
    // for this target (catalog install_expected_providers): on ROCm 7.x,
    // target rocm means CPU onnxruntime by design, not a missing ROCm provider.
    std::string expected, expected_tag;
    size_t best = 0;
    for (const auto& e : s.cat.onnx().value("install_expected_providers", Json::object()).value("by_accelerator_tag", Json::array())) {
      std::string prefix = e.value("tag_prefix", "");
      const Json targets = e.value("targets", Json::array());
      if (!prefix.empty() && prefix.size() > best && s.req.install_accelerator_tag.rfind(prefix, 0) == 0 &&
          std::count(targets.begin(), targets.end(), t) > 0) {
        best = prefix.size();
        expected = e.value("provider", "");
        expected_tag = s.req.install_accelerator_tag;
      }
    }
    if (!any && !expected.empty() && present(expected)) {
      any = true;
      if (std::find(deploy.begin(), deploy.end(), expected) == deploy.end())
        why += "; the install is for " + expected_tag + ", where " + t + " runs on " + expected + " (the onnxruntime quark-onnx-install installs there)";
    }
    if (!any) {
      bool npu = t == "npu_cnn" || t == "npu_transformer";
      std::string has = have.empty() ? "lists no execution providers" : "has " + join(have);
      s.risk("onnx.execution_providers", npu ? "medium" : "high",
             "The onnxruntime in onnx_install_result.json " + has + ", but target " + t + " runs on " + join(deploy, " or ") +
                 (npu ? ": this machine can quantize, not run the NPU model." : ": the quantized model cannot run on " + t + " here, and calibration falls back to the CPU."),
             npu ? "Check the quantized model on the Ryzen AI machine (VitisAIExecutionProvider)."
                 : "Install the onnxruntime build with " + deploy[0] + " (quark-onnx-install), then re-run with the new install result.");
    }
    if (chosen)
      for (const auto& m : missing)
        s.risk("onnx.execution_providers", "high", "You chose " + m + ", which this onnxruntime does not have (onnx_install_result.json).",
               have.empty() ? "Install an onnxruntime build that has it (quark-onnx-install)." : "Pick from " + join(have) + ", or install a build that has it.");
  }
  spec(s)["execution_providers"] = eps;
  s.reason("onnx_specific.execution_providers", "onnx.execution_providers", why);
}


// The deployed model's interface as Quark's pre-processing leaves it, where
// it differs from the float model's: FixShapes fixes dimensions (inputs and
// outputs), ConvertFP16ToFP32 turns FP16 inputs and outputs to FP32. (NHWC is
// onnx.npu_cnn.nhwc's.) The application feeds the quantized model this.
void interface_changes(PlanState& s) {
  const Json& extra = spec(s)["extra_options"];
  std::vector<std::string> changed;
  if (extra.contains("FixShapes") && extra["FixShapes"].is_string()) {
    try {
      for (const auto& f : parse_fix_shapes(extra["FixShapes"]))
        for (const auto& sl : fix_shapes_slots(onnx_facts(s), false))
          if (sl.name == f.name && sl.dynamic()) {
            ShapeSlot fixed = sl;
            fixed.dims = f.dims;
            changed.push_back(std::string(sl.output ? "output " : "input ") + sl.text() + " becomes " + fixed.text());
          }
    } catch (const std::invalid_argument&) {
      // the FixShapes rule reports it
    }
  }
  // Only a conversion that runs changes the interface (catalog fp16_models: this Quark's does not).
  if (extra.value("ConvertFP16ToFP32", false) == true && s.cat.onnx_extra_option_works("ConvertFP16ToFP32"))
    for (const char* io : {"inputs", "outputs"})
      for (const auto& v : onnx_facts(s).value(io, Json::array()))
        if (v.value("dtype", "") == "float16") changed.push_back(std::string(io).substr(0, std::string(io).size() - 1) + " " + v.value("name", "") + " becomes float32");
  if (changed.empty()) return;
  s.risk("onnx.interface.changes", "low",
         "The quantized model's interface differs from the float model's: " + join(changed, "; ") + ". The application must feed and read it so.",
         "Feed the fixed shapes (and FP32 where the FP16 model took FP16); keep the float model for any other shape.");
}

// Per-channel weights: one scale per output channel, Quark's
// QuantGranularity.Channel on the weight spec (maps.py turns it into
// per_channel=True) or per_channel=True on the legacy route. The alternative
// to keeping an outlier layer in float when its outliers sit in a few channels.
void per_channel(PlanState& s) {
  spec(s)["per_channel"] = false;
  const Json* c = s.choice("onnx_specific.per_channel");
  if (!c) return;
  if (!c->is_boolean()) {
    s.error("onnx_specific.per_channel must be true or false");
    return;
  }
  if (!c->get<bool>()) return;
  const Json* p = preset(s);
  const Json& types = s.cat.onnx()["qdq_layout"]["types"];
  const std::string w = p && (*p)["weight_type"].is_string() ? (*p)["weight_type"].get<std::string>() : "";
  if (p && ((*p)["dynamic"].get<bool>() || (*p)["op_set"] == "matmul_nbits" || (types.contains(w) && types[w].value("custom_domain", false)))) {
    s.error("onnx_specific.per_channel: " + (*p)["name"].get<std::string>() + " has no per-tensor integer weight scale to split per channel (" +
            ((*p)["dynamic"].get<bool>() ? "dynamic quantization" : (*p)["op_set"] == "matmul_nbits" ? "MatMulNBits quantizes in blocks" : "its format is Quark's own float or block type") + ")");
    return;
  }
  if (spec(s).value("enable_npu_cnn", false)) {
    s.conflict("onnx.weights.per_channel", "onnx_specific.per_channel",
               "Per-channel weights with NPU CNN mode: Quark raises \"Only per-tensor quantization is supported when enable_npu_cnn=True\" (quantizers/npu_cnn_quantizer.py).",
               "onnx_specific.per_channel=false, or a float-scale preset the NPU generation runs (A8W8 on STX/KRK)", true);
    return;
  }
  spec(s)["per_channel"] = true;
  s.reason("onnx_specific.per_channel", "onnx.weights.per_channel",
           "Your choice: one weight scale per output channel (Quark: QuantGranularity.Channel on the weight spec, per_channel=True on the legacy route)");
}

// Per-layer precision (--layer-scheme PATTERN=PRESET): the layers a node
// name, a '^...' pattern or op:TYPE names take another preset's data types,
// through Quark's QConfig specific_layer_config / layer_type_config
// ({QLayerConfig(...): [names or op types]}). Quark turns them into
// TensorQuantOverrides with the data type and symmetry only (maps.py), so the
// layers keep the global calibration and scale type; the legacy route has no such field.
void layer_presets(PlanState& s) {
  spec(s)["layer_presets"] = nullptr;
  const Json* c = s.choice("onnx_specific.layer_presets");
  if (!c || c->is_null() || (c->is_object() && c->empty())) return;
  if (!c->is_object()) {
    s.error("onnx_specific.layer_presets must map a node name, '^regex.*' or op:TYPE to a preset");
    return;
  }
  const Json* p = preset(s);
  if (detail::legacy_route(s)) {
    s.error("--layer-scheme: per-layer precision is Quark's QConfig specific_layer_config, and " + (*p)["name"].get<std::string>() +
            " stays a legacy preset here: choose a QConfig preset (U8S8_AAWS, S8S8_AAWS, XINT8, A16W8, ...) for the whole model");
    return;
  }
  const std::vector<std::string> names = string_list(onnx_facts(s).value("node_names", Json::array()));
  const Json& counts = s.analysis["quantization_targets"]["onnx_specific"]["op_counts"];
  std::vector<std::string> said;
  for (auto& [pattern, value] : c->items()) {
    const Json* lp = value.is_string() ? s.cat.onnx_preset(s.cat.canonical_preset(value.get<std::string>())) : nullptr;
    if (!lp) {
      s.error("--layer-scheme " + pattern + "=" + (value.is_string() ? value.get<std::string>() : value.dump()) + ": not a preset" +
              (value.is_string() ? did_you_mean(value, s.cat.onnx_preset_names()) : ""));
      continue;
    }
    if ((*lp)["quark_api"].value("route", "") != "qconfig") {
      s.error("--layer-scheme " + pattern + "=" + (*lp)["name"].get<std::string>() + ": that preset has no QConfig spec pair to give the layers (" +
              (*lp)["quark_api"].value("why", std::string("legacy")) + ")");
      continue;
    }
    size_t hits = 0;
    if (pattern.rfind("op:", 0) == 0) {
      const std::string op = pattern.substr(3);
      if (!counts.contains(op)) {
        std::vector<std::string> present;
        for (auto& [k, v] : counts.items()) present.push_back(k);
        s.error("--layer-scheme " + pattern + ": the graph has no '" + op + "' op" + did_you_mean(op, present));
        continue;
      }
      hits = counts[op].get<size_t>();
    } else if (NodeExclusions::is_pattern(pattern)) {
      if (std::string why = NodeExclusions::pattern_problem(pattern); !why.empty()) {
        s.error("--layer-scheme '" + pattern + "' " + why);
        continue;
      }
      const NodeExclusions one(Json::array({pattern}));
      for (const auto& n : names) hits += one.excludes(n);
    } else {
      hits = std::count(names.begin(), names.end(), pattern);
    }
    if (hits == 0) {
      s.error("--layer-scheme " + pattern + ": no node of the graph" + (NodeExclusions::is_pattern(pattern) ? " matches it" : " has that name" + did_you_mean(pattern, names)));
      continue;
    }
    said.push_back(pattern + " -> " + (*lp)["name"].get<std::string>() + " (" + std::to_string(hits) + (hits == 1 ? " node)" : " nodes)"));
  }
  // Quark turns per-layer configs into TensorQuantOverrides, and with those it forces
  // ExtendedQuantFormat.QDQ: enable_npu_cnn / enable_npu_transformer are then unavailable
  // (quantize.py, 0.12.post1 and 0.13), so the model would not be the NPU flow's.
  const bool npu_mode = spec(s).value("enable_npu_cnn", false) || spec(s).value("enable_npu_transformer", false);
  if (npu_mode && !said.empty())
    s.conflict("onnx.layer_presets", "onnx_specific.layer_presets",
               "Per-layer presets become Quark's TensorQuantOverrides, and with them Quark forces ExtendedQuantFormat.QDQ and turns " +
                   std::string(spec(s).value("enable_npu_cnn", false) ? "enable_npu_cnn" : "enable_npu_transformer") +
                   " off ('flags enable_npu_cnn and enable_npu_transformer will be unavailable', quark/onnx/quantization/quantize.py): the model would not be the NPU flow's (" +
                   join(said, ", ") + ").",
               "drop --layer-scheme on an NPU target (one preset for the whole model), or exclude those layers (--exclude) to keep them in float",
               /*quark_rejects=*/true);
  Json canon = Json::object();
  for (auto& [pattern, value] : c->items())
    if (value.is_string() && s.cat.onnx_preset(s.cat.canonical_preset(value.get<std::string>()))) canon[pattern] = s.cat.canonical_preset(value.get<std::string>());
  spec(s)["layer_presets"] = canon;
  s.reason("onnx_specific.layer_presets", "onnx.layer_presets",
           "Your choice: " + join(said, ", ") + "; through Quark's specific_layer_config / layer_type_config");
  s.risk("onnx.layer_presets", "low",
         "Quark gives these layers their preset's data types and symmetry only (TensorQuantOverrides): calibration, scale type and the presets' extra options stay the global " +
             (p ? (*p)["name"].get<std::string>() : std::string("preset")) + "'s, and the size estimate counts them at the global preset's bits.",
         "Check the layers' accuracy after quantization; quarkplan verify checks their data types.");
}

}  // namespace quarkplan::onnx_rules
