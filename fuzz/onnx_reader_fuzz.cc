// libFuzzer target for the zero-copy ONNX protobuf walk (intake/onnx_reader).
// Any input must end in a parse or a WireError: no crash, no overread, no
// unbounded allocation (ASan/UBSan watch).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "intake/onnx_graph.h"
#include "intake/onnx_reader.h"
#include "intake/protobuf_wire.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto facts = quarkplan::onnx::read_model(std::string_view(reinterpret_cast<const char*>(data), size));
    // The edge analysis walks whatever names the file holds (cycles, dangling inputs).
    quarkplan::onnx::analyze_graph(facts, {{"Conv", {1}}, {"Gemm", {1}}, {"MatMul", {1}}, {"LSTM", {1, 2}}});
  } catch (const quarkplan::wire::WireError&) {
  }
  return 0;
}
