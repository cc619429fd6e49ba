// OnnxModelReader: builds the ONNX flavour of model_analysis.json from the
// structural facts of onnx_reader (rules 43-66 of quark_contracts.md §4.4).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "catalog/catalog.h"
#include "common/error.h"
#include "common/files.h"
#include "common/mapped_file.h"
#include "intake/model_reader.h"
#include "intake/onnx_graph.h"
#include "intake/onnx_reader.h"
#include "intake/weight_stats.h"
#include "intake/protobuf_wire.h"
#include "common/json.h"
#include "common/strings.h"
#include <memory>

namespace fs = std::filesystem;

namespace quarkplan {
namespace {

constexpr uint64_t kProtobufLimit = 2147483648ull;  // 2 GiB: protobuf's serialization limit

double round3(double v) { return std::round(v * 1000.0) / 1000.0; }

Json shape_json(const onnx::ValueInfo& vi) {
  if (!vi.has_shape) return nullptr;
  Json s = Json::array();
  for (const auto& d : vi.dims) {
    if (d.has_value) s.push_back(d.value);
    else if (!d.param.empty()) s.push_back(d.param);
    else s.push_back("?");
  }
  return s;
}

// If nodes (in any graph) whose condition depends on tensor shapes only (Shape or Size of some
// tensor, then shape arithmetic and constants; never a tensor's values): with static input shapes
// ONNX Runtime folds the condition and inlines the branch it picks, with what folds in it. Recorded
// with the bytes of the largest constant in the branches and the folding ops (ConstantOfShape,
// Expand, Tile, Range) whose inputs fold too (onnx.install.ort_folded_if). Which branch is taken and
// how large a ConstantOfShape comes out are not worked out: either branch counts.
Json shape_only_ifs(const onnx::Facts& f) {
  if (!f.op_counts.count("If")) return Json::array();  // most models: nothing to index
  static const std::set<std::string> shape_math = {"Constant", "Gather", "Squeeze", "Unsqueeze", "Cast", "Equal", "Greater", "Less",
                                                   "GreaterOrEqual", "LessOrEqual", "Not", "And", "Or", "Xor", "Concat", "Slice", "Add",
                                                   "Sub", "Mul", "Div", "Mod", "ReduceProd", "Identity", "Reshape", "Min", "Max", "Neg", "Abs"};
  const size_t graphs = f.graph_parent.size();
  std::vector<std::map<std::string, size_t>> producer(graphs);  // per graph: tensor -> node index
  std::vector<std::set<std::string>> constant(graphs);           // per graph: initializers and Constant outputs
  for (size_t i = 0; i < f.nodes.size(); ++i)
    if (f.nodes[i].graph < graphs)
      for (const auto& o : f.nodes[i].outputs)
        if (!o.empty()) producer[f.nodes[i].graph].emplace(o, i);
  for (const auto& c : f.constants)
    if (c.graph < graphs) constant[c.graph].insert(c.name);
  std::set<std::string> graph_inputs;
  for (const auto& in : f.inputs) graph_inputs.insert(in.name);
  // Whether `tensor`, seen from graph `scope`, is computed from shapes and constants only; the first
  // Shape/Size met is named in `shape_of`.
  auto shape_only = [&](const std::string& tensor, uint32_t scope, std::string& shape_of, bool& any_shape) {
    std::vector<std::pair<std::string, uint32_t>> todo{{tensor, scope}};
    std::set<std::pair<std::string, uint32_t>> seen;
    while (!todo.empty()) {
      auto [t, g] = todo.back();
      todo.pop_back();
      if (t.empty() || !seen.insert({t, g}).second) continue;
      if (seen.size() > 4096) return false;
      // The tensor's producer in this graph or an enclosing one (outer scope).
      const onnx::NodeRef* m = nullptr;
      bool is_constant = false;
      for (uint32_t at = g;; at = f.graph_parent[at]) {
        if (auto p = producer[at].find(t); p != producer[at].end()) {
          m = &f.nodes[p->second];
          break;
        }
        if (constant[at].count(t)) {
          is_constant = true;
          break;
        }
        if (at == 0) break;
      }
      if (is_constant) continue;
      if (!m) return false;  // a graph input's values, or something unknown
      if (!m->domain.empty()) return false;
      if (m->op_type == "Shape" || m->op_type == "Size") {
        any_shape = true;
        if (shape_of.empty() && !m->inputs.empty()) shape_of = m->op_type + "(" + m->inputs[0] + ")";
        continue;
      }
      if (!shape_math.count(m->op_type)) return false;
      for (const auto& in : m->inputs) todo.push_back({in, m->graph});
    }
    return true;
  };
  Json out = Json::array();
  for (const auto& n : f.nodes) {
    if (n.op_type != "If" || !n.domain.empty() || n.inputs.empty() || n.subgraph_first > n.subgraph_last || n.graph >= graphs) continue;
    std::string shape_of;
    bool any_shape = false;
    if (!shape_only(n.inputs[0], n.graph, shape_of, any_shape) || !any_shape) continue;
    uint64_t largest = 0, constants = 0;
    for (const auto& c : f.constants)
      if (c.graph >= n.subgraph_first && c.graph <= n.subgraph_last) {
        ++constants;
        largest = std::max<uint64_t>(largest, c.numel * std::max<uint32_t>(onnx::dtype_bits(c.dtype), 8) / 8);
      }
    // Nodes in the branches that fold into new constants once shapes are static: those whose inputs
    // fold too (an Expand of a tensor computed at run time does not).
    std::set<std::string> folding;
    for (const auto& b : f.nodes)
      if (b.graph >= n.subgraph_first && b.graph <= n.subgraph_last && b.domain.empty() &&
          (b.op_type == "ConstantOfShape" || b.op_type == "Expand" || b.op_type == "Tile" || b.op_type == "Range")) {
        bool folds = true;
        for (const auto& in : b.inputs) {
          std::string ignored;
          bool any = false;
          folds = folds && shape_only(in, b.graph, ignored, any);
        }
        if (folds) folding.insert(b.op_type);
      }
    out.push_back({{"node", n.name},
                   {"condition_from", shape_of},
                   {"branch_constants", constants},
                   {"largest_branch_constant_bytes", largest},
                   {"branch_folding_ops", std::vector<std::string>(folding.begin(), folding.end())}});
  }
  return out;
}

Json io_json(const std::vector<onnx::ValueInfo>& v) {
  Json a = Json::array();
  for (const auto& vi : v) {
    Json e;
    e["name"] = vi.name;
    e["dtype"] = vi.kind == "tensor" ? onnx::dtype_name(vi.elem_type) : vi.kind;
    e["shape"] = shape_json(vi);
    a.push_back(e);
  }
  return a;
}

bool dim_dynamic(const onnx::Dim& d) { return !d.has_value || d.value <= 0; }

// NCHW when dim 1 looks like channels (<= 4) and dim 3 does not; NHWC the other
// way round; unknown when both or neither (or no 4-D float input).
std::string layout_guess(const std::vector<onnx::ValueInfo>& inputs) {
  std::string guess = "unknown";
  for (const auto& in : inputs) {
    if (!in.has_shape || in.dims.size() != 4) continue;
    auto small = [](const onnx::Dim& d) { return d.has_value && d.value >= 1 && d.value <= 4; };
    bool c1 = small(in.dims[1]), c3 = small(in.dims[3]);
    std::string g = "unknown";
    if (c1 && !c3) g = "NCHW";
    else if (c3 && !c1) g = "NHWC";
    else if (c1 && c3) g = in.dims[1].value < in.dims[3].value ? "NCHW" : in.dims[3].value < in.dims[1].value ? "NHWC" : "unknown";
    if (g == "unknown") continue;
    if (guess != "unknown" && guess != g) return "unknown";
    guess = g;
  }
  return guess;
}

uint64_t count(const std::map<std::string, uint64_t>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? 0 : it->second;
}

// The catalog's quantized forms found among `ops` (e.g. "dynamic", "QDQ").
Json quantized_forms(const Json& catalog_forms, const std::set<std::string>& ops) {
  Json out = Json::array();
  for (const auto& form : catalog_forms) {
    Json found = Json::array();
    for (const auto& pattern : form["ops"]) {
      std::string p = pattern;
      bool prefix = !p.empty() && p.back() == '*';
      if (prefix) p.pop_back();
      for (const auto& op : ops)
        if (prefix ? op.rfind(p, 0) == 0 : op == p) found.push_back(op);
    }
    if (!found.empty())
      out.push_back({{"form", form["form"]}, {"label", form["label"]}, {"ops", found}, {"recovery", form["recovery"]}});
  }
  return out;
}

// --weight-stats on ONNX: the constant weights of the weighted ops (initializers,
// Constant nodes, external data; FP32/FP16/BF16), streamed from the maps.
Json onnx_weight_stats(const onnx::Facts& f, const onnx::GraphFacts& gf, const MappedFile& map,
                       const std::map<std::string, fs::path>& ext_paths, const IntakeContext& ctx, const std::string& file) {
  std::vector<WeightTensor> tensors;
  uint64_t skipped = 0;
  for (const auto& use : gf.weight_uses) {
    const onnx::ConstTensor& t = f.constants[use.constant];
    const char* dtype = t.dtype == 1 ? "F32" : t.dtype == 10 ? "F16" : t.dtype == 16 ? "BF16" : nullptr;
    if (!dtype || t.numel == 0) continue;
    uint64_t need = t.numel * (t.dtype == 1 ? 4 : 2);
    std::string path;
    uint64_t size = 0;
    if (t.where == onnx::DataWhere::kInline) {
      path = fs::absolute(file).string();
      size = map.size();
    } else if (t.where == onnx::DataWhere::kExternal) {
      auto p = ext_paths.find(t.location);
      std::error_code ec;
      if (p == ext_paths.end() || !fs::is_regular_file(p->second, ec)) {
        ++skipped;  // missing external data is already a risk of its own
        continue;
      }
      path = p->second.string();
      size = fs::file_size(p->second, ec);
    } else {
      ++skipped;  // FP16 values held as int32_data varints: rare, not streamed
      continue;
    }
    if (t.length < need || t.offset > size || size - t.offset < need)
      throw InputError(file, "weight '" + t.name + "' needs " + std::to_string(need) + " bytes of data but its data field holds " +
                                 std::to_string(t.length) + " (or lies past the end of its file)");
    const onnx::NodeRef& n = f.nodes[use.node];
    tensors.push_back({n.name.empty() ? n.op_type + "(" + t.name + ")" : n.name, t.name, n.op_type, {}, dtype, path, t.offset, need});
  }
  ScanOptions opt;
  opt.threads = ctx.weight_stats_threads;
  if (ctx.progress) opt.progress = [&](uint64_t done, uint64_t total) { ctx.progress("Scanning weights", done, total); };
  Json stats = scan_weight_tensors(tensors, opt);
  stats["skipped_tensors"] = skipped;
  return stats;
}

class OnnxModelReader : public ModelReader {
 public:
  explicit OnnxModelReader(std::string file) : file_(std::move(file)) {}
  std::string format() const override { return "onnx"; }
  Json analyze(const IntakeContext& ctx) override;

