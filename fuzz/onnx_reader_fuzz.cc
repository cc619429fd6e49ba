// libFuzzer target for the zero-copy ONNX protobuf walk (intake/onnx_reader).
// Any input must end in a parse or a WireError: no crash, no overread, no
// unbounded allocation (ASan/UBSan watch).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "intake/onnx_reader.h"
#include "intake/protobuf_wire.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    quarkplan::onnx::read_model(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const quarkplan::wire::WireError&) {
  }
  return 0;
}
