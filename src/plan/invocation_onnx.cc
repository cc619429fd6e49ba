// The Quark ONNX configuration a plan implies, as Python Quark runs as printed:
// a QConfig with the preset's spec classes and algo configs, or — where a
// preset cannot be a QConfig (dynamic, NPU transformer mode, FP16, MatMulNBits,
// ExtendedQDQ INT8, mixed precision) — the preset itself from
// get_default_config with the plan's changes applied. Every class, field and
// key comes from the catalog (catalog/onnx.json, each fact with its Quark file).
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "catalog/catalog.h"
#include "common/strings.h"
#include "plan/invocation.h"

namespace quarkplan {

namespace {

std::string py(const Json& v) {
  if (v.is_null()) return "None";
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_string()) return v.dump();
  if (v.is_number()) return v.dump();
  if (v.is_array()) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + py(v[i]);
    return s + "]";
  }
  std::string s = "{";
  bool first = true;
  for (auto& [k, x] : v.items()) {
    s += (first ? "" : ", ") + Json(k).dump() + ": " + py(x);
    first = false;
  }
  return s + "}";
}

// Collects what the text uses, so a test can check every name against Quark's.
struct Names {
  std::map<std::string, std::set<std::string>> imports;  // module -> names
  std::set<std::string> spec_args, qconfig_fields, legacy_fields, extra_option_keys, algo_args, quantize_model_args;
  void use(const std::string& module, const std::string& name) { imports[module].insert(name); }
  Json json() const {
    Json j;
    Json imp = Json::object(), classes = Json::array();
    for (auto& [m, ns] : imports) {
      imp[m] = Json(std::vector<std::string>(ns.begin(), ns.end()));
      for (const auto& n : ns) classes.push_back(n);
    }
    j["imports"] = imp;
    j["classes"] = classes;
    auto list = [](const std::set<std::string>& s) { return Json(std::vector<std::string>(s.begin(), s.end())); };
    j["spec_args"] = list(spec_args);
    j["qconfig_fields"] = list(qconfig_fields);
    j["legacy_fields"] = list(legacy_fields);
    j["extra_option_keys"] = list(extra_option_keys);
    j["algo_args"] = list(algo_args);
    j["quantize_model_args"] = list(quantize_model_args);
    return j;
  }
};

// "ClassName(a=..., b=...)" with enum-valued spec arguments.
std::string spec_text(const Json& spec, Names& names) {
  std::string out = spec["class"].get<std::string>() + "(";
  bool first = true;
  for (auto& [k, v] : spec["args"].items()) {
    names.spec_args.insert(k);
    std::string val = py(v);
    if (k == "scale_type") {
      val = "ScaleType." + v.get<std::string>();
      names.use("quark.onnx", "ScaleType");
    } else if (k == "calibration_method") {
      val = "CalibMethod." + v.get<std::string>();
      names.use("quark.onnx", "CalibMethod");
    } else if (k == "quant_granularity") {
      val = "QuantGranularity." + v.get<std::string>();
      names.use("quark.onnx", "QuantGranularity");
    }
    out += (first ? "" : ", ") + k + "=" + val;
    first = false;
  }
  return out + ")";
}

std::string algo_text(const Json& a, Names& names) {
  std::string out = a["class"].get<std::string>() + "(";
  bool first = true;
  for (auto& [k, v] : a["args"].items()) {
    names.algo_args.insert(k);
    out += (first ? "" : ", ") + k + "=" + py(v);
    first = false;
  }
  return out + ")";
}

}  // namespace