 private:
  std::string file_;
};

Json OnnxModelReader::analyze(const IntakeContext& ctx) {
  const Catalog& cat = ctx.catalog ? *ctx.catalog : Catalog::load();
  fs::path abs = fs::absolute(file_).lexically_normal();
  MappedFile map(file_);
  if (map.size() == 0) throw InputError(file_, "empty file: not an ONNX model");
  onnx::Facts f;
  try {
    f = onnx::read_model(map.bytes());
  } catch (const wire::WireError& e) {
    throw InputError(file_, std::string("not a valid ONNX model: ") + e.what() + " (at byte " +
                                std::to_string(e.offset) + ")");
  }

  Json risks = Json::array();
  std::vector<std::string> partial;
  const std::string& target = ctx.deployment_target;
  bool npu = target == "npu_cnn" || target == "npu_transformer";

  // External data: every location must stay inside the model's folder.
  fs::path folder = abs.parent_path();
  std::vector<std::string> ext_files;
  std::map<std::string, uint64_t> ext_needed;  // location -> bytes needed (offset + length)
  std::map<std::string, fs::path> ext_paths;  // each location resolved once
  for (const auto& e : f.external) {
    if (!ext_paths.count(e.location)) {
      std::string why;
      auto resolved = resolve_inside(folder, e.location, why);
      if (!resolved)
        throw InputError(file_, "external data of tensor '" + e.tensor + "' is refused: " + why);
      ext_paths[e.location] = *resolved;
      ext_files.push_back(e.location);
    }
    uint64_t len = e.length.value_or(e.expected_bytes);
    if (e.offset > UINT64_MAX - len) throw InputError(file_, "external data offset of '" + e.tensor + "' overflows");
    uint64_t& need = ext_needed[e.location];
    need = std::max(need, e.offset + len);
  }
  uint64_t ext_bytes = 0;
  for (const auto& loc : ext_files) {
    const fs::path& p = ext_paths[loc];
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) {
      partial.push_back("external data file '" + loc + "' is missing");
      risks.push_back(make_risk("onnx.intake.external_data_missing", "high",
                                "External data file '" + loc + "' named by the model is missing.",
                                "Copy '" + loc + "' next to the .onnx file (the .onnx and its external data move together), then re-run intake."));
      continue;
    }
    uint64_t size = fs::file_size(p, ec);
    ext_bytes += size;
    if (size < ext_needed[loc]) {
      partial.push_back("external data file '" + loc + "' is shorter than the tensors it holds");
      risks.push_back(make_risk("onnx.intake.external_data_short", "high",
                                "External data file '" + loc + "' has " + std::to_string(size) + " bytes but the model's tensors need " +
                                    std::to_string(ext_needed[loc]) + ".",
                                "The file is truncated or belongs to another export: re-export or re-copy the model with its external data, then re-run intake."));
    }
  }

