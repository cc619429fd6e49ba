#include "intake/onnx_reader.h"

#include <algorithm>
#include <unordered_map>

#include "intake/protobuf_wire.h"

namespace quarkplan::onnx {

using wire::Field;
using wire::Reader;
using wire::WireError;
using wire::WireType;

std::string dtype_name(int32_t t) {
  switch (t) {
    case 1: return "float32";
    case 2: return "uint8";
    case 3: return "int8";
    case 4: return "uint16";
    case 5: return "int16";
    case 6: return "int32";
    case 7: return "int64";
    case 8: return "string";
    case 9: return "bool";
    case 10: return "float16";
    case 11: return "float64";
    case 12: return "uint32";
    case 13: return "uint64";
    case 14: return "complex64";
    case 15: return "complex128";
    case 16: return "bfloat16";
    case 17: return "float8e4m3fn";
    case 18: return "float8e4m3fnuz";
    case 19: return "float8e5m2";
    case 20: return "float8e5m2fnuz";
    case 21: return "uint4";
    case 22: return "int4";
    case 23: return "float4e2m1";
    case 24: return "float8e8m0";
    case 0: return "undefined";
    default: return "dtype_" + std::to_string(t);
  }
}

uint32_t dtype_bits(int32_t t) {
  switch (t) {
    case 1: case 6: case 12: return 32;
    case 2: case 3: case 9: case 17: case 18: case 19: case 20: case 24: return 8;
    case 4: case 5: case 10: case 16: return 16;
    case 7: case 11: case 13: case 14: return 64;
    case 15: return 128;
    case 21: case 22: case 23: return 4;
    default: return 0;
  }
}

namespace {

bool is_standard_domain(std::string_view d) {
  return d.empty() || d == "ai.onnx" || d == "ai.onnx.ml" || d == "ai.onnx.preview.training";
}

// Quark's own ops and domains: the model went through Quark already.
bool is_quark_custom(std::string_view op, std::string_view domain) {
  if (domain == "com.amd.quark" || domain == "com.vai.quantize" || domain == "com.amd.quark.custom")
    return true;
  return op == "BFPQuantizeDequantize" || op == "MXQuantizeDequantize" ||
         op == "ExtendedQuantizeLinear" || op == "ExtendedDequantizeLinear" ||
         op == "VitisQuantizeLinear" || op == "VitisDequantizeLinear" ||
         op == "BFPFixNeuron" || op == "FixNeuron" || op == "ExtendedInstanceNormalization" ||
         op == "ExtendedLSTM";
}

// Every other quantized form: QDQ, QOperator, integer, dynamic and n-bit ops.
bool is_quantized_form(std::string_view op) {
  static const std::set<std::string_view> exact = {
      "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "ConvInteger",
      "MatMulInteger", "MatMulIntegerToFloat", "DynamicQuantizeMatMul", "DynamicQuantizeLSTM",
      "MatMulNBits", "MatMulBnb4", "MatMulFpQ4", "GatherBlockQuantized", "QGemm", "QAttention",
      "QEmbedLayerNormalization", "QMoE", "QOrderedMatMul", "QOrderedGelu", "QOrderedLayerNormalization",
      "QOrderedAttention", "QOrderedLongformerAttention", "DequantizeBFP", "QuantizeBFP",
      "DequantizeWithOrder", "QuantizeWithOrder", "FusedMatMulNBits"};
  if (exact.count(op)) return true;
  return op.rfind("QLinear", 0) == 0;  // QLinearConv, QLinearMatMul, QLinearAdd, ...
}

struct Walker {
  const Limits& limits;
  Facts& facts;
  uint32_t graphs_seen = 0;  // subgraph ids, 1-based
  uint32_t current_graph = 0;

  static void expect(const Field& f, WireType t, const char* what) {
    if (f.type != t)
      throw WireError(f.offset, std::string("field ") + what + " has the wrong wire type");
  }

  static std::string str(const Field& f, const char* what) {
    expect(f, WireType::kBytes, what);
    return std::string(f.bytes);
  }

