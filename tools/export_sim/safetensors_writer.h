// Writes .safetensors files for tests: a real header and either zero bytes or
// (sparse) a hole for the data region.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace qp_test {

struct StTensor {
  std::string name, dtype;
  std::vector<uint64_t> shape;
};

// Returns the number of data bytes written after the header.
uint64_t write_safetensors(const std::filesystem::path& p, const std::vector<StTensor>& tensors, bool sparse = false,
                           const std::string& metadata_json = "");
uint64_t st_bytes(const StTensor& t);

}  // namespace qp_test
