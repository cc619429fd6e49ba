// The layout rules are transcribed from QUARK_ONNX_QDQ_FACTS.md (Quark
// 1d27b558 and onnxruntime's QDQ quantizer), independently of
// catalog/onnx.json's qdq_layout, so verify's tests check that data.
#include "export_sim/onnx_qdq_writer.h"

#include <cmath>
#include <functional>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>

#include "catalog/catalog.h"
#include "plan/onnx_exclusions.h"
#include "plan/fix_shapes.h"

namespace qp_test {

using quarkplan::Json;

namespace {

struct Format {
  enum Kind { kQdq, kFused } kind = kQdq;
  std::string q_op = "QuantizeLinear", dq_op = "DequantizeLinear", domain;  // "" = ai.onnx
  int act_type = onnx::TensorProto::UINT8, weight_type = onnx::TensorProto::INT8;
  bool weight_only = false, float_weight_with_q = false, pof2 = false;
  std::string fused_op;  // BFPQuantizeDequantize / MXQuantizeDequantize
};

int onnx_type(const std::string& quant_type) {
  static const std::map<std::string, int> t = {{"QUInt8", onnx::TensorProto::UINT8},   {"QInt8", onnx::TensorProto::INT8},
                                               {"QUInt16", onnx::TensorProto::UINT16}, {"QInt16", onnx::TensorProto::INT16},
                                               {"QBFloat16", onnx::TensorProto::BFLOAT16}, {"QFloat16", onnx::TensorProto::FLOAT16}};
  auto it = t.find(quant_type);
  return it == t.end() ? 0 : it->second;
}

size_t type_bytes(int t) {
  switch (t) {
    case onnx::TensorProto::INT8: case onnx::TensorProto::UINT8: return 1;
    case onnx::TensorProto::INT16: case onnx::TensorProto::UINT16: case onnx::TensorProto::BFLOAT16: case onnx::TensorProto::FLOAT16: return 2;
    default: return 4;
  }
}

Format format_of(const Json& preset) {
  Format f;
  std::string act = preset["activation_type"].is_string() ? preset["activation_type"].get<std::string>() : "";
  std::string w = preset.value("weight_type", "");
  std::string qf = preset.value("quant_format", "QDQ");
  f.pof2 = preset.value("power_of_two", false);
  f.weight_only = act.empty();
  if (w == "QBFP" || w == "QMX") {
    f.kind = Format::kFused;
    f.fused_op = w == "QBFP" ? "BFPQuantizeDequantize" : "MXQuantizeDequantize";
    f.domain = "com.amd.quark";
    return f;
  }
  f.act_type = onnx_type(act.empty() ? "QUInt8" : act);
  f.weight_type = onnx_type(w);
  if (qf == "ExtendedQDQ") {
    if (f.act_type == onnx::TensorProto::BFLOAT16 || f.act_type == onnx::TensorProto::FLOAT16) {
      // Float "quantization" stays Quark's own op, the float weight kept with a Q and a DQ.
      f.q_op = "ExtendedQuantizeLinear";
      f.dq_op = "ExtendedDequantizeLinear";
      f.domain = "com.amd.quark";
      f.float_weight_with_q = true;
    } else {
      // Integer zero points: converted to com.microsoft QuantizeLinear/DequantizeLinear.
      f.domain = "com.microsoft";
    }
  }
  return f;
}

onnx::TensorProto* add_init(onnx::GraphProto* g, const std::string& name, int type, const std::vector<int64_t>& dims, const std::string& raw) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (auto d : dims) t->add_dims(d);
  t->set_raw_data(raw);
  return t;
}

std::string scalar_float(float v) {
  std::string s(4, '\0');
  std::memcpy(s.data(), &v, 4);
  return s;
}

std::string zero_point(int type, bool asymmetric_uint8) {
  std::string s(type_bytes(type), '\0');
  if (asymmetric_uint8 && type == onnx::TensorProto::UINT8) s[0] = static_cast<char>(128);  // XINT8: uint8 with zero point 128
  return s;
}

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, const std::string& name, std::vector<std::string> in, std::vector<std::string> out,
                          const std::string& domain) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  if (!domain.empty()) n->set_domain(domain);
  for (auto& i : in) n->add_input(i);
  for (auto& o : out) n->add_output(o);
  return n;
}

}  // namespace

