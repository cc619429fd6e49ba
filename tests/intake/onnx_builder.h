// Builds ONNX models for tests with the official protobuf types (libonnx-dev),
// so the hand-written reader is checked against the reference serializer.
#pragma once
#include <onnx/onnx_pb.h>

#include <initializer_list>
#include <string>
#include <vector>

namespace qp_test {

struct OnnxBuilder {
  onnx::ModelProto model;
  onnx::GraphProto* graph;

  explicit OnnxBuilder(int opset = 17, int64_t ir = 8, const std::string& producer = "qp-test") {
    model.set_ir_version(ir);
    model.set_producer_name(producer);
    model.set_producer_version("1.0");
    auto* op = model.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    graph = model.mutable_graph();
    graph->set_name("main");
  }

  void opset(const std::string& domain, int64_t v) {
    auto* op = model.add_opset_import();
    op->set_domain(domain);
    op->set_version(v);
  }

  // dims: numbers >= 0 are values, -1 is an unknown dim, strings are params.
  static void set_type(onnx::ValueInfoProto* vi, int elem, const std::vector<std::string>& dims) {
    auto* t = vi->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem);
    auto* shape = t->mutable_shape();
    for (const auto& d : dims) {
      auto* dim = shape->add_dim();
      if (d == "?") continue;
      if (!d.empty() && (std::isdigit(static_cast<unsigned char>(d[0])))) dim->set_dim_value(std::stoll(d));
      else dim->set_dim_param(d);
    }
  }

  void input(const std::string& name, int elem, const std::vector<std::string>& dims, onnx::GraphProto* g = nullptr) {
    set_type((g ? g : graph)->add_input(), elem, dims);
    (g ? g : graph)->mutable_input()->rbegin()->set_name(name);
  }
  void output(const std::string& name, int elem, const std::vector<std::string>& dims, onnx::GraphProto* g = nullptr) {
    set_type((g ? g : graph)->add_output(), elem, dims);
    (g ? g : graph)->mutable_output()->rbegin()->set_name(name);
  }

  static onnx::NodeProto* node(onnx::GraphProto* g, const std::string& op, const std::string& name,
                               std::vector<std::string> ins, std::vector<std::string> outs,
                               const std::string& domain = "") {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(name);
    if (!domain.empty()) n->set_domain(domain);
    for (auto& i : ins) n->add_input(i);
    for (auto& o : outs) n->add_output(o);
    return n;
  }
  onnx::NodeProto* node(const std::string& op, const std::string& name, std::vector<std::string> ins,
                        std::vector<std::string> outs, const std::string& domain = "") {
    return node(graph, op, name, std::move(ins), std::move(outs), domain);
  }

  // An initializer with raw_data of the right size (zeros).
  static onnx::TensorProto* init(onnx::GraphProto* g, const std::string& name, int elem, std::vector<int64_t> dims,
                                 size_t elem_bytes = 4) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(elem);
    size_t n = 1;
    for (auto d : dims) {
      t->add_dims(d);
      n *= static_cast<size_t>(d);
    }
    t->set_raw_data(std::string(n * elem_bytes, '\0'));
    return t;
  }
  onnx::TensorProto* init(const std::string& name, int elem, std::vector<int64_t> dims, size_t elem_bytes = 4) {
    return init(graph, name, elem, std::move(dims), elem_bytes);
  }

  // A Constant node holding a float tensor of `dims`.
  onnx::NodeProto* constant(const std::string& name, std::vector<int64_t> dims, onnx::GraphProto* g = nullptr) {
    auto* n = node(g ? g : graph, "Constant", name, {}, {name + "_out"});
    auto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    auto* t = a->mutable_t();
    t->set_data_type(onnx::TensorProto::FLOAT);
    size_t cnt = 1;
    for (auto d : dims) {
      t->add_dims(d);
      cnt *= static_cast<size_t>(d);
    }
    for (size_t i = 0; i < cnt; ++i) t->add_float_data(0.5f);
    return n;
  }

  // An If node with then/else branches; returns the two branch graphs.
  std::pair<onnx::GraphProto*, onnx::GraphProto*> if_node(const std::string& name, onnx::GraphProto* g = nullptr) {
    auto* n = node(g ? g : graph, "If", name, {"cond"}, {name + "_out"});
    auto* a = n->add_attribute();
    a->set_name("then_branch");
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* b = n->add_attribute();
    b->set_name("else_branch");
    b->set_type(onnx::AttributeProto::GRAPH);
    a->mutable_g()->set_name(name + "_then");
    b->mutable_g()->set_name(name + "_else");
    return {a->mutable_g(), b->mutable_g()};
  }

  std::string bytes() const {
    std::string s;
    model.SerializeToString(&s);
    return s;
  }

  // The model with one more FLOAT initializer `name` of `floats` elements held
  // inline (raw_data), cut before the raw bytes: protobuf cannot serialise a
  // message over 2 GiB, so the graph field is encoded by hand. Write these
  // bytes, then extend the file by floats * 4 (a sparse file).
  std::string bytes_before_big_initializer(const std::string& name, uint64_t floats) const {
    auto varint = [](uint64_t v) {
      std::string s;
      while (v >= 0x80) {
        s.push_back(static_cast<char>((v & 0x7f) | 0x80));
        v >>= 7;
      }
      s.push_back(static_cast<char>(v));
      return s;
    };
    // TensorProto: dims (1), data_type FLOAT (2), name (8), raw_data (9).
    std::string tensor_head = std::string("\x08") + varint(floats) + "\x10\x01" + "\x42" + varint(name.size()) + name + "\x4a" + varint(floats * 4);
    uint64_t tensor_len = tensor_head.size() + floats * 4;
    std::string graph_bytes;
    model.graph().SerializeToString(&graph_bytes);
    std::string init_field = "\x2a" + varint(tensor_len);  // GraphProto.initializer (5)
    uint64_t graph_len = graph_bytes.size() + init_field.size() + tensor_len;
    onnx::ModelProto m = model;
    m.clear_graph();
    std::string model_bytes;
    m.SerializeToString(&model_bytes);
    return model_bytes + "\x3a" + varint(graph_len) + graph_bytes + init_field + tensor_head;  // ModelProto.graph (7)
  }
};

// A small conv net: NCHW input, `convs` Conv nodes, a final Gemm classifier.
OnnxBuilder small_cnn(int convs = 6, int opset = 17);

}  // namespace qp_test
