// ONNX NPU flags and shapes: the NPU modes, power-of-two scales, NHWC layout and static shapes —
// onnx.npu.flags_tied, onnx.npu_cnn.pof2_calibration, onnx.combination.xint8_without_pof2,
// onnx.npu_cnn.nhwc, onnx.npu.static_shapes (with make_fixed_command).
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/strings.h"
#include "plan/fix_shapes.h"
#include "plan/onnx/rule_helpers.h"
#include "plan/rules.h"

namespace quarkplan::onnx_rules {

using detail::onnx_facts;
using detail::target;
using detail::preset;
using detail::spec;
using detail::generation;

void npu_flags_tied(PlanState& s) {
  std::string t = target(s);
  bool cnn = t == "npu_cnn", tr = t == "npu_transformer";
  // An NPU preset checked on the CPU or a GPU keeps its NPU mode: the point is
  // to run the very model the NPU would get (catalog: emulated_families).
  const Json* tj = t.empty() ? nullptr : s.cat.onnx_target(t);
  if (const Json* p = preset(s); p && tj && tj->contains("emulated_families") && (*tj)["emulated_families"].contains((*p)["family"].get<std::string>())) {
    cnn = cnn || (*p)["enable_npu_cnn"].get<bool>();
    tr = tr || (*p)["enable_npu_transformer"].get<bool>();
  }
  // A preset whose Quark config turns NPU CNN mode off for the NPU (VINT8,
  // built for the VAIML compiler: EnableNPUCnn False in its QConfig) keeps it
  // off, so the table says what the printed config does.
  const Json* pj = preset(s);
  const bool preset_disables_cnn = pj && cnn && (*pj)["quark_api"].contains("extra_options") &&
                                   (*pj)["quark_api"]["extra_options"].value("EnableNPUCnn", true) == false;
  if (preset_disables_cnn) cnn = false;
  // On an NPU target, a preset that is not the target's own scheme — float
  // scales (A8W8, A16W8) or BF16 documented for a newer NPU, or any preset
  // the user insisted on — keeps its own config's NPU modes: Quark's NPU CNN
  // mode is XINT8's (per-tensor, symmetric INT8 weights, power-of-two:
  // quantizers/npu_cnn_quantizer.py) and NPU transformer mode belongs to the
  // INT8/INT16_TRANSFORMER presets. The table then says what the printed config does.
  const Json* g = generation(s);
  const Json* grp = g && pj && (t == "npu_cnn" || t == "npu_transformer") ? s.cat.npu_group(*g, t, (*pj)["name"].get<std::string>()) : nullptr;
  const bool native = !pj || (t == "npu_cnn" ? (*pj)["power_of_two"].get<bool>() : t == "npu_transformer" ? (*pj)["family"] == "npu_transformer" : true);
  const bool own_flags = pj && !native && (t == "npu_cnn" || t == "npu_transformer");
  if (own_flags) {
    cnn = (*pj)["enable_npu_cnn"].get<bool>();
    tr = (*pj)["enable_npu_transformer"].get<bool>();
  }
  for (auto [key, want] : {std::pair<const char*, bool>{"onnx_specific.enable_npu_cnn", cnn}, {"onnx_specific.enable_npu_transformer", tr}}) {
    if (const Json* c = s.choice(key); c && c->is_boolean() && c->get<bool>() != want)
      s.conflict("onnx.npu.flags_tied", key, std::string(key) + " must equal (deployment_target == " + (cnn || std::string(key).find("cnn") != std::string::npos ? "npu_cnn" : "npu_transformer") + ").",
                 std::string(key) + "=" + (want ? "true" : "false"));
  }
  spec(s)["enable_npu_cnn"] = cnn;
  spec(s)["enable_npu_transformer"] = tr;
  const std::string name = pj ? (*pj)["name"].get<std::string>() : "";
  const std::string own = !own_flags ? ""
                          : grp ? name + " runs on the " + (*g)["label"].get<std::string>() + " NPU " + (grp->value("scales", "") == "bf16" ? "in BF16" : "with float scales") +
                                      ": it keeps its own config's NPU modes"
                                : name + " keeps its own config's NPU modes (the plan keeps your choice exactly)";
  s.reason("onnx_specific.enable_npu_cnn", "onnx.npu.flags_tied",
           preset_disables_cnn ? name + " turns NPU CNN mode off (its Quark config sets EnableNPUCnn False: it targets the VAIML compiler)"
           : own_flags ? own + (cnn ? "" : "; Quark's NPU CNN mode is XINT8's power-of-two scheme")
           : cnn ? (t == "npu_cnn" ? "Target is npu_cnn" : "The NPU CNN model, run on " + (t == "cpu" ? std::string("the CPU") : t) + " to check its accuracy")
                 : "Tied to the target: only npu_cnn");
  s.reason("onnx_specific.enable_npu_transformer", "onnx.npu.flags_tied",
           own_flags ? own + (tr ? "" : "; NPU transformer mode belongs to the INT8/INT16_TRANSFORMER presets")
           : tr ? (t == "npu_transformer" ? "Target is npu_transformer" : "The NPU transformer model, run on " + (t == "cpu" ? std::string("the CPU") : t) + " to check its accuracy")
              : "Tied to the target: only npu_transformer");
}

// The documented group of the plan's generation that runs the preset with
// float scales or in BF16, or nullptr (power-of-two, or the guide's gate).
static const Json* float_scale_group(const PlanState& s) {
  const Json* g = generation(s);
  const Json* p = preset(s);
  if (!g || !p) return nullptr;
  const Json* grp = s.cat.npu_group(*g, target(s), (*p)["name"].get<std::string>());
  return grp && grp->value("scales", "") != "power_of_two" ? grp : nullptr;
}

// Quark's NPU transformer flow (MatMulConstBOnly, on by default with enable_npu_transformer)
// excludes every MatMul whose second input is not an initializer before it looks at anything else
// (quark/onnx/quantization/quant_utils.py get_matmul_nodes_without_weights, called from
// quantize.py quantize_static): a weight held in a Constant node counts as none. When all the
// model's weights are Constant nodes (Paddle exports such as PP-OCR) Quark logs "No quantizable
// ops in this model, quantization is skipped" and writes the float model (seen in tests/quark_real,
// amd-quark 0.13 and 0.12.post1).
void npu_transformer_constant_weights(PlanState& s) {
  const Json& sp = spec(s);
  bool const_b_only = sp.value("enable_npu_transformer", false) == true;
  if (sp["extra_options"].contains("MatMulConstBOnly") && sp["extra_options"]["MatMulConstBOnly"].is_boolean())
    const_b_only = sp["extra_options"]["MatMulConstBOnly"].get<bool>();
  if (!const_b_only) return;
  const Json& w = onnx_facts(s)["weights"];
  const uint64_t in_constants = w.value("in_constant_nodes", uint64_t{0}), total = w.value("total_params", uint64_t{0});
  if (in_constants == 0) return;
  const std::string how = "Quark's NPU transformer flow (MatMulConstBOnly) quantizes only MatMuls whose weight is an initializer "
                          "(quant_utils.py get_matmul_nodes_without_weights), and ";
  if (in_constants >= total) {
    s.conflict("onnx.npu_transformer.constant_weights", "preset",
               how + "every weight of this model is in a Constant node: Quark quantizes nothing (\"No quantizable ops in this model, "
                     "quantization is skipped\") and writes the float model.",
               "turn the Constant nodes into initializers first (each Constant's value becomes a graph initializer of the same name), "
               "or a CNN-flow preset (XINT8, A8W8), which reads Constant weights",
               true);
    return;
  }
  s.risk("onnx.npu_transformer.constant_weights", "medium",
         how + std::to_string(in_constants) + " of the model's " + std::to_string(total) + " weights are in Constant nodes: the MatMuls that read them stay float.",
         "Turn the Constant nodes into initializers first (each Constant's value becomes a graph initializer of the same name).");
}

void npu_cnn_pof2(PlanState& s) {
  if (target(s) != "npu_cnn" || !s.plan["calibration"]["method"].is_string()) return;
  if (float_scale_group(s)) return;  // the generation runs this preset with float scales
  // A preset the NPU does not run at all is the target gate's conflict; its
  // calibration is then the preset's own, as chosen, not a second conflict.
  if (const Json* p = preset(s); p && !s.cat.preset_allowed_on(*p, "npu_cnn", generation(s))) return;
  std::string m = s.plan["calibration"]["method"];
  const Json* mj = s.cat.onnx_calibration(m);
  if (mj && (*mj)["power_of_two"].get<bool>()) return;
  s.conflict("onnx.npu_cnn.pof2_calibration", "calibration.method",
             "Calibration " + m + " gives non-power-of-two scales, which the AMD NPU CNN runtime rejects.", "PowerOfTwo_MinMSE");
}

void xint8_pof2(PlanState& s) {
  const Json* p = preset(s);
  if (!p || target(s) == "npu_cnn" || !(*p)["power_of_two"].get<bool>() || !s.plan["calibration"]["method"].is_string()) return;
  const Json* mj = s.cat.onnx_calibration(s.plan["calibration"]["method"]);
  if (mj && !(*mj)["power_of_two"].get<bool>())
    s.risk("onnx.combination.xint8_without_pof2", "high",
           (*p)["name"].get<std::string>() + " without power-of-two calibration loses the scales the NPU needs.",
           "Use PowerOfTwo_MinMSE (or pick A8W8 for non-NPU targets).");
}

void npu_cnn_nhwc(PlanState& s) {
  if (target(s) != "npu_cnn") return;
  if (onnx_facts(s)["input_layout_guess"] != "NCHW") return;
  // Quark's convert_nchw_to_nhwc skips a 4-D input whose C, H or W is not an
  // integer, and its pre-process runs it before FixShapes: only shapes fixed
  // in the model file reach it.
  std::vector<std::string> skipped = nhwc_skipped_inputs(onnx_facts(s));
  const Json* chosen = s.choice("onnx_specific.extra_options.ConvertNCHWToNHWC");
  const bool wanted = chosen && chosen->is_boolean() && chosen->get<bool>();
  if (!skipped.empty() && wanted) {
    std::string model = s.analysis["model"].value("model_path", "model.onnx");
    std::string file = model.substr(model.find_last_of('/') == std::string::npos ? 0 : model.find_last_of('/') + 1);
    std::string base = file.size() > 5 && file.ends_with(".onnx") ? file.substr(0, file.size() - 5) : file;
    std::vector<std::string> all;
    for (const auto& sl : fix_shapes_slots(onnx_facts(s), false)) all.push_back(sl.text());
    s.risk("onnx.npu_cnn.nhwc", "high",
           "Inputs are NCHW with dynamic C, H or W (" + join(skipped, "; ") +
               "): Quark's NCHW-to-NHWC conversion skips them (it runs before FixShapes), so the quantized model stays NCHW although you asked for NHWC.",
           "Fix the shapes in the model file first: python -m quark.onnx.tools.fix_shapes --input_model_path " + file + " --output_model_path " + base +
               "_fixed.onnx --fix_shapes '" + join(all, ";") + "' (each ? replaced; or onnxruntime's python -m onnxruntime.tools.make_dynamic_shape_fixed), then run quarkplan intake on " +
               base + "_fixed.onnx and plan it: ConvertNCHWToNHWC then converts.");
    return;
  }
  if (!chosen) {
    // AMD's practice over the guide (catalog deployment_targets npu_cnn
    // layout_deviation): the model stays NCHW; the guide's NHWC is the alternative.
    s.reason("onnx_specific.extra_options.ConvertNCHWToNHWC", "onnx.npu_cnn.nhwc",
             "the model stays NCHW, as AMD's Ryzen AI XINT8 examples and Quark's own XINT8 config quantize it (Ryzen AI documents no NHWC requirement); "
             "Quark's planning guide converts NPU CNN models to NHWC: the alternative, ConvertNCHWToNHWC=true, which changes the model's interface");
    return;
  }
  // The deployed model's interface changes with the conversion: say how, as
  // Quark's convert_nchw_to_nhwc leaves it (plan/fix_shapes.h).
  if (wanted) {
    std::vector<ShapeSlot> before = fix_shapes_slots(onnx_facts(s), false), after = fix_shapes_slots(onnx_facts(s), true);
    std::vector<std::string> changed;
    for (size_t i = 0; i < before.size() && i < after.size(); ++i)
      if (before[i].text() != after[i].text()) changed.push_back(std::string(before[i].output ? "output " : "input ") + before[i].text() + " becomes " + after[i].text());
    s.risk("onnx.npu_cnn.nhwc", "medium",
           "The quantized model's interface changes to NHWC (ConvertNCHWToNHWC): " + (changed.empty() ? std::string("its 4-D tensors are transposed") : join(changed, "; ")) +
               ". The application must feed and read that layout.",
           "Transpose the inputs (and the converted outputs) in the application, or convert the float model first with python -m quark.onnx.tools.convert_nchw_to_nhwc and "
           "re-run intake (node names change after conversion).");
  }
}

// onnxruntime's tool that writes fixed dims into the model file, for models
// FixShapes cannot describe (a scalar or shapeless input or output).
std::string make_fixed_command(const Json& facts, const std::string& model) {
  std::set<std::string> params;
  std::vector<std::pair<std::string, std::string>> unnamed;  // input, its shape with <?> where unnamed
  for (const auto& in : facts.value("inputs", Json::array())) {
    if (!in["shape"].is_array()) continue;
    bool anonymous = false;
    std::string dims;
    for (const auto& d : in["shape"]) {
      bool known = d.is_number_integer() && d.get<int64_t>() > 0;
      if (d.is_string() && d != "?") params.insert(d.get<std::string>());
      else if (!known) anonymous = true;
      dims += (dims.empty() ? "" : ",") + (known ? std::to_string(d.get<int64_t>()) : d.is_string() && d != "?" ? "<" + d.get<std::string>() + ">" : "<?>");
    }
    if (anonymous) unnamed.emplace_back(in["name"].get<std::string>(), dims);
  }
  std::string stem = model;
  if (size_t slash = stem.find_last_of('/'); slash != std::string::npos) stem = stem.substr(slash + 1);
  std::string base = stem.size() > 5 && stem.ends_with(".onnx") ? stem.substr(0, stem.size() - 5) : stem;
  // One command per dim_param or unnamed input, each after the one before
  // (the first reads the model, the others the fixed copy).
  std::string cmd, fixed = base + "_fixed.onnx";
  auto add = [&](const std::string& args) {
    cmd += std::string(cmd.empty() ? "" : "; ") + "python -m onnxruntime.tools.make_dynamic_shape_fixed " + args + " " + (cmd.empty() ? stem : fixed) + " " + fixed;
  };
  for (const auto& p : params) add("--dim_param " + p + " --dim_value <size>");
  for (const auto& [n, dims] : unnamed) add("--input_name " + n + " --input_shape " + dims);
  return cmd;
}

void dynamic_dims_npu(PlanState& s) {
  std::string t = target(s);
  const Json& facts = onnx_facts(s);
  // The inputs and outputs as Quark's FixShapes step sees them: its
  // pre-process converts NCHW to NHWC first when the plan asks for it.
  const Json& extra = spec(s)["extra_options"];
  bool nhwc = extra.is_object() && extra.contains("ConvertNCHWToNHWC") && extra["ConvertNCHWToNHWC"].is_boolean() &&
              extra["ConvertNCHWToNHWC"].get<bool>();
  std::vector<ShapeSlot> slots = fix_shapes_slots(facts, nhwc);
  std::vector<std::string> unusable;  // scalar or shapeless: no FixShapes form
  for (const auto& sl : slots)
    if (!sl.expressible()) unusable.push_back(std::string(sl.output ? "output" : "input") + " '" + sl.name + "' (" + (sl.shaped ? "a scalar" : "no declared shape") + ")");
  std::string model = s.analysis["model"].value("model_path", "model.onnx");
  std::string fixed_in_file = "fix the shapes in the model file with onnxruntime's tool (" + make_fixed_command(facts, model) + ") and re-run intake";
  auto all_text = [&] {
    std::vector<std::string> v;
    for (const auto& sl : slots) v.push_back(sl.text());
    return join(v, ";");
  };
  std::string after = nhwc ? " (as Quark sees them after ConvertNCHWToNHWC)" : "";
  // A FixShapes answer must name every input and output, each with its rank.
  if (const Json* c = s.choice("onnx_specific.extra_options.FixShapes")) {
    if (!c->is_string()) {
      s.error("extra option FixShapes takes a string like 'x:[1,3,224,224];y:[1,1000]', not " + c->dump());
      return;
    }
    std::vector<FixedShape> shapes;
    try {
      shapes = parse_fix_shapes(*c);
    } catch (const std::invalid_argument& e) {
      s.error(e.what());
      return;
    }
    if (!unusable.empty()) {
      s.error("FixShapes cannot fix this model: Quark's fix_input_and_output_shapes needs every input and output, and " + join(unusable, ", ") +
              " has no FixShapes form; " + fixed_in_file);
      return;
    }
    std::map<std::string, const ShapeSlot*> known;
    for (const auto& sl : slots) known.emplace(sl.name, &sl);
    std::vector<std::string> names;
    for (auto& [n, j] : known) names.push_back(n);
    std::set<std::string> fixed;
    for (const auto& fs : shapes) {
      auto it = known.find(fs.name);
      if (it == known.end()) {
        s.error("FixShapes names '" + fs.name + "', which is not an input or output of the model" + after + did_you_mean(fs.name, names) + "; expected " +
                all_text());
        continue;
      }
      const ShapeSlot& sl = *it->second;
      if (sl.dims.size() != fs.dims.size()) {
        s.error("FixShapes gives '" + fs.name + "' " + std::to_string(fs.dims.size()) + " dimensions, but it has " + std::to_string(sl.dims.size()) + " (" +
                sl.text() + ")" + after);
        continue;
      }
      for (size_t i = 0; i < fs.dims.size(); ++i)
        if (sl.dims[i] > 0 && sl.dims[i] != fs.dims[i])
          s.error("FixShapes sets dimension " + std::to_string(i) + " of '" + fs.name + "' to " + std::to_string(fs.dims[i]) + ", but the model fixes it at " +
                  std::to_string(sl.dims[i]) + after);
      fixed.insert(fs.name);
    }
    // Quark looks every input and output up by name: one left out is a
    // KeyError, which its pre-process logs and skips, leaving every shape dynamic.
    std::vector<std::string> missing;
    for (const auto& sl : slots)
      if (!fixed.count(sl.name)) missing.push_back(std::string(sl.output ? "output " : "input ") + sl.text());
    if (!missing.empty()) {
      s.error("FixShapes leaves out " + join(missing, ", ") + after +
              ": Quark's fix_input_and_output_shapes needs every input and output (it stops at the first one missing and the shapes stay dynamic); give " +
              all_text() + " with each ? replaced");
      return;
    }
    spec(s)["extra_options"]["FixShapes"] = format_fix_shapes(shapes);
    s.reason("onnx_specific.extra_options.FixShapes", "onnx.npu.static_shapes", "Your deployment shapes for every input and output, checked against the model");
    return;
  }
  if ((t != "npu_cnn" && t != "npu_transformer") || !facts["has_dynamic_dims"].get<bool>()) return;
  // Name the real inputs with their known dims; ask for every input and output.
  std::vector<std::string> dyn, fixed;
  for (const auto& sl : slots)
    if (!sl.output) (sl.dynamic() ? dyn : fixed).push_back(sl.text());
  std::string head = "The NPU needs static shapes. Dynamic inputs: " + join(dyn, "; ") + (fixed.empty() ? "" : " (already static: " + join(fixed, "; ") + ")") + ". ";
  if (!unusable.empty()) {
    s.question(head + "Quark's FixShapes cannot describe " + join(unusable, ", ") + ", so " + fixed_in_file + ".");
    return;
  }
  s.question(head + "Quark's FixShapes needs every input and output" + after + ": give each ? its deployment size with --set onnx_specific.extra_options.FixShapes='" +
             all_text() + "' (the ? replaced), or run quark.onnx.tools.fix_shapes and re-run intake.");
}

}  // namespace quarkplan::onnx_rules
