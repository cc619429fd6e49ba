// libFuzzer target for config.json normalisation (intake/hf_config).
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/error.h"
#include "intake/hf_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    quarkplan::hf::parse_config(std::string(reinterpret_cast<const char*>(data), size), "config.json");
  } catch (const quarkplan::InputError&) {
  }
  return 0;
}
