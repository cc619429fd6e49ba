// HfModelReader: the Torch flavour of model_analysis.json from a Hugging Face
// folder — config.json plus safetensors headers (or the index alone), never
// the weights (rules 29-42 of quark_contracts.md §4.3).
#include <sys/stat.h>

#include <algorithm>
#include <type_traits>
#include <cerrno>
#include <cstring>
#include <atomic>
#include <deque>
#include <exception>
#include <memory>
#include <thread>
#include <unordered_map>
#include <cmath>
#include <filesystem>
#include <future>
#include <map>
#include <set>
#include <unordered_set>

#include "catalog/catalog.h"
#include "common/error.h"
#include "common/files.h"
#include "common/keep_until_exit.h"
#include "common/parallel.h"
#include "common/string_arena.h"
#include "common/mapped_file.h"
#include "intake/hf_config.h"
#include "common/json_scan.h"
#include "intake/model_names_gen.h"
#include "common/units.h"
#include "intake/model_reader.h"
#include "intake/model_structure.h"
#include "intake/module_names.h"
#include "intake/safetensors_reader.h"
#include "intake/weight_stats.h"

namespace fs = std::filesystem;

namespace quarkplan {
namespace {

double round3(double v) { return std::round(v * 1000.0) / 1000.0; }

bool contains(const Json& arr, const std::string& v) {
  return std::find(arr.begin(), arr.end(), v) != arr.end();
}

// Weights as found on disk. The tensor names are views into the index text
// and the shard headers this object keeps (it is filled in place, never moved).
// Every tensor found, in shard order. Storage is allocated once, unconstructed,
// and each shard's records are written into their own range by the worker that
// read the header: DeepSeek-V3's 92,000 records are neither copied nor faulted
// in on the main thread. (LinearTensor is trivially destructible.)
class TensorTable {
 public:
  static_assert(std::is_trivially_destructible_v<LinearTensor> && std::is_trivially_copyable_v<LinearTensor>);
  void allocate(size_t n) {
    data_.reset(n ? static_cast<LinearTensor*>(::operator new(n * sizeof(LinearTensor))) : nullptr);
    capacity_ = n;
    size_ = 0;
  }
  LinearTensor* at(size_t i) { return data_.get() + i; }  // storage, for writers
  void set_size(size_t n) { size_ = std::min(n, capacity_); }
  void append(const LinearTensor& t) { ::new (static_cast<void*>(data_.get() + size_++)) LinearTensor(t); }  // within capacity
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const LinearTensor& operator[](size_t i) const { return data_.get()[i]; }
  LinearTensor& mutable_at(size_t i) { return data_.get()[i]; }
  const LinearTensor* begin() const { return data_.get(); }
  const LinearTensor* end() const { return data_.get() + size_; }

 private:
  struct Free {
    void operator()(LinearTensor* p) const { ::operator delete(p); }
  };
  std::unique_ptr<LinearTensor, Free> data_;
  size_t capacity_ = 0, size_ = 0;
};

struct WeightFacts {
  std::string source = "none";  // safetensors | index | bin | none
  TensorTable tensors;  // every tensor found (headers, or names only from the index)
  std::deque<NameStore> made_names;   // names that had to be made (renamed, expanded)
  std::map<std::string, uint64_t> params_by_dtype;  // exact, from headers
  uint64_t total_params = 0, total_bytes = 0;
  bool exact = false;           // every shard's header was read
  std::optional<uint64_t> index_total_size;
  std::vector<std::string> files, missing_shards;
  std::vector<std::string> shard_paths;  // resolved paths of the shards read
  uint64_t index_mismatches = 0;
  std::string first_mismatch;
  // What the views point into.
  std::unique_ptr<MappedFile> index_map;
  safetensors::IndexView index;
  std::vector<std::unique_ptr<safetensors::HeaderMap>> maps;
  std::vector<safetensors::HeaderView> headers;  // sized once: views into `escaped` stay put

