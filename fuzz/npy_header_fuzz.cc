// libFuzzer target for the .npy header reader (calibration data checks): any
// bytes, any claimed file size; a bad header is a runtime_error, never a crash.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "intake/npy_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  for (uint64_t file_size : {static_cast<uint64_t>(size), static_cast<uint64_t>(size) + 4096, uint64_t{0}, UINT64_MAX}) {
    try {
      auto h = quarkplan::npy::parse_header(bytes, file_size);
      if (h.header_bytes > file_size) __builtin_trap();
      (void)quarkplan::npy::onnx_dtype_name(h);
    } catch (const std::runtime_error&) {
    }
  }
  return 0;
}