std::string quark_onnx_export(const std::string& float_model, const Json& plan, const OnnxExportOptions& options) {
  onnx::ModelProto m;
  if (!m.ParseFromString(float_model)) throw std::runtime_error("quark_onnx_export: the float model does not parse");
  const quarkplan::Catalog& cat = quarkplan::Catalog::load();
  const Json* preset = cat.onnx_preset(cat.canonical_preset(plan.value("preset", "")));
  if (!preset) throw std::runtime_error("quark_onnx_export: unknown preset");
  Format f = format_of(*preset);
  const Json& spec = plan["onnx_specific"];
  std::set<std::string> ops;
  if (spec["op_types_to_quantize"].is_array())
    for (const auto& o : spec["op_types_to_quantize"]) ops.insert(o.get<std::string>());
  if (ops.empty()) {
    std::string set = plan.value("deployment_target", "") == "npu_transformer" ? "npu_transformer" : preset->value("op_set", "static");
    for (const auto& o : cat.onnx()["preset_op_sets"][set]["ops"]) ops.insert(o.get<std::string>());
  }
  const quarkplan::NodeExclusions excluded(spec["nodes_to_exclude"]);  // names, or Quark's '^...' regular expressions
  std::set<std::string> excluded_types;                                  // layer_type_config={None: [...]}
  if (spec.contains("op_types_to_exclude") && spec["op_types_to_exclude"].is_array())
    for (const auto& t : spec["op_types_to_exclude"]) excluded_types.insert(t.get<std::string>());
  const Json& winputs = cat.onnx()["weight_inputs"]["ops"];

  // One graph (the main graph, and each control-flow body when the plan sets
  // EnableSubgraph, as Quark then quantizes inside them).
  const bool into_subgraphs = spec["extra_options"].is_object() && spec["extra_options"].value("EnableSubgraph", false);
  std::function<void(onnx::GraphProto*)> quantize_graph = [&](onnx::GraphProto* g) {
    // Weights held by Constant nodes (PP-OCR's export) become initializers
    // first, as ONNX Runtime's quantizer needs them (not verified against
    // Quark's own preprocessing).
    {
      onnx::GraphProto rest;
      for (const auto& n : g->node()) {
        if (n.op_type() == "Constant" && n.output_size() == 1 && n.attribute_size() == 1 && n.attribute(0).name() == "value") {
          auto* t = g->add_initializer();
          *t = n.attribute(0).t();
          t->set_name(n.output(0));
          continue;
        }
        *rest.add_node() = n;
      }
      g->mutable_node()->Swap(rest.mutable_node());
    }
    std::map<std::string, int> init_index;
    for (int i = 0; i < g->initializer_size(); ++i) init_index[g->initializer(i).name()] = i;
    const float act_scale = f.pof2 ? 0.0625f : 0.0123f, w_scale = f.pof2 ? 0.0078125f : 0.00417f;
    std::set<std::string> act_done;
    std::map<std::string, std::string> act_dq;  // tensor -> dequantized name
    std::vector<onnx::NodeProto> new_nodes;
    onnx::GraphProto scratch;  // nodes are appended here, then merged in front of their consumers
    auto quantize_activation = [&](const std::string& t) -> std::string {
      if (act_dq.count(t)) return act_dq[t];
      std::string out;
      if (f.kind == Format::kFused) {
        out = t + "_" + f.fused_op + "_Output";
        add_node(&scratch, f.fused_op, t + "_" + f.fused_op, {t}, {out}, f.domain);
      } else {
        add_init(g, t + "_scale", onnx::TensorProto::FLOAT, {}, scalar_float(f.act_type == onnx::TensorProto::BFLOAT16 ? 1.0f : act_scale));
        add_init(g, t + "_zero_point", f.act_type, {}, zero_point(f.act_type, f.pof2));
        add_node(&scratch, f.q_op, t + "_QuantizeLinear", {t, t + "_scale", t + "_zero_point"}, {t + "_QuantizeLinear_Output"}, f.domain);
        out = t + "_DequantizeLinear_Output";
        add_node(&scratch, f.dq_op, t + "_DequantizeLinear", {t + "_QuantizeLinear_Output", t + "_scale", t + "_zero_point"}, {out}, f.domain);
      }
      act_dq[t] = out;
      return out;
    };
    auto quantize_weight = [&](const std::string& w) -> std::string {
      const auto& src = g->initializer(init_index.at(w));
      std::vector<int64_t> dims(src.dims().begin(), src.dims().end());
      uint64_t n = 1;
      for (auto d : dims) n *= static_cast<uint64_t>(d);
      if (f.kind == Format::kFused) {
        add_node(&scratch, f.fused_op, w + "_" + f.fused_op, {w}, {w + "_" + f.fused_op + "_Output"}, f.domain);
        return w + "_" + f.fused_op + "_Output";
      }
      // Per-channel weights (onnx_specific.per_channel): one scale and zero
      // point per channel of the weight's first axis, and the DQ's axis.
      const bool per_channel = spec.value("per_channel", false) == true && !dims.empty() && dims[0] > 1;
      if (per_channel) {
        std::string scales, zps;
        for (int64_t c = 0; c < dims[0]; ++c) {
          scales += scalar_float(w_scale);
          zps += zero_point(f.weight_type, false);
        }
        add_init(g, w + "_scale", onnx::TensorProto::FLOAT, {dims[0]}, scales);
        add_init(g, w + "_zero_point", f.weight_type, {dims[0]}, zps);
      } else {
        add_init(g, w + "_scale", onnx::TensorProto::FLOAT, {}, scalar_float(f.weight_type == onnx::TensorProto::BFLOAT16 ? 1.0f : w_scale));
        add_init(g, w + "_zero_point", f.weight_type, {}, zero_point(f.weight_type, false));
      }
      std::string dq_in = w + "_quantized";
      if (f.float_weight_with_q) {
        dq_in = w + "_QuantizeLinear_Output";
        add_node(&scratch, f.q_op, w + "_QuantizeLinear", {w, w + "_scale", w + "_zero_point"}, {dq_in}, f.domain);
      } else {
        add_init(g, w + "_quantized", f.weight_type, dims, std::string(n * type_bytes(f.weight_type), '\0'));
      }
      auto* dq = add_node(&scratch, f.dq_op, w + "_DequantizeLinear", {dq_in, w + "_scale", w + "_zero_point"}, {w + "_DequantizeLinear_Output"}, f.domain);
      if (per_channel) {
        auto* axis = dq->add_attribute();
        axis->set_name("axis");
        axis->set_type(onnx::AttributeProto::INT);
        axis->set_i(0);
      }
      return w + "_DequantizeLinear_Output";
    };

    // MATMUL_NBITS: each MatMul with a constant 2-D weight becomes a
    // com.microsoft MatMulNBits named <n>_Q4 reading <B>_Q4 (uint8 [N, blocks,
    // block/2]) and <B>_scales (float32 [N * blocks]); the facts file, section 10.
    if (preset->value("quant_format", "") == "MatMulNBits") {
      const int64_t block = 128;
      for (int i = 0; i < g->node_size(); ++i) {
        auto* n = g->mutable_node(i);
        if (n->op_type() != "MatMul" || excluded.excludes(n->name()) || n->input_size() < 2 || !init_index.count(n->input(1))) continue;
        const auto& w = g->initializer(init_index.at(n->input(1)));
        if (w.dims_size() != 2) continue;
        int64_t k = w.dims(0), nn = w.dims(1), blocks = (k + block - 1) / block;
        std::string b = n->input(1);
        add_init(g, b + "_Q4", onnx::TensorProto::UINT8, {nn, blocks, block / 2}, std::string(static_cast<size_t>(nn * blocks * block / 2), '\0'));
        add_init(g, b + "_scales", onnx::TensorProto::FLOAT, {nn * blocks}, std::string(static_cast<size_t>(nn * blocks * 4), '\0'));
        std::string a = n->input(0), out = n->output(0), name = n->name();
        n->Clear();
        n->set_op_type("MatMulNBits");
        n->set_domain("com.microsoft");
        n->set_name(name + "_Q4");
        n->add_input(a);
        n->add_input(b + "_Q4");
        n->add_input(b + "_scales");
        n->add_output(out);
        for (auto [key, v] : std::vector<std::pair<const char*, int64_t>>{{"K", k}, {"N", nn}, {"bits", 4}, {"block_size", block}, {"accuracy_level", 0}}) {
          auto* at = n->add_attribute();
          at->set_name(key);
          at->set_type(onnx::AttributeProto::INT);
          at->set_i(v);
        }
      }
      f.domain = "com.microsoft";
    }
    std::set<std::string> float_weights_used;
    const bool nbits = preset->value("quant_format", "") == "MatMulNBits";
    for (int i = 0; i < g->node_size() && !nbits; ++i) {
      auto* n = g->mutable_node(i);
      if (!ops.count(n->op_type()) || excluded.excludes(n->name()) || excluded_types.count(n->op_type()) || !winputs.contains(n->op_type())) continue;
      bool weighted = false;
      for (int idx : winputs[n->op_type()].get<std::vector<int>>())
        if (idx < n->input_size() && init_index.count(n->input(idx))) weighted = true;
      if (!weighted) continue;
      if (!f.weight_only && n->input_size() > 0 && !init_index.count(n->input(0))) n->set_input(0, quantize_activation(n->input(0)));
      for (int idx : winputs[n->op_type()].get<std::vector<int>>())
        if (idx < n->input_size() && init_index.count(n->input(idx))) n->set_input(idx, quantize_weight(n->input(idx)));
    }
    // Quark rewires every consumer of a quantized activation to its DQ output.
    for (int i = 0; i < g->node_size(); ++i) {
      auto* n = g->mutable_node(i);
      for (int k = 0; k < n->input_size(); ++k)
        if (act_dq.count(n->input(k))) n->set_input(k, act_dq[n->input(k)]);
    }
    // Weights no node reads any more are dropped (Quark writes only <w>_quantized).
    for (int i = 0; i < g->node_size(); ++i)
      for (const auto& in : g->node(i).input()) float_weights_used.insert(in);
    for (const auto& n : scratch.node())
      for (const auto& in : n.input()) float_weights_used.insert(in);
    // The new nodes go first (topological order: they read graph inputs,
    // initializers or tensors produced before their consumers run in ONNX
    // Runtime's order; a checker sorts them).
    onnx::GraphProto rebuilt;
    for (const auto& n : scratch.node()) *rebuilt.add_node() = n;
    for (const auto& n : g->node()) *rebuilt.add_node() = n;
    g->mutable_node()->Swap(rebuilt.mutable_node());
    onnx::GraphProto kept;
    for (const auto& t : g->initializer())
      if (float_weights_used.count(t.name())) *kept.add_initializer() = t;
    g->mutable_initializer()->Swap(kept.mutable_initializer());
    if (into_subgraphs)
      for (auto& n : *g->mutable_node())
        for (auto& a : *n.mutable_attribute())
          if (a.type() == onnx::AttributeProto::GRAPH) quantize_graph(a.mutable_g());
  };
  quantize_graph(m.mutable_graph());
  auto* g = m.mutable_graph();
  // Interface options of the plan, as Quark's pre-processing applies them:
  // ConvertNCHWToNHWC permutes each 4-D input and output whose C, H and W are
  // integers (outputs get a Transpose and the name '<name>_transpose'), then
  // FixShapes sets the dimensions it names (plan/fix_shapes.h).
  const Json& extra = spec["extra_options"];
  auto fixed_chw = [](const onnx::TensorShapeProto& sh) {
    return sh.dim_size() == 4 && sh.dim(1).has_dim_value() && sh.dim(2).has_dim_value() && sh.dim(3).has_dim_value();
  };
  auto to_nhwc = [](onnx::TensorShapeProto* sh) {
    onnx::TensorShapeProto_Dimension c = sh->dim(1);
    *sh->mutable_dim(1) = sh->dim(2);
    *sh->mutable_dim(2) = sh->dim(3);
    *sh->mutable_dim(3) = c;
  };
  if (extra.is_object() && extra.value("ConvertNCHWToNHWC", false)) {
    for (auto& in : *g->mutable_input())
      if (fixed_chw(in.type().tensor_type().shape())) to_nhwc(in.mutable_type()->mutable_tensor_type()->mutable_shape());
    for (auto& out : *g->mutable_output())
      if (fixed_chw(out.type().tensor_type().shape())) {
        to_nhwc(out.mutable_type()->mutable_tensor_type()->mutable_shape());
        auto* t = add_node(g, "Transpose", out.name() + "_transpose", {out.name()}, {out.name() + "_transpose"}, "");
        auto* perm = t->add_attribute();
        perm->set_name("perm");
        perm->set_type(onnx::AttributeProto::INTS);
        for (int v : {0, 2, 3, 1}) perm->add_ints(v);
        out.set_name(out.name() + "_transpose");
      }
  }
  if (extra.is_object() && extra.contains("FixShapes") && extra["FixShapes"].is_string())
    for (const auto& fsh : quarkplan::parse_fix_shapes(extra["FixShapes"].get<std::string>()))
      for (auto* list : {g->mutable_input(), g->mutable_output()})
        for (auto& v : *list)
          if (v.name() == fsh.name) {
            auto* shape = v.mutable_type()->mutable_tensor_type()->mutable_shape();
            shape->clear_dim();
            for (auto d : fsh.dims) shape->add_dim()->set_dim_value(d);
          }
  if (!f.domain.empty()) {
    auto* op = m.add_opset_import();
    op->set_domain(f.domain);
    op->set_version(1);
  }
  m.set_producer_name("quarkplan export_sim (laid out as quark.onnx)");
  if (options.edit) options.edit(m);
  std::string out;
  m.SerializeToString(&out);
  return out;
}

}  // namespace qp_test