  uint64_t total_bytes = map.size() + ext_bytes;
  double size_gb = round3(static_cast<double>(total_bytes) / 1e9);

  if (map.size() > kProtobufLimit && f.external.empty()) {
    partial.push_back("the .onnx file is larger than 2 GiB without external data");
    risks.push_back(make_risk("onnx.intake.protobuf_over_2gb", "high",
                              "The model file is " + std::to_string(map.size()) +
                                  " bytes with its weights inline: protobuf cannot serialize more than 2 GiB, so onnx.load and quantization will fail.",
                              "Re-save the model with onnx.save_model(..., save_as_external_data=True) and set use_external_data_format=true in the plan."));
  }

  // Opsets: domain "" is ai.onnx.
  Json opsets = Json::array();
  int64_t ai_onnx = -1;
  for (const auto& [domain, version] : f.opsets) {
    std::string d = domain.empty() ? "ai.onnx" : domain;
    opsets.push_back({{"domain", d}, {"version", version}});
    if (d == "ai.onnx") ai_onnx = version;
  }
  if (ai_onnx >= 0 && ai_onnx < 13) {
    risks.push_back(make_risk("onnx.intake.opset_below_13", "high",
                              "ai.onnx opset " + std::to_string(ai_onnx) + " is below 13: QDQ quantization needs opset 13 or newer.",
                              "Run onnx.version_converter.convert_version(model, 13) (19+ for INT4/FP8), then re-run intake."));
  } else if (ai_onnx >= 13 && ai_onnx < 19) {
    risks.push_back(make_risk("onnx.intake.opset_below_19", "low",
                              "ai.onnx opset " + std::to_string(ai_onnx) + " is below 19: fine for INT8/INT16, but INT4/FP8 QDQ needs opset 19+.",
                              "Only for INT4/FP8 presets: run onnx.version_converter.convert_version(model, 19), then re-run intake."));
  }

