#include "plan/invocation.h"

#include "catalog/catalog.h"
#include "common/strings.h"

namespace quarkplan {

namespace {

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=,:") == std::string::npos) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string spec_for(const std::string& family, const std::string& qtype) {
  if (family == "xint8") return "XInt8Spec()";
  static const std::map<std::string, std::string> by_type = {
      {"QInt8", "Int8Spec()"}, {"QUInt8", "UInt8Spec()"}, {"QInt16", "Int16Spec()"}, {"QUInt16", "UInt16Spec()"},
      {"QBFloat16", "BFloat16Spec()"}, {"QFloat16", "Float16 (legacy QFloat16)"}, {"QBFP", "BFP16Spec()"}, {"QMX", "MX spec (MXAttributes)"},
      {"QInt4", "Int4 (MatMulNBits)"}};
  auto it = by_type.find(qtype);
  return it == by_type.end() ? qtype : it->second;
}

}  // namespace

Invocation plan_invocation(const Json& plan, const Json& analysis, const std::string& catalog_dir) {
  const Catalog& cat = Catalog::load(catalog_dir);
  Invocation inv;
  if (plan.value("backend", "") == "onnx") {
    inv.tool = "quark.onnx QConfig";
    const Json* preset = plan["preset"].is_string() ? cat.onnx_preset(plan["preset"]) : nullptr;
    Json f;
    f["preset"] = plan["preset"];
    if (preset) {
      f["activation_spec"] = (*preset)["activation_type"].is_string() ? spec_for((*preset)["family"], (*preset)["activation_type"]) : "none (weights only)";
      f["weight_spec"] = spec_for((*preset)["family"], (*preset)["weight_type"]);
    }
    f["calibrate_method"] = plan["calibration"]["method"];
    Json algos = Json::array();
    for (const auto& a : plan["algorithms"]) {
      const Json* aj = cat.onnx_algorithm(a);
      algos.push_back(aj ? (*aj)["config_class"].get<std::string>() + "()" : a.get<std::string>());
    }
    f["algo_config"] = algos;
    f["EnableNPUCnn"] = plan["onnx_specific"]["enable_npu_cnn"];
    f["EnableNPUTransformer"] = plan["onnx_specific"]["enable_npu_transformer"];
    Json exclude = Json::array();
    if (plan["onnx_specific"]["nodes_to_exclude"].is_array())
      for (const auto& n : plan["onnx_specific"]["nodes_to_exclude"]) exclude.push_back(n);
    for (const auto& sg : plan["onnx_specific"]["subgraphs_to_exclude"]) exclude.push_back(sg);
    f["exclude"] = exclude;
    f["use_external_data_format"] = plan["onnx_specific"]["use_external_data_format"];
    Json extra = plan["onnx_specific"]["extra_options"];
    if (plan["onnx_specific"]["op_types_to_quantize"].is_array()) extra["OpTypesToQuantize"] = plan["onnx_specific"]["op_types_to_quantize"];
    if (plan["onnx_specific"]["nodes_to_quantize"].is_array()) extra["NodesToQuantize"] = plan["onnx_specific"]["nodes_to_quantize"];
    extra["ExecutionProviders"] = plan["onnx_specific"]["execution_providers"];
    f["extra_options"] = extra;
    f["calibration"] = {{"data_size", plan["calibration"]["data_size"]}, {"batch_size", plan["calibration"]["batch_size"]}};
    inv.fields = f;
    std::string t = "config = QConfig.get_default_config(\"" + (plan["preset"].is_string() ? plan["preset"].get<std::string>() : std::string("?")) + "\")\n";
    if (preset) t += "#   activation " + f["activation_spec"].get<std::string>() + ", weight " + f["weight_spec"].get<std::string>() + "\n";
    t += "#   calibrate_method " + (plan["calibration"]["method"].is_string() ? plan["calibration"]["method"].get<std::string>() : std::string("(preset)")) + "\n";
    t += "QConfig(global_config=<the preset>, algo_config=[" + join(algos.get<std::vector<std::string>>()) + "],\n";
    t += "        EnableNPUCnn=" + std::string(f["EnableNPUCnn"].get<bool>() ? "True" : "False") + ", exclude=" + exclude.dump() + ",\n";
    t += "        use_external_data_format=" + std::string(f["use_external_data_format"].get<bool>() ? "True" : "False") + ",\n";
    t += "        extra_options=" + extra.dump() + ")\n";
    t += "# calibration: " + plan["calibration"]["data_size"].dump() + " samples, batch " + plan["calibration"]["batch_size"].dump() + "\n";
    inv.text = t;
    return inv;
  }
  inv.tool = "quantize_quark.py";
  std::vector<std::string>& a = inv.args;
  std::string model = analysis.is_object() ? analysis["model"].value("model_path", "<MODEL_DIR>") : "<MODEL_DIR>";
  a = {"--model_dir", model, "--output_dir", "<OUTPUT_DIR>"};
  if (plan["global_scheme"].is_string()) a.insert(a.end(), {"--quant_scheme", plan["global_scheme"]});
  for (auto& [pattern, scheme] : plan["layer_quant_config"].items()) a.insert(a.end(), {"--layer_quant_scheme", pattern, scheme.get<std::string>()});
  // --exclude_layers only when the plan differs from the template defaults
  // (the flag replaces them; an empty flag would exclude nothing).
  Json defaults = analysis.is_object() ? analysis["quantization_targets"]["exclude_defaults"] : Json(nullptr);
  if (defaults.is_null()) {
    const Json* t = cat.torch_template(plan["model"]["model_type"]);
    defaults = t ? (*t)["exclude_defaults"] : Json::array({"lm_head"});
  }
  if (plan["exclude_layers"] != defaults) {
    a.push_back("--exclude_layers");
    for (const auto& p : plan["exclude_layers"]) a.push_back(p);
  }
  if (plan["algorithm"].is_string()) a.insert(a.end(), {"--quant_algo", plan["algorithm"]});
  if (plan["kv_cache_scheme"].is_string()) a.insert(a.end(), {"--kv_cache_dtype", plan["kv_cache_scheme"]});
  a.insert(a.end(), {"--dataset", plan["calibration"]["dataset"], "--num_calib_data", plan["calibration"]["num_calib_data"].dump(),
                     "--seq_len", plan["calibration"]["seq_len"].dump()});
  if (plan["calibration"].contains("batch_size") && plan["calibration"]["batch_size"] != 1)
    a.insert(a.end(), {"--batch_size", plan["calibration"]["batch_size"].dump()});
  if (plan.value("export_format", "hf_format") == "gguf") a.insert(a.end(), {"--model_export", "gguf"});
  else if (plan.value("export_format", "hf_format") == "onnx") a.insert(a.end(), {"--model_export", "onnx"});
  else a.insert(a.end(), {"--model_export", "hf_format"});
  std::string strategy = plan.value("device_strategy", "");
  if (strategy.find("file-to-file") != std::string::npos) a.push_back("--file2file_quantization");
  else if (strategy.find("multi-GPU") != std::string::npos) a.push_back("--multi_gpu");
  if (plan["evaluation_intent"] == "none") a.push_back("--skip_evaluation");
  if (!plan.value("trust_remote_code", false)) a.push_back("--no_trust_remote_code");
  std::string t = "python quantize_quark.py";
  for (size_t i = 0; i < a.size(); ++i) t += (a[i].rfind("--", 0) == 0 ? " \\\n    " : " ") + shell_quote(a[i]);
  inv.text = t + "\n";
  return inv;
}

}  // namespace quarkplan
