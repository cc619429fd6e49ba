// onnx_reader: the structure of an ONNX model read straight from the mapped
// file (see protobuf_wire.h for why not libprotobuf). Weight bytes — raw_data,
// typed data arrays, external data — are skipped by length and never touched.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace quarkplan::onnx {

struct Dim {
  bool has_value = false;
  int64_t value = 0;
  std::string param;  // symbolic name, when any
};

struct ValueInfo {
  std::string name;
  int32_t elem_type = 0;  // TensorProto.DataType; 0 when not a tensor or unknown
  std::string kind = "tensor";  // tensor | sequence | map | optional | sparse_tensor | unknown
  bool has_shape = false;
  std::vector<Dim> dims;
};

struct ExternalTensor {
  std::string tensor;
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  uint64_t expected_bytes = 0;  // numel * element size, when the element size is fixed
};

struct NodeRef {
  std::string name;
  std::string op_type;
  std::string domain;
  bool in_subgraph = false;
  uint32_t graph = 0;  // 0: main graph; else the subgraph's index (1-based, in reading order)
  // The graphs this node holds, nested ones included: indices first..last (none when first > last).
  uint32_t subgraph_first = 1, subgraph_last = 0;
  std::vector<std::string> inputs, outputs;
};

// Where a constant tensor's bytes are, so --weight-stats can stream them.
enum class DataWhere : uint8_t { kNone, kInline, kExternal, kInt32Data };

// A constant tensor: an initializer or a Constant node's value, in any graph.
struct ConstTensor {
  std::string name;
  int32_t dtype = 0;
  uint64_t numel = 0;
  uint32_t rank = 0;
  uint32_t graph = 0;  // as NodeRef::graph
  bool in_constant_node = false;
  DataWhere where = DataWhere::kNone;
  uint64_t offset = 0, length = 0;  // kInline/kInt32Data: payload in the .onnx file; kExternal: in `location`
  std::string location;
};

struct Facts {
  int64_t ir_version = 0;
  std::string producer_name, producer_version, model_domain;
  std::vector<std::pair<std::string, int64_t>> opsets;  // raw domain ("" = ai.onnx)
  std::vector<ValueInfo> inputs, outputs;  // main graph; initializer-backed inputs removed
  std::map<std::string, uint64_t> op_counts;  // op_type (domain-qualified when not ai.onnx)
  std::map<std::string, uint64_t> domain_op_counts;  // per node domain ("" = ai.onnx)
  uint64_t node_count = 0;        // all graphs, functions excluded
  uint64_t subgraph_count = 0;    // graphs held in node attributes
  uint64_t function_count = 0;
  uint32_t max_graph_depth = 0;
  std::map<int32_t, uint64_t> params_by_dtype;  // initializers + Constant-node tensors
  uint64_t params_in_constant_nodes = 0;
  uint64_t initializer_count = 0;
  uint64_t inline_weight_bytes = 0;  // bytes of tensor data inside the file
  std::vector<ExternalTensor> external;
  std::set<std::string> quantized_op_forms;  // op types that mean "already quantized"
  bool has_qdq = false;          // QDQ, QOperator, integer or n-bit forms
  bool has_quark_custom = false; // Quark's own custom ops / domains
  std::vector<NodeRef> nodes;    // every node, in reading order (a subgraph's nodes follow the node holding it)
  std::vector<ConstTensor> constants;  // every initializer and Constant-node value (all graphs)
  std::vector<uint32_t> graph_parent{0};  // per graph index: the graph holding it (the main graph's is 0)
  // Main-graph nodes that produce a graph output (name, op_type), through
  // Softmax/Sigmoid/Identity/Reshape/Flatten when present.
  std::vector<NodeRef> final_producers;
};

struct Limits {
  uint32_t max_graph_depth = 32;  // nested If/Loop/Scan bodies
  uint32_t max_type_depth = 16;   // nested sequence/map/optional types
};

// Parses the model in `bytes` (the whole file). Throws wire::WireError for
// malformed protobuf and std::runtime_error for structural problems; callers
// turn both into an InputError naming the file.
Facts read_model(std::string_view bytes, const Limits& limits = {});

// "float32", "int8", ... for a TensorProto.DataType.
std::string dtype_name(int32_t elem_type);
// Bytes per element, 0 when variable (string) or sub-byte (int4 counts 1/2: see bits).
uint32_t dtype_bits(int32_t elem_type);

}  // namespace quarkplan::onnx
