// libFuzzer target for model.safetensors.index.json (safetensors::parse_index,
// the zero-copy weight_map reader intake uses for 92,000-entry indexes).
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "intake/safetensors_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  quarkplan::safetensors::IndexView index;
  try {
    quarkplan::safetensors::parse_index(std::string_view(reinterpret_cast<const char*>(data), size), index);
  } catch (const std::runtime_error&) {
    return 0;
  }
  // Every entry names a shard the index listed.
  for (const auto& e : index.entries)
    if (e.second >= index.shards.size()) __builtin_trap();
  return 0;
}
