// The multi-threaded shard scan: the index and every shard's header read on
// every core, each shard's names checked against the index, the tensor records
// written in place; and the checkpoint's size when the shards are not all here.
#include "intake/hf/checkpoint_scan.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <set>
#include <stdexcept>
#include <utility>

#include "common/error.h"
#include "common/files.h"
#include "common/parallel.h"
#include "common/string_arena.h"
#include "intake/model_reader.h"
#include "intake/module_names.h"

namespace fs = std::filesystem;

namespace quarkplan::hf_detail {
namespace {

// A shard named by the model must stay inside its folder. Hugging Face's own
// cache keeps snapshots as links into ../../blobs of the same repository;
// those are allowed, anything else that leaves the folder is refused.
fs::path shard_path(const fs::path& dir, const std::string& name) {
  // Fast path: a plain name of a regular file (not a link) right in the folder
  // cannot lead outside it; nor can a plain name that does not exist (yet).
  if (!name.empty() && name != "." && name != ".." && name.find_first_of(std::string("/\\\0", 3)) == std::string::npos) {
    fs::path p = dir / name;
    struct stat st {};
    if (::lstat(p.c_str(), &st) == 0 ? S_ISREG(st.st_mode) : errno == ENOENT) return p;
  }
  std::string why;
  if (auto p = resolve_inside(dir, name, why)) return *p;
  fs::path d = fs::weakly_canonical(dir);
  if (d.parent_path().filename() == "snapshots" &&
      d.parent_path().parent_path().filename().string().rfind("models--", 0) == 0 &&
      why.find("link") != std::string::npos) {
    fs::path repo = d.parent_path().parent_path();
    fs::path real = fs::weakly_canonical(d / name);
    auto r = real.string(), b = repo.string() + "/";
    if (r.compare(0, b.size(), b) == 0) return d / name;
  }
  throw InputError((dir / name).string(), "weight file refused: " + why);
}

// Parameters a stored tensor holds: quantization scales are not parameters
// (FP8 weight_scale_inv / weight_scale / input_scale, MXFP4 *_scales), and an
// MXFP4 *_blocks byte packs two 4-bit weights.
bool is_quant_scale(std::string_view name) {
  // Most names end in ".weight" or ".bias": the last byte rules them out
  // before any comparison (92,000 names, 7 suffixes).
  switch (name.empty() ? '\0' : name.back()) {
    case 's': return name.ends_with("_scales");
    case 'v': return name.ends_with(".weight_scale_inv");
    case '2': return name.ends_with(".weight_scale_2");
    case 'e':
      return name.ends_with("_scale") &&
             (name.ends_with(".weight_scale") || name.ends_with(".input_scale") || name.ends_with(".k_scale") || name.ends_with(".v_scale"));
    default: return false;
  }
}
// (From the record describe_name filled: the name is not examined twice.)
uint64_t logical_params(const LinearTensor& t, std::string_view dtype, uint64_t numel) {
  if (t.quant_scale) return 0;
  const bool blocks = t.loaded_size < t.name.size();  // "_blocks" was dropped
  if (blocks && (dtype == "U8" || dtype == "I8")) return numel * 2;
  return numel;
}

// What matching needs of a tensor's name (see LinearTensor).
void describe_name(LinearTensor& t) {
  std::string_view n = t.name;
  if (!n.empty() && n.back() == 's' && n.ends_with("_blocks")) n.remove_suffix(7);  // MXFP4 packed weights
  t.loaded_size = static_cast<uint32_t>(n.size());
  t.hash = name_hash(n);
  t.quant_scale = is_quant_scale(t.name);
}

// One shard's header, read on a worker thread, and compared with the names
// the index lists for it (both sorted, then merged: no shared table).
struct ShardScan {
  std::string name, path;
  const std::string_view* listed = nullptr;  // the index's names for this shard
  size_t listed_count = 0;
  bool missing = false;
  uint64_t not_in_header = 0, not_in_index = 0;
  std::string first_mismatch;
  // What the shard contributes, computed on the worker too: its records go to
  // `out` (its range of the table, sized by the index) when the header holds
  // as many tensors as the index lists, else to `tensors`.
  LinearTensor* out = nullptr;
  bool in_place = false;
  std::vector<LinearTensor> tensors;
  std::vector<std::pair<std::string_view, uint64_t>> params_by_dtype;
  uint64_t params = 0, bytes = 0;
};

// A small open-addressing set of the names the index lists for one shard; each
// header name is looked up once, and listed names never found are reported.
// `records`: the header's tensors in order, already hashed by summarize_shard.
void compare_with_index(ShardScan& r, const LinearTensor* records, size_t count) {
  size_t cap = 16;
  while (cap < 2 * r.listed_count) cap *= 2;
  std::vector<uint32_t> slots(cap, UINT32_MAX);  // index into r.listed
  std::vector<char> found(r.listed_count, 0);
  const size_t mask = cap - 1;
  for (uint32_t i = 0; i < r.listed_count; ++i)
    for (size_t s = name_hash(r.listed[i]) & mask;; s = (s + 1) & mask)
      if (slots[s] == UINT32_MAX) {
        slots[s] = i;
        break;
      } else if (r.listed[slots[s]] == r.listed[i]) {
        break;  // listed twice: once is enough
      }
  std::string first_unlisted;
  for (size_t k = 0; k < count; ++k) {
    const LinearTensor& t = records[k];
    // The record's hash is of the name as loaded: the stored name's, unless
    // "_blocks" was dropped.
    const uint64_t hash = t.loaded_size == t.name.size() ? t.hash : name_hash(t.name);
    bool hit = false;
    for (size_t s = hash & mask; slots[s] != UINT32_MAX; s = (s + 1) & mask)
      if (r.listed[slots[s]] == t.name) {
        found[slots[s]] = 1;
        hit = true;
        break;
      }
    if (!hit && !r.not_in_index++) first_unlisted = "'" + std::string(t.name) + "' is in " + r.name + " but not in the index";
  }
  for (size_t i = 0; i < r.listed_count; ++i)
    if (!found[i] && (i == 0 || r.listed[i] != r.listed[i - 1]) && !r.not_in_header++ && r.first_mismatch.empty())
      r.first_mismatch = "'" + std::string(r.listed[i]) + "' is listed for " + r.name + " but not in its header";
  if (r.first_mismatch.empty()) r.first_mismatch = first_unlisted;
}

// The parameter counts and tensor records of one parsed shard.
void summarize_shard(ShardScan& r, const safetensors::HeaderView& h) {
  r.in_place = r.out && h.tensors.size() == r.listed_count;
  if (!r.in_place) r.tensors.reserve(h.tensors.size());
  size_t k = 0;
  for (const auto& t : h.tensors) {
    LinearTensor lt;
    lt.name = t.name;
    lt.ndim = t.ndim;
    for (uint32_t d = 0; d < t.ndim && d < 3; ++d) lt.dims[d] = h.dims[t.dims_at + d];
    lt.shape_known = true;
    describe_name(lt);
    const uint64_t n = logical_params(lt, t.dtype, t.numel);
    auto it = std::find_if(r.params_by_dtype.begin(), r.params_by_dtype.end(), [&](const auto& d) { return d.first == t.dtype; });
    if (it == r.params_by_dtype.end()) r.params_by_dtype.emplace_back(t.dtype, n);
    else it->second += n;
    r.params += n;
    r.bytes += t.end - t.begin;
    if (r.in_place) ::new (static_cast<void*>(r.out + k++)) LinearTensor(lt);
    else r.tensors.push_back(lt);
  }
}

void scan_shard(const fs::path& dir, ShardScan& r, WeightFacts& w, size_t slot, bool check_index) {
  fs::path p = shard_path(dir, r.name);
  r.path = p.string();
  std::unique_ptr<safetensors::HeaderMap> map;
  try {
    map = std::make_unique<safetensors::HeaderMap>(r.path);
  } catch (const InputError&) {
    struct stat st {};
    if (::stat(r.path.c_str(), &st) != 0 && errno == ENOENT) {  // not downloaded: recorded, not an error
      r.missing = true;
      return;
    }
    throw;
  }
  try {
    safetensors::parse_view(map->prefix(), map->file_size(), w.headers[slot]);
  } catch (const InputError&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw InputError(r.path, std::string("not a valid safetensors file: ") + e.what());
  }
  w.maps[slot] = std::move(map);
  summarize_shard(r, w.headers[slot]);
  if (check_index) {
    const size_t count = w.headers[slot].tensors.size();
    compare_with_index(r, r.in_place ? r.out : r.tensors.data(), count);
  }
  // Done with the per-tensor records: this thread's next shard reuses the
  // memory instead of touching new pages (names point into the map, which stays).
  std::vector<safetensors::TensorView>().swap(w.headers[slot].tensors);
  std::vector<uint64_t>().swap(w.headers[slot].dims);
}

void add_shard(WeightFacts& w, ShardScan& r) {
  w.total_params += r.params;
  w.total_bytes += r.bytes;
  for (auto& [d, n] : r.params_by_dtype)
    if (n) w.params_by_dtype[safetensors::dtype_display(d)] += n;
}

// Names the index lists for a shard that is not here: shapes unknown.
void write_listed(LinearTensor* out, const ShardScan& r) {
  for (size_t i = 0; i < r.listed_count; ++i) {
    LinearTensor t;
    t.name = r.listed[i];
    describe_name(t);
    ::new (static_cast<void*>(out + i)) LinearTensor(t);
  }
}

// Bytes of a checkpoint that is not here, from its structure: the stored dtype,
// and for FP8 / MXFP4 releases the quantized Linear weights plus their scales.
uint64_t checkpoint_bytes(const ModelStructure& st, const hf::Config& cfg) {
  double base = cfg.dtype == "float32" ? 4 : 2;
  std::string qm = cfg.quant_method.value_or("");
  int64_t block_out = 0, block_in = 0;
  std::vector<QuarkPattern> keep;
  if (cfg.quantization_config.is_object()) {
    const Json& q = cfg.quantization_config;
    if (q.contains("weight_block_size") && q["weight_block_size"].is_array() && q["weight_block_size"].size() == 2 &&
        q["weight_block_size"][0].is_number_integer() && q["weight_block_size"][1].is_number_integer()) {
      block_out = q["weight_block_size"][0].get<int64_t>();
      block_in = q["weight_block_size"][1].get<int64_t>();
    }
    for (const char* k : {"modules_to_not_convert", "ignored_layers", "ignore"})
      if (q.contains(k) && q[k].is_array())
        for (const auto& p : q[k])
          if (p.is_string()) keep.emplace_back(p.get<std::string>(), PatternMatch::kWithChildren);  // a name also covers the modules under it
  }
  static const std::set<std::string, std::less<>> quantizable = {"attention", "mlp", "expert", "shared_expert", "indexer", "linear_attention", "mamba", "mtp"};
  double bytes = 0;
  for (const auto& t : st.tensors) {
    bool weight = !t.role.empty() && !t.name.ends_with(".bias") && !t.name.ends_with("_bias") && t.shape.size() >= 2;
    bool quantized = weight && quantizable.count(t.role) && (qm == "fp8" || qm == "mxfp4");
    if (quantized && qm == "mxfp4" && t.role != "expert") quantized = false;  // gpt-oss: experts only
    if (quantized)
      for (const auto& k : keep) quantized = quantized && !k.matches(t.name.substr(0, t.name.rfind('.')));
    if (!quantized) {
      bytes += static_cast<double>(t.numel) * base;
    } else if (qm == "fp8") {
      bytes += static_cast<double>(t.numel);
      uint64_t out = t.shape[t.shape.size() - 2], in = t.shape.back();
      uint64_t mats = out > 0 && in > 0 ? t.numel / (out * in) : 1;
      bytes += block_out > 0 ? 4.0 * static_cast<double>(mats * ((out + block_out - 1) / block_out) * ((in + block_in - 1) / block_in)) : 4.0;
    } else {  // MXFP4: 4-bit values and one E8M0 scale per 32
      bytes += static_cast<double>(t.numel) / 2 + static_cast<double>(t.numel) / 32;
    }
  }
  return static_cast<uint64_t>(bytes);
}

}  // namespace

void scan_weights(const fs::path& dir, Json& risks, std::vector<std::string>& partial, WeightFacts& w) {
  std::error_code ec;
  fs::path index = dir / "model.safetensors.index.json";
  if (fs::exists(index, ec)) {
    // The index is read with the zero-copy scanner (see json_scan.h): DeepSeek's
    // weight_map alone has 92,000 entries.
    w.index_map = std::make_unique<MappedFile>(index.string(), true);
    if (w.index_map->size() > (256ull << 20))
      throw InputError(index.string(), "file is " + std::to_string(w.index_map->size()) + " bytes, more than the 268435456 allowed for an index");
    safetensors::IndexView& ix = w.index;
    try {
      safetensors::parse_index(w.index_map->bytes(), ix);
    } catch (const std::runtime_error& e) {
      throw InputError(index.string(), std::string("invalid index: ") + e.what());
    }
    if (!ix.has_weight_map) throw InputError(index.string(), "has no weight_map object");
    w.index_total_size = ix.total_size;
    const auto& entries = ix.entries;
    const auto& shard_names = ix.shards;

    // Shards in name order (as listed before), read on every core; each
    // shard's listed names side by side (a counting sort keeps index order).
    const size_t n = shard_names.size();
    std::vector<uint32_t> order(n);
    for (uint32_t i = 0; i < n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return shard_names[a] < shard_names[b]; });
    std::vector<size_t> first(n + 1, 0);
    for (const auto& e : entries) ++first[e.second + 1];
    for (size_t i = 0; i < n; ++i) first[i + 1] += first[i];
    std::vector<std::string_view> by_shard(entries.size());
    {
      std::vector<size_t> at(first.begin(), first.end() - 1);
      for (const auto& e : entries) by_shard[at[e.second]++] = e.first;
    }
    std::vector<ShardScan> scans(n);
    w.headers.resize(n);
    w.maps.resize(n);
    w.tensors.allocate(entries.size());
    size_t offset = 0;
    for (size_t slot = 0; slot < n; ++slot) {
      uint32_t id = order[slot];
      scans[slot].name = std::string(shard_names[id]);
      scans[slot].listed = by_shard.data() + first[id];
      scans[slot].listed_count = first[id + 1] - first[id];
      scans[slot].out = w.tensors.at(offset);
      offset += scans[slot].listed_count;
    }
    parallel_for(n, [&](size_t slot) { scan_shard(dir, scans[slot], w, slot, true); });

    // Each shard's range holds its records (or, missing, its listed names) —
    // unless a header disagrees with the index on the count: then the table
    // is laid out again.
    bool in_place = true;
    for (auto& r : scans) {
      if (r.missing) write_listed(r.out, r);
      in_place = in_place && (r.missing || r.in_place);
    }
    if (in_place) {
      w.tensors.set_size(entries.size());
    } else {
      TensorTable old = std::move(w.tensors);
      size_t total = 0;
      for (const auto& r : scans) total += r.missing || r.in_place ? r.listed_count : r.tensors.size();
      w.tensors.allocate(total);
      for (const auto& r : scans)
        if (r.missing || r.in_place)
          for (size_t i = 0; i < r.listed_count; ++i) w.tensors.append(r.out[i]);
        else
          for (const auto& t : r.tensors) w.tensors.append(t);
    }
    size_t present = 0;
    for (size_t slot = 0; slot < n; ++slot) {
      ShardScan& r = scans[slot];
      if (r.missing) {
        w.missing_shards.push_back(r.name);
        continue;
      }
      ++present;
      w.files.push_back(r.name);
      w.shard_paths.push_back(r.path);
      if (r.not_in_header + r.not_in_index) {
        if (!w.index_mismatches) w.first_mismatch = r.first_mismatch;
        w.index_mismatches += r.not_in_header + r.not_in_index;
      }
      add_shard(w, r);
    }
    if (present == 0) {
      w.source = "index";
      w.missing_shards.clear();  // an index without weights: names and total size only
      risks.push_back(make_risk("torch.intake.weights_missing", "medium",
                                "Only model.safetensors.index.json is here, no weight shards: tensor names and total size come from the index, shapes and parameter counts are estimated.",
                                "Download the .safetensors shards before running quantization (intake itself does not need them)."));
    } else {
      w.source = "safetensors";
      w.exact = w.missing_shards.empty();
      if (!w.missing_shards.empty()) {
        const bool one = w.missing_shards.size() == 1;
        partial.push_back(std::to_string(w.missing_shards.size()) + (one ? " weight shard named by the index is missing" : " weight shards named by the index are missing"));
        risks.push_back(make_risk("torch.intake.missing_shards", "high",
                                  std::to_string(w.missing_shards.size()) + " of " + std::to_string(n) +
                                      " shards named by model.safetensors.index.json " + (one ? "is" : "are") + " missing (first: " + w.missing_shards.front() + ").",
                                  "Finish the download (all shards), then re-run intake."));
      }
    }
    if (w.index_mismatches) {
      partial.push_back("the index and the shard headers disagree");
      risks.push_back(make_risk("torch.intake.index_mismatch", "high",
                                std::to_string(w.index_mismatches) + " tensor(s) disagree between model.safetensors.index.json and the shard headers: " + w.first_mismatch + ".",
                                "The shards belong to another revision: re-download the model so the index and shards match."));
    }
    return;
  }
  std::vector<fs::path> shards, bins;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    auto ext = e.path().extension();
    if (ext == ".safetensors") shards.push_back(e.path());
    else if (ext == ".bin" || ext == ".pth" || ext == ".pt") bins.push_back(e.path());
  }
  std::sort(shards.begin(), shards.end());
  if (!shards.empty()) {
    w.source = "safetensors";
    w.exact = true;
    std::vector<ShardScan> scans(shards.size());
    w.headers.resize(shards.size());
    w.maps.resize(shards.size());
    for (size_t i = 0; i < shards.size(); ++i) scans[i].name = shards[i].filename().string();
    parallel_for(shards.size(), [&](size_t i) { scan_shard(dir, scans[i], w, i, false); });
    size_t total = 0;
    for (const auto& r : scans) total += r.tensors.size();
    w.tensors.allocate(total);
    for (size_t i = 0; i < shards.size(); ++i) {
      w.files.push_back(scans[i].name);
      w.shard_paths.push_back(scans[i].path);
      add_shard(w, scans[i]);
      for (const auto& t : scans[i].tensors) w.tensors.append(t);
    }
    return;
  }
  if (!bins.empty()) {
    w.source = "bin";
    for (auto& b : bins) w.files.push_back(b.filename().string());
    risks.push_back(make_risk("torch.intake.pickle_weights", "low",
                              "Weights are PyTorch .bin/.pth files (pickle): their headers cannot be read safely, so counts are estimated from config.json.",
                              "Prefer a safetensors export of the model; loading .bin files runs pickle code."));
    return;
  }
  risks.push_back(make_risk("torch.intake.weights_missing", "medium",
                            "No weight files (.safetensors/.bin) in the folder: parameter counts and sizes are estimated from config.json.",
                            "Download the weights before running quantization (intake itself does not need them)."));
}

CheckpointSize checkpoint_size(const WeightFacts& w, const std::optional<ModelStructure>& st, const hf::Config& cfg) {
  uint64_t total_params = w.exact ? w.total_params : st ? st->total_params : 0;
  uint64_t size_bytes = 0;
  std::string params_method;
  if (w.exact) {
    size_bytes = w.total_bytes;
    params_method = "exact from safetensors headers";
  } else if (w.index_total_size) {
    size_bytes = *w.index_total_size;
    params_method = "size from the index's metadata.total_size; parameters from the " + (st ? st->family : std::string("?")) +
                    " structure of config.json";
  } else if (st) {
    size_bytes = checkpoint_bytes(*st, cfg);
    params_method = "estimated from config.json with the " + st->family + " structure (every tensor of the checkpoint)";
  } else {
    params_method = "unknown: config.json lacks the layer count or hidden size";
  }
  return {total_params, size_bytes, std::move(params_method)};
}

}  // namespace quarkplan::hf_detail
