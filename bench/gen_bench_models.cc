// Writes the benchmark models:
//   big_embedded.onnx       a transformer-like graph with ~1.9 GB of weights
//                           embedded as raw_data (written as a sparse file)
//   decoder/model.onnx      a decoder-like graph of >= 7,000 nodes whose
//                           weights live in decoder/model.onnx_data
// usage: gen_bench_models OUT_DIR
#include <fcntl.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

static std::string varint(uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  s.push_back(static_cast<char>(v));
  return s;
}

static void add_layer_nodes(onnx::GraphProto* g, int layer, std::string& x, std::vector<std::pair<std::string, std::vector<int64_t>>>& weights,
                            int hidden, int ffn) {
  auto node = [&](const std::string& op, const std::string& name, std::vector<std::string> in, std::string out) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name("/model/layers." + std::to_string(layer) + "/" + name);
    for (auto& i : in) n->add_input(i);
    n->add_output(out);
    return out;
  };
  std::string p = "l" + std::to_string(layer) + ".";
  auto w = [&](const std::string& n, std::vector<int64_t> d) {
    weights.push_back({p + n, d});
    return p + n;
  };
  std::string ln = node("LayerNormalization", "input_layernorm", {x, w("ln1", {hidden})}, p + "ln1_out");
  std::string q = node("MatMul", "self_attn/q_proj/MatMul", {ln, w("q", {hidden, hidden})}, p + "q");
  std::string k = node("MatMul", "self_attn/k_proj/MatMul", {ln, w("k", {hidden, hidden})}, p + "k");
  std::string v = node("MatMul", "self_attn/v_proj/MatMul", {ln, w("v", {hidden, hidden})}, p + "v");
  std::string qr = node("Reshape", "self_attn/Reshape_q", {q}, p + "qr");
  std::string kr = node("Reshape", "self_attn/Reshape_k", {k}, p + "kr");
  std::string vr = node("Reshape", "self_attn/Reshape_v", {v}, p + "vr");
  std::string qt = node("Transpose", "self_attn/Transpose_q", {qr}, p + "qt");
  std::string kt = node("Transpose", "self_attn/Transpose_k", {kr}, p + "kt");
  std::string vt = node("Transpose", "self_attn/Transpose_v", {vr}, p + "vt");
  std::string s = node("MatMul", "self_attn/MatMul_qk", {qt, kt}, p + "s");
  std::string sc = node("Mul", "self_attn/Mul_scale", {s}, p + "sc");
  std::string sm = node("Softmax", "self_attn/Softmax", {sc}, p + "sm");
  std::string av = node("MatMul", "self_attn/MatMul_av", {sm, vt}, p + "av");
  std::string at = node("Transpose", "self_attn/Transpose_out", {av}, p + "at");
  std::string ar = node("Reshape", "self_attn/Reshape_out", {at}, p + "ar");
  std::string o = node("MatMul", "self_attn/o_proj/MatMul", {ar, w("o", {hidden, hidden})}, p + "o");
  std::string r1 = node("Add", "residual_add_1", {x, o}, p + "r1");
  std::string ln2 = node("LayerNormalization", "post_attention_layernorm", {r1, w("ln2", {hidden})}, p + "ln2_out");
  std::string gt = node("MatMul", "mlp/gate_proj/MatMul", {ln2, w("gate", {hidden, ffn})}, p + "gt");
  std::string up = node("MatMul", "mlp/up_proj/MatMul", {ln2, w("up", {hidden, ffn})}, p + "up");
  std::string sg = node("Sigmoid", "mlp/act/Sigmoid", {gt}, p + "sg");
  std::string sl = node("Mul", "mlp/act/Mul", {gt, sg}, p + "sl");
  std::string pr = node("Mul", "mlp/Mul", {sl, up}, p + "pr");
  std::string dn = node("MatMul", "mlp/down_proj/MatMul", {pr, w("down", {ffn, hidden})}, p + "dn");
  x = node("Add", "residual_add_2", {r1, dn}, p + "out");
}

