// verify, ONNX side: a model quantized by quark.onnx against its plan. The
// model is read with the same zero-copy reader as intake (weights skipped);
// only the scale initializers of the quantize/dequantize nodes are read, for
// the power-of-two check. Which ops and data types each preset's format
// writes is catalog data (catalog/onnx.json "qdq_layout").
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "catalog/catalog.h"
#include "common/error.h"
#include "common/files.h"
#include "common/mapped_file.h"
#include "intake/onnx_reader.h"
#include "intake/protobuf_wire.h"
#include "plan/fix_shapes.h"
#include "verify/failures.h"
#include "plan/onnx_exclusions.h"
#include "verify/verify.h"

namespace fs = std::filesystem;

namespace quarkplan::verify::detail {
namespace {

using onnx::Facts;
using onnx::NodeRef;

struct Graph {
  const Facts& f;
  std::map<std::pair<uint32_t, std::string>, size_t> producer;  // (graph, tensor) -> node
  std::map<std::pair<uint32_t, std::string>, size_t> constant;  // (graph, tensor) -> constant
  explicit Graph(const Facts& facts) : f(facts) {
    // A Constant node's value is a constant known by the node's output name
    // (onnx_reader names it so), not an activation it produces.
    for (size_t i = 0; i < f.nodes.size(); ++i)
      if (f.nodes[i].op_type != "Constant")
        for (const auto& o : f.nodes[i].outputs) producer[{f.nodes[i].graph, o}] = i;
    for (size_t i = 0; i < f.constants.size(); ++i)
      if (!f.constants[i].name.empty()) constant[{f.constants[i].graph, f.constants[i].name}] = i;
  }
  const NodeRef* producer_of(uint32_t g, const std::string& t) const {
    auto it = producer.find({g, t});
    if (it == producer.end() && g != 0) it = producer.find({0, t});
    return it == producer.end() ? nullptr : &f.nodes[it->second];
  }
  const onnx::ConstTensor* constant_of(uint32_t g, const std::string& t) const {
    auto it = constant.find({g, t});
    if (it == constant.end() && g != 0) it = constant.find({0, t});
    return it == constant.end() ? nullptr : &f.constants[it->second];
  }
};

bool in(const std::set<std::string>& s, const std::string& v) { return s.count(v) > 0; }

std::string type_name(int32_t t) { return onnx::dtype_name(t); }

// Reads the float values of a small constant (a scale); empty when they are
// not float32/float16 bytes this reader can reach.
std::vector<double> read_floats(const onnx::ConstTensor& c, std::string_view model_bytes, const fs::path& model_dir, std::string& why) {
  std::vector<double> out;
  if (c.numel > (1u << 20)) {
    why = "more than 2^20 values";
    return out;
  }
  std::string external;
  std::string_view bytes;
  if (c.where == onnx::DataWhere::kInline) {
    if (c.offset > model_bytes.size() || c.length > model_bytes.size() - c.offset) {
      why = "its data lies outside the file";
      return out;
    }
    bytes = model_bytes.substr(c.offset, c.length);
  } else if (c.where == onnx::DataWhere::kExternal) {
    // External data must stay inside the model's folder (as intake requires).
    std::string refused;
    auto inside = resolve_inside(model_dir.empty() ? fs::path(".") : model_dir, c.location, refused);
    if (!inside) {
      why = "its external data " + c.location + " is refused: " + refused;
      return out;
    }
    MappedFile m(inside->string());
    if (c.offset > m.size() || c.length > m.size() - c.offset) {
      why = "its external data lies outside " + c.location;
      return out;
    }
    external.assign(m.bytes().substr(c.offset, c.length));
    bytes = external;
  } else {
    why = "its values are not stored as raw data";
    return out;
  }
  if (c.dtype == 1) {
    if (bytes.size() != c.numel * 4) {
      why = "its data has " + std::to_string(bytes.size()) + " bytes for " + std::to_string(c.numel) + " floats";
      return out;
    }
    for (uint64_t i = 0; i < c.numel; ++i) {
      float v;
      std::memcpy(&v, bytes.data() + 4 * i, 4);
      out.push_back(v);
    }
  } else if (c.dtype == 10) {
    if (bytes.size() != c.numel * 2) {
      why = "its data size does not match";
      return out;
    }
    for (uint64_t i = 0; i < c.numel; ++i) {
      uint16_t h;
      std::memcpy(&h, bytes.data() + 2 * i, 2);
      int e = (h >> 10) & 31, m = h & 1023;
      double v = e == 0 ? std::ldexp(m, -24) : e == 31 ? NAN : std::ldexp(1024 + m, e - 25);
      out.push_back((h & 0x8000) ? -v : v);
    }
  } else {
    why = "its data type is " + type_name(c.dtype);
  }
  return out;
}

// The raw bytes of a small constant (a zero point), inline only; empty otherwise.
std::string_view inline_bytes(const onnx::ConstTensor& c, std::string_view model_bytes) {
  if (c.where != onnx::DataWhere::kInline || c.offset > model_bytes.size() || c.length > model_bytes.size() - c.offset) return {};
  return model_bytes.substr(c.offset, c.length);
}

bool power_of_two(double v) {
  if (!(v > 0) || !std::isfinite(v)) return false;
  int e;
  double m = std::frexp(v, &e);
  return m == 0.5;
}


std::string dims_text(const onnx::ValueInfo& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.dims.size(); ++i) {
    s += i ? "," : "";
    s += v.dims[i].has_value ? std::to_string(v.dims[i].value) : v.dims[i].param.empty() ? "?" : v.dims[i].param;
  }
  return s + "]";
}


}  // namespace