  // Domains actually used by nodes (imports of unused domains do not count).
  Json custom_domains = Json::array();
  for (const auto& [domain, n] : f.domain_op_counts) {
    if (domain.empty() || domain == "ai.onnx" || domain == "ai.onnx.ml" || domain == "ai.onnx.preview.training") continue;
    custom_domains.push_back(domain);
  }

  // Quantized forms, each named with its route back to float.
  std::set<std::string> qops(f.quantized_op_forms.begin(), f.quantized_op_forms.end());
  Json forms = quantized_forms(cat.onnx()["quantized_forms"], qops);
  if (f.has_qdq || f.has_quark_custom) {
    std::vector<std::string> labels, hints;
    for (const auto& fm : forms) {
      labels.push_back(fm["label"].get<std::string>() + ": " + join(string_list(fm["ops"])));
      hints.push_back(fm["recovery"].get<std::string>());
    }
    risks.push_back(make_risk(f.has_quark_custom ? "onnx.intake.quark_custom_ops" : "onnx.intake.already_quantized", "high",
                              "The model is already quantized (" + join(labels, "; ") +
                                  "). Quantizing it again compounds the error; no plan is produced for it.",
                              join(hints, " ") + " Then run quarkplan intake on the float model."));
  }
  for (const auto& d : custom_domains) {
    std::string ds = d.get<std::string>();
    if (ds == "com.amd.quark" || ds == "com.vai.quantize") continue;  // covered above
    std::string msg = "Nodes in custom domain '" + ds + "': they need their runtime's kernels at inference and are not quantized by default.";
    std::string hint = "Check the target runtime provides '" + ds + "' kernels; restrict op_types_to_quantize to standard ops.";
    if (ds == "com.microsoft") {
      msg = "Nodes in domain 'com.microsoft': the model was already processed by ONNX Runtime tooling (fusions or quantization); do not naively re-quantize it.";
      hint = "Prefer the original exported model; otherwise curate op_types_to_quantize to standard ops and verify the contrib ops exist on the target EP.";
    }
    risks.push_back(make_risk("onnx.intake.custom_domain", "medium", msg, hint));
  }