  // Element count of a tensor from its dims, rejecting negative or overflowing dims.
  static uint64_t numel(const std::vector<int64_t>& dims, uint64_t offset) {
    uint64_t n = 1;
    for (int64_t d : dims) {
      if (d < 0) throw WireError(offset, "tensor has a negative dimension");
      if (d != 0 && n > UINT64_MAX / static_cast<uint64_t>(d))
        throw WireError(offset, "tensor dimensions overflow 64 bits");
      n *= static_cast<uint64_t>(d);
    }
    return n;
  }

  // Reads a TensorProto header; its data fields are skipped by length.
  // `counted`: initializers and Constant-node values are weights; tensors held
  // by other attributes (ConstantOfShape's fill value, ...) are only validated.
  // Returns the index of the tensor in facts.constants, or -1 when not counted.
  long tensor(std::string_view bytes, uint64_t base, bool in_constant_node, bool counted = true) {
    Reader r(bytes, base);
    Field f;
    std::vector<int64_t> dims;
    int32_t dtype = 0;
    std::string name;
    bool external = false;
    ExternalTensor ext;
    uint64_t data_bytes = 0;
    DataWhere where = DataWhere::kNone;
    uint64_t data_offset = 0, data_length = 0;
    while (r.next(f)) {
      switch (f.number) {
        case 1:  // dims
          if (f.type == WireType::kBytes)
            wire::for_each_packed_varint(f, [&](uint64_t v) { dims.push_back(static_cast<int64_t>(v)); });
          else {
            expect(f, WireType::kVarint, "TensorProto.dims");
            dims.push_back(static_cast<int64_t>(f.varint));
          }
          if (dims.size() > 64) throw WireError(f.offset, "tensor has more than 64 dimensions");
          break;
        case 2:
          expect(f, WireType::kVarint, "TensorProto.data_type");
          dtype = static_cast<int32_t>(f.varint);
          break;
        case 8: name = str(f, "TensorProto.name"); break;
        case 4: case 5: case 6: case 7: case 9: case 10: case 11:
          // float_data, int32_data, string_data, int64_data, raw_data, double_data,
          // uint64_data: weight bytes, skipped by length (already bounds-checked).
          data_bytes += f.type == WireType::kBytes ? f.bytes.size() : 8;
          // Packed float_data is little-endian float32 like raw_data; FP16/BF16
          // values may sit in int32_data as one varint each.
          if (f.type == WireType::kBytes && (f.number == 9 || f.number == 4 || f.number == 5)) {
            where = f.number == 5 ? DataWhere::kInt32Data : DataWhere::kInline;
            data_offset = f.offset;
            data_length = f.bytes.size();
          }
          break;
        case 13: {  // external_data: StringStringEntryProto {key, value}
          expect(f, WireType::kBytes, "TensorProto.external_data");
          Reader er(f.bytes, f.offset);
          Field ef;
          std::string key, value;
          while (er.next(ef)) {
            if (ef.number == 1) key = str(ef, "external_data.key");
            else if (ef.number == 2) value = str(ef, "external_data.value");
          }
          auto to_u64 = [&](const std::string& v) -> uint64_t {
            if (v.empty() || v.size() > 20 || v.find_first_not_of("0123456789") != std::string::npos)
              throw WireError(ef.offset, "external_data " + key + " '" + v + "' is not a number");
            return std::stoull(v);
          };
          if (key == "location") ext.location = value;
          else if (key == "offset") ext.offset = to_u64(value);
          else if (key == "length") ext.length = to_u64(value);
          break;
        }
        case 14:
          expect(f, WireType::kVarint, "TensorProto.data_location");
          external = f.varint == 1;
          break;
        default: break;
      }
    }
    uint64_t n = numel(dims, base);
    if (!counted) return -1;
    facts.params_by_dtype[dtype] += n;
    if (in_constant_node) facts.params_in_constant_nodes += n;
    facts.inline_weight_bytes += data_bytes;
    if (external || !ext.location.empty()) {
      if (ext.location.empty()) throw WireError(base, "tensor '" + name + "' is external but names no location");
      ext.tensor = name;
      uint32_t bits = dtype_bits(dtype);
      ext.expected_bytes = bits ? (n * bits + 7) / 8 : 0;
      where = DataWhere::kExternal;
      data_offset = ext.offset;
      data_length = ext.length.value_or(ext.expected_bytes);
      facts.external.push_back(ext);
    }
    ConstTensor c;
    c.name = std::move(name);
    c.dtype = dtype;
    c.numel = n;
    c.rank = static_cast<uint32_t>(dims.size());
    c.graph = current_graph;
    c.in_constant_node = in_constant_node;
    c.where = where;
    c.offset = data_offset;
    c.length = data_length;
    if (where == DataWhere::kExternal) c.location = ext.location;
    facts.constants.push_back(std::move(c));
    return static_cast<long>(facts.constants.size() - 1);
  }

