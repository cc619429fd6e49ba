#include "intake/onnx_builder.h"

namespace qp_test {

OnnxBuilder small_cnn(int convs, int opset) {
  OnnxBuilder b(opset);
  b.input("images", onnx::TensorProto::FLOAT, {"1", "3", "224", "224"});
  std::string prev = "images";
  for (int i = 0; i < convs; ++i) {
    std::string w = "conv" + std::to_string(i) + ".weight";
    b.init(w, onnx::TensorProto::FLOAT, {8, i == 0 ? 3 : 8, 3, 3});
    std::string out = "c" + std::to_string(i);
    b.node("Conv", "/backbone/conv" + std::to_string(i), {prev, w}, {out});
    b.node("Relu", "/backbone/relu" + std::to_string(i), {out}, {out + "_r"});
    prev = out + "_r";
  }
  b.node("GlobalAveragePool", "/head/pool", {prev}, {"pooled"});
  b.node("Flatten", "/head/flatten", {"pooled"}, {"flat"});
  b.init("fc.weight", onnx::TensorProto::FLOAT, {10, 8});
  b.node("Gemm", "/head/fc", {"flat", "fc.weight"}, {"logits"});
  b.node("Softmax", "/head/softmax", {"logits"}, {"probs"});
  b.output("probs", onnx::TensorProto::FLOAT, {"1", "10"});
  return b;
}

}  // namespace qp_test