  // Inputs/outputs and shapes.
  bool dynamic = false;
  std::vector<std::string> dynamic_inputs;
  for (const auto& in : f.inputs) {
    bool d = !in.has_shape;
    for (const auto& dim : in.dims) d = d || dim_dynamic(dim);
    if (d) {
      dynamic = true;
      dynamic_inputs.push_back(in.name);
    }
  }
  std::string layout = layout_guess(f.inputs);
  if (dynamic) {
    std::string names;
    for (const auto& n : dynamic_inputs) names += (names.empty() ? "" : ", ") + n;
    // A ready-to-edit --fix_shapes value: every input and output (Quark's
    // fix_input_and_output_shapes looks each one up), known dims kept,
    // dynamic ones named. A scalar or shapeless one has no --fix_shapes form.
    std::string shapes, unusable;
    std::set<std::string> params;
    for (const auto* list : {&f.inputs, &f.outputs})
      for (const auto& in : *list) {
        if (!in.has_shape || in.dims.empty()) unusable += (unusable.empty() ? "" : ", ") + in.name;
        std::string dims;
        for (const auto& dim : in.dims) {
          dims += (dims.empty() ? "" : ",") + (dim.has_value && dim.value > 0 ? std::to_string(dim.value) : "<" + (dim.param.empty() ? std::string("?") : dim.param) + ">");
          if (list == &f.inputs && !dim.has_value && !dim.param.empty()) params.insert(dim.param);
        }
        shapes += (shapes.empty() ? "" : ";") + in.name + ":[" + dims + "]";
      }
    std::string stem = abs.stem().string();
    std::string hint = "Fix the shapes (replace each <dim> with its deployment size): python -m quark.onnx.tools.fix_shapes --input_model_path " +
                       abs.filename().string() + " --output_model_path " + stem + "_fixed.onnx --fix_shapes '" + shapes + "', then re-run intake.";
    if (!unusable.empty()) {
      std::string cmd;
      for (const auto& p : params)
        cmd += std::string(cmd.empty() ? "" : "; ") + "python -m onnxruntime.tools.make_dynamic_shape_fixed --dim_param " + p + " --dim_value <size> " +
               abs.filename().string() + " " + stem + "_fixed.onnx";
      if (cmd.empty())
        cmd = "python -m onnxruntime.tools.make_dynamic_shape_fixed --input_name <input> --input_shape <d0,d1,...> " + abs.filename().string() + " " + stem +
              "_fixed.onnx";
      hint = "Quark's fix_shapes cannot describe " + unusable + " (no dimensions to set): fix the shapes with onnxruntime's tool (" + cmd + "), then re-run intake.";
    }
    if (npu)
      risks.push_back(make_risk("onnx.intake.dynamic_dims_npu", "high",
                                "Inputs with dynamic dimensions (" + names + ") cannot be compiled for the Ryzen AI NPU.", hint));
    else
      risks.push_back(make_risk("onnx.intake.dynamic_dims", "low",
                                "Inputs with dynamic dimensions (" + names + "): the calibration data reader must produce concrete shapes.",
                                "Feed calibration batches with the shapes used at deployment (or fix them with quark.onnx.tools.fix_shapes)."));
  }
  if (layout == "NCHW" && target == "npu_cnn")
    risks.push_back(make_risk("onnx.intake.nchw_npu_cnn", "low",
                              "Inputs are NCHW. Quark's planning guide converts NPU CNN models to NHWC; AMD's Ryzen AI examples quantize them as they are, and the plan keeps NCHW unless you choose the conversion.",
                              "Nothing to do for Ryzen AI. For the guide's NHWC layout run python -m quark.onnx.tools.convert_nchw_to_nhwc " + abs.filename().string() + " " +
                                  abs.stem().string() + "_nhwc.onnx and re-run intake (the model's interface changes)."));

  // Weights.
  Json by_dtype = Json::object();
  uint64_t total_params = 0, float_params = 0, fp16_params = 0;
  for (const auto& [dt, n] : f.params_by_dtype) {
    by_dtype[onnx::dtype_name(dt)] = n;
    total_params += n;
    if (dt == 1 || dt == 10 || dt == 11 || dt == 16) float_params += n;
    if (dt == 10) fp16_params += n;
  }
  if (float_params > 0 && fp16_params == float_params)
    risks.push_back(make_risk("onnx.intake.fp16_model", "medium",
                              "All floating-point weights are FP16: Quark quantizes such a model as FP16 (QuantizeFP16, without optimize_model), and its FP16-to-FP32 conversion "
                              "(ConvertFP16ToFP32, quark.onnx.tools.convert_fp16_to_fp32) does not run under numpy 2 in amd-quark 0.12.post1 and 0.13.",
                              "Keep it FP16 for the CPU and GPU presets (INT8 weights, FP16 inputs and outputs); for the NPU CNN presets (XINT8) re-export " +
                                  abs.filename().string() + " in float32 from its framework."));

  // Op histograms (every graph, subgraphs included).
  const auto& ops = f.op_counts;
  // Quantized forms count as their float op in the architecture guess, so an
  // already-quantized CNN (ConvInteger, QLinearConv) is still a CNN.
  auto sum = [&](std::initializer_list<const char*> names) {
    uint64_t n = 0;
    for (const char* k : names) n += count(ops, k) + count(ops, std::string("com.microsoft::") + k);
    return n;
  };
  uint64_t conv = sum({"Conv", "ConvInteger", "QLinearConv"});
  uint64_t mm = sum({"MatMul", "MatMulInteger", "QLinearMatMul", "MatMulNBits", "MatMulIntegerToFloat", "DynamicQuantizeMatMul"});
  uint64_t gemm = sum({"Gemm", "QGemm"});
  bool recurrent = false;
  for (const auto& r : cat.onnx()["recurrent_op_types"]) recurrent = recurrent || count(ops, r.get<std::string>()) > 0;
  std::map<std::string, std::vector<int>> weight_inputs;
  for (auto& [op, idx] : cat.onnx()["weight_inputs"]["ops"].items()) weight_inputs[op] = idx.get<std::vector<int>>();
  onnx::GraphFacts gf = onnx::analyze_graph(f, weight_inputs);
  // The planning guide's ordered classifier, with recurrent structure checked
  // first (LSTM/GRU/RNN ops, or their cells unrolled into Gemm/Sigmoid/Tanh/Mul)
  // and "transformer" kept for graphs with attention: a stack of Gemms
  // (an MLP head) is not a transformer (catalog: differences_from_newer_quark).
  std::string arch, detail;
  if (recurrent) arch = detail = "recurrent";
  else if (gf.recurrent_cells > 0) arch = "recurrent", detail = "unrolled_recurrent";
  else if (conv > 5 * mm) arch = detail = "cnn";
  else if (mm + gemm > 5 * conv && gf.attention_blocks > 0) arch = detail = "transformer";
  else if (mm + gemm > 5 * conv && conv == 0) arch = "unknown", detail = "mlp";
  else if (conv > 0 && (mm > 0 || gemm > 0)) arch = detail = "hybrid";
  else arch = detail = "unknown";