  void sparse_tensor(std::string_view bytes, uint64_t base, bool in_constant_node) {
    Reader r(bytes, base);
    Field f;
    while (r.next(f)) {
      if (f.number == 1) {  // values
        expect(f, WireType::kBytes, "SparseTensorProto.values");
        tensor(f.bytes, f.offset, in_constant_node);
      }
    }
  }

  void type_proto(std::string_view bytes, uint64_t base, ValueInfo& vi, uint32_t depth) {
    if (depth > limits.max_type_depth) throw WireError(base, "type nesting deeper than allowed");
    Reader r(bytes, base);
    Field f;
    while (r.next(f)) {
      if (f.number == 1) {  // tensor_type
        expect(f, WireType::kBytes, "TypeProto.tensor_type");
        if (depth == 0) vi.kind = "tensor";
        Reader tr(f.bytes, f.offset);
        Field tf;
        while (tr.next(tf)) {
          if (tf.number == 1) {
            expect(tf, WireType::kVarint, "TypeProto.Tensor.elem_type");
            if (depth == 0) vi.elem_type = static_cast<int32_t>(tf.varint);
          } else if (tf.number == 2 && depth == 0) {
            expect(tf, WireType::kBytes, "TypeProto.Tensor.shape");
            vi.has_shape = true;
            Reader sr(tf.bytes, tf.offset);
            Field sf;
            while (sr.next(sf)) {
              if (sf.number != 1) continue;
              expect(sf, WireType::kBytes, "TensorShapeProto.dim");
              Dim d;
              Reader dr(sf.bytes, sf.offset);
              Field df;
              while (dr.next(df)) {
                if (df.number == 1) {
                  expect(df, WireType::kVarint, "Dimension.dim_value");
                  d.has_value = true;
                  d.value = static_cast<int64_t>(df.varint);
                } else if (df.number == 2) {
                  d.param = str(df, "Dimension.dim_param");
                }
              }
              vi.dims.push_back(std::move(d));
              if (vi.dims.size() > 64) throw WireError(sf.offset, "shape has more than 64 dimensions");
            }
          }
        }
      } else if (f.number == 4 || f.number == 5 || f.number == 9 || f.number == 8) {
        expect(f, WireType::kBytes, "TypeProto");
        if (depth == 0)
          vi.kind = f.number == 4 ? "sequence" : f.number == 5 ? "map" : f.number == 9 ? "optional" : "sparse_tensor";
        // Nested element types: walk them (bounded) so corrupt nesting is caught.
        Reader nr(f.bytes, f.offset);
        Field nf;
        while (nr.next(nf)) {
          if (nf.type == WireType::kBytes && (nf.number == 1 || nf.number == 2)) {
            ValueInfo inner;
            if (f.number == 5 && nf.number == 1) continue;  // map key_type is a varint in practice
            type_proto(nf.bytes, nf.offset, inner, depth + 1);
          }
        }
      }
    }
  }

  ValueInfo value_info(std::string_view bytes, uint64_t base) {
    ValueInfo vi;
    vi.kind = "unknown";
    Reader r(bytes, base);
    Field f;
    while (r.next(f)) {
      if (f.number == 1) vi.name = str(f, "ValueInfoProto.name");
      else if (f.number == 2) {
        expect(f, WireType::kBytes, "ValueInfoProto.type");
        type_proto(f.bytes, f.offset, vi, 0);
      }
    }
    return vi;
  }