Result verify_onnx(const Json& plan, const Json& analysis, const std::string& output, const Options& options, const Catalog& catalog) {
  fs::path model_path(output);
  std::error_code ec;
  if (fs::is_directory(model_path, ec)) model_path /= "model.onnx";
  if (!fs::is_regular_file(model_path, ec)) throw InputError(model_path.string(), "not found: give the quantized .onnx file Quark wrote");
  MappedFile map(model_path.string(), true);
  Result r = verify_onnx_bytes(plan, analysis, map.bytes(), model_path.string(), options, catalog);
  r.output_path = output;
  return r;
}

Result verify_onnx_bytes(const Json& plan, const Json& analysis, std::string_view bytes, const std::string& path, const Options&, const Catalog& catalog) {
  Result r;
  r.flow = "onnx";
  r.output_path = path;
  const fs::path model_path(path);
  struct Bytes {
    std::string_view b;
    std::string_view bytes() const { return b; }
    uint64_t size() const { return b.size(); }
  } map{bytes};
  Facts f;
  try {
    f = onnx::read_model(map.bytes());
  } catch (const std::exception& e) {
    throw InputError(model_path.string(), std::string("not a readable ONNX model: ") + e.what());
  }
  r.exported_bytes = map.size();
  for (const auto& e : f.external) r.exported_bytes += e.expected_bytes;
  // External data as ONNX Runtime will load it: inside the model's folder, and
  // every tensor's bytes there. A model that cannot load is bad input, not a check.
  {
    const fs::path dir = model_path.parent_path().empty() ? fs::path(".") : model_path.parent_path();
    std::map<std::string, uint64_t> sizes;
    for (const auto& e : f.external) {
      std::string why;
      auto inside = resolve_inside(dir, e.location, why);
      if (!inside) throw InputError(model_path.string(), "external data '" + e.location + "' of tensor " + e.tensor + " is refused: " + why);
      if (!sizes.count(e.location)) {
        std::error_code ec;
        uint64_t sz = fs::file_size(*inside, ec);
        if (ec) throw InputError(inside->string(), "missing: the model's tensor " + e.tensor + " keeps its data there");
        sizes[e.location] = sz;
      }
      uint64_t len = e.length.value_or(e.expected_bytes);
      if (e.offset > sizes[e.location] || len > sizes[e.location] - e.offset)
        throw InputError(inside->string(), "holds " + std::to_string(sizes[e.location]) + " bytes; tensor " + e.tensor + " needs bytes " + std::to_string(e.offset) + "-" +
                                               std::to_string(e.offset + len));
    }
  }
  const Json& layout = catalog.onnx()["qdq_layout"];
  std::set<std::string> dq_ops, q_ops, fused_ops, custom_domains;
  for (const auto& s : string_list(layout["dequantize_ops"])) dq_ops.insert(s);
  for (const auto& s : string_list(layout["quantize_ops"])) q_ops.insert(s);
  for (const auto& s : string_list(layout["fused_qdq_ops"])) fused_ops.insert(s);
  for (const auto& s : string_list(layout["custom_domains"])) custom_domains.insert(s);
  Graph g(f);

  const std::string preset_name = text_of(plan, "preset");
  const Json* preset = catalog.onnx_preset(catalog.canonical_preset(preset_name));
  const Json& spec = plan.contains("onnx_specific") ? plan["onnx_specific"] : Json::object();
  const Json& extra = spec.contains("extra_options") && spec["extra_options"].is_object() ? spec["extra_options"] : Json::object();

  // The op types the plan quantizes: its op_types_to_quantize, else the preset's op set.
  std::set<std::string> op_types;
  for (const auto& s : string_list(member(spec, "op_types_to_quantize"))) op_types.insert(s);
  std::string op_set = preset ? preset->value("op_set", "static") : "static";
  if (op_types.empty()) {
    const Json& sets = catalog.onnx()["preset_op_sets"];
    std::string key = text_of(plan, "deployment_target") == "npu_transformer" && sets.contains("npu_transformer") ? "npu_transformer" : op_set;
    if (sets.contains(key)) op_types = {};
    if (sets.contains(key))
      for (const auto& s : string_list(sets[key]["ops"])) op_types.insert(s);
  }
  std::map<std::string, std::vector<int>> weight_inputs;
  for (const auto& [op, idx] : catalog.onnx()["weight_inputs"]["ops"].items()) weight_inputs[op] = idx.get<std::vector<int>>();

  // Excluded nodes: by name, and every node between a subgraph's start and end nodes.
  // Entries by name, or '^...' regular expressions as Quark reads them (plan/onnx_exclusions.h).
  std::set<std::string> excluded;
  const NodeExclusions exclusions(member(spec, "nodes_to_exclude"));
  std::set<std::string> excluded_types;  // QConfig layer_type_config={None: [...]}
  for (const auto& t : string_list(member(spec, "op_types_to_exclude"))) excluded_types.insert(t);
  for (const auto& n : f.nodes)
    if (exclusions.excludes(n.name) || in(excluded_types, n.op_type)) excluded.insert(n.name);
  std::set<std::string> node_names;
  for (const auto& n : f.nodes) node_names.insert(n.name);
  Check model = make_check("verify.onnx.model");
  FailureSink model_sink;
  for (const auto& n : string_list(member(spec, "nodes_to_exclude"))) {
    ++model.checked;
    if (NodeExclusions::is_pattern(n)) {
      const NodeExclusions one(Json::array({n}));
      bool any = false;
      for (const auto& name : node_names) any = any || one.excludes(name);
      if (!any) model_sink.add(n, "a pattern of nodes the plan excludes", "no node of the quantized model matches it");
    } else if (!in(node_names, n)) {
      model_sink.add(n, "a node the plan excludes", "no node of that name in the quantized model");
    }
  }
  for (const auto& n : string_list(member(spec, "nodes_to_quantize"))) {
    ++model.checked;
    if (!in(node_names, n)) model_sink.add(n, "a node the plan quantizes", "no node of that name in the quantized model");
  }
  if (spec.contains("subgraphs_to_exclude") && spec["subgraphs_to_exclude"].is_array()) {
    // Forward from the start nodes, backward from the end nodes; the
    // intersection is the subgraph.
    std::map<std::string, std::vector<size_t>> consumers;
    for (size_t i = 0; i < f.nodes.size(); ++i)
      for (const auto& in_name : f.nodes[i].inputs) consumers[in_name].push_back(i);
    std::map<std::string, size_t> by_name;
    for (size_t i = 0; i < f.nodes.size(); ++i) by_name[f.nodes[i].name] = i;
    for (const auto& pair : spec["subgraphs_to_exclude"]) {
      if (!pair.is_array() || pair.size() != 2) continue;
      auto starts = string_list(pair[0]), ends = string_list(pair[1]);
      std::set<size_t> fwd, bwd;
      std::vector<size_t> stack;
      for (const auto& s : starts)
        if (by_name.count(s)) stack.push_back(by_name[s]);
        else {
          ++model.checked;
          model_sink.add(s, "a start node of an excluded subgraph", "no node of that name");
        }
      std::set<std::string> end_set(ends.begin(), ends.end());
      while (!stack.empty()) {
        size_t i = stack.back();
        stack.pop_back();
        if (!fwd.insert(i).second || in(end_set, f.nodes[i].name)) continue;
        for (const auto& o : f.nodes[i].outputs)
          for (size_t c : consumers[o]) stack.push_back(c);
      }
      for (const auto& e : ends)
        if (by_name.count(e)) stack.push_back(by_name[e]);
        else {
          ++model.checked;
          model_sink.add(e, "an end node of an excluded subgraph", "no node of that name");
        }
      std::set<std::string> start_set(starts.begin(), starts.end());
      while (!stack.empty()) {
        size_t i = stack.back();
        stack.pop_back();
        if (!bwd.insert(i).second || in(start_set, f.nodes[i].name)) continue;
        for (const auto& in_name : f.nodes[i].inputs)
          if (const NodeRef* p = g.producer_of(f.nodes[i].graph, in_name)) stack.push_back(static_cast<size_t>(p - f.nodes.data()));
      }
      for (size_t i : fwd)
        if (bwd.count(i) && !in(dq_ops, f.nodes[i].op_type) && !in(q_ops, f.nodes[i].op_type)) excluded.insert(f.nodes[i].name);
    }
  }
  // Dynamic quantization (ONNX Runtime's quantize_dynamic, which Quark calls) rewrites a
  // quantized node into an integer op named after it: Conv -> ConvInteger "<name>_quant",
  // MatMul -> MatMulInteger "<name>_quant", Gemm -> MatMulInteger "<name>_MatMul_quant" + Add
  // (onnxruntime/python/tools/quantization/operators/conv.py, matmul.py, gemm.py; seen on
  // amd-quark 0.13 with onnxruntime 1.28). The op type the node had before, or "" for another node.
  const bool dynamic_preset = preset && preset->value("dynamic", false);
  auto dynamic_form_of = [&](const NodeRef& n) -> std::string {
    if (!dynamic_preset) return "";
    auto ends = [&](const std::string& suffix) { return n.name.size() > suffix.size() && n.name.compare(n.name.size() - suffix.size(), suffix.size(), suffix) == 0; };
    if (n.op_type == "ConvInteger") return "Conv";
    if (n.op_type == "MatMulInteger") return ends("_MatMul_quant") ? "Gemm" : "MatMul";
    return "";
  };
  // The same model: every op type the plan quantizes occurs as often as in the analysed model.
  if (const Json& counts = member(member(member(analysis, "quantization_targets"), "onnx_specific"), "op_counts"); counts.is_object()) {
    // Quark's pre-processing fuses a MatMul with a constant weight and its Add into a Gemm
    // (seen on PP-OCR with amd-quark 0.13 and 0.12.post1): where the plan quantizes both, the two
    // are counted together.
    const bool gemm_family = in(op_types, "MatMul") && in(op_types, "Gemm");
    auto count_of = [&](const std::string& op) {
      return counts.contains(op) && counts[op].is_number_unsigned() ? counts[op].get<uint64_t>() : uint64_t{0};
    };
    for (const auto& op : op_types) {
      if (gemm_family && op == "Gemm") continue;  // counted with MatMul
      // Quark's pre-processing folds the Gathers of shape arithmetic (Shape -> Gather -> Concat)
      // into constants (silero_vad_half: 10 Gather nodes before, 2 after, amd-quark 0.13); the
      // embedding Gathers it quantizes are checked node by node below.
      if (op == "Gather") continue;
      const bool both = gemm_family && op == "MatMul";
      uint64_t want = count_of(op) + (both ? count_of("Gemm") : 0);
      uint64_t got = 0;
      for (const auto& n : f.nodes) {
        // MATMUL_NBITS rewrites MatMul into MatMulNBits: together they keep the count.
        auto is = [&](const std::string& o) { return n.op_type == o || (o == "MatMul" && n.op_type == "MatMulNBits") || dynamic_form_of(n) == o; };
        got += is(op) || (both && is("Gemm"));
      }
      ++model.checked;
      const std::string label = both ? "MatMul+Gemm" : op;
      if (want != got) model_sink.add(label, std::to_string(want) + " " + label + " nodes (the analysed model)", std::to_string(got));
    }
  }
  model_sink.flush_into(model);

  // Is tensor `t` (an input of a node in graph `gi`) dequantized, and from what?
  struct Source {
    const NodeRef* dq = nullptr;          // the DQ (or fused QDQ) node feeding it
    const onnx::ConstTensor* weight = nullptr;  // the constant behind it, if any
    int32_t qtype = 0;                    // the quantized data type (zero point or stored weight), 0 when unknown
  };
  std::map<std::pair<uint32_t, std::string>, std::vector<size_t>> consumer_map;
  for (size_t i = 0; i < f.nodes.size(); ++i)
    for (const auto& t : f.nodes[i].inputs) consumer_map[{f.nodes[i].graph, t}].push_back(i);
  auto consumers_of = [&](uint32_t gi, const std::string& t) -> const std::vector<size_t>& {
    static const std::vector<size_t> none;
    auto it = consumer_map.find({gi, t});
    return it == consumer_map.end() ? none : it->second;
  };
  auto source_of = [&](uint32_t gi, const std::string& t) {
    Source s;
    const NodeRef* p = g.producer_of(gi, t);
    if (!p) {
      s.weight = g.constant_of(gi, t);
      return s;
    }
    if (in(dq_ops, p->op_type) || in(fused_ops, p->op_type)) {
      s.dq = p;
      if (in(dq_ops, p->op_type)) {
        if (p->inputs.size() > 2 && !p->inputs[2].empty())
          if (const auto* zp = g.constant_of(gi, p->inputs[2])) s.qtype = zp->dtype;
        const std::string& x = p->inputs.empty() ? std::string() : p->inputs[0];
        if (const auto* c = g.constant_of(gi, x)) {
          s.weight = c;
          if (!s.qtype) s.qtype = c->dtype;
        } else if (const NodeRef* q = g.producer_of(gi, x); q && in(q_ops, q->op_type)) {
          if (!q->inputs.empty()) s.weight = g.constant_of(gi, q->inputs[0]);
          if (!s.qtype && q->inputs.size() > 2)
            if (const auto* zp = g.constant_of(gi, q->inputs[2])) s.qtype = zp->dtype;
          if (!s.qtype) s.qtype = 2;  // QuantizeLinear without a zero point: uint8
        }
      } else if (!p->inputs.empty()) {
        s.weight = g.constant_of(gi, p->inputs[0]);
      }
    } else {
      s.weight = nullptr;
    }
    return s;
  };

  const Json& types = layout["types"];
  auto type_info = [&](const char* key) -> const Json* {
    if (!preset || !preset->contains(key) || !(*preset)[key].is_string()) return nullptr;
    std::string t = (*preset)[key].get<std::string>();
    return types.contains(t) ? &types[t] : nullptr;
  };
  const Json* act_type = type_info("activation_type");
  const Json* w_type = type_info("weight_type");
  // Per-layer precision (--layer-scheme): a node a pattern names takes that
  // preset's types (Quark's specific_layer_config / layer_type_config).
  std::vector<std::pair<std::string, const Json*>> layer_presets;  // pattern, preset
  if (spec.contains("layer_presets") && spec["layer_presets"].is_object())
    for (auto& [pattern, name] : spec["layer_presets"].items())
      if (name.is_string())
        if (const Json* lp = catalog.onnx_preset(name.get<std::string>())) layer_presets.emplace_back(pattern, lp);
  auto layer_preset_of = [&](const NodeRef& n) -> const Json* {
    for (const auto& [pattern, lp] : layer_presets) {
      if (pattern.rfind("op:", 0) == 0 ? n.op_type == pattern.substr(3) : NodeExclusions(Json::array({pattern})).excludes(n.name)) return lp;
    }
    return nullptr;
  };
  auto info_of = [&](const Json* p, const char* key) -> const Json* {
    if (!p || !p->contains(key) || !(*p)[key].is_string()) return nullptr;
    std::string t = (*p)[key].get<std::string>();
    return types.contains(t) ? &types[t] : nullptr;
  };
  // A mixed-precision preset's AutoMixprecision moves layers to its target types (the preset's
  // mixed_targets: INT8 under S16S16_MIXED_S8S8, BFP or MX under BF16_MIXED_*; 0.12 names them in
  // its AutoMixprecision dict, 0.13 as TargetLayerConfig specs): a layer may carry either (seen in
  // Quark's exports, tests/quark_real).
  const Json* mixed_a = nullptr;
  const Json* mixed_w = nullptr;
  if (preset && preset->value("auto_mixprecision", false) && preset->contains("mixed_targets")) {
    const Json& mt = (*preset)["mixed_targets"];
    mixed_a = info_of(&mt, "activation");
    mixed_w = info_of(&mt, "weight");
  }
  auto type_ok = [&](const Json* info, const Source& s) {
    if (!info) return true;
    if (info->value("form", "qdq") == "fused") return s.dq && s.dq->op_type == info->value("op", "");
    if (!s.dq || !in(dq_ops, s.dq->op_type)) return false;
    auto allowed = (*info)["onnx_types"].get<std::vector<int32_t>>();
    return s.qtype == 0 || std::find(allowed.begin(), allowed.end(), s.qtype) != allowed.end();
  };
  auto type_text = [&](const Json* info) -> std::string {
    if (!info) return "?";
    if (info->value("form", "qdq") == "fused") return info->value("op", "");
    std::string s;
    for (auto t : (*info)["onnx_types"]) s += (s.empty() ? "" : "|") + type_name(t.get<int32_t>());
    return s;
  };
  auto found_type = [&](const Source& s) -> std::string {
    if (!s.dq) return "float (no dequantize)";
    if (in(fused_ops, s.dq->op_type)) return s.dq->op_type;
    return s.qtype ? s.dq->op_type + " of " + type_name(s.qtype) : s.dq->op_type;
  };

  Check quantized = make_check("verify.onnx.quantized_nodes");
  Check excl = make_check("verify.onnx.excluded_nodes");
  Check dtypes = make_check("verify.onnx.data_types");
  // onnx_specific.per_channel: Quark's per-channel weights carry a 1-D scale (one per channel).
  Check gran = make_check("verify.onnx.weight_granularity");
  const bool per_channel = spec.value("per_channel", false) == true;
  FailureSink g_sink;
  FailureSink q_sink, x_sink, t_sink;
  GroupBuilder kept_q{"quantized (" + preset_name + ")", {}, {}}, kept_x{"excluded (float)", {}, {}};
  const bool nbits = preset && preset->value("quant_format", "") == "MatMulNBits";
  // Weight-only: the preset's own (no activation type), or an algorithm that makes the run so
  // (catalog weights_only_run: GPTQ on the QDQ route), or WeightsOnly set by the plan.
  bool weight_only = (preset && (*preset)["activation_type"].is_null()) || flag_of(extra, "WeightsOnly");
  // What the plan's algorithms do to its weights, read once (catalog weights_only_run,
  // run_weight_granularity, run_weight_types: GPTQ's per-column uint8 MatMuls).
  std::map<std::string, bool> algo_per_channel;
  std::map<std::string, const Json*> algo_weight_type;
  for (const auto& a : string_list(member(plan, "algorithms"))) {
    const Json* alg = catalog.onnx_algorithm(a);
    if (!alg) continue;
    if (alg->contains("weights_only_run")) weight_only = true;
    if (alg->contains("run_weight_granularity"))
      for (const auto& [op, g] : (*alg)["run_weight_granularity"].items()) algo_per_channel[op] = g == "per_channel";
    if (alg->contains("run_weight_types"))
      for (const auto& [op, t] : (*alg)["run_weight_types"].items())
        if (t.is_string()) algo_weight_type[op] = info_of(&(*alg)["run_weight_types"], op.c_str());
  }
  uint64_t float_weights_left = 0;
  for (const auto& n : f.nodes) {
    if (!in(op_types, n.op_type)) continue;
    auto wi = weight_inputs.find(n.op_type);
    if (wi == weight_inputs.end()) continue;
    // A weighted node: a weight input that is, or is dequantized from, a constant.
    std::vector<Source> wsrc;
    bool weighted = false;
    for (int idx : wi->second) {
      if (idx >= static_cast<int>(n.inputs.size())) continue;
      Source s = source_of(n.graph, n.inputs[idx]);
      if (s.weight) weighted = true;
      wsrc.push_back(s);
    }
    if (!weighted) continue;
    if (n.in_subgraph && !(nbits)) {
      // Quark quantizes control-flow bodies only with EnableSubgraph.
      if (!flag_of(extra, "EnableSubgraph")) continue;
    }
    Source act = n.inputs.empty() ? Source{} : source_of(n.graph, n.inputs[0]);
    if (in(excluded, n.name)) {
      ++excl.checked;
      std::string bad;
      for (const auto& s : wsrc)
        if (s.dq) bad += (bad.empty() ? "" : "; ") + std::string("weight through ") + s.dq->op_type + " " + s.dq->name;
      // An activation Q/DQ is Quark's only for a quantized neighbour (a consumer
      // or the producer of the tensor); one that only this excluded node touches is not.
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        if (std::find(wi->second.begin(), wi->second.end(), static_cast<int>(k)) != wi->second.end() || n.inputs[k].empty()) continue;
        Source a = source_of(n.graph, n.inputs[k]);
        if (!a.dq || a.weight) continue;
        bool other_consumer = false;
        for (size_t c : consumers_of(n.graph, n.inputs[k]))
          other_consumer = other_consumer || (&f.nodes[c] != &n && !in(excluded, f.nodes[c].name));
        const NodeRef* q = a.dq->inputs.empty() ? nullptr : g.producer_of(n.graph, a.dq->inputs[0]);
        const NodeRef* src = q && !q->inputs.empty() ? g.producer_of(n.graph, q->inputs[0]) : nullptr;
        bool quantized_producer = src && !in(excluded, src->name) && !in(q_ops, src->op_type) && !in(dq_ops, src->op_type);
        if (!other_consumer && !quantized_producer)
          bad += (bad.empty() ? "" : "; ") + std::string("activation ") + (q && !q->inputs.empty() ? q->inputs[0] : n.inputs[k]) + " quantized for this excluded node alone";
      }
      if (!bad.empty()) {
        x_sink.add(n.name, n.op_type + " in float (excluded by the plan)", bad);
        kept_x.broken.push_back(n.name);
      } else {
        kept_x.kept.push_back(n.name);
      }
      continue;
    }
    if (nbits) continue;  // counted below
    if (dynamic_preset) {
      // Every quantized node became its integer op (counted below): a weighted one left is float.
      ++quantized.checked;
      q_sink.add(n.name, n.op_type + " rewritten to its integer op (dynamic quantization)", "left in float");
      kept_q.broken.push_back(n.name);
      continue;
    }
    ++quantized.checked;
    std::vector<std::string> missing;
    for (const auto& s : wsrc)
      if (s.weight && !s.dq) {
        missing.push_back("weight " + s.weight->name + " in float");
        ++float_weights_left;
      }
    if (!weight_only && !act.dq && !act.weight) missing.push_back("activation " + (n.inputs.empty() ? std::string("?") : n.inputs[0]) + " not dequantized");
    if (!missing.empty()) {
      std::string want = weight_only ? "dequantized weights" : "dequantized activation and weights";
      q_sink.add(n.name, n.op_type + " with " + want, [&] {
        std::string s;
        for (const auto& m : missing) s += (s.empty() ? "" : "; ") + m;
        return s;
      }());
      kept_q.broken.push_back(n.name);
      continue;
    }
    kept_q.kept.push_back(n.name);
    ++dtypes.checked;
    for (const auto& s : wsrc) {
      if (!s.dq || in(fused_ops, s.dq->op_type) || s.dq->inputs.size() < 2) continue;
      const auto* sc = g.constant_of(n.graph, s.dq->inputs[1]);
      if (!sc) continue;
      ++gran.checked;
      const bool channels = sc->rank == 1 && sc->numel > 1;
      // An algorithm that sets its own granularity for this op (catalog run_weight_granularity: GPTQ's per-column MatMul scales).
      const auto ag = algo_per_channel.find(n.op_type);
      const bool want_channels = ag == algo_per_channel.end() ? per_channel : ag->second;
      if (channels != want_channels)
        g_sink.add(n.name, want_channels ? "one weight scale per output channel (per_channel)" : "one weight scale for the tensor",
                   std::string("scale ") + sc->name + " with " + std::to_string(sc->numel) + (sc->numel == 1 ? " value" : " values"));
    }
    const Json* lp = layer_preset_of(n);
    const Json* na = lp ? info_of(lp, "activation_type") : act_type;
    const Json* nw = lp ? info_of(lp, "weight_type") : w_type;
    // An algorithm that writes its own weight type for this op (catalog run_weight_types: GPTQ's uint8 MatMuls).
    if (auto at = algo_weight_type.find(n.op_type); at != algo_weight_type.end()) nw = at->second;
    const std::string pname = lp ? (*lp)["name"].get<std::string>() + " (--layer-scheme)" : preset_name;
    std::vector<std::string> wrong;
    for (const auto& s : wsrc)
      if (s.dq && !type_ok(nw, s) && (!mixed_w || !type_ok(mixed_w, s))) wrong.push_back("weight " + found_type(s));
    if (!weight_only && act.dq && !type_ok(na, act) && (!mixed_a || !type_ok(mixed_a, act))) wrong.push_back("activation " + found_type(act));
    if (!wrong.empty()) {
      std::string s;
      for (const auto& w : wrong) s += (s.empty() ? "" : "; ") + w;
      t_sink.add(n.name, pname + ": activations " + (weight_only ? std::string("float") : type_text(na)) + ", weights " + type_text(nw), s);
    }
  }
  if (nbits) {
    // MatMulNBits replaces each quantized MatMul: none with a constant 2-D weight may stay.
    uint64_t nbits_nodes = 0;
    for (const auto& n : f.nodes) nbits_nodes += n.op_type == "MatMulNBits";
    quantized.checked = nbits_nodes;
    for (const auto& n : f.nodes)
      if (n.op_type == "MatMul" && !in(excluded, n.name) && n.inputs.size() > 1)
        if (const auto* c = g.constant_of(n.graph, n.inputs[1]); c && c->rank == 2) {
          ++quantized.checked;
          q_sink.add(n.name, "rewritten to MatMulNBits", "a MatMul with float weight " + c->name);
        }
    if (!nbits_nodes) q_sink.add(model_path.filename().string(), "MatMulNBits nodes", "none");
    dtypes.skipped = "MatMulNBits packs its weights itself (no Q/DQ pairs)";
  }
  if (dynamic_preset) {
    for (const auto& n : f.nodes)
      if (!dynamic_form_of(n).empty()) {
        ++quantized.checked;
        kept_q.kept.push_back(n.name);
      }
    dtypes.skipped = "dynamic quantization writes ONNX Runtime integer ops (ConvInteger, MatMulInteger), which quantize activations at run time";
  }
  q_sink.flush_into(quantized);
  x_sink.flush_into(excl);
  t_sink.flush_into(dtypes);
  g_sink.flush_into(gran);
  if (gran.checked == 0) gran.skipped = "no quantized weight with a Q/DQ scale to read";
  if (excl.checked == 0) excl.skipped = excluded.empty() ? "the plan excludes no nodes" : "no weighted node of the plan's op types is excluded";
  if (quantized.checked == 0 && quantized.skipped.empty() && !nbits) {
    quantized.checked = 1;
    quantized.failures.push_back({model_path.filename().string(), "Q/DQ on the " + std::to_string(op_types.size()) + " op types the plan quantizes", "no weighted node of those op types"});
  }
  if (dtypes.checked == 0 && dtypes.skipped.empty()) dtypes.skipped = "no quantized node to read data types from";

  // Power-of-two scales: every scale input of a Q/DQ node.
  Check pof2 = make_check("verify.onnx.power_of_two");
  if (preset && preset->value("power_of_two", false)) {
    FailureSink p_sink;
    std::set<std::string> seen;
    for (const auto& n : f.nodes) {
      if (!(in(dq_ops, n.op_type) || in(q_ops, n.op_type)) || n.inputs.size() < 2) continue;
      const auto* c = g.constant_of(n.graph, n.inputs[1]);
      if (!c || !seen.insert(c->name).second) continue;
      ++pof2.checked;
      std::string why;
      auto values = read_floats(*c, map.bytes(), model_path.parent_path(), why);
      if (values.empty()) {
        p_sink.add(c->name, "a power-of-two scale", "unreadable: " + (why.empty() ? std::string("no values") : why));
        continue;
      }
      for (double v : values) {
        int e = 0;
        if (power_of_two(v)) std::frexp(v, &e);
        if (!power_of_two(v) || e - 1 < -127 || e - 1 > 127) {
          char buf[64];
          std::snprintf(buf, sizeof buf, "%.9g", v);
          // Quark clamps power-of-two positions to [-127, 127] (quant_utils pos2scale).
          p_sink.add(c->name, "a power-of-two scale (2^k, k in [-127, 127])", std::string("scale ") + buf);
          break;
        }
      }
      // Symmetric power-of-two quantization: zero point 0 (int8) or 128 (uint8, XINT8's activations).
      if (n.inputs.size() > 2 && !n.inputs[2].empty())
        if (const auto* zp = g.constant_of(n.graph, n.inputs[2]); zp && (zp->dtype == 2 || zp->dtype == 3) && seen.insert(zp->name).second) {
          std::string_view b = inline_bytes(*zp, map.bytes());
          const int want = zp->dtype == 2 ? 128 : 0;
          for (char ch : b) {
            int v = zp->dtype == 2 ? static_cast<unsigned char>(ch) : static_cast<signed char>(ch);
            if (v != want) {
              p_sink.add(zp->name, "zero point " + std::to_string(want) + " (symmetric " + type_name(zp->dtype) + ")", "zero point " + std::to_string(v));
              break;
            }
          }
        }
    }
    p_sink.flush_into(pof2);
    if (pof2.checked == 0) pof2.skipped = "no quantize/dequantize node with a constant scale";
  } else {
    pof2.skipped = preset_name + " uses float scales";
  }

  // Custom ops: present exactly when the preset's format needs them.
  Check custom = make_check("verify.onnx.custom_ops");
  custom.checked = 1;
  uint64_t custom_nodes = 0;
  for (const auto& [d, count] : f.domain_op_counts)
    if (in(custom_domains, d)) custom_nodes += count;
  // Quark's own domain carries the float (BF16/FP16) and block (BFP/MX) formats;
  // integer Q/DQ, even on the Extended route, ends as standard or com.microsoft ops.
  bool needs = (preset && preset->value("needs_custom_ops", false)) || (act_type && act_type->value("custom_domain", false)) ||
               (w_type && w_type->value("custom_domain", false));
  if (needs && custom_nodes == 0)
    custom.failures.push_back({model_path.filename().string(), preset_name + "'s format written with Quark's custom ops", "no node in a Quark domain"});
  if (!needs && custom_nodes > 0) {
    std::string ops;
    for (const auto& n : f.nodes)
      if (in(custom_domains, n.domain) && ops.find(n.op_type) == std::string::npos) ops += (ops.empty() ? "" : ", ") + n.op_type;
    custom.failures.push_back({model_path.filename().string(), "no Quark custom ops: " + preset_name + " writes standard (or com.microsoft) QuantizeLinear/DequantizeLinear",
                               std::to_string(custom_nodes) + " nodes in Quark's custom domains (" + ops + ")"});
  }

  // Interface: the inputs and outputs as Quark's pre-processing leaves them
  // (plan/fix_shapes.h: ConvertNCHWToNHWC permutes 4-D tensors with integer
  // C, H, W and renames such outputs '<name>_transpose'), with FixShapes'
  // dimensions, float I/O kept.
  Check iface = make_check("verify.onnx.interface");
  FailureSink i_sink;
  const Json& facts = member(member(analysis, "model"), "onnx_specific");
  const bool nhwc = flag_of(extra, "ConvertNCHWToNHWC");
  // FP16 I/O becomes FP32 only where Quark's conversion runs (catalog fp16_models: it does not in
  // the releases the catalog describes, and Quark then keeps FP16 inputs and outputs).
  const bool fp16_to_32 = flag_of(extra, "ConvertFP16ToFP32") && catalog.onnx_extra_option_works("ConvertFP16ToFP32");
  std::map<std::string, std::vector<int64_t>> fixed;
  if (const std::string fs_text = text_of(extra, "FixShapes"); !fs_text.empty()) {
    try {
      for (auto& fsh : parse_fix_shapes(fs_text)) fixed[fsh.name] = fsh.dims;
    } catch (const std::invalid_argument&) {
      // The plan's rules refuse a FixShapes Quark cannot use; nothing to compare.
    }
  }
  if (facts.is_object()) {
    const std::vector<ShapeSlot> slots = fix_shapes_slots(facts, nhwc);
    const Json& ain = member(facts, "inputs");
    const Json& aout = member(facts, "outputs");
    size_t in_index = 0, out_index = 0;
    for (const auto& slot : slots) {
      ++iface.checked;
      const Json& declared = slot.output ? (out_index < aout.size() ? aout[out_index++] : Json()) : (in_index < ain.size() ? ain[in_index++] : Json());
      const auto& list = slot.output ? f.outputs : f.inputs;
      auto it = std::find_if(list.begin(), list.end(), [&](const onnx::ValueInfo& v) { return v.name == slot.name; });
      if (it == list.end()) {
        i_sink.add(slot.name, std::string("a model ") + (slot.output ? "output" : "input") + (nhwc && slot.output && slot.name.ends_with("_transpose") ? " (renamed by ConvertNCHWToNHWC)" : ""),
                   "missing from the quantized model");
        continue;
      }
      std::string adtype = text_of(declared, "dtype");
      std::string want_dtype = fp16_to_32 && adtype == "float16" ? "float32" : adtype;
      if (!want_dtype.empty() && type_name(it->elem_type) != want_dtype)
        i_sink.add(slot.name, std::string(slot.output ? "output" : "input") + " of " + want_dtype, type_name(it->elem_type));
      // Shapes are promised only where the plan changes them: NHWC or FixShapes.
      const bool is_fixed = fixed.count(slot.name) > 0;
      if (!is_fixed && !nhwc) continue;
      std::vector<int64_t> want = is_fixed ? fixed[slot.name] : slot.dims;
      bool same = it->dims.size() == want.size();
      for (size_t k = 0; same && k < want.size(); ++k)
        if (want[k] >= 0 && !(it->dims[k].has_value && it->dims[k].value == want[k])) same = false;
      if (!same) {
        std::string w = "[";
        for (size_t k = 0; k < want.size(); ++k) w += (k ? "," : "") + (want[k] >= 0 ? std::to_string(want[k]) : std::string("?"));
        w += "]";
        i_sink.add(slot.name, "shape " + w + (is_fixed ? " (FixShapes)" : " (NHWC)"), "shape " + dims_text(*it));
      }
    }
  } else {
    iface.skipped = "the plan's analysis (its inputs and outputs) is not available";
  }
  i_sink.flush_into(iface);

  // Size: the estimate of the plan's preset.
  for (const auto& w : member(member(plan, "estimates"), "weights"))
    if (text_of(w, "scheme") == preset_name && w.contains("bytes") && w["bytes"].is_number_unsigned()) {
      r.estimated_bytes = w["bytes"].get<uint64_t>();
      // A mixed-precision preset's AutoMixprecision may move every quantized weight down to its
      // target type (S16S16_MIXED_S8S8: 16 to 8 bits; seen on a transformer with amd-quark 0.13):
      // the estimate is then the upper end and the all-target size the lower.
      if (mixed_w && !mixed_w->value("keeps_float_weights", false) && preset && (*preset)["weight_bits"].is_number() && w.contains("quantized_params")) {
        const std::string t = (*preset)["mixed_targets"].value("weight", "");
        const size_t digits = t.find_first_of("0123456789");
        const double target_bits = digits == std::string::npos ? 0 : std::stod(t.substr(digits));
        const double drop = w["quantized_params"].get<double>() * ((*preset)["weight_bits"].get<double>() - target_bits) / 8;
        if (target_bits > 0 && drop > 0 && drop < static_cast<double>(r.estimated_bytes)) r.estimated_min_bytes = r.estimated_bytes - static_cast<uint64_t>(drop);
      }
      break;
    }
  if (float_weights_left) r.notes.push_back(std::to_string(float_weights_left) + " weights of quantized op types are still float.");

  r.checks = {model, quantized, excl, dtypes, gran, pof2, custom, iface};
  r.groups.push_back(kept_q.finish());
  if (!kept_x.kept.empty() || !kept_x.broken.empty()) r.groups.push_back(kept_x.finish());
  uint64_t inline_b = f.inline_weight_bytes, ext_b = 0;
  for (const auto& e : f.external) ext_b += e.expected_bytes;
  r.bytes = {{"tensors inside the .onnx", inline_b}, {"external data", ext_b}, {"graph and metadata", map.size() > inline_b ? map.size() - inline_b : 0}};
  return r;
}

}  // namespace quarkplan::verify::detail
