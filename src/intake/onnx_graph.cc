#include "intake/onnx_graph.h"

#include <set>
#include <unordered_map>

namespace quarkplan::onnx {

namespace {

// Ops a weight may pass through on its way to the op that uses it.
bool weight_passthrough(const std::string& op) {
  return op == "Identity" || op == "Cast" || op == "Transpose" || op == "Reshape" || op == "Squeeze" || op == "Unsqueeze";
}

// Ops between an attention score MatMul and its Softmax (scale, mask, layout).
bool score_passthrough(const std::string& op) {
  return op == "Add" || op == "Mul" || op == "Div" || op == "Sub" || op == "Where" || op == "Reshape" || op == "Transpose" ||
         op == "Cast" || op == "Identity" || op == "Slice";
}

}  // namespace

GraphFacts analyze_graph(const Facts& f, const std::map<std::string, std::vector<int>>& weight_inputs) {
  GraphFacts g;
  // Names are unique across the model (subgraphs may read outer-scope names),
  // so one map per kind serves every graph.
  std::unordered_map<std::string, size_t> constant, producer;
  std::unordered_map<std::string, std::vector<size_t>> consumers;
  for (size_t i = 0; i < f.constants.size(); ++i)
    if (!f.constants[i].name.empty()) constant.emplace(f.constants[i].name, i);
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    for (const auto& o : f.nodes[i].outputs)
      if (f.nodes[i].op_type != "Constant") producer[o] = i;
    for (const auto& in : f.nodes[i].inputs)
      if (!in.empty()) consumers[in].push_back(i);
  }
  // The constant behind a tensor name, through a few layout/cast ops. A name
  // some node produces is an activation, even if an initializer shares it
  // (invalid, but generated graphs do it) — unless the producer is the very
  // node that reads it.
  auto const_of = [&](std::string name, long reader = -1) -> long {
    for (int hop = 0; hop < 4; ++hop) {
      auto p = producer.find(name);
      bool produced = p != producer.end() && static_cast<long>(p->second) != reader;
      if (auto c = constant.find(name); c != constant.end() && !produced) return static_cast<long>(c->second);
      if (p == producer.end()) return -1;
      const NodeRef& n = f.nodes[p->second];
      if (!weight_passthrough(n.op_type) || n.inputs.empty()) return -1;
      name = n.inputs[0];
    }
    return -1;
  };
  auto is_op = [&](const std::string& tensor, const char* op) {
    auto p = producer.find(tensor);
    return p != producer.end() && f.nodes[p->second].op_type == op;
  };

  std::set<size_t> used;
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    const NodeRef& n = f.nodes[i];
    bool standard = n.domain.empty() || n.domain == "ai.onnx";
    if (standard && weight_inputs.count(n.op_type)) {
      OpWeights& w = g.by_op[n.op_type];
      ++w.nodes;
      if (n.in_subgraph) ++w.nodes_in_subgraphs;
      uint64_t params = 0, stored_bits = 0;
      bool weighted = false, two_d = false;
      for (int idx : weight_inputs.at(n.op_type)) {
        if (idx < 0 || static_cast<size_t>(idx) >= n.inputs.size()) continue;
        long c = const_of(n.inputs[static_cast<size_t>(idx)], static_cast<long>(i));
        if (c < 0) continue;
        const ConstTensor& t = f.constants[static_cast<size_t>(c)];
        // Only a float tensor is a weight Quark quantizes: a Gather over an
        // int64 constant (a shape table) is not an embedding.
        if (t.dtype != 1 && t.dtype != 10 && t.dtype != 11 && t.dtype != 16) continue;
        weighted = true;
        two_d = two_d || t.rank == 2;
        params += t.numel;
        stored_bits += t.numel * dtype_bits(t.dtype);
        if (used.insert(static_cast<size_t>(c)).second) g.weight_uses.push_back({static_cast<size_t>(c), i});
      }
      if (weighted) {
        g.weighted_nodes.push_back({i, params, stored_bits, two_d});
        ++w.weighted_nodes;
        w.weight_params += params;
        if (n.in_subgraph) {
          ++w.weighted_nodes_in_subgraphs;
          w.weight_params_in_subgraphs += params;
        }
        if (two_d) {
          ++w.weighted_2d_nodes;
          w.weight_params_2d += params;
        }
      }
    }
    if (n.op_type.find("Attention") != std::string::npos) ++g.attention_blocks;
    if (n.op_type == "Softmax" && !n.inputs.empty()) {
      // Walk back through scaling and masking to a MatMul of two activations (Q.K^T).
      std::vector<std::string> frontier = {n.inputs[0]};
      bool found = false;
      for (int hop = 0; hop < 5 && !found && !frontier.empty(); ++hop) {
        std::vector<std::string> next;
        for (const auto& t : frontier) {
          auto p = producer.find(t);
          if (p == producer.end()) continue;
          const NodeRef& m = f.nodes[p->second];
          if (m.op_type == "MatMul" && m.inputs.size() == 2 && const_of(m.inputs[0]) < 0 && const_of(m.inputs[1]) < 0) {
            found = true;
            break;
          }
          if (score_passthrough(m.op_type))
            for (const auto& in : m.inputs)
              if (!in.empty() && next.size() < 16 && const_of(in) < 0) next.push_back(in);
        }
        frontier = std::move(next);
      }
      if (found) ++g.attention_blocks;
    }
    if (n.op_type == "Tanh" && !n.inputs.empty() && !n.outputs.empty()) {
      // LSTM: h = o * tanh(f*c + i*g); GRU: n = tanh(Wx + r*(Uh)), h = (1-z)*n + z*h.
      auto p = producer.find(n.inputs[0]);
      if (p == producer.end()) continue;
      const NodeRef& sum = f.nodes[p->second];
      if (sum.op_type != "Add" && sum.op_type != "Sub") continue;
      bool gated_input = false;
      for (const auto& in : sum.inputs) {
        auto q = producer.find(in);
        if (q == producer.end() || f.nodes[q->second].op_type != "Mul") continue;
        for (const auto& m : f.nodes[q->second].inputs) gated_input = gated_input || is_op(m, "Sigmoid");
      }
      bool gated_output = false;
      if (auto c = consumers.find(n.outputs[0]); c != consumers.end())
        for (size_t k : c->second) gated_output = gated_output || f.nodes[k].op_type == "Mul";
      if (gated_input && gated_output) ++g.recurrent_cells;
    }
  }
  return g;
}

}  // namespace quarkplan::onnx
