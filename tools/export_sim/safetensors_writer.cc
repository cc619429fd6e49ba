#include "export_sim/safetensors_writer.h"

#include <unistd.h>

#include <fstream>

#include "intake/safetensors_reader.h"

namespace qp_test {

uint64_t st_bytes(const StTensor& t) {
  uint64_t n = 1;
  for (auto d : t.shape) n *= d;
  return (n * quarkplan::safetensors::dtype_bits(t.dtype) + 7) / 8;
}

uint64_t write_safetensors(const std::filesystem::path& p, const std::vector<StTensor>& tensors, bool sparse,
                           const std::string& metadata_json) {
  std::string h = "{";
  if (!metadata_json.empty()) h += "\"__metadata__\":" + metadata_json + ",";
  uint64_t off = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& t = tensors[i];
    std::string shape;
    for (size_t j = 0; j < t.shape.size(); ++j) shape += (j ? "," : "") + std::to_string(t.shape[j]);
    uint64_t b = st_bytes(t);
    h += (i ? "," : "") + std::string("\"") + t.name + "\":{\"dtype\":\"" + t.dtype + "\",\"shape\":[" + shape +
         "],\"data_offsets\":[" + std::to_string(off) + "," + std::to_string(off + b) + "]}";
    off += b;
  }
  h += "}";
  while (h.size() % 8) h += ' ';
  std::string len(8, '\0');
  uint64_t n = h.size();
  for (int i = 0; i < 8; ++i) len[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  std::filesystem::create_directories(p.parent_path());
  {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f << len << h;
    if (!sparse) f << std::string(off, '\0');
  }
  if (sparse) {
    if (::truncate(p.c_str(), static_cast<off_t>(8 + h.size() + off)) != 0) throw std::runtime_error("truncate");
  }
  return off;
}

}  // namespace qp_test