  WeightFacts() = default;
  WeightFacts(const WeightFacts&) = delete;
  WeightFacts& operator=(const WeightFacts&) = delete;
  // Moving keeps every view valid: the maps, tables and name stores are heap
  // objects whose addresses do not change.
  WeightFacts(WeightFacts&&) = default;
};

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

bool ends_with(std::string_view s, std::string_view suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

// Parameters a stored tensor holds: quantization scales are not parameters
// (FP8 weight_scale_inv / weight_scale / input_scale, MXFP4 *_scales), and an
// MXFP4 *_blocks byte packs two 4-bit weights.
bool is_quant_scale(std::string_view name) {
  // Most names end in ".weight" or ".bias": the last byte rules them out
  // before any comparison (92,000 names, 7 suffixes).
  switch (name.empty() ? '\0' : name.back()) {
    case 's': return ends_with(name, "_scales");
    case 'v': return ends_with(name, ".weight_scale_inv");
    case '2': return ends_with(name, ".weight_scale_2");
    case 'e':
      return ends_with(name, "_scale") &&
             (ends_with(name, ".weight_scale") || ends_with(name, ".input_scale") || ends_with(name, ".k_scale") || ends_with(name, ".v_scale"));
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
  if (!n.empty() && n.back() == 's' && ends_with(n, "_blocks")) n.remove_suffix(7);  // MXFP4 packed weights
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
          if (p.is_string()) keep.emplace_back(p.get<std::string>());
  }
  static const std::set<std::string, std::less<>> quantizable = {"attention", "mlp", "expert", "shared_expert", "indexer", "linear_attention", "mamba", "mtp"};
  double bytes = 0;
  for (const auto& t : st.tensors) {
    bool weight = !t.role.empty() && !ends_with(t.name, ".bias") && !ends_with(t.name, "_bias") && t.shape.size() >= 2;
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

// Layer kinds as runs: ["attention+dense x3", "attention+moe x58"].
Json collapse_kinds(const std::vector<std::string>& kinds) {
  Json out = Json::array();
  for (size_t i = 0; i < kinds.size();) {
    size_t j = i;
    while (j < kinds.size() && kinds[j] == kinds[i]) ++j;
    out.push_back(kinds[i] + " x" + std::to_string(j - i));
    i = j;
  }
  return out;
}

// "1-3, 7, 9-12": layer indices as runs, the first `most` runs.
std::string index_runs(const std::vector<int64_t>& idx, size_t most = 4) {
  std::string out;
  size_t runs = 0;
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && idx[j + 1] == idx[j] + 1) ++j;
    if (runs == most) return out + ", ...";
    if (runs) out += ", ";
    out += std::to_string(idx[i]);
    if (j > i) {
      out += '-';
      out += std::to_string(idx[j]);
    }
    ++runs;
    i = j + 1;
  }
  return out;
}

// The decoder layers config.json declares against those the checkpoint holds.
// An edited config (or a pruned or truncated checkpoint) loads with layers
// initialised at random (missing) or weights dropped (extra): the model Quark
// calibrates is not the model the user has, and every count here is off.
// The checkpoint's layers (`tensors`' loaded names) against config.json's count.
void check_layer_count(const ModelStructure& st, const hf::Config& cfg, const TensorTable& tensors, Json& risks,
                       std::vector<std::string>& partial) {
  std::string prefix;  // "model.layers.": the language model's layer list
  for (const auto& m : st.modules) {
    if (m.part != Part::kLanguage) continue;
    for (size_t p = 0; p + 1 < m.name.size(); ++p)
      if (m.name[p] == '.' && std::isdigit(static_cast<unsigned char>(m.name[p + 1]))) {
        prefix = m.name.substr(0, p + 1);
        break;
      }
    if (!prefix.empty()) break;
  }
  if (prefix.empty() || !cfg.num_hidden_layers) return;
  const int64_t declared = *cfg.num_hidden_layers, limit = declared + st.mtp_layers;
  std::vector<char> seen(static_cast<size_t>(declared), 0);
  std::set<int64_t> extra;
  for (const auto& t : tensors) {
    const std::string_view n = t.name.substr(0, t.loaded_size);
    if (n.size() <= prefix.size() || n.compare(0, prefix.size(), prefix) != 0) continue;
    int64_t idx = 0;
    size_t p = prefix.size(), digits = 0;
    while (p < n.size() && digits < 9 && std::isdigit(static_cast<unsigned char>(n[p]))) idx = idx * 10 + (n[p++] - '0'), ++digits;
    if (digits == 0 || (p < n.size() && n[p] != '.')) continue;
    if (idx < declared) seen[static_cast<size_t>(idx)] = 1;
    else if (idx >= limit) extra.insert(idx);
  }
  std::vector<int64_t> missing;
  for (int64_t i = 0; i < declared; ++i)
    if (!seen[static_cast<size_t>(i)]) missing.push_back(i);
  if (static_cast<int64_t>(missing.size()) == declared) return;  // names the structure does not know: nothing to compare
  const std::string key = cfg.key_for("num_hidden_layers");
  const std::string fix = "Restore the " + key + " the checkpoint was saved with";
  if (!missing.empty() || !extra.empty()) partial.push_back("config.json's " + key + " disagrees with the layers in the checkpoint");
  if (!missing.empty()) {
    std::string msg = "config.json declares " + std::to_string(declared) + (declared == 1 ? " decoder layer (" : " decoder layers (") + key +
                      ") but the checkpoint holds weights for " + std::to_string(declared - static_cast<int64_t>(missing.size())) +
                      (missing.size() == 1 ? " (none for layer " : " (none for layers ") + index_runs(missing) +
                      "): transformers would initialise the missing layers at random.";
    risks.push_back(make_risk("torch.intake.layer_count", "high", msg, fix + ", or download the complete checkpoint, then re-run intake."));
  }
  if (!extra.empty()) {
    std::string declared_text = std::to_string(declared) + (declared == 1 ? " decoder layer" : " decoder layers") + " config.json declares (" + key;
    if (st.mtp_layers) declared_text += " plus " + std::to_string(st.mtp_layers) + " MTP";
    std::string msg = (extra.size() == 1 ? "The checkpoint holds weights for layer " : "The checkpoint holds weights for layers ") +
                      index_runs({extra.begin(), extra.end()}) + " beyond the " + declared_text +
                      "): transformers would drop them, so the model quantized is not the model saved.";
    risks.push_back(make_risk("torch.intake.layer_count", "high", msg, fix + ", then re-run intake."));
  }
}

class HfModelReader : public ModelReader {
 public:
  explicit HfModelReader(std::string dir) : dir_(std::move(dir)) {}
  std::string format() const override { return "hf"; }
  Json analyze(const IntakeContext& ctx) override;

 private:
  std::string dir_;
};


Json HfModelReader::analyze(const IntakeContext& ctx) {

  const Catalog& cat = ctx.catalog ? *ctx.catalog : Catalog::load();
  const Json& tc = cat.torch();
  fs::path dir = fs::absolute(dir_).lexically_normal();
  fs::path cfg_path = dir / "config.json";
  if (!fs::exists(cfg_path)) throw InputError(dir.string(), "no config.json: not a Hugging Face model folder");
  hf::Config cfg = hf::parse_config(read_small_file(cfg_path.string(), 16ull << 20), cfg_path.string());
  if (!cfg.tie_word_embeddings_stated) {
    const Json& tied = cat.torch()["tied_embeddings_by_default"];
    std::string text_type = cfg.text_model_type.empty() ? cfg.model_type : cfg.text_model_type;
    cfg.tie_word_embeddings = std::find(tied.begin(), tied.end(), text_type) != tied.end() ||
                              std::find(tied.begin(), tied.end(), cfg.model_type) != tied.end();
  }

  Json risks = Json::array();
  std::vector<std::string> partial;
  const Json* tmpl = cat.torch_template(cfg.model_type);

  // The model's structure from config.json and its family's description: one
  // source for parameters, module names and roles, and the KV cache. Bad
  // values in config.json are input errors here, before anything is sized.
  // The family is looked up (architectures.json parsed) and the structure
  // built on its own thread while the shard headers are read: it needs only
  // config.json and the catalog (~20 ms of DeepSeek-V3's 45,000 modules).
  auto find_family = [&cat, &cfg](bool& guessed) {
    const Json* family = architecture_family(cat.architectures(), cfg);
    guessed = family == nullptr;
    if (!family)
      for (const auto& f : cat.architectures()["families"])
        if (f["family"] == "llama") family = &f;
    return family;
  };
  bool family_guessed = false;
  std::future<ModelStructure> structure_job;
  const bool have_structure = cfg.num_hidden_layers && cfg.hidden_size;
  if (!have_structure) {
    partial.push_back("config.json lacks the layer count or hidden size");
    find_family(family_guessed);
  } else {
    structure_job = std::async(std::launch::async, [&cfg, &cat, &family_guessed, find_family, file = cfg_path.string()] {
      const Json* family = find_family(family_guessed);
      return build_structure(cfg, *family, cat.architectures(), file);
    });
  }
  // The first risk, once the structure is built (see below).
  auto guessed_risk = [&] {
    return make_risk("torch.intake.structure_guessed", "medium",
                     "quarkplan has no structure description for model type '" + cfg.model_type +
                         "': parameter counts and module names follow the Llama layout and may be wrong.",
                     "Trust the counts only when the safetensors shards are present (they are then read from the headers).");
  };
  const std::string& mt = cfg.model_type;

  // Template support (rule 32). Without a template, the hint's exclude list
  // gains the family's router pattern once the structure is built.
  size_t no_template_risk = SIZE_MAX;
  if (tc["unsupported_model_types"].contains(mt)) {
    partial.push_back("Quark cannot quantize model type '" + mt + "'");
    risks.push_back(make_risk("torch.intake.unsupported_model_type", "high",
                              tc["unsupported_model_types"][mt].get<std::string>() + ".",
                              "Use a supported variant of the model, or register your own template with LLMTemplate.register_template()."));
  } else if (!tmpl) {
    no_template_risk = risks.size();
    partial.push_back("no Quark template for model type '" + mt + "'");
    risks.push_back(make_risk("torch.intake.no_template", "high",
                              "Model type '" + mt + "' has no Quark LLM template: quantize_quark.py rejects it (ValueError listing the supported types).",
                              "Register a template with LLMTemplate.register_template(LLMTemplate(model_type='" + mt +
                                  "', kv_layers_name=[...], q_layer_name=[...], exclude_layers_name=['lm_head'])) and re-run intake, or pick a supported model."));
  }

  // Remote code (rule 37): auto_map means the repository ships its own code.
  bool native = contains(tc["transformers_native_model_types"], mt);
  bool needs_remote = cfg.has_auto_map && !native;
  if (needs_remote) {
    if (!ctx.trust_remote_code) partial.push_back("the model needs trust_remote_code, not approved");
    risks.push_back(make_risk("torch.intake.trust_remote_code", "high",
                              "config.json has an auto_map: loading the model runs Python code from the model repository (trust_remote_code=True)" +
                                  std::string(ctx.trust_remote_code ? "; approved with --trust-remote-code." : ", which is not approved."),
                              "Read the repository's modeling code, then approve with --trust-remote-code; otherwise the plan stays a draft and the command keeps --no_trust_remote_code."));
  } else if (cfg.has_auto_map) {
    risks.push_back(make_risk("torch.intake.auto_map_not_needed", "low",
                              "config.json has an auto_map, but transformers implements '" + mt + "' itself: remote code is not needed.",
                              "Keep --no_trust_remote_code (needs a transformers version that includes '" + mt + "')."));
  }

  // Pre-quantized checkpoints.
  if (cfg.quant_method) {
    const Json& rec = tc["pre_quantized_recovery"];
    std::string hint = rec.contains(*cfg.quant_method) ? rec[*cfg.quant_method].get<std::string>() : rec["*"].get<std::string>();
    risks.push_back(make_risk("torch.intake.pre_quantized", "high",
                              "The checkpoint is already quantized (quantization_config.quant_method = '" + *cfg.quant_method + "').",
                              hint));
  }

  // Weights.
  WeightFacts w;
  try {
    scan_weights(dir, risks, partial, w);
  } catch (...) {
    if (structure_job.valid()) structure_job.get();  // a bad config.json is reported first, as before
    throw;
  }
  std::optional<ModelStructure> st;
  if (structure_job.valid()) {
    st = structure_job.get();
    if (family_guessed) {
      risks.insert(risks.begin(), guessed_risk());
      if (no_template_risk != SIZE_MAX) ++no_template_risk;
    }
  }
  if (st && no_template_risk < risks.size()) {
    std::set<std::string> routers;  // "*mlp.gate": what follows the layer index
    for (const auto& m : st->modules)
      if (m.role == "router" && m.part == Part::kLanguage) {
        const std::string n(m.name);
        for (size_t p = 0; p + 2 < n.size(); ++p)
          if (n[p] == '.' && std::isdigit(static_cast<unsigned char>(n[p + 1]))) {
            if (size_t end = n.find('.', p + 1); end != std::string::npos) routers.insert("*" + n.substr(end + 1));
            break;
          }
      }
    // The head as the model names it: a bare 'lm_head' (matched against the
    // whole name) misses 'language_model.lm_head'.
    std::string head = "lm_head";
    for (const auto& m : st->modules)
      if (m.role == "lm_head" && m.part == Part::kLanguage) {
        head = m.name == "lm_head" ? std::string(m.name) : "*" + std::string(m.name.substr(m.name.rfind('.') + 1));
        break;
      }
    if (!routers.empty() || head != "lm_head") {
      std::string list = "'" + head + "'";
      for (const auto& r : routers) list += ", '" + r + "'";
      Json& hint = risks[no_template_risk]["recovery_hint"];
      if (hint.is_string()) {
        std::string h = hint.get<std::string>();
        if (size_t at = h.find("exclude_layers_name=['lm_head']"); at != std::string::npos)
          h.replace(at, std::string("exclude_layers_name=['lm_head']").size(), "exclude_layers_name=[" + list + "]");
        if (!routers.empty()) {
          if (!h.empty() && h.back() == '.') h.pop_back();
          h += "; listing the routers keeps them in float (quantized routers pick the wrong experts).";
        }
        hint = h;
      }
    }
  }

  // Linear modules (rule 39): the structure's modules, kept when their weight is
  // in the checkpoint (names as transformers loads them), with the header's
  // shape when known; checkpoint Linears the structure does not describe are
  // added by name. Without weights: the structure's modules. Names stay views
  // (into the headers, the structure, or `made`): 45,000 modules, no copies.
  std::vector<SizedView> sized;
  if (st) sized.reserve(st->modules.size());
  std::string names_source;
  bool fused_experts = st && st->fused_experts;
  uint64_t linear_params = 0;
  // Linear modules whose weight is the input embedding's (tied lm_head):
  // counted once in total_params and the checkpoint size.
  Json tied_modules = Json::array();
  NameStore& made = w.made_names.emplace_back();
  auto add_module = [&](std::string_view name, uint64_t params, uint64_t in, std::string_view role) {
    linear_params += params;
    sized.push_back({name, params, in, role});
  };
  if (!w.tensors.empty()) {
    names_source = w.source == "index" ? "safetensors_index" : "safetensors";
    const bool renames = st && !st->checkpoint_renames.empty();
    // Names as transformers loads them: the scan's workers dropped MXFP4's
    // "_blocks" and hashed the names; the family's renames (two families)
    // replace a name and its hash here, in place.
    if (renames)
      for (size_t i = 0; i < w.tensors.size(); ++i) {
        LinearTensor& t = w.tensors.mutable_at(i);
        std::string r = st->loaded_name(t.name);
        if (r == t.name) continue;
        std::string_view n = made.emplace_back(std::move(r));
        if (ends_with(n, "_blocks")) n.remove_suffix(7);
        t.name = n;
        t.loaded_size = static_cast<uint32_t>(n.size());
        t.hash = name_hash(n);
      }
    const size_t count = w.tensors.size();
    auto loaded = [&w](size_t i) { return w.tensors[i].name.substr(0, w.tensors[i].loaded_size); };
    // The names in an open-addressing table (90,000 of them for DeepSeek-V3),
    // each slot tagged with the top of its hash: a probe reads a name (in one
    // of 163 headers: a cache miss) only when the tags agree.
    struct Slot {
      uint32_t index = UINT32_MAX, tag = 0;
    };
    size_t cap = 16;
    while (cap < 2 * count) cap *= 2;
    const size_t mask = cap - 1;
    std::vector<Slot> slots(cap);
    for (uint32_t i = 0; i < count; ++i) {
      const uint64_t hash = w.tensors[i].hash;
      const uint32_t tag = static_cast<uint32_t>(hash >> 32);
      for (size_t h = hash & mask;; h = (h + 1) & mask)
        if (slots[h].index == UINT32_MAX) {
          slots[h] = {i, tag};
          break;
        } else if (slots[h].tag == tag && loaded(slots[h].index) == loaded(i)) {
          break;
        }
    }
    auto find = [&](std::string_view name, uint64_t hash) -> uint32_t {
      const uint32_t tag = static_cast<uint32_t>(hash >> 32);
      for (size_t h = hash & mask; slots[h].index != UINT32_MAX; h = (h + 1) & mask)
        if (slots[h].tag == tag && loaded(slots[h].index) == name) return slots[h].index;
      return UINT32_MAX;
    };
    std::vector<char> explained(count, 0);
    if (st) {
      const size_t n = st->tensors.size();
      std::vector<uint32_t> found(n);  // structure tensor -> checkpoint tensor
      const size_t chunks = std::min<size_t>(n, 64);
      parallel_for(chunks, [&](size_t c) {
        for (size_t k = n * c / chunks, end = n * (c + 1) / chunks; k < end; ++k) {
          found[k] = find(st->tensors[k].name, st->tensors[k].hash);
        }
      });
      for (uint32_t i : found)
        if (i != UINT32_MAX) explained[i] = 1;
      for (const auto& m : st->modules) {
        if (m.tied) {
          // A checkpoint that stores the tied head anyway (some exporters do)
          // holds its own weight: then it is an ordinary, stored Linear.
          const std::string own = std::string(m.name) + ".weight";
          const uint32_t j = find(own, name_hash(own));
          if (j != UINT32_MAX) {
            explained[j] = 1;
            const LinearTensor& t = w.tensors[j];
            bool two_d = t.shape_known && t.ndim == 2;
            add_module(m.name, two_d ? t.dims[0] * t.dims[1] : m.out * m.in, two_d ? t.dims[1] : m.in, m.role);
          } else if (found[m.source] != UINT32_MAX) {  // the embedding it shares is in the checkpoint
            add_module(m.name, m.out * m.in, m.in, m.role);
            tied_modules.push_back(m.name);
          }
          continue;
        }
        uint32_t i = found[m.source];
        if (i == UINT32_MAX) continue;
        const LinearTensor& t = w.tensors[i];
        bool two_d = t.shape_known && t.ndim == 2 && m.source_is_weight;
        add_module(m.name, two_d ? t.dims[0] * t.dims[1] : m.out * m.in, two_d ? t.dims[1] : m.in, m.role);
      }
    }
    std::vector<LinearTensor> rest;
    // Quantization scales (FP8 weight_scale_inv: 45,000 of them in DeepSeek-V3)
    // are never Linear weights: not worth a copy.
    for (size_t i = 0; i < w.tensors.size(); ++i)
      if (!explained[i] && !w.tensors[i].quant_scale) {
        LinearTensor r = w.tensors[i];
        r.name = loaded(i);
        rest.push_back(r);
      }
    bool rest_fused = false;
    for (const auto& lm : linear_modules_from_tensors(rest, cfg, rest_fused, made)) {
      std::string_view role;
      if (st) role = made.emplace_back(st->classify(lm.name).first);
      add_module(lm.name, lm.params, lm.in_features, role);
    }
    fused_experts = fused_experts || rest_fused;
    if (st && w.missing_shards.empty()) check_layer_count(*st, cfg, w.tensors, risks, partial);
  } else if (st) {
    names_source = "config";
    for (const auto& m : st->modules) {
      add_module(m.name, m.out * m.in, m.in, m.role);
      if (m.tied) tied_modules.push_back(m.name);
    }
  }
  std::vector<SizedName> collapsed = collapse_sized(sized);
  Json names_json = Json::array(), shapes_json = Json::array(), roles_json = Json::array();
  for (const auto& c : collapsed) {
    names_json.push_back(c.name);
    shapes_json.push_back({c.params, c.in_features});
    roles_json.push_back(c.role);
  }

  // Parameters and size: exact from the headers when every shard is here; else
  // the structure's count, with the index's byte total when there is one.
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

  bool is_moe = st ? st->is_moe : cfg.num_experts.has_value();
  int64_t num_experts = st ? st->num_experts : cfg.num_experts.value_or(0);
  if (is_moe)
    risks.push_back(make_risk("torch.intake.moe_preparation", "medium",
                              "Mixture-of-experts model (" + std::to_string(num_experts) +
                                  " experts): Quark replaces the expert modules with per-expert Linear layers before quantizing (preprocess_for_quantization / prepare_for_moe_quant)" +
                                  (fused_experts ? "; the checkpoint stores experts fused in 3-D tensors." : "."),
                              "Use transformers >= 5 with Quark's preprocess_for_quantization; calibrate with enough samples to reach every expert."));
  double gb = static_cast<double>(size_bytes) / 1e9;
  const Json& big = tc["large_model_gb"];
  if (gb > big["high"].get<double>())
    risks.push_back(make_risk("torch.intake.very_large", "high",
                              "The checkpoint is " + format_bytes(size_bytes) + ": it does not fit one accelerator for calibration.",
                              "Plan for --multi_gpu (or --multi_device, without algorithms) or --file2file_quantization for weight-only / dynamic schemes."));
  else if (gb > big["medium"].get<double>())
    risks.push_back(make_risk("torch.intake.large", "medium",
                              "The checkpoint is " + format_bytes(size_bytes) + ": calibration may not fit a single 48-80 GiB accelerator.",
                              "Check the fit estimate in the plan; --multi_gpu spreads the model over several GPUs."));
  if (is_moe && static_cast<int64_t>(sized.size()) > tc["huge_moe_linear_threshold"].get<int64_t>())
    risks.push_back(make_risk("torch.intake.huge_moe_loader", "medium",
                              std::to_string(sized.size()) + " Linear modules: Quark loads such MoE models with one HF loader worker and needs a large vm.max_map_count.",
                              "Check `sysctl vm.max_map_count` (>= 1048576; 4194304 recommended; changing it needs approval); QUARK_HF_LOADER_WORKERS overrides the worker count."));
  Json weight_stats;
  if (ctx.weight_stats) {
    if (w.source != "safetensors") throw InputError(dir.string(), "--weight-stats needs the .safetensors weights in the folder");
    ScanOptions opt;
    opt.threads = ctx.weight_stats_threads;
    if (ctx.progress) opt.progress = [&](uint64_t done, uint64_t total) { ctx.progress("Scanning weights", done, total); };
    weight_stats = scan_weight_stats(w.shard_paths, opt);
    if (!weight_stats["outlier_modules"].empty())
      risks.push_back(make_risk("torch.intake.weight_outliers", "medium",
                                std::to_string(weight_stats["outlier_modules"].size()) +
                                    (weight_stats["outlier_modules"].size() == 1 ? " Linear module has" : " Linear modules have") +
                                    " weights beyond 50 standard deviations (e.g. " +
                                    weight_stats["outlier_modules"][0].get<std::string>() + "): per-tensor scales will waste range on them.",
                                "Keep them in higher precision (exclude or layer_quant_config), or use smoothquant / per-channel schemes."));
  }

  // Transformers version (rule 35).
  std::string min_tf = tc["transformers_default_minimum"];
  if (tmpl && (*tmpl)["transformers_min"].is_string()) min_tf = (*tmpl)["transformers_min"];
  std::string tf_req = ">=" + min_tf + "," + tc["transformers_upper_bound"].get<std::string>();
  if (tmpl && (*tmpl)["transformers_min"].is_string())
    risks.push_back(make_risk("torch.intake.transformers_version", "medium",
                              "Model type '" + mt + "' needs transformers >= " + min_tf + "; Quark's LLM PTQ supports transformers " +
                                  tc["transformers_upper_bound"].get<std::string>() + ".",
                              "pip install 'transformers" + tf_req + "' in the Quark environment (ask the router to record it in open_questions)."));
  if (!cfg.transformers_version.empty() && cfg.transformers_version.rfind("5.", 0) == 0) {
    int minor = std::atoi(cfg.transformers_version.c_str() + 2);
    if (minor >= 16)
      risks.push_back(make_risk("torch.intake.transformers_declared_newer", "medium",
                                "The checkpoint was saved with transformers " + cfg.transformers_version + ", newer than Quark's supported range.",
                                "Check the model loads with a transformers version inside " + tf_req + "."));
  }

  // Tokenizer and modalities.
  bool tokenizer = false;
  for (const char* f : {"tokenizer.json", "tokenizer.model", "tokenizer_config.json", "vocab.json", "tiktoken.model"})
    tokenizer = tokenizer || fs::exists(dir / f);
  if (!tokenizer && w.source != "none" && w.source != "index")
    risks.push_back(make_risk("torch.intake.tokenizer_missing", "medium",
                              "No tokenizer files next to the weights: calibration needs the tokenizer.",
                              "Download tokenizer.json / tokenizer_config.json with the model."));
  if (cfg.modalities.size() > 1)
    risks.push_back(make_risk("torch.intake.multimodal", "low",
                              "Multimodal model (" + std::to_string(cfg.modalities.size() - 1) + (cfg.modalities.size() == 2 ? " non-text tower" : " non-text towers") + "): only the language model is calibrated with text.",
                              "Keep the vision/audio towers excluded (the template's defaults do) unless you calibrate them separately."));
  // Only the mixers that replace attention count (Nemotron-H's MoE and MLP
  // layers are neither attention nor state-space).
  size_t linear_attention = 0, mamba = 0;
  for (const auto& lt : cfg.layer_types) {
    linear_attention += lt == "linear_attention";
    mamba += lt == "mamba";
  }
  if (linear_attention + mamba) {
    std::string what = linear_attention && mamba ? std::to_string(linear_attention) + " linear-attention and " + std::to_string(mamba) + " Mamba (state-space)"
                       : linear_attention        ? std::to_string(linear_attention) + " linear-attention"
                                                 : std::to_string(mamba) + " Mamba (state-space)";
    risks.push_back(make_risk("torch.intake.hybrid_layers", "low",
                              what + " layers of " + std::to_string(cfg.layer_types.size()) +
                                  " replace attention: they keep no KV cache and their projections are often excluded by the template.",
                              "Check exclude_defaults before overriding the exclusions."));
  }

  // Loading class (rule 38 and the skill table).
  std::string loading = tmpl ? (*tmpl)["loading_class"].get<std::string>() : "AutoModelForCausalLM";
  if (!tmpl && !cfg.architectures.empty() && cfg.architectures[0].find("ForConditionalGeneration") != std::string::npos)
    loading = cfg.architectures[0];
  if (mt == "gpt_oss") loading = "AutoModelForCausalLM with Mxfp4Config(dequantize=True)";
  else if (cfg.quant_method == std::string("compressed-tensors")) loading += " (compressed-tensors loader)";

  Json rv = sorted_risks(risks);

  Json a;
  a["analysis_status"] = partial.empty() ? "complete" : "partial";
  if (!partial.empty()) a["partial_reasons"] = partial;
  Json& m = a["model"];
  m["model_path"] = dir.string();
  m["model_type"] = mt;
  m["trust_remote_code"] = needs_remote;
  m["trust_remote_code_approved"] = needs_remote && ctx.trust_remote_code;
  m["transformers_version_required"] = tf_req;
  m["transformers_version_declared"] = cfg.transformers_version.empty() ? Json(nullptr) : Json(cfg.transformers_version);
  m["loading_class"] = loading;
  m["architectures"] = cfg.architectures;
  m["is_moe"] = is_moe;
  m["num_experts"] = is_moe ? Json(num_experts) : Json(nullptr);
  m["num_hidden_layers"] = cfg.num_hidden_layers ? Json(*cfg.num_hidden_layers) : Json(nullptr);
  m["hidden_size"] = cfg.hidden_size ? Json(*cfg.hidden_size) : Json(nullptr);
  m["template_supported"] = tmpl != nullptr && !tc["unsupported_model_types"].contains(mt);
  m["pre_quantized"] = cfg.quant_method ? Json(*cfg.quant_method) : Json(nullptr);
  m["modalities"] = cfg.modalities;
  m["dtype"] = cfg.dtype.empty() ? Json(nullptr) : Json(cfg.dtype);
  m["estimated_size_gb"] = round3(gb);
  m["size_bytes"] = size_bytes;
  m["total_params"] = total_params;
  if (w.exact) {
    Json by = Json::object();
    for (auto& [k, v] : w.params_by_dtype) by[k] = v;
    m["params_by_dtype"] = by;
  }
  m["params_method"] = params_method;
  Json arch;
  auto opt = [](const std::optional<int64_t>& v) { return v ? Json(*v) : Json(nullptr); };
  arch["family"] = st ? Json(st->family) : Json(nullptr);
  arch["family_guessed"] = family_guessed;
  arch["num_attention_heads"] = opt(cfg.num_attention_heads);
  arch["num_key_value_heads"] = opt(cfg.num_key_value_heads ? cfg.num_key_value_heads : cfg.num_attention_heads);
  // MLA (kv_lora_rank) heads are not hidden/heads wide: a query-key head is
  // qk_nope_head_dim + qk_rope_head_dim (DeepSeek-V3: 128 + 64, not 7168/128 =
  // 56), with the defaults the structure uses.
  const bool mla = cfg.kv_lora_rank && *cfg.kv_lora_rank > 0;
  arch["head_dim"] = opt(cfg.head_dim ? cfg.head_dim
                         : mla        ? std::optional<int64_t>(cfg.qk_nope_head_dim.value_or(128) + cfg.qk_rope_head_dim.value_or(64))
                                      : (cfg.hidden_size && cfg.num_attention_heads && *cfg.num_attention_heads > 0
                                             ? std::optional<int64_t>(*cfg.hidden_size / *cfg.num_attention_heads)
                                             : std::nullopt));
  arch["intermediate_size"] = opt(cfg.intermediate_size);
  arch["vocab_size"] = opt(cfg.vocab_size);
  arch["tie_word_embeddings"] = cfg.tie_word_embeddings;
  arch["num_experts_per_tok"] = opt(cfg.num_experts_per_tok);
  arch["moe_intermediate_size"] = opt(cfg.moe_intermediate_size);
  arch["shared_experts"] = opt(cfg.shared_experts);
  arch["first_k_dense_replace"] = opt(cfg.first_k_dense);
  arch["kv_lora_rank"] = opt(cfg.kv_lora_rank);
  arch["q_lora_rank"] = opt(cfg.q_lora_rank);
  arch["qk_rope_head_dim"] = opt(cfg.qk_rope_head_dim);
  arch["layer_types"] = cfg.layer_types;
  arch["max_position_embeddings"] = opt(cfg.max_position_embeddings);
  if (st) {
    arch["layer_kinds"] = collapse_kinds(st->layer_kinds);
    arch["mtp_layers"] = st->mtp_layers;
    Json parts = Json::object();
    for (int p = 0; p < 5; ++p)
      if (st->params_by_part[p]) parts[part_name(static_cast<Part>(p))] = st->params_by_part[p];
    arch["params_by_part"] = parts;
    arch["kv_cache"] = {{"kind", st->kv.kind},
                        {"full_attention_layers", st->kv.full_layers},
                        {"sliding_window_layers", st->kv.sliding_layers},
                        {"sliding_window", st->kv.sliding_window},
                        {"elements_per_token_full", st->kv.elements_full},
                        {"elements_per_token_sliding", st->kv.elements_sliding}};
  }
  m["architecture"] = arch;
  m["weights"] = {{"source", w.source}, {"files", w.files}, {"missing_shards", w.missing_shards}};
  Json& q = a["quantization_targets"];
  q["linear_layer_count"] = sized.size();
  q["linear_layer_count_method"] = names_source == "config" ? "estimated from config.json with the " + mt + " naming" : "counted from tensor names (2-D .weight of Linear modules, fused experts expanded)";
  q["exclude_defaults"] = tmpl ? (*tmpl)["exclude_defaults"] : Json::array({"lm_head"});
  q["has_non_linear_experts"] = fused_experts;
  q["needs_moe_preparation"] = is_moe;
  q["module_names_source"] = names_source;
  q["module_names"] = names_json;
  q["module_shapes"] = shapes_json;  // [params, in_features] per module of each entry
  q["module_roles"] = roles_json;    // attention, expert, router, lm_head, mtp, vision, ... per entry
  q["tied_modules"] = tied_modules;  // weights shared with the embedding: not in total_params a second time
  q["linear_params"] = linear_params;
  a["risks"] = rv;
  if (!weight_stats.is_null()) a["weight_stats"] = weight_stats;
  a["intake"] = {{"tool", "quarkplan"}, {"catalog_quark_version", tc["quark_version"]}, {"config_notes", cfg.sources}};
  if (ctx.keep_until_exit) {
    keep_until_exit(std::make_shared<WeightFacts>(std::move(w)));
    if (st) keep_until_exit(std::make_shared<ModelStructure>(std::move(*st)));
  }
  return a;
}

}  // namespace

std::unique_ptr<ModelReader> make_hf_reader(const std::string& directory) {
  return std::make_unique<HfModelReader>(directory);
}

}  // namespace quarkplan
