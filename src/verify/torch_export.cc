// Reading a Quark Hugging Face export: the index (when present) decides which
// shards belong to the checkpoint; every shard's header is read from a memory
// map of its first bytes (safetensors::HeaderMap), the tensor bytes never.
#include "verify/torch_export.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include "common/error.h"
#include "common/files.h"
#include "common/parallel.h"
#include "intake/safetensors_reader.h"

namespace fs = std::filesystem;

namespace quarkplan::verify {

std::pair<std::string_view, std::string_view> split_tensor_name(std::string_view name) {
  size_t dot = name.rfind('.');
  if (dot == std::string_view::npos) return {std::string_view{}, name};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

namespace {

// A shard name from the index must be a plain file of the folder.
fs::path shard_in(const fs::path& dir, const std::string& name) {
  std::string why;
  if (auto p = resolve_inside(dir, name, why)) return *p;
  throw InputError((dir / name).string(), "shard refused: " + why);
}

}  // namespace

TorchExport read_torch_export(const std::string& dir_text) {
  fs::path dir(dir_text);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError(dir_text, "not a folder (a Hugging Face export is a folder with config.json and .safetensors files)");
  TorchExport out;
  out.dir = dir_text;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file(ec)) out.files.push_back(e.path().filename().string());
  std::sort(out.files.begin(), out.files.end());
  fs::path config = dir / "config.json";
  if (!fs::exists(config, ec)) throw InputError(config.string(), "missing: a Hugging Face export has a config.json");
  out.config = read_json_file(config.string());
  if (!out.config.is_object()) throw InputError(config.string(), "not a JSON object");
  if (out.config.contains("quantization_config")) out.quantization_config = out.config["quantization_config"];

  // Which shards: the index's, else every .safetensors file of the folder.
  fs::path index = dir / "model.safetensors.index.json";
  if (fs::exists(index, ec)) {
    std::string text = read_small_file(index.string());
    safetensors::IndexView ix;
    try {
      safetensors::parse_index(text, ix);
    } catch (const std::exception& e) {
      throw InputError(index.string(), e.what());
    }
    if (!ix.has_weight_map) throw InputError(index.string(), "no weight_map");
    for (auto s : ix.shards) out.shards.emplace_back(s);
  } else {
    for (const auto& f : out.files)
      if (f.size() > 12 && f.ends_with(".safetensors")) out.shards.push_back(f);
  }
  if (out.shards.empty()) throw InputError(dir_text, "no .safetensors files: Quark's Hugging Face export writes its weights as safetensors");

  // Headers are read on every core; the merge below is in shard order, so
  // the result does not depend on scheduling.
  struct Read {
    std::unique_ptr<safetensors::HeaderMap> map;
    safetensors::HeaderView header;
  };
  std::vector<Read> reads(out.shards.size());
  parallel_for(out.shards.size(), [&](size_t i) {
    fs::path p = shard_in(dir, out.shards[i]);
    if (!fs::exists(p)) throw InputError(p.string(), "missing: the index names this shard");
    reads[i].map = std::make_unique<safetensors::HeaderMap>(p.string());
    try {
      safetensors::parse_view(reads[i].map->prefix(), reads[i].map->file_size(), reads[i].header);
    } catch (const std::exception& e) {
      throw InputError(p.string(), e.what());
    }
  });
  size_t total = 0;
  for (const auto& rd : reads) total += rd.header.tensors.size();
  out.modules.reserve(total / 2 + 16);
  for (size_t i = 0; i < reads.size(); ++i) {
    const auto& h = reads[i].header;
    out.data_bytes += h.data_bytes;
    for (const auto& t : h.tensors) {
      auto [module, param] = split_tensor_name(t.name);
      ExportTensor et;
      et.dtype = std::string(t.dtype);
      et.shape.assign(h.dims.begin() + t.dims_at, h.dims.begin() + t.dims_at + t.ndim);
      et.shard = static_cast<uint32_t>(i);
      et.bytes = t.end - t.begin;
      auto mit = out.modules.find(module);
      if (mit == out.modules.end()) mit = out.modules.emplace(std::string(module), ModuleTensors{}).first;
      if (!mit->second.add(param, std::move(et))) {
        throw InputError((dir / out.shards[i]).string(), "tensor " + std::string(t.name) + " appears twice in the checkpoint");
      }
      ++out.tensor_count;
    }
  }
  return out;
}

}  // namespace quarkplan::verify
