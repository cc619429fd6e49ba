// The checkpoint as found on disk: model.safetensors.index.json and every
// shard's header (never the weights), read on every core into the tensor table;
// and the checkpoint's size and parameter count for the analysis.
#pragma once
#include <algorithm>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/json.h"
#include "common/mapped_file.h"
#include "intake/hf_config.h"
#include "intake/model_names_gen.h"
#include "intake/model_structure.h"
#include "intake/safetensors_reader.h"

namespace quarkplan::hf_detail {

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

// Reads the index and the shard headers of `dir` into `w` (or lists the .bin
// files, or finds no weights), with the risks and partial reasons they raise.
void scan_weights(const std::filesystem::path& dir, Json& risks, std::vector<std::string>& partial, WeightFacts& w);

// Parameters and size: exact from the headers when every shard is here; else
// the structure's count, with the index's byte total when there is one.
struct CheckpointSize {
  uint64_t total_params = 0, size_bytes = 0;
  std::string params_method;
};
CheckpointSize checkpoint_size(const WeightFacts& w, const std::optional<ModelStructure>& st, const hf::Config& cfg);

}  // namespace quarkplan::hf_detail
