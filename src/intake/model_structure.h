// The structure of a Hugging Face model as its checkpoint holds it and as
// transformers and Quark see it: every parameter tensor (name, shape), every
// Linear module (name, out x in, role), the layer kinds and the KV-cache facts —
// generated from config.json and the family's description in
// catalog/architectures.json. One source for the parameter count, the module
// names, the router/MTP/vision names the rules check, and the KV-cache estimate,
// so they cannot disagree.
#pragma once
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/json.h"
#include "common/string_arena.h"
#include "intake/hf_config.h"

namespace quarkplan {

// Which part of the model a tensor belongs to.
enum class Part : uint8_t { kLanguage, kMtp, kVision, kAudio, kProjector };
const char* part_name(Part p);

// Up to six dimensions inline: 90,000 tensors, no allocation each.
struct TensorShape {
  static constexpr size_t kMax = 6;  // Conv3d patch embeddings have 5
  uint64_t d[kMax] = {};
  uint8_t n = 0;
  size_t size() const { return n; }
  bool empty() const { return n == 0; }
  uint64_t operator[](size_t i) const { return d[i]; }
  uint64_t back() const { return d[n - 1]; }
  void push_back(uint64_t v) { d[n++] = v; }
  const uint64_t* begin() const { return d; }
  const uint64_t* end() const { return d + n; }
};

// Names and roles are views into the structure's own storage (its arena and
// the interned roles): DeepSeek-V3 has 92,000 tensors and 45,000 modules.
struct StructTensor {
  std::string_view name;
  uint64_t hash = 0;  // name_hash(name), computed once for the checkpoint matching
  TensorShape shape;
  uint64_t numel = 0;
  Part part = Part::kLanguage;
  std::string_view role;  // role of the Linear it belongs to ("" for norms, embeddings, buffers)
};

struct StructModule {
  std::string_view name;
  uint64_t out = 0, in = 0;
  std::string_view role;  // attention, mlp, expert, shared_expert, router, lm_head, mamba, linear_attention, indexer, ...
  Part part = Part::kLanguage;
  // Index in ModelStructure::tensors of the checkpoint tensor holding its weight
  // (a fused expert tensor for per-expert modules): an index, not a name copy,
  // because DeepSeek-V3 has 45,000 modules.
  uint32_t source = 0;
  // The weight is another module's (a tied lm_head: `source` is the input
  // embedding): not stored in the checkpoint, not counted in total_params.
  bool tied = false;
  // `source` is this module's own ".weight" (not a fused expert tensor).
  bool source_is_weight = false;
};

// KV cache per token, summed over the decoder's attention layers.
struct KvFacts {
  std::string kind = "none";  // "gqa" | "mla" | "none"
  int64_t full_layers = 0, sliding_layers = 0;
  int64_t sliding_window = 0;           // 0 when no layer is windowed
  uint64_t elements_full = 0;           // per token, over the full-attention layers
  uint64_t elements_sliding = 0;        // per token, over the windowed layers
  int64_t max_position_embeddings = 0;  // 0 when config.json does not say
  // Linear-attention and Mamba layers keep a fixed state per sequence instead (the causal
  // convolution's last inputs and the recurrent/SSM state), whatever the context length.
  int64_t recurrent_layers = 0;
  uint64_t state_conv_elements = 0;     // per sequence, over those layers
  uint64_t state_ssm_elements = 0;      // per sequence, over those layers
  std::string state_ssm_dtype;          // the SSM state's dtype where the config or runtime fixes it ("" = the model's)
};

// Movable, not copyable: the tensors' and modules' names point into `names`.
struct ModelStructure {
  StringArena names;                     // every tensor and module name
  std::deque<std::string> roles;         // the distinct roles (stable addresses)
  std::string family;                    // catalog family name
  std::vector<StructTensor> tensors;     // as stored in the checkpoint (logical parameters)
  std::vector<StructModule> modules;     // Linear modules as transformers/Quark see them
  std::vector<std::string> layer_kinds;  // per decoder layer: "attention+moe", "mamba", ...
  uint64_t total_params = 0;
  uint64_t params_by_part[5] = {0, 0, 0, 0, 0};
  KvFacts kv;
  bool is_moe = false;
  int64_t num_experts = 0;
  bool fused_experts = false;            // the checkpoint stores experts in 3-D tensors
  int64_t mtp_layers = 0;
  // The family's experts are in a module Quark neither quantizes nor replaces (catalog
  // experts_not_linear): its class name, "" when the experts are Linear to Quark.
  std::string experts_not_linear;
  std::vector<std::pair<std::string, std::string>> checkpoint_renames;  // (checkpoint prefix, loaded prefix)
  std::unordered_map<std::string, std::string> role_by_shape_name;  // module name with numbers as '#' -> role
  std::unordered_map<std::string, Part> part_by_shape_name;

  // Role and part of a module named in a real checkpoint (after renames), from
  // the family's templates; {"", kLanguage} when the family does not know it.
  std::pair<std::string, Part> classify(std::string_view module) const;
  // The module name as transformers loads it (the family's checkpoint renames).
  std::string loaded_name(std::string_view checkpoint_name) const;
};

// The architecture family for a config (top-level or text model_type), or
// nullptr when the catalog describes none.
const Json* architecture_family(const Json& architectures_catalog, const hf::Config& cfg);

// Builds the structure. Every config value the family uses is checked for type
// and range first (InputError naming `file`, the key and the value); the tensor
// count is bounded before anything is allocated.
ModelStructure build_structure(const hf::Config& cfg, const Json& family, const Json& architectures_catalog,
                               const std::string& file);

// Module name with every numeric path component replaced by '#'.
std::string shape_name(std::string_view module);

}  // namespace quarkplan
