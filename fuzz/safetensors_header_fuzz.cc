// libFuzzer target for the safetensors header parser (intake/safetensors_reader).
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "intake/safetensors_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    quarkplan::safetensors::parse(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const std::runtime_error&) {
  }
  return 0;
}
