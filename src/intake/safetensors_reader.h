// safetensors_reader: the header of a .safetensors file — 8-byte little-endian
// length, then a JSON object {name: {dtype, shape, data_offsets}} — read from a
// memory map without touching the tensor bytes. Every offset is checked against
// the data region; tensors may not overlap.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace quarkplan::safetensors {

struct Tensor {
  std::string name;
  std::string dtype;  // "BF16", "F8_E4M3", ...
  std::vector<uint64_t> shape;
  uint64_t numel = 0;
  uint64_t begin = 0, end = 0;  // offsets in the data region
};

struct Header {
  std::vector<Tensor> tensors;
  std::map<std::string, std::string> metadata;
  uint64_t header_bytes = 0;
  uint64_t data_bytes = 0;  // size of the data region
};

// The same header without a copy: names and dtypes are views into the file's
// bytes (or into `escaped`, for the rare names that needed unescaping), the
// dimensions of every tensor live in one array. Reading a 163-shard checkpoint
// this way costs a few allocations per shard instead of several per tensor.
struct TensorView {
  std::string_view name, dtype;
  uint64_t numel = 0;
  uint64_t begin = 0, end = 0;
  uint32_t dims_at = 0;  // first dimension in HeaderView::dims
  uint32_t ndim = 0;
};

struct HeaderView {
  std::vector<TensorView> tensors;
  std::vector<uint64_t> dims;
  std::vector<std::pair<std::string_view, std::string_view>> metadata;
  std::deque<std::string> escaped;  // stable storage for unescaped strings
  uint64_t header_bytes = 0;
  uint64_t data_bytes = 0;
};

constexpr uint64_t kMaxHeaderBytes = 100ull << 20;  // 100 MB, as the format's reference reader

// Bits per element of a safetensors dtype; 0 when unknown.
uint32_t dtype_bits(std::string_view dtype);
// The lower-case name used in analyses ("bfloat16", "float8_e4m3fn", ...).
std::string dtype_display(std::string_view dtype);

// model.safetensors.index.json, read with the same scanner: the weight_map
// entries (tensor -> shard id) as views into the text (or into `escaped`),
// shard names in order of first appearance, metadata.total_size.
struct IndexView {
  std::vector<std::pair<std::string_view, uint32_t>> entries;
  std::vector<std::string_view> shards;
  std::optional<uint64_t> total_size;
  bool has_weight_map = false;
  std::deque<std::string> escaped;
};
// Throws std::runtime_error with a one-line reason.
void parse_index(std::string_view text, IndexView& out);

// Parses the header of `file_bytes` (the whole file). Throws std::runtime_error
// with a one-line reason on any inconsistency.
Header parse(std::string_view file_bytes);
// The same checks, into views of `file_bytes` (which must outlive `out`).
void parse_view(std::string_view file_bytes, HeaderView& out);
// The same from the first bytes of a file of `file_size` bytes (the 8-byte
// length and the header; the tensor bytes need not be there).
void parse_view(std::string_view prefix, uint64_t file_size, HeaderView& out);

// The header bytes of a .safetensors file, mapped with their pages populated
// in one call; the tensor bytes after them are never mapped.
class HeaderMap {
 public:
  explicit HeaderMap(const std::string& path);  // throws InputError naming the file
  ~HeaderMap();
  HeaderMap(const HeaderMap&) = delete;
  HeaderMap& operator=(const HeaderMap&) = delete;
  std::string_view prefix() const { return {data_, length_}; }
  uint64_t file_size() const { return file_size_; }

 private:
  const char* data_ = nullptr;
  uint64_t length_ = 0, file_size_ = 0;
};

// Reads and parses the header of the file at `path` (memory-mapped).
Header read_file(const std::string& path);

}  // namespace quarkplan::safetensors