  void node(std::string_view bytes, uint64_t base, uint32_t depth, bool main_graph) {
    Reader r(bytes, base);
    Field f;
    NodeRef ref;
    ref.in_subgraph = !main_graph;
    ref.graph = current_graph;
    std::vector<Field> attributes;
    while (r.next(f)) {
      switch (f.number) {
        case 1: ref.inputs.push_back(str(f, "NodeProto.input")); break;
        case 2: ref.outputs.push_back(str(f, "NodeProto.output")); break;
        case 3: ref.name = str(f, "NodeProto.name"); break;
        case 4: ref.op_type = str(f, "NodeProto.op_type"); break;
        case 5:
          expect(f, WireType::kBytes, "NodeProto.attribute");
          attributes.push_back(f);
          break;
        case 7: ref.domain = str(f, "NodeProto.domain"); break;
        default: break;
      }
    }
    if (ref.op_type.empty()) throw WireError(base, "node '" + ref.name + "' has no op_type");
    ++facts.node_count;
    std::string key = is_standard_domain(ref.domain) || ref.domain == "ai.onnx.ml"
                          ? ref.op_type
                          : ref.domain + "::" + ref.op_type;
    if (ref.domain == "ai.onnx.ml") key = ref.op_type;
    ++facts.op_counts[key];
    ++facts.domain_op_counts[ref.domain];
    if (is_quark_custom(ref.op_type, ref.domain)) {
      facts.has_quark_custom = true;
      facts.quantized_op_forms.insert(ref.op_type);
    } else if (is_quantized_form(ref.op_type)) {
      facts.has_qdq = true;
      facts.quantized_op_forms.insert(ref.op_type);
    }
    bool constant = ref.op_type == "Constant" && is_standard_domain(ref.domain);
    // Attributes are handled after the whole node is read: domain (field 7)
    // follows the attributes (field 5) in serialized order.
    ref.subgraph_first = graphs_seen + 1;
    for (const Field& a : attributes) {
      long t = attribute(a.bytes, a.offset, depth, constant);
      // A Constant node's tensor is known by the node's output name.
      if (t >= 0 && constant && !ref.outputs.empty()) facts.constants[static_cast<size_t>(t)].name = ref.outputs[0];
    }
    ref.subgraph_last = graphs_seen;
    facts.nodes.push_back(std::move(ref));
  }

  long attribute(std::string_view bytes, uint64_t base, uint32_t depth, bool constant_node) {
    Reader r(bytes, base);
    Field f;
    std::string name;
    long value = -1;
    while (r.next(f)) {
      switch (f.number) {
        case 1: name = str(f, "AttributeProto.name"); break;
        case 5:  // t
          expect(f, WireType::kBytes, "AttributeProto.t");
          value = tensor(f.bytes, f.offset, constant_node, constant_node);
          break;
        case 10:  // tensors
          expect(f, WireType::kBytes, "AttributeProto.tensors");
          tensor(f.bytes, f.offset, false, false);
          break;
        case 22:  // sparse_tensor
          expect(f, WireType::kBytes, "AttributeProto.sparse_tensor");
          sparse_tensor(f.bytes, f.offset, constant_node);
          break;
        case 6:   // g
        case 11:  // graphs
          expect(f, WireType::kBytes, "AttributeProto.g");
          ++facts.subgraph_count;
          {
            uint32_t outer = current_graph;
            current_graph = ++graphs_seen;
            facts.graph_parent.resize(graphs_seen + 1, 0);
            facts.graph_parent[graphs_seen] = outer;
            graph(f.bytes, f.offset, depth + 1, false);
            current_graph = outer;
          }
          break;
        default: break;
      }
    }
    return value;
  }

  void graph(std::string_view bytes, uint64_t base, uint32_t depth, bool main_graph) {
    if (depth > limits.max_graph_depth)
      throw WireError(base, "subgraphs nested deeper than " + std::to_string(limits.max_graph_depth) + " levels");
    facts.max_graph_depth = std::max(facts.max_graph_depth, depth);
    Reader r(bytes, base);
    Field f;
    std::vector<ValueInfo> inputs;
    std::set<std::string> initializer_names;
    while (r.next(f)) {
      switch (f.number) {
        case 1:
          expect(f, WireType::kBytes, "GraphProto.node");
          node(f.bytes, f.offset, depth, main_graph);
          break;
        case 5: {
          expect(f, WireType::kBytes, "GraphProto.initializer");
          ++facts.initializer_count;
          long t = tensor(f.bytes, f.offset, false);
          // The initializer's name is needed to drop it from the graph inputs.
          if (main_graph && t >= 0) initializer_names.insert(facts.constants[static_cast<size_t>(t)].name);
          break;
        }
        case 15:
          expect(f, WireType::kBytes, "GraphProto.sparse_initializer");
          ++facts.initializer_count;
          sparse_tensor(f.bytes, f.offset, false);
          break;
        case 11:
          expect(f, WireType::kBytes, "GraphProto.input");
          if (main_graph) inputs.push_back(value_info(f.bytes, f.offset));
          break;
        case 12:
          expect(f, WireType::kBytes, "GraphProto.output");
          if (main_graph) facts.outputs.push_back(value_info(f.bytes, f.offset));
          break;
        default: break;
      }
    }
    if (main_graph) {
      // Older exporters list every initializer as a graph input too; those are
      // weights, not model inputs.
      for (auto& in : inputs)
        if (!initializer_names.count(in.name)) facts.inputs.push_back(std::move(in));
      find_final_producers();
    }
  }