  Json op_counts = Json::object();
  std::vector<std::pair<std::string, uint64_t>> sorted(ops.begin(), ops.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](auto& a, auto& b) { return a.second > b.second; });
  for (const auto& [k, v] : sorted) op_counts[k] = v;
  Json quantizable = Json::object();
  for (const auto& k : cat.onnx()["quantizable_op_types"]) quantizable[k.get<std::string>()] = count(ops, k);
  uint64_t linear = 0;
  for (const auto& k : cat.onnx()["linear_op_types"]) linear += count(ops, k);

  if (recurrent)
    risks.push_back(make_risk("onnx.intake.recurrent_ops", "medium",
                              "The model holds recurrent ops (LSTM/GRU/RNN): Quark's standard presets leave them in float, so only the surrounding Conv/Gemm/MatMul get quantized.",
                              "Expect a smaller speed-up; keep the recurrent cells in float or check ExtendedLSTM support in the installed Quark."));
  else if (detail == "unrolled_recurrent")
    risks.push_back(make_risk("onnx.intake.recurrent_ops", "medium",
                              std::to_string(gf.recurrent_cells) + " recurrent cell(s) unrolled into Gemm/MatMul, Sigmoid, Tanh and Mul: their gate weights are quantized like any Gemm, and the rounding error feeds back through the state at every step.",
                              "Validate on long sequences (the state carries the error); keep the gate Gemms in float (nodes_to_exclude) if accuracy drifts."));
  if (detail == "mlp")
    risks.push_back(make_risk("onnx.intake.mlp", "low",
                              "Only Gemm/MatMul layers and no attention: a plain MLP, neither a CNN nor a transformer, so the planner uses the presets that suit any architecture.",
                              "Nothing to do; tell the planner a path (preset=NAME) if you know better."));
  if (arch == "unknown" && detail != "mlp")
    risks.push_back(make_risk("onnx.intake.architecture_unknown", "medium",
                              "No Conv, MatMul, Gemm or recurrent op dominates: the architecture is unknown, so no preset is guessed.",
                              "Look at op_counts and tell the planner which path to follow (CNN, transformer or hybrid)."));
  if (f.subgraph_count > 0) {
    uint64_t sub_nodes = 0;
    for (const auto& n : f.nodes) sub_nodes += n.in_subgraph ? 1 : 0;
    risks.push_back(make_risk("onnx.intake.subgraphs", "low",
                              std::to_string(f.subgraph_count) + " control-flow subgraphs (If/Loop/Scan) hold " + std::to_string(sub_nodes) +
                                  " nodes: Quark leaves them unquantized unless extra option EnableSubgraph is set.",
                              "Set extra_options.EnableSubgraph=true in the plan to quantize inside subgraphs, or accept them in float."));
  }
  if (target == "npu_cnn" && (arch == "transformer" || arch == "hybrid" || mm > 0))
    risks.push_back(make_risk("onnx.intake.npu_cnn_matmul", "medium",
                              "The graph has " + std::to_string(mm) + " MatMul ops: the NPU CNN target does not run MatMul-based attention.",
                              "Use target npu_transformer for transformer models, or expect MatMul parts to fall back to CPU."));
  if (target == "npu_transformer") {
    for (const auto& [k, v] : ops)
      if (k.find("Attention") != std::string::npos && k.find("::") != std::string::npos)
        risks.push_back(make_risk("onnx.intake.npu_transformer_custom_attention", "medium",
                                  "Custom attention kernel '" + k + "' is not supported by the NPU transformer flow.",
                                  "Export the model without fused attention kernels (plain MatMul/Softmax), then re-run intake."));
  }
  Json exclude_defaults = Json::array();
  // A classifier head holds a weight: a MatMul of two activations (attention
  // scores) is not one, whatever it feeds.
  std::set<std::string> weighted_outputs;
  for (const auto& wn : gf.weighted_nodes)
    if (!f.nodes[wn.node].in_subgraph && !f.nodes[wn.node].outputs.empty()) weighted_outputs.insert(f.nodes[wn.node].outputs[0]);
  for (const auto& fp : f.final_producers) {
    if (fp.outputs.empty() || !weighted_outputs.count(fp.outputs[0])) continue;
    risks.push_back(make_risk("onnx.intake.final_classifier", "low",
                              "The final " + fp.op_type + " '" + fp.name + "' produces a model output: quantizing the classifier head often costs accuracy.",
                              "If accuracy drops, add '" + fp.name + "' to nodes_to_exclude in the plan."));
  }

