// Writes a 1 GiB ONNX model with real (pseudo-random) weight bytes for the
// ONNX --weight-stats benchmark: model.onnx with 8 MatMul layers whose weights
// live in model.onnx_data (external data, as large exports do) — FP32 4096 x
// 8192 by default, FP16 4096 x 16384 with --fp16 (the dtype of ISNet-style
// exports, converted per weight).
// usage: gen_weight_onnx OUT_DIR [--fp16]
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  bool fp16 = argc == 3 && std::string(argv[2]) == "--fp16";
  if (argc != 2 && !fp16) {
    std::fprintf(stderr, "usage: %s OUT_DIR [--fp16]\n", argv[0]);
    return 2;
  }
  std::filesystem::path out = argv[1];
  std::filesystem::create_directories(out);
  const int64_t rows = 4096, cols = fp16 ? 16384 : 8192;
  const uint64_t width = fp16 ? 2 : 4, bytes = static_cast<uint64_t>(rows * cols) * width;
  const int elem = fp16 ? onnx::TensorProto::FLOAT16 : onnx::TensorProto::FLOAT;
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("gen_weight_onnx");
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("weights");
  auto io = [elem](onnx::ValueInfoProto* v, const std::string& name, int64_t width) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem);
    t->mutable_shape()->add_dim()->set_dim_value(1);
    t->mutable_shape()->add_dim()->set_dim_value(width);
  };
  io(g->add_input(), "x", rows);
  std::string prev = "x";
  for (int i = 0; i < 8; ++i) {
    std::string w = "layers." + std::to_string(i) + ".weight";
    auto* t = g->add_initializer();
    t->set_name(w);
    t->set_data_type(elem);
    t->add_dims(i % 2 ? cols : rows);
    t->add_dims(i % 2 ? rows : cols);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    for (auto [k, v] : std::vector<std::pair<std::string, std::string>>{
             {"location", "model.onnx_data"}, {"offset", std::to_string(i * bytes)}, {"length", std::to_string(bytes)}}) {
      auto* e = t->add_external_data();
      e->set_key(k);
      e->set_value(v);
    }
    auto* n = g->add_node();
    n->set_op_type("MatMul");
    n->set_name("/layers." + std::to_string(i) + "/MatMul");
    n->add_input(prev);
    n->add_input(w);
    prev = "h" + std::to_string(i);
    n->add_output(prev);
  }
  io(g->add_output(), prev, rows);
  std::ofstream(out / "model.onnx", std::ios::binary) << m.SerializeAsString();
  std::ofstream f(out / "model.onnx_data", std::ios::binary);
  uint32_t x = 12345;
  if (fp16) {
    std::vector<uint16_t> chunk(1 << 20);
    for (uint64_t written = 0; written < 8 * bytes; written += chunk.size() * 2) {
      for (auto& v : chunk) {
        x = x * 1664525u + 1013904223u;
        // a half around +-0.02 (exponent field 9-10), random mantissa and sign
        v = static_cast<uint16_t>(((x >> 31) << 15) | ((9u + ((x >> 20) & 1)) << 10) | ((x >> 8) & 0x3ff));
      }
      f.write(reinterpret_cast<const char*>(chunk.data()), static_cast<std::streamsize>(chunk.size() * 2));
    }
  } else {
    std::vector<float> chunk(1 << 20);
    for (uint64_t written = 0; written < 8 * bytes; written += chunk.size() * 4) {
      for (auto& v : chunk) {
        x = x * 1664525u + 1013904223u;
        v = (static_cast<float>(x >> 8) / 16777216.0f - 0.5f) * 0.04f;
      }
      f.write(reinterpret_cast<const char*>(chunk.data()), static_cast<std::streamsize>(chunk.size() * 4));
    }
  }
  std::printf("wrote %s (%llu bytes of weights)\n", (out / "model.onnx").c_str(), static_cast<unsigned long long>(8 * bytes));
  return 0;
}
