// What a Quark Hugging Face export holds, read without touching a weight byte:
// config.json (its quantization_config as Quark's exporter writes it) and the
// safetensors headers of every shard (through the index when there is one).
// `verify` compares this with the plan (torch_verify.cc).
#pragma once
#include <cstdint>
#include <map>
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

// One module's tensors, by parameter name ("weight", "weight_scale", ...).
using ModuleTensors = std::map<std::string, ExportTensor, std::less<>>;

struct TorchExport {
  std::string dir;
  Json config;                    // config.json
  Json quantization_config;       // config["quantization_config"], null when absent
  std::vector<std::string> shards;  // file names, in the order read
  std::map<std::string, ModuleTensors, std::less<>> modules;  // "model.layers.0.self_attn.q_proj" -> tensors
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
