// Writes a quantized ONNX model laid out the way quark.onnx lays out a plan's
// preset (see tests/data/verify/onnx/QUARK_ONNX_QDQ_FACTS.md), for verify's
// tests and the demo. It is not Quark: no calibration runs and the quantized
// weights are zeros; the graph's structure (which ops, domains, data types,
// scale initializers and their names) is Quark's. Needs the ONNX protobuf types.
#pragma once
#include <onnx/onnx_pb.h>

#include <functional>
#include <string>

#include "common/json.h"

namespace qp_test {

struct OnnxExportOptions {
  // Called on the quantized model before it is serialised: a test breaks one promise here.
  std::function<void(onnx::ModelProto&)> edit;
};

// The quantized model's bytes for `plan`, made from the float model `float_model`.
std::string quark_onnx_export(const std::string& float_model, const quarkplan::Json& plan, const OnnxExportOptions& options = {});

}  // namespace qp_test