  // Preset candidates: target x architecture, filtered by the target's gate and
  // by custom-op availability (block formats need the Quark custom-ops library).
  Json candidates = Json::array();
  std::string arch_key = detail == "mlp" ? "mlp" : arch;  // an MLP plans with the presets for any architecture
  if (arch_key != "unknown") {
    std::string tkey = target.empty() ? "unknown" : target;
    bool suppressed = false;
    for (const auto& name : cat.onnx_preset_candidates(tkey, arch_key)) {
      const Json* p = cat.onnx_preset(name);
      if (!p) continue;
      if (!target.empty() && !cat.preset_allowed_on(*p, target)) continue;
      if ((*p)["needs_custom_ops"].get<bool>() && ctx.custom_ops_compile_ok == false) {
        suppressed = true;
        continue;
      }
      candidates.push_back(name);
    }
    if (suppressed)
      risks.push_back(make_risk("onnx.intake.block_formats_suppressed", "medium",
                                "Block-format presets (BFP16/MX*) were left out: onnx_install_result.json says the Quark custom-ops library failed to compile.",
                                "Fix the custom-ops build with quark-onnx-install (python -c \"import quark.onnx.operators.custom_ops\"), then re-run intake."));
  }

  // Constant weights per weighted op type, inside and outside subgraphs: what
  // each preset's op types would quantize (the planner reads this).
  Json weights_by_op = Json::object();
  uint64_t quantizable_params = 0;
  for (const auto& [op, w] : gf.by_op) {
    weights_by_op[op] = {{"nodes", w.nodes},
                         {"nodes_in_subgraphs", w.nodes_in_subgraphs},
                         {"weighted_nodes", w.weighted_nodes},
                         {"weighted_nodes_in_subgraphs", w.weighted_nodes_in_subgraphs},
                         {"weighted_2d_nodes", w.weighted_2d_nodes},
                         {"weight_params_2d", w.weight_params_2d},
                         {"weight_params", w.weight_params},
                         {"weight_params_in_subgraphs", w.weight_params_in_subgraphs}};
    // The op types Quark's static QDQ registries quantize (catalog preset_op_sets.static).
    const Json& static_ops = cat.onnx()["preset_op_sets"]["static"]["ops"];
    if (std::find(static_ops.begin(), static_ops.end(), op) != static_ops.end()) quantizable_params += w.weight_params;
  }

  Json stats;
  if (ctx.weight_stats) {
    stats = onnx_weight_stats(f, gf, map, ext_paths, ctx, file_);
    if (!stats["outlier_modules"].empty())
      risks.push_back(make_risk("onnx.intake.weight_outliers", "medium",
                                std::to_string(stats["outlier_modules"].size()) + (stats["outlier_modules"].size() == 1 ? " layer has" : " layers have") + " weights beyond " +
                                    std::to_string(static_cast<int>(stats["outlier_max_over_std"].get<double>())) +
                                    " standard deviations or a heavy tail (0.1% of them beyond 6, the largest beyond 20) (e.g. " + stats["outlier_modules"][0].get<std::string>() +
                                    "): per-tensor INT8 scales waste most of their range on them.",
                                // Only what the planner will do for this model: Percentile is
                                // step 4 for transformers (not on the NPU CNN target); exclusions
                                // need INT8 weights, and on npu_cnn are only named.
                                "Plan with these statistics: the planner " +
                                    std::string(arch == "transformer" && target != "npu_cnn"
                                                    ? "proposes Percentile calibration for this transformer (Quark's planning guide, step 4) and "
                                                    : "") +
                                    (target == "npu_cnn" ? "names the layers beyond its exclusion limit, for you to exclude if accuracy drops."
                                                         : "proposes nodes_to_exclude for the layers beyond its exclusion limit when the preset's weights are INT8.")));
  }

  Json rv = sorted_risks(risks);

