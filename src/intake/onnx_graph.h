// Structural facts read from an ONNX graph's edges (onnx_reader gives the
// nodes and constants): which constant weights feed which ops, inside and
// outside control-flow subgraphs, and the patterns that tell a transformer
// (attention), an unrolled recurrent cell and a plain MLP apart.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "intake/onnx_reader.h"

namespace quarkplan::onnx {

struct OpWeights {
  uint64_t nodes = 0, nodes_in_subgraphs = 0;
  uint64_t weighted_nodes = 0, weighted_nodes_in_subgraphs = 0;  // with a constant weight input
  uint64_t weight_params = 0, weight_params_in_subgraphs = 0;
  uint64_t weighted_2d_nodes = 0;  // whose weight is a 2-D constant (MatMulNBits rewrites only these)
  uint64_t weight_params_2d = 0;
};

// A constant weight feeding a weighted op: what --weight-stats scans.
struct WeightUse {
  size_t constant;  // index into Facts::constants
  size_t node;      // index into Facts::nodes (the first consumer)
};

// One node of a weighted op type with a constant weight: what a preset may
// quantize, node by node (exclusions and op-type lists act on nodes).
struct WeightedNode {
  size_t node;             // index into Facts::nodes
  uint64_t params = 0;     // elements of its constant weights
  uint64_t stored_bits = 0;  // their bits as stored (params x dtype bits, summed)
  bool two_d = false;      // a 2-D weight (MatMulNBits rewrites only these)
};

struct GraphFacts {
  std::map<std::string, OpWeights> by_op;  // only op types named in `weight_inputs`
  uint64_t attention_blocks = 0;  // Softmax fed (through scaling/masking) by a MatMul of two activations, or an attention op
  uint64_t recurrent_cells = 0;   // unrolled gated cells: Tanh of a Sigmoid-gated sum, itself gated by a Mul
  std::vector<WeightUse> weight_uses;
  std::vector<WeightedNode> weighted_nodes;  // in graph order
};

// `weight_inputs`: op type -> input indices that hold its weights (catalog
// onnx.json "weight_inputs").
GraphFacts analyze_graph(const Facts& f, const std::map<std::string, std::vector<int>>& weight_inputs);

}  // namespace quarkplan::onnx
