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

}  // namespace

Invocation plan_invocation(const Json& plan, const Json& analysis, const std::string& catalog_dir) {
  const Catalog& cat = Catalog::load(catalog_dir);
  Invocation inv;
  if (plan.value("backend", "") == "onnx") return onnx_invocation(plan, analysis, cat);
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
