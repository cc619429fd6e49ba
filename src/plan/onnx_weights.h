// What a preset would quantize in a model: the weights of the preset's op
// types (catalog preset_op_sets), read from the analysis' weights_by_op_type,
// split into the main graph and control-flow subgraphs.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>

#include "catalog/catalog.h"
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

}  // namespace quarkplan
