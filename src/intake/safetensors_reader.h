// safetensors_reader: the header of a .safetensors file — 8-byte little-endian
// length, then a JSON object {name: {dtype, shape, data_offsets}} — read from a
// memory map without touching the tensor bytes. Every offset is checked against
// the data region; tensors may not overlap.
#pragma once
#include <cstdint>
#include <map>
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

constexpr uint64_t kMaxHeaderBytes = 100ull << 20;  // 100 MB, as the format's reference reader

// Bits per element of a safetensors dtype; 0 when unknown.
uint32_t dtype_bits(std::string_view dtype);
// The lower-case name used in analyses ("bfloat16", "float8_e4m3fn", ...).
std::string dtype_display(std::string_view dtype);

// Parses the header of `file_bytes` (the whole file). Throws std::runtime_error
// with a one-line reason on any inconsistency.
Header parse(std::string_view file_bytes);

// Reads and parses the header of the file at `path` (memory-mapped).
Header read_file(const std::string& path);

}  // namespace quarkplan::safetensors