static onnx::ModelProto skeleton(int layers, int hidden, int ffn, int pad_nodes_per_layer,
                                 std::vector<std::pair<std::string, std::vector<int64_t>>>& weights) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("quarkplan-bench");
  m.set_producer_version("1");
  auto* op = m.add_opset_import();
  op->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("decoder");
  auto* in = g->add_input();
  in->set_name("hidden_in");
  auto* t = in->mutable_type()->mutable_tensor_type();
  t->set_elem_type(1);
  t->mutable_shape()->add_dim()->set_dim_param("batch");
  t->mutable_shape()->add_dim()->set_dim_param("sequence");
  t->mutable_shape()->add_dim()->set_dim_value(hidden);
  std::string x = "hidden_in";
  for (int l = 0; l < layers; ++l) {
    add_layer_nodes(g, l, x, weights, hidden, ffn);
    for (int i = 0; i < pad_nodes_per_layer; ++i) {  // shape plumbing real exports carry
      auto* n = g->add_node();
      n->set_op_type(i % 3 == 0 ? "Shape" : i % 3 == 1 ? "Gather" : "Unsqueeze");
      n->set_name("/model/layers." + std::to_string(l) + "/shape_" + std::to_string(i));
      n->add_input(x);
      n->add_output("l" + std::to_string(l) + "_s" + std::to_string(i));
    }
  }
  auto* out = g->add_output();
  out->set_name(x);
  out->mutable_type()->mutable_tensor_type()->set_elem_type(1);
  return m;
}

// A model with weights embedded as raw_data; the data regions are holes.
static void write_embedded(const fs::path& path) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> weights;
  onnx::ModelProto m = skeleton(17, 1536, 4096, 0, weights);
  std::string graph;
  m.graph().SerializeToString(&graph);
  m.clear_graph();
  std::string head;
  m.SerializeToString(&head);
  struct Init {
    std::string header;
    uint64_t data;
  };
  std::vector<Init> inits;
  uint64_t graph_len = graph.size();
  for (auto& [name, dims] : weights) {
    uint64_t n = 1;
    std::string h;
    for (auto d : dims) {
      h += "\x08" + varint(static_cast<uint64_t>(d));
      n *= static_cast<uint64_t>(d);
    }
    h += std::string("\x10\x01") + "\x42" + varint(name.size()) + name + "\x4a" + varint(n * 4);
    inits.push_back({h, n * 4});
    uint64_t body = h.size() + n * 4;
    graph_len += 1 + varint(body).size() + body;
  }
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  auto put = [&](const std::string& s) {
    if (::write(fd, s.data(), s.size()) != static_cast<ssize_t>(s.size())) std::perror("write");
  };
  put(head + "\x3a" + varint(graph_len) + graph);
  for (auto& i : inits) {
    put("\x2a" + varint(i.header.size() + i.data) + i.header);
    ::lseek(fd, static_cast<off_t>(i.data), SEEK_CUR);
  }
  off_t end = ::lseek(fd, 0, SEEK_CUR);
  if (::ftruncate(fd, end) != 0) std::perror("ftruncate");
  ::close(fd);
}

// A >= 7,000-node decoder whose weights are external (model.onnx_data).
static void write_external(const fs::path& dir) {
  fs::create_directories(dir);
  std::vector<std::pair<std::string, std::vector<int64_t>>> weights;
  onnx::ModelProto m = skeleton(80, 1024, 2816, 64, weights);
  uint64_t offset = 0;
  for (auto& [name, dims] : weights) {
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(1);
    uint64_t n = 1;
    for (auto d : dims) {
      t->add_dims(d);
      n *= static_cast<uint64_t>(d);
    }
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto kv = [&](const char* k, const std::string& v) {
      auto* e = t->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    kv("location", "model.onnx_data");
    kv("offset", std::to_string(offset));
    kv("length", std::to_string(n * 4));
    offset += n * 4;
  }
  std::ofstream(dir / "model.onnx", std::ios::binary) << m.SerializeAsString();
  int fd = ::open((dir / "model.onnx_data").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (::ftruncate(fd, static_cast<off_t>(offset)) != 0) std::perror("ftruncate");
  ::close(fd);
  std::printf("decoder: %d nodes, %zu external tensors\n", m.graph().node_size(), weights.size());
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  fs::path out = argv[1];
  fs::create_directories(out);
  write_embedded(out / "big_embedded.onnx");
  write_external(out / "decoder");
  std::printf("big_embedded.onnx: %ju bytes\n", static_cast<uintmax_t>(fs::file_size(out / "big_embedded.onnx")));
  return 0;
}
