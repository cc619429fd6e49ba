// The Linear modules of a Hugging Face model — from its tensor names when the
// weights (or the index) are here, else generated from config.json with the
// family's naming — and a parameter estimate from the config alone.
#pragma once
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "intake/hf_config.h"

namespace quarkplan {

// A tensor as intake found it: its name is a view into the bytes intake keeps
// alive (shard headers, the index), its first dimensions are inline.
struct LinearTensor {
  std::string_view name;
  uint32_t ndim = 0;          // all dimensions, when the shape is known
  uint64_t dims[3] = {0, 0, 0};  // the first three
  bool shape_known = false;
  // For matching against the model structure, set by the thread that read the
  // name (it is in cache there): a quantization scale (never a Linear), the
  // length of the name as transformers loads it (MXFP4 "_blocks" dropped) and
  // that name's hash (common/string_arena.h).
  bool quant_scale = false;
  uint32_t loaded_size = 0;
  uint64_t hash = 0;
};

// A Linear module. Its name is a view: into the tensor names it came from, or
// into a NameStore for names that had to be made (fused experts expanded,
// names generated from config.json) — 45,000 modules, no allocation each.
struct LinearModule {
  std::string_view name;
  uint64_t params = 0;       // out_features x in_features
  uint64_t in_features = 0;  // K: per-channel scales cost scale_bits / K per weight
};
using NameStore = std::deque<std::string>;  // stable addresses: never a vector

// Every Linear layer (experts included; fused 3-D expert tensors expanded per
// expert as Quark's QuarkExperts names them), with its size: exact from
// shapes when known, else from the config's dimensions.
std::vector<LinearModule> linear_modules_from_tensors(const std::vector<LinearTensor>& tensors, const hf::Config& cfg,
                                                      bool& fused_experts, NameStore& made);
std::vector<LinearModule> linear_modules_from_config(const hf::Config& cfg, const Json* tmpl, NameStore& made);
// Modules that are not Linear layers although their weight may be 2-D
// (embeddings, norms, patch embeddings).
bool is_non_linear_module(std::string_view module);

// The (params, in_features) of a Linear module named `name`, from the config.
LinearModule config_module_shape(std::string_view name, const hf::Config& cfg);

struct ParamEstimate {
  uint64_t total = 0;
  uint64_t bytes = 0;
  std::string method;
};
ParamEstimate estimate_params(const hf::Config& cfg, const Json& torch_catalog);

// Whether decoder layer `i` holds routed experts.
bool is_moe_layer(const hf::Config& cfg, int64_t i);

}  // namespace quarkplan
