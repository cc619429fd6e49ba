// The Linear modules of a Hugging Face model — from its tensor names when the
// weights (or the index) are here, else generated from config.json with the
// family's naming — and a parameter estimate from the config alone.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/json.h"
#include "intake/hf_config.h"

namespace quarkplan {

struct LinearTensor {
  std::string name;
  std::vector<uint64_t> shape;
  bool shape_known = false;
};

// Module names of every Linear layer (experts included; fused 3-D expert
// tensors expanded per expert as Quark's QuarkExperts names them).
std::vector<std::string> linear_modules_from_tensors(const std::vector<LinearTensor>& tensors, const hf::Config& cfg,
                                                     bool& fused_experts);
std::vector<std::string> linear_modules_from_config(const hf::Config& cfg, const Json* tmpl);

struct ParamEstimate {
  uint64_t total = 0;
  uint64_t bytes = 0;
  std::string method;
};
ParamEstimate estimate_params(const hf::Config& cfg, const Json& torch_catalog);

// Whether decoder layer `i` holds routed experts.
bool is_moe_layer(const hf::Config& cfg, int64_t i);

}  // namespace quarkplan
