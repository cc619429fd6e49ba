// What a Quark Hugging Face export holds, read without touching a weight byte:
// config.json (its quantization_config as Quark's exporter writes it) and the
// safetensors headers of every shard (through the index when there is one).
// `verify` compares this with the plan (torch_verify.cc).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <unordered_map>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"

namespace quarkplan::verify {

struct ExportTensor {
  std::string dtype;  // safetensors dtype: "F8_E4M3", "I32", "U8", ...
  std::vector<uint64_t> shape;
  uint32_t shard = 0;  // index into TorchExport::shards
  uint64_t bytes = 0;
};

// One module's tensors, by parameter name ("weight", "weight_scale", ...): a
// handful each, so a small vector (45,000 modules of a MoE export).
struct ModuleTensors {
  std::vector<std::pair<std::string, ExportTensor>> params;
  const ExportTensor* find(std::string_view param) const {
    for (const auto& [p, t] : params)
      if (p == param) return &t;
    return nullptr;
  }
  // False when the module already has `param`.
  bool add(std::string_view param, ExportTensor t) {
    if (find(param)) return false;
    params.emplace_back(std::string(param), std::move(t));
    return true;
  }
  auto begin() const { return params.begin(); }
  auto end() const { return params.end(); }
};

struct NameHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

struct TorchExport {
  std::string dir;
  Json config;                    // config.json
  Json quantization_config;       // config["quantization_config"], null when absent
  std::vector<std::string> shards;  // file names, in the order read
  std::unordered_map<std::string, ModuleTensors, NameHash, std::equal_to<>> modules;  // "model.layers.0.self_attn.q_proj" -> tensors
  uint64_t tensor_count = 0;
  uint64_t data_bytes = 0;        // sum of every shard's data region
  std::vector<std::string> files; // every regular file in the folder (names)
};

// Reads the export in `dir`. Throws InputError naming the file and the problem
// (no config.json, unreadable JSON, a corrupt header, a shard the index names
// that is missing, a tensor that appears twice).
TorchExport read_torch_export(const std::string& dir);

// "model.layers.0.mlp.down_proj.weight_scale" -> {"model.layers.0.mlp.down_proj", "weight_scale"}.
std::pair<std::string_view, std::string_view> split_tensor_name(std::string_view name);

}  // namespace quarkplan::verify