  Json a;
  a["analysis_status"] = partial.empty() ? "complete" : "partial";
  if (!partial.empty()) a["partial_reasons"] = partial;
  Json& m = a["model"];
  m["model_path"] = abs.string();
  m["model_type"] = "onnx";
  m["loading_class"] = "onnx.load";
  m["estimated_size_gb"] = size_gb;
  m["file_size_bytes"] = map.size();
  Json& o = m["onnx_specific"];
  o["ir_version"] = f.ir_version;
  o["producer_name"] = f.producer_name;
  o["producer_version"] = f.producer_version;
  o["opsets"] = opsets;
  o["uses_external_data"] = !f.external.empty();
  o["external_data_files"] = ext_files;
  o["external_data_bytes"] = ext_bytes;
  o["inputs"] = io_json(f.inputs);
  o["outputs"] = io_json(f.outputs);
  o["input_layout_guess"] = layout;
  o["has_dynamic_dims"] = dynamic;
  o["has_qdq_already"] = f.has_qdq;
  o["has_quark_custom_ops"] = f.has_quark_custom;
  o["architecture_guess"] = arch;
  o["architecture_detail"] = detail;
  o["attention_blocks"] = gf.attention_blocks;
  o["recurrent_cells"] = gf.recurrent_cells;
  o["node_count"] = f.node_count;
  o["subgraph_count"] = f.subgraph_count;
  o["function_count"] = f.function_count;
  o["initializer_count"] = f.initializer_count;
  o["quantized_op_types"] = std::vector<std::string>(f.quantized_op_forms.begin(), f.quantized_op_forms.end());
  o["quantized_forms"] = forms;
  o["custom_domains"] = custom_domains;
  o["weights"] = {{"total_params", total_params},
                  {"by_dtype", by_dtype},
                  {"in_constant_nodes", f.params_in_constant_nodes},
                  {"quantizable_params", quantizable_params}};
  Json names = Json::array();
  for (const auto& n : f.nodes)
    if (!n.name.empty()) names.push_back(n.name);
  o["node_names"] = names;
  {
    // The main graph's edges, for plan-time checks that walk it as Quark does (subgraphs_to_exclude's
    // closure check in quant_utils.match_subgraphs): each main-graph node (by its index in node_names,
    // -1 when unnamed) and, per input in order, a tensor id; each tensor's producer (a main-graph
    // node's position here, -1 for a graph input, -2 for anything else: initializers, constants,
    // optional empty inputs, outer scope).
    std::map<std::string, int64_t> produced_by, tensor_id;
    std::set<std::string> graph_inputs;
    for (const auto& in : f.inputs) graph_inputs.insert(in.name);
    std::vector<size_t> main;
    for (size_t i = 0; i < f.nodes.size(); ++i)
      if (f.nodes[i].graph == 0) main.push_back(i);
    for (size_t k = 0; k < main.size(); ++k)
      for (const auto& out : f.nodes[main[k]].outputs)
        if (!out.empty()) produced_by.emplace(out, static_cast<int64_t>(k));
    std::vector<int64_t> in_names(f.nodes.size(), -1);  // each node's index in node_names (every graph's named nodes)
    for (size_t i = 0, named = 0; i < f.nodes.size(); ++i)
      if (!f.nodes[i].name.empty()) in_names[i] = static_cast<int64_t>(named++);
    Json name_index = Json::array(), inputs = Json::array(), producers = Json::array();
    for (size_t k = 0; k < main.size(); ++k) {
      const auto& n = f.nodes[main[k]];
      name_index.push_back(in_names[main[k]]);
      Json ins = Json::array();
      for (const auto& in : n.inputs) {
        auto [it, fresh] = tensor_id.emplace(in, static_cast<int64_t>(tensor_id.size()));
        if (fresh) {
          auto p = produced_by.find(in);
          producers.push_back(p != produced_by.end() ? p->second : graph_inputs.count(in) ? int64_t{-1} : int64_t{-2});
        }
        ins.push_back(it->second);
      }
      inputs.push_back(ins);
    }
    o["main_graph"] = {{"nodes", name_index}, {"inputs", inputs}, {"tensor_producers", producers}};
    o["shape_only_ifs"] = shape_only_ifs(f);
  }
  Json& q = a["quantization_targets"];
  q["linear_layer_count"] = linear;
  q["weights_by_op_type"] = weights_by_op;
  // Node by node, for what exclusions and op-type lists leave quantized.
  Json weighted_nodes = Json::array();
  for (const auto& wn : gf.weighted_nodes) {
    const auto& n = f.nodes[wn.node];
    weighted_nodes.push_back({{"name", n.name},
                              {"op_type", n.op_type},
                              {"params", wn.params},
                              {"stored_bytes", (wn.stored_bits + 7) / 8},
                              {"two_d", wn.two_d},
                              {"in_subgraph", n.in_subgraph}});
  }
  q["weighted_nodes"] = weighted_nodes;
  q["exclude_defaults"] = exclude_defaults;
  q["onnx_specific"] = {{"op_counts", op_counts},
                        {"quantizable_op_counts", quantizable},
                        {"preset_candidates", candidates},
                        {"exclude_defaults", exclude_defaults}};
  if (!stats.is_null()) a["weight_stats"] = stats;
  a["risks"] = rv;
  a["intake"] = {{"tool", "quarkplan"},
                 {"catalog_quark_version", cat.version_stamp()},
                 {"quark_release", cat.release()},
                 {"deployment_target", target.empty() ? Json(nullptr) : Json(target)},
                 {"deployment_target_source", ctx.target_source.empty() ? Json(nullptr) : Json(ctx.target_source)},
                 {"custom_ops_compile_ok", ctx.custom_ops_compile_ok ? Json(*ctx.custom_ops_compile_ok) : Json(nullptr)}};
  return a;
}

}  // namespace

std::unique_ptr<ModelReader> make_onnx_reader(const std::string& onnx_file) {
  return std::make_unique<OnnxModelReader>(onnx_file);
}

}  // namespace quarkplan
