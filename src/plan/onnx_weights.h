// What a preset would quantize in a model: the weights of the preset's op
// types (catalog preset_op_sets), read from the analysis' weights_by_op_type,
// split into the main graph and control-flow subgraphs.
#pragma once
#include <algorithm>
#include <cstdint>
#include <set>
#include <string>

#include "catalog/catalog.h"
#include "plan/onnx_exclusions.h"
#include "common/json.h"

namespace quarkplan {

struct PresetWeights {
  bool known = false;  // the analysis has weights_by_op_type (quarkplan's intake)
  std::string op_set, label;
  uint64_t main_params = 0, sub_params = 0;
  uint64_t main_nodes = 0, sub_nodes = 0;
  bool recurses_into_subgraphs = false;  // MatMulNBits walks If/Loop bodies by itself
  bool touches_anything() const { return !known || main_params + sub_params > 0; }
  bool only_in_subgraphs() const { return known && main_params == 0 && sub_params > 0; }
};

inline PresetWeights preset_weights(const Json& analysis, const Catalog& cat, const Json& preset) {
  PresetWeights w;
  const Json& q = analysis["quantization_targets"];
  const Json& sets = cat.onnx()["preset_op_sets"];
  w.op_set = preset.value("op_set", "static");
  if (!sets.contains(w.op_set)) return w;
  const Json& set = sets[w.op_set];
  w.label = set["label"];
  w.recurses_into_subgraphs = set.value("recurses_into_subgraphs", false);
  if (!q.contains("weights_by_op_type") || !q["weights_by_op_type"].is_object()) return w;
  w.known = true;
  bool two_d = set.value("two_d_only", false);
  for (const auto& op : set["ops"]) {
    const Json& e = q["weights_by_op_type"].value(op.get<std::string>(), Json::object());
    if (!e.is_object() || e.empty()) continue;
    uint64_t params = e.value(two_d ? "weight_params_2d" : "weight_params", uint64_t{0});
    uint64_t nodes = e.value(two_d ? "weighted_2d_nodes" : "weighted_nodes", uint64_t{0});
    uint64_t sub_params = e.value("weight_params_in_subgraphs", uint64_t{0});
    uint64_t sub_nodes = e.value("weighted_nodes_in_subgraphs", uint64_t{0});
    // 2-D only: the subgraph share is not split by rank; keep it within the total.
    sub_params = std::min(sub_params, params);
    sub_nodes = std::min(sub_nodes, nodes);
    w.main_params += params - sub_params;
    w.sub_params += sub_params;
    w.main_nodes += nodes - sub_nodes;
    w.sub_nodes += sub_nodes;
  }
  return w;
}

// What a plan quantizes, node by node (the analysis' weighted_nodes): the
// preset's op set, narrowed by the plan's op_types_to_quantize, without its
// nodes_to_exclude, and inside subgraphs only when Quark goes there. Every
// other weight stays as stored.
struct PlanWeights {
  bool known = false;  // the analysis lists weighted nodes (quarkplan's intake)
  uint64_t params = 0, stored_bytes = 0, nodes = 0;       // quantized
  uint64_t candidate_nodes = 0, candidate_params = 0;     // the preset's op set (and subgraph setting) before the plan's lists
  uint64_t excluded_nodes = 0, excluded_params = 0;       // of those, in nodes_to_exclude or op_types_to_exclude
  uint64_t excluded_nodes_by_name = 0;                    // of those, by nodes_to_exclude
  uint64_t other_type_nodes = 0, other_type_params = 0;   // of those, outside op_types_to_quantize
};

inline PlanWeights plan_weights(const Json& analysis, const Catalog& cat, const Json& preset, const Json& op_types, const Json& nodes_to_exclude,
                                bool into_subgraphs, const Json& op_types_to_exclude = Json()) {
  PlanWeights r;
  const Json& q = analysis["quantization_targets"];
  const Json& sets = cat.onnx()["preset_op_sets"];
  std::string op_set = preset.value("op_set", "static");
  if (!sets.contains(op_set) || !q.contains("weighted_nodes") || !q["weighted_nodes"].is_array()) return r;
  r.known = true;
  const Json& set = sets[op_set];
  bool two_d = set.value("two_d_only", false);
  into_subgraphs = into_subgraphs || set.value("recurses_into_subgraphs", false);
  std::set<std::string> ops, users;
  const NodeExclusions excluded(nodes_to_exclude);
  std::set<std::string> excluded_types;
  if (op_types_to_exclude.is_array())
    for (const auto& o : op_types_to_exclude)
      if (o.is_string()) excluded_types.insert(o.get<std::string>());
  for (const auto& o : set["ops"]) ops.insert(o.get<std::string>());
  bool user_list = op_types.is_array();
  if (user_list)
    for (const auto& o : op_types)
      if (o.is_string()) users.insert(o.get<std::string>());
  for (const auto& n : q["weighted_nodes"]) {
    if (!n.is_object()) continue;
    std::string op = n.value("op_type", "");
    if (!ops.count(op) || (two_d && !n.value("two_d", false)) || (n.value("in_subgraph", false) && !into_subgraphs)) continue;
    uint64_t p = n.value("params", uint64_t{0});
    ++r.candidate_nodes;
    r.candidate_params += p;
    if (user_list && !users.count(op)) {
      ++r.other_type_nodes;
      r.other_type_params += p;
      continue;
    }
    if (excluded.excludes(n.value("name", "")) || excluded_types.count(op)) {
      if (excluded.excludes(n.value("name", ""))) ++r.excluded_nodes_by_name;
      ++r.excluded_nodes;
      r.excluded_params += p;
      continue;
    }
    ++r.nodes;
    r.params += p;
    r.stored_bytes += n.value("stored_bytes", uint64_t{0});
  }
  return r;
}

}  // namespace quarkplan