Invocation onnx_invocation(const Json& plan, const Json& analysis, const Catalog& cat) {
  Invocation inv;
  Names names;
  const Json& o = plan["onnx_specific"];
  const Json* preset = plan["preset"].is_string() ? cat.onnx_preset(plan["preset"]) : nullptr;
  Json f;
  f["preset"] = plan["preset"];
  if (!preset) {
    inv.tool = "quark.onnx";
    f["route"] = nullptr;
    inv.fields = f;
    inv.text = "# No preset decided yet: answer the open questions, then explain the plan again.\n";
    return inv;
  }
  const Json& api = (*preset)["quark_api"];
  std::string method = plan["calibration"]["method"].is_string() ? plan["calibration"]["method"].get<std::string>() : (*preset)["calibration"].get<std::string>();
  const Json* cm = cat.onnx_calibration(method);
  // The QConfig route cannot carry NPU transformer mode or Int16 scales.
  std::string route = api["route"];
  std::string route_reason = api.value("why", "the preset maps onto a QConfig with its spec classes (" + api.value("source", std::string()) + ")");
  if (route == "qconfig" && o["enable_npu_transformer"].get<bool>()) {
    route = "legacy";
    route_reason = "enable_npu_transformer is on, and only the legacy route passes it to quantize_static (api.py@1d27b558)";
  }
  if (route == "qconfig" && cm && (*cm)["qconfig"].is_null()) {
    route = "legacy";
    route_reason = "calibration " + method + " has no QConfig spec form (maps.py@6cb02c72 raises for MinMax with ScaleType.Int16)";
  }
  f["route"] = route;
  f["route_reason"] = route_reason;
  bool dynamic = (*preset)["dynamic"].get<bool>();
  // Dynamic quantization and weight-only RTN read no calibration data (the
  // plan records a path only when something does).
  bool needs_data = !dynamic && !(cat.onnx()["calibration_free"]["presets"].contains(plan["preset"].get<std::string>()) &&
                                  !plan["calibration"].contains("data_path"));

  // Algorithms: the plan's, plus the preset's built-in fine-tuning.
  std::vector<std::string> algos = string_list(plan["algorithms"]);
  bool cle = o["include_cle"].get<bool>();
  algos.erase(std::remove(algos.begin(), algos.end(), "CLE"), algos.end());
  std::string builtin_ft = (*preset)["fast_finetune"].is_string() ? (*preset)["fast_finetune"].get<std::string>() : "";
  // Fast fine-tuning runs where the model will: Quark defaults to the CPU
  // (optim_device/infer_device "cpu"); its GPU guide uses "cuda:0", which is
  // also ROCm's device name in PyTorch.
  const std::string target = plan["deployment_target"].is_string() ? plan["deployment_target"].get<std::string>() : "";  // null until the target is known
  const bool gpu = target == "cuda" || target == "rocm";
  auto algo_json = [&](const std::string& name) {
    const Json* a = cat.onnx_algorithm(name);
    Json j = {{"name", name}, {"class", a ? (*a)["config_class"].get<std::string>() : name + "Config"}, {"args", Json::object()}};
    if (a && a->contains("qconfig_args")) j["args"] = (*a)["qconfig_args"];
    // On the QConfig route an option the algorithm needs is its config's
    // argument (QuarotConfig(r_config_path=...)), not an extra option.
    if (a && a->contains("requires_extra_options") && route == "qconfig")
      for (auto& [key, req] : (*a)["requires_extra_options"].items())
        if (o["extra_options"].contains(key) && req.contains("qconfig_arg")) j["args"][req["qconfig_arg"].get<std::string>()] = o["extra_options"][key];
    if (gpu && a && a->value("kind", "") == "fast_finetune") {
      j["args"]["optim_device"] = "cuda:0";
      j["args"]["infer_device"] = "cuda:0";
    }
    names.use(a ? (*a).value("module", "quark.onnx") : "quark.onnx", j["class"]);
    return j;
  };

  std::string model = analysis.is_object() ? analysis["model"].value("model_path", "model.onnx") : "model.onnx";
  std::string out_model = std::filesystem::path(model).stem().string() + "_quantized.onnx";
  std::string t;
  Json extra_update = o["extra_options"];
  if (o["op_types_to_quantize"].is_array() && route == "qconfig") extra_update["OpTypesToQuantize"] = o["op_types_to_quantize"];
  if (o["nodes_to_quantize"].is_array() && route == "qconfig") extra_update["NodesToQuantize"] = o["nodes_to_quantize"];
  // quantize_static always builds a data reader and raises without one
  // (calibration/data_readers.py get_data_reader@647cedc): a calibration-free
  // preset given no set runs on Quark's random data reader, with concrete
  // shapes for inputs whose dimensions are dynamic (1 there).
  if (!dynamic && !needs_data && !plan["calibration"].contains("data_path")) {
    extra_update["UseRandomData"] = true;
    Json shapes = Json::object();
    const Json& ins = analysis.is_object() && analysis.contains("model") && analysis["model"].contains("onnx_specific")
                          ? analysis["model"]["onnx_specific"].value("inputs", Json::array())
                          : Json::array();
    for (const auto& in : ins) {
      if (!in.contains("shape") || !in["shape"].is_array()) continue;
      bool dyn = false;
      Json dims = Json::array();
      for (const auto& d : in["shape"]) {
        bool fixed = d.is_number_integer() && d.get<int64_t>() > 0;
        dyn = dyn || !fixed;
        dims.push_back(fixed ? d.get<int64_t>() : 1);
      }
      if (dyn) shapes[in.value("name", "")] = dims;
    }
    if (!shapes.empty()) extra_update["RandomDataReaderInputShape"] = shapes;
  }

  if (route == "qconfig") {
    inv.tool = "quark.onnx QConfig";
    names.use("quark.onnx", "QConfig");
    names.use("quark.onnx", "QLayerConfig");
    names.use("quark.onnx", "ModelQuantizer");
    // Specs: the preset's classes, with the plan's calibration on the activations.
    Json act = api["input_tensors"], w = api["weight"];
    const Json& classes = cat.onnx()["spec_classes"];
    // A class the catalog does not describe has no known defaults: every argument is printed.
    auto defaults_of = [&](const Json& spec) { return classes.value(spec["class"].get<std::string>(), Json::object()); };
    auto set_arg = [&](Json& spec, const std::string& key, const Json& value) {
      const Json defaults = defaults_of(spec);
      if (defaults.value(key, Json()) == value) spec["args"].erase(key);
      else spec["args"][key] = value;
    };
    if (cm && (*cm)["qconfig"].is_object())
      for (auto& [k, v] : (*cm)["qconfig"].items()) set_arg(act, k, v);
    // Per-channel weights: the weight spec's granularity (maps.py: per_channel=True).
    if (o.value("per_channel", false)) w["args"]["quant_granularity"] = "Channel";
    names.use(defaults_of(act).value("module", "quark.onnx"), act["class"]);
    names.use(defaults_of(w).value("module", "quark.onnx"), w["class"]);
    Json algo_list = Json::array();
    if (cle) algo_list.push_back(algo_json("CLE"));
    if (!builtin_ft.empty()) algo_list.push_back(algo_json(builtin_ft));
    for (const auto& a : algos) {
      // Quark keeps one of AdaRound/AdaQuant: the preset's own wins.
      if ((a == "AdaRound" || a == "AdaQuant") && !builtin_ft.empty()) continue;
      algo_list.push_back(algo_json(a));
    }
    // Extra options: the preset's (symmetry lives in the specs), then the plan's.
    Json extra = (*preset)["extra_options"];
    for (const char* k : {"ActivationSymmetric", "WeightSymmetric", "FastFinetune", "AutoMixprecision"}) extra.erase(k);
    const Json preset_api_extra = api.value("extra_options", Json::object());
    for (auto& [k, v] : preset_api_extra.items()) extra[k] = v;
    for (auto& [k, v] : extra_update.items()) extra[k] = v;
    for (const auto& a : algos)
      if (const Json* aj = cat.onnx_algorithm(a); aj && aj->contains("requires_extra_options"))
        for (auto& [key, req] : (*aj)["requires_extra_options"].items())
          if (req.contains("qconfig_arg")) extra.erase(key);
    if (!preset_api_extra.contains("EnableNPUCnn")) extra["EnableNPUCnn"] = o["enable_npu_cnn"];
    extra["ExecutionProviders"] = o["execution_providers"];
    extra["CalibDataSize"] = plan["calibration"]["data_size"];
    if (!needs_data) extra.erase("CalibDataSize");
    Json exclude = Json::array();
    if (o["nodes_to_exclude"].is_array())
      for (const auto& n : o["nodes_to_exclude"]) exclude.push_back(n);
    std::string exclude_text;
    for (const auto& n : exclude) exclude_text += (exclude_text.empty() ? "" : ", ") + py(n);
    for (const auto& sg : o["subgraphs_to_exclude"]) {
      exclude.push_back(sg);
      exclude_text += (exclude_text.empty() ? "" : ", ") + std::string("(") + py(sg[0]) + ", " + py(sg[1]) + ")";
    }
    for (const char* k : {"global_config", "algo_config", "exclude", "use_external_data_format", "extra_options"}) names.qconfig_fields.insert(k);
    // Per-layer precision (--layer-scheme): another preset's spec pair for
    // named nodes / patterns (specific_layer_config) and op types
    // (layer_type_config); op types kept in float are layer_type_config's None.
    const Json op_excl = o.value("op_types_to_exclude", Json());
    std::map<std::string, std::vector<std::string>> by_node, by_type;  // preset -> patterns
    if (o.value("layer_presets", Json()).is_object())
      for (auto& [pattern, lp] : o["layer_presets"].items()) {
        if (pattern.rfind("op:", 0) == 0) by_type[lp.get<std::string>()].push_back(pattern.substr(3));
        else by_node[lp.get<std::string>()].push_back(pattern);
      }
    auto layer_text = [&](const std::string& name) {
      const Json* lp = cat.onnx_preset(name);
      Json la = (*lp)["quark_api"]["input_tensors"], lw = (*lp)["quark_api"]["weight"];
      names.use("quark.onnx", la["class"]);
      names.use("quark.onnx", lw["class"]);
      return "QLayerConfig(input_tensors=" + spec_text(la, names) + ", weight=" + spec_text(lw, names) + ")";
    };
    std::string specific_text, layer_type_text;
    if (!by_node.empty()) {
      names.qconfig_fields.insert("specific_layer_config");
      for (const auto& [lp, pats] : by_node) specific_text += (specific_text.empty() ? "" : ", ") + layer_text(lp) + ": " + py(Json(pats));
      specific_text = "    specific_layer_config={" + specific_text + "},\n";
    }
    if ((op_excl.is_array() && !op_excl.empty()) || !by_type.empty()) {
      names.qconfig_fields.insert("layer_type_config");
      std::string entries;
      for (const auto& [lp, types] : by_type) entries += (entries.empty() ? "" : ", ") + layer_text(lp) + ": " + py(Json(types));
      if (op_excl.is_array() && !op_excl.empty()) entries += (entries.empty() ? "" : ", ") + std::string("None: ") + py(op_excl);
      layer_type_text = "    layer_type_config={" + entries + "},\n";
    }
    for (auto& [k, v] : extra.items()) names.extra_option_keys.insert(k);
    std::string algo_text_all;
    for (const auto& a : algo_list) algo_text_all += (algo_text_all.empty() ? "" : ",\n                 ") + algo_text(a, names);
    f["qconfig"] = {{"global_config", {{"input_tensors", act}, {"weight", w}}},
                    {"algo_config", algo_list},
                    {"exclude", exclude},
                    {"layer_type_config", op_excl.is_array() && !op_excl.empty() ? Json{{"None", op_excl}} : Json(nullptr)},
                    {"layer_presets", o.value("layer_presets", Json())},
                    {"use_external_data_format", o["use_external_data_format"]},
                    {"extra_options", extra}};
    // The spec texts first: they add the enums they use to the imports.
    std::string act_text = spec_text(act, names), w_text = spec_text(w, names);
    for (auto& [m, ns] : names.imports) t += "from " + m + " import " + join(std::vector<std::string>(ns.begin(), ns.end())) + "\n";
    inv.py_imports = t;
    // Where this config differs from Quark's own QConfig of the preset, the reason.
    if (api.contains("note") && api["note"].is_string()) t += "\n# " + api["note"].get<std::string>() + ".";
    t += "\nconfig = QConfig(\n";
    t += "    global_config=QLayerConfig(input_tensors=" + act_text + ",\n";
    t += "                               weight=" + w_text + "),\n";
    t += "    algo_config=[" + algo_text_all + "],\n";
    t += "    exclude=[" + exclude_text + "],\n";
    t += specific_text;
    t += layer_type_text;
    t += "    use_external_data_format=" + py(o["use_external_data_format"]) + ",\n";
    t += "    extra_options={\n";
    for (auto& [k, v] : extra.items()) t += "        " + Json(k).dump() + ": " + py(v) + ",\n";
    t += "    },\n)\n";
  } else {
    inv.tool = "quark.onnx get_default_config";
    names.use("quark.onnx", "ModelQuantizer");
    names.use("quark.onnx", "Config");
    names.use("quark.onnx.quantization.config.custom_config", "get_default_config");
    std::vector<std::pair<std::string, Json>> fields;  // legacy QuantizationConfig field -> value
    std::map<std::string, std::string> enum_text;
    if (!dynamic && cm && method != (*preset)["calibration"].get<std::string>()) {
      std::string e = (*cm)["legacy"]["enum"];
      names.use((*cm)["legacy"]["module"], e.substr(0, e.find('.')));
      fields.push_back({"calibrate_method", e});
      enum_text["calibrate_method"] = e;
    }
    fields.push_back({"include_cle", cle});
    if (o.value("per_channel", false)) fields.push_back({"per_channel", true});
    if (o["enable_npu_cnn"] != (*preset)["enable_npu_cnn"]) fields.push_back({"enable_npu_cnn", o["enable_npu_cnn"]});
    if (o["enable_npu_transformer"] != (*preset)["enable_npu_transformer"]) fields.push_back({"enable_npu_transformer", o["enable_npu_transformer"]});
    // Op types kept in float: the legacy route has no layer_type_config, so
    // the op types Quark would quantize (interface.py get_static_op_types over
    // its registries, or the plan's own list), less these.
    Json op_types = o["op_types_to_quantize"];
    const Json op_excl = o.value("op_types_to_exclude", Json());
    if (op_excl.is_array() && !op_excl.empty()) {
      std::vector<std::string> base;
      if (op_types.is_array()) {
        base = string_list(op_types);
      } else {
        const Json& r = cat.onnx()["quark_op_registries"];
        std::set<std::string> all;
        if (o["enable_npu_transformer"].get<bool>()) {
          for (const auto& x : r["npu_transformer"]) all.insert(x.get<std::string>());
        } else {
          for (const char* k : {"qlinear", "qdq"})
            for (const auto& x : r[k]) all.insert(x.get<std::string>());
          if (o["enable_npu_cnn"].get<bool>() || (*preset)["quant_format"] == "ExtendedQDQ")
            for (const auto& x : r["npu_cnn"]) all.insert(x.get<std::string>());
        }
        base.assign(all.begin(), all.end());
      }
      Json kept = Json::array();
      for (const auto& x : base)
        if (!std::count(op_excl.begin(), op_excl.end(), x)) kept.push_back(x);
      op_types = kept;
    }
    if (op_types.is_array() && !op_types.empty()) fields.push_back({"op_types_to_quantize", op_types});
    for (const char* k : {"nodes_to_quantize", "nodes_to_exclude"})
      if (o[k].is_array() && !o[k].empty()) fields.push_back({k, o[k]});
    if (!o["subgraphs_to_exclude"].empty()) fields.push_back({"subgraphs_to_exclude", o["subgraphs_to_exclude"]});
    // The legacy route passes these as QuantizationConfig fields (api.py passes
    // config.convert_fp16_to_fp32 / convert_nchw_to_nhwc to quantize_static);
    // in extra_options it would never read them.
    Json legacy_extra = extra_update;
    for (const auto& [key, field] : std::vector<std::pair<std::string, std::string>>{{"ConvertFP16ToFP32", "convert_fp16_to_fp32"}, {"ConvertNCHWToNHWC", "convert_nchw_to_nhwc"}})
      if (legacy_extra.contains(key)) {
        fields.push_back({field, legacy_extra[key]});
        legacy_extra.erase(key);
      }
    fields.push_back({"execution_providers", o["execution_providers"]});
    fields.push_back({"use_external_data_format", o["use_external_data_format"]});
    Json extra = legacy_extra;
    if (needs_data) extra["CalibDataSize"] = plan["calibration"]["data_size"];
    // The legacy preset's own fine-tuning (its FastFinetune dict) on the GPU.
    if (gpu && !builtin_ft.empty() && cat.onnx()["fast_finetune_defaults"].contains(builtin_ft)) {
      Json ft = cat.onnx()["fast_finetune_defaults"][builtin_ft];
      ft["OptimDevice"] = "cuda:0";
      ft["InferDevice"] = "cuda:0";
      extra["FastFinetune"] = ft;
    }
    Json algo_list = Json::array();
    for (const auto& a : algos) {
      if ((a == "AdaRound" || a == "AdaQuant") && !builtin_ft.empty()) continue;
      // A mixed preset's own config turns it on (include_auto_mp=True with its AutoMixprecision
      // dict, custom_config.py in 0.12.post1 and 0.13); AutoMixprecisionConfig() would only add
      // defaults in 0.12 and cannot be built in 0.13 (target_layer_config is required).
      if (a == "AutoMixprecision" && preset->value("auto_mixprecision", false)) continue;
      algo_list.push_back(algo_json(a));
    }
    Json lf = Json::object();
    for (auto& [k, v] : fields) {
      lf[k] = v;
      names.legacy_fields.insert(k);
    }
    names.legacy_fields.insert("extra_options");
    for (auto& [k, v] : extra.items()) names.extra_option_keys.insert(k);
    f["legacy"] = {{"get_default_config", plan["preset"]}, {"fields", lf}, {"extra_options_update", extra}, {"algorithms", algo_list}};
    for (auto& [m, ns] : names.imports) t += "from " + m + " import " + join(std::vector<std::string>(ns.begin(), ns.end())) + "\n";
    inv.py_imports = t;
    t += "\n# " + plan["preset"].get<std::string>() + " stays a legacy preset: " + route_reason + ".\n";
    t += "quant_config = get_default_config(" + plan["preset"].dump() + ")  # a deep copy of the preset\n";
    for (auto& [k, v] : fields) {
      std::string value = enum_text.count(k) ? enum_text[k] : py(v);
      // quant_utils.get_all_target_nodes takes a subgraph as a tuple (start nodes, end nodes), never a list.
      if (k == "subgraphs_to_exclude") {
        value = "[";
        for (const auto& sg : v) value += (value.size() > 1 ? ", " : "") + std::string("(") + py(sg[0]) + ", " + py(sg[1]) + ")";
        value += "]";
      }
      t += "quant_config." + k + " = " + value + "\n";
    }
    if (!extra.empty()) t += "quant_config.extra_options.update(" + py(extra) + ")\n";
    t += "config = Config(global_quant_config=quant_config)\n";
    if (!algo_list.empty()) {
      std::string at;
      for (const auto& a : algo_list) at += (at.empty() ? "" : ", ") + algo_text(a, names);
      f["legacy"]["algorithms_text"] = at;
    }
  }
  inv.py_config = t.substr(inv.py_imports.size());
  // Run it.
  t += "\nquantizer = ModelQuantizer(config)\n";
  std::string call = "quantizer.quantize_model(" + Json(model).dump() + ", " + Json(out_model).dump();
  names.quantize_model_args.insert("model_input");
  names.quantize_model_args.insert("model_output");
  if (needs_data) {
    if (plan["calibration"].contains("data_path")) {
      call += ", calibration_data_path=" + plan["calibration"]["data_path"].dump();
      names.quantize_model_args.insert("calibration_data_path");
    } else {
      call += ", calibration_data_reader=data_reader";
      names.quantize_model_args.insert("calibration_data_reader");
      t = "# data_reader: your onnxruntime.quantization.CalibrationDataReader over " + plan["calibration"]["data_size"].dump() +
          " representative inputs, batch " + plan["calibration"]["batch_size"].dump() + "\n" + t;
    }
  }
  if (route == "legacy" && f["legacy"].contains("algorithms_text")) {
    call += ", algorithms=[" + f["legacy"]["algorithms_text"].get<std::string>() + "]";
    names.quantize_model_args.insert("algorithms");
  }
  t += call + ")\n";
  inv.py_call_extra = call.substr(call.find(Json(out_model).dump()) + Json(out_model).dump().size());
  f["model_input"] = model;
  f["model_output"] = out_model;
  f["names"] = names.json();
  inv.fields = f;
  inv.text = t;
  return inv;
}

}  // namespace quarkplan
