// libFuzzer target for verify's ONNX side: any bytes as the quantized model,
// held to a fixed XINT8 NPU plan that excludes nodes and a subgraph (graph
// walks, Q/DQ tracing, scale reading). Bad input is an InputError, never a crash.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "catalog/catalog.h"
#include "common/error.h"
#include "common/json.h"
#include "verify/verify.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace quarkplan;
  static const Json plan = parse_json(R"J({
    "model": {"model_type": "onnx", "analysis_ref": "./model_analysis.json"}, "backend": "onnx",
    "deployment_target": "npu_cnn", "preset": "XINT8", "requires_confirmation": false,
    "onnx_specific": {"op_types_to_quantize": null, "nodes_to_exclude": ["conv1", "n"],
                      "subgraphs_to_exclude": [[["a"], ["b"]], [["conv0"], ["fc"]]],
                      "extra_options": {"ConvertNCHWToNHWC": true, "FixShapes": "x:[1,3,8,8];y:[1,4]"}},
    "estimates": {"weights": [{"scheme": "XINT8", "bytes": 4096}]}})J", "plan");
  static const Json analysis = parse_json(R"J({
    "model": {"onnx_specific": {"inputs": [{"name": "x", "dtype": "float32", "shape": [1, 3, 8, 8]}],
                                "outputs": [{"name": "y", "dtype": "float32", "shape": [1, 4]}]}},
    "quantization_targets": {"onnx_specific": {"op_counts": {"Conv": 2, "Gemm": 1}}}})J", "analysis");
  try {
    verify::Options o;
    verify::Result r = verify::detail::verify_onnx_bytes(plan, analysis, std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.onnx", o,
                                                         Catalog::load());
    dump_json(verify::to_json(r));  // as the CLI prints it (invalid UTF-8 in names replaced)
  } catch (const InputError&) {
  }
  return 0;
}