  void find_final_producers() {
    static const std::set<std::string> passthrough = {"Softmax", "Sigmoid", "Identity", "Reshape",
                                                      "Flatten", "Squeeze", "LogSoftmax", "Cast"};
    std::unordered_map<std::string, size_t> producer;
    for (size_t i = 0; i < facts.nodes.size(); ++i)
      if (facts.nodes[i].graph == 0)
        for (const auto& o : facts.nodes[i].outputs) producer[o] = i;
    for (const auto& out : facts.outputs) {
      std::string t = out.name;
      for (int hops = 0; hops < 4; ++hops) {
        auto it = producer.find(t);
        if (it == producer.end()) break;
        const NodeRef& n = facts.nodes[it->second];
        if (n.op_type == "Gemm" || n.op_type == "MatMul") {
          facts.final_producers.push_back(n);
          break;
        }
        if (!passthrough.count(n.op_type)) break;
        const auto& ins = n.inputs;
        if (ins.empty()) break;
        t = ins[0];
      }
    }
  }

  void function(std::string_view bytes, uint64_t base) {
    ++facts.function_count;
    Reader r(bytes, base);
    Field f;
    while (r.next(f)) {
      // Function bodies are templates, not graph nodes: only their weights and
      // quantized forms matter, and they are rare; validate the structure.
      if (f.number == 7) expect(f, WireType::kBytes, "FunctionProto.node");
    }
  }
};

}  // namespace

Facts read_model(std::string_view bytes, const Limits& limits) {
  Facts facts;
  Walker w{limits, facts};
  Reader r(bytes, 0);
  Field f;
  bool have_graph = false;
  while (r.next(f)) {
    switch (f.number) {
      case 1:
        Walker::expect(f, WireType::kVarint, "ModelProto.ir_version");
        facts.ir_version = static_cast<int64_t>(f.varint);
        break;
      case 2: facts.producer_name = Walker::str(f, "ModelProto.producer_name"); break;
      case 3: facts.producer_version = Walker::str(f, "ModelProto.producer_version"); break;
      case 4: facts.model_domain = Walker::str(f, "ModelProto.domain"); break;
      case 7:
        Walker::expect(f, WireType::kBytes, "ModelProto.graph");
        if (have_graph) throw WireError(f.offset, "model holds more than one graph");
        have_graph = true;
        w.graph(f.bytes, f.offset, 0, true);
        break;
      case 8: {
        Walker::expect(f, WireType::kBytes, "ModelProto.opset_import");
        Reader o(f.bytes, f.offset);
        Field of;
        std::string domain;
        int64_t version = 0;
        while (o.next(of)) {
          if (of.number == 1) domain = Walker::str(of, "OperatorSetIdProto.domain");
          else if (of.number == 2) {
            Walker::expect(of, WireType::kVarint, "OperatorSetIdProto.version");
            version = static_cast<int64_t>(of.varint);
          }
        }
        facts.opsets.emplace_back(domain, version);
        break;
      }
      case 25:
        Walker::expect(f, WireType::kBytes, "ModelProto.functions");
        w.function(f.bytes, f.offset);
        break;
      default: break;
    }
  }
  if (!have_graph) throw WireError(0, "no graph found");
  if (facts.ir_version <= 0 || facts.ir_version > 100)
    throw WireError(0, "ir_version " + std::to_string(facts.ir_version) + " is not valid");
  return facts;
}

}  // namespace quarkplan::onnx
