#include "plan/planner.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "common/error.h"
#include "common/strings.h"
#include "common/units.h"
#include "intake/model_reader.h"
#include "plan/estimates.h"
#include "plan/rules.h"

namespace quarkplan {

std::string plan_flow(const Json& analysis) {
  return analysis.contains("model") && analysis["model"].value("model_type", "") == "onnx" ? "onnx" : "torch";
}

namespace {

Json onnx_skeleton(const Json& a, const PlanRequest& req) {
  Json p;
  p["model"] = {{"model_type", "onnx"},
                {"architecture_guess", a["model"]["onnx_specific"]["architecture_guess"]},
                {"analysis_ref", req.analysis_ref}};
  if (a["model"].contains("model_path") && a["model"]["model_path"].is_string()) p["model"]["model_path"] = a["model"]["model_path"];
  p["backend"] = "onnx";
  p["deployment_target"] = nullptr;
  p["preset"] = nullptr;
  p["calibration"] = {{"method", nullptr}, {"data_size", 200}, {"batch_size", 1}};
  p["algorithms"] = Json::array();
  p["onnx_specific"] = {{"enable_npu_cnn", false},
                        {"enable_npu_transformer", false},
                        {"include_cle", false},
                        {"include_fast_ft", false},
                        {"op_types_to_quantize", nullptr},
                        {"nodes_to_quantize", nullptr},
                        {"nodes_to_exclude", nullptr},
                        {"subgraphs_to_exclude", Json::array()},
                        {"extra_options", Json::object()},
                        {"use_external_data_format", false},
                        {"execution_providers", Json::array({"CPUExecutionProvider"})},
                        {"npu_generation", nullptr},
                        {"op_types_to_exclude", nullptr},
                        {"per_channel", false},
                        {"layer_presets", nullptr}};
  p["evaluation_intent"] = "smoke";
  return p;
}

Json torch_skeleton(const Json& a, const PlanRequest& req) {
  Json p;
  p["model"] = {{"model_type", a["model"]["model_type"]}, {"analysis_ref", req.analysis_ref}};
  if (a["model"].contains("model_path") && a["model"]["model_path"].is_string()) p["model"]["model_path"] = a["model"]["model_path"];
  p["backend"] = "torch";
  p["global_scheme"] = nullptr;
  p["kv_cache_scheme"] = nullptr;
  p["exclude_layers"] = Json::array();
  p["layer_quant_config"] = Json::object();
  p["algorithm"] = nullptr;
  p["calibration"] = {{"dataset", "pileval"}, {"num_calib_data", 128}, {"seq_len", 512}};
  p["evaluation_intent"] = "smoke";
  return p;
}

std::string value_text(const Json& v) {
  if (v.is_null()) return "null";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

const Json* at_path(const Json& j, const std::string& path) {
  const Json* cur = &j;
  size_t start = 0;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!cur->is_object() || !cur->contains(key)) return nullptr;
    cur = &(*cur)[key];
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return cur;
}

}  // namespace

Json decision_table(const Json& plan) {
  Json rows = Json::array();
  const Json& reasons = plan.value("reasons", Json::object());
  auto row = [&](const std::string& decision, const std::string& label) {
    const Json* v = at_path(plan, decision);
    Json r;
    r["decision"] = label;
    r["key"] = decision;
    r["value"] = v ? *v : Json(nullptr);
    std::string reason = reasons.contains(decision) ? reasons[decision].get<std::string>() : "";
    if (decision == "onnx_specific.extra_options" && v && v->is_object()) {
      for (auto& [k, x] : v->items()) {
        std::string key = "onnx_specific.extra_options." + k;
        if (reasons.contains(key)) reason += "; " + k + ": " + reasons[key].get<std::string>();
      }
      // An option a rule decided to leave unset says so, with its reason.
      const std::string prefix = "onnx_specific.extra_options.";
      for (auto& [key, text] : reasons.items())
        if (key.rfind(prefix, 0) == 0 && !v->contains(key.substr(prefix.size())) && text.is_string())
          reason += "; " + key.substr(prefix.size()) + " not set: " + text.get<std::string>();
    }
    r["reason"] = reason;
    rows.push_back(r);
  };
  if (plan.value("backend", "") == "onnx") {
    row("backend", "backend");
    row("deployment_target", "deployment_target");
    // The NPU generation, where it matters (an NPU target) or was given.
    if (const Json* g = at_path(plan, "onnx_specific.npu_generation");
        (g && g->is_string()) || plan.value("deployment_target", Json()) == "npu_cnn" || plan.value("deployment_target", Json()) == "npu_transformer")
      row("onnx_specific.npu_generation", "onnx_specific.npu_generation");
    for (const char* k : {"preset", "calibration.method", "calibration.data_size", "calibration.batch_size",
                          "calibration.data_path", "algorithms", "onnx_specific.enable_npu_cnn", "onnx_specific.enable_npu_transformer", "onnx_specific.include_cle",
                          "onnx_specific.op_types_to_quantize", "onnx_specific.use_external_data_format", "onnx_specific.extra_options",
                          "evaluation_intent"})
      row(k, k);
    if (const Json* v = at_path(plan, "onnx_specific.per_channel"); v && v->is_boolean() && v->get<bool>()) row("onnx_specific.per_channel", "onnx_specific.per_channel");
    for (const char* k : {"onnx_specific.nodes_to_quantize", "onnx_specific.nodes_to_exclude", "onnx_specific.op_types_to_exclude", "onnx_specific.layer_presets"})
      if (const Json* v = at_path(plan, k); v && !v->is_null()) row(k, k);
    if (const Json* v = at_path(plan, "onnx_specific.subgraphs_to_exclude"); v && !v->empty()) row("onnx_specific.subgraphs_to_exclude", "onnx_specific.subgraphs_to_exclude");
  } else {
    row("global_scheme", "global_scheme");
    row("kv_cache_scheme", "kv_cache_scheme");
    row("exclude_layers", "exclude_layers");
    row("layer_quant_config", "layer_quant_config");
    row("algorithm", "algorithm");
    row("calibration.dataset", "calibration_dataset");
    row("calibration.num_calib_data", "num_calib_data");
    row("calibration.seq_len", "seq_len");
    row("evaluation_intent", "evaluation_intent");
    row("export_format", "export_format");
    row("hardware", "hardware");
    row("trust_remote_code", "trust_remote_code");
    row("device_strategy", "device_strategy");
    row("serve_runtime", "serve_runtime");
  }
  // Reasons recorded for facts that are not rows of their own are shown on the
  // row they explain, and any other reason gets a row: every reason the plan
  // records is in the table (and so in explain and the report).
  static const std::pair<const char*, const char*> kHosted[] = {
      {"amd_recipe", "global_scheme"}, {"amd_recipe.differences", "global_scheme"}, {"algorithm.config_file", "algorithm"}, {"data_type", "global_scheme"}, {"hardware_support", "hardware"}, {"calibration.note", "calibration.dataset"}};
  for (auto& [k, v] : reasons.items()) {
    if (!v.is_string() || k.rfind("onnx_specific.extra_options.", 0) == 0) continue;  // shown on the extra_options row
    bool shown = false;
    for (const auto& r : rows) shown = shown || r["key"] == k;
    if (shown) continue;
    const char* host = nullptr;
    for (const auto& [note, h] : kHosted)
      if (k == note) host = h;
    Json* host_row = nullptr;
    for (auto& r : rows)
      if (host && r["key"] == host) host_row = &r;
    if (host_row) {
      std::string& reason = (*host_row)["reason"].get_ref<std::string&>();
      reason += (reason.empty() ? "" : "; ") + v.get<std::string>();
    } else {
      row(k, k);
    }
  }
  // Estimates, when known.
  if (plan.contains("estimates") && plan["estimates"].contains("weights") && plan["estimates"]["weights"].size() >= 2) {
    const Json& w = plan["estimates"]["weights"];
    Json r;
    r["decision"] = "estimated_size";
    r["key"] = "estimates.weights";
    r["value"] = w[1]["bytes"];
    char bits[32];
    std::snprintf(bits, sizeof bits, "%.2f", w[1]["bits_per_weight_effective"].get<double>());
    std::string rule = plan.value("backend", "") == "onnx" ? "onnx.estimates.weights" : "torch.fit.accelerators";
    r["reason"] = w[1]["scheme"].get<std::string>() + ": " + bits + " bits per weight on average; the model as stored is " +
                  format_bytes(w[0]["bytes"].get<uint64_t>()) + " [" + rule + "]";
    rows.push_back(r);
  }
  for (auto& r : rows) {
    r["value_text"] = value_text(r["value"]);
    if (r["key"] == "estimates.weights" && r["value"].is_number_unsigned()) r["value_text"] = format_bytes(r["value"].get<uint64_t>());
  }
  return rows;
}

namespace {

// Rows of the decision table that are not choices, and why.
const std::map<std::string, std::string>& fixed_rows() {
  static const std::map<std::string, std::string> m = {
      {"backend", "backend is not editable: it follows the model (an .onnx file plans for quark.onnx, a Hugging Face folder for quantize_quark.py)"},
      {"estimated_size", "estimated_size is not editable: it is computed from the exact parameter counts and the plan's scheme (change global_scheme, or the preset of an ONNX plan)"},
      {"estimates.weights", "estimated_size is not editable: it is computed from the exact parameter counts and the plan's scheme (change global_scheme, or the preset of an ONNX plan)"},
      {"hardware_support", "hardware_support is not editable: it follows from global_scheme and hardware (change one of those)"},
      {"quark_release", "quark_release is not editable at the prompt: the analysis is read with that release's facts, so plan again with --quark-version V (quarkplan catalog lists the releases)"},
      {"model", "the model is not a decision: plan another model with `quarkplan plan MODEL`"},
      {"requires_confirmation", "requires_confirmation is not editable: answer yes at the prompt, or pass --yes"}};
  return m;
}

// device_strategy values a user may choose (and the words people also use),
// as the plan records them.
const std::vector<std::pair<std::string, std::string>>& device_strategies() {
  static const std::vector<std::pair<std::string, std::string>> v = {
      {"single", "single"},           {"single accelerator", "single"}, {"multi_gpu", "multi_gpu"},
      {"multi-GPU", "multi_gpu"},     {"multi_device", "multi_device"}, {"file2file", "file2file"},
      {"file-to-file", "file2file"},  {"per_block", "per_block"},       {"per-block", "per_block"}, {"cpu", "cpu"}};
  return v;
}

std::string value_word(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

void apply_set(PlanRequest& req, const std::string& flow, const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) throw UsageError("--set takes KEY=VALUE (got '" + assignment + "')");
  std::string key = assignment.substr(0, eq), text = assignment.substr(eq + 1);
  // Aliases from the decision table labels and Quark's QConfig names.
  static const std::map<std::string, std::string> aliases = {
      {"calibration_dataset", "calibration.dataset"}, {"num_calib_data", "calibration.num_calib_data"},
      {"seq_len", "calibration.seq_len"}, {"calibration_method", "calibration.method"}, {"data_size", "calibration.data_size"},
      {"batch_size", "calibration.batch_size"}, {"scheme", "global_scheme"}, {"algo_config", "algorithms"},
      {"exclude_nodes", "onnx_specific.nodes_to_exclude"}, {"exclude_subgraphs", "onnx_specific.subgraphs_to_exclude"},
      {"EnableNPUCnn", "onnx_specific.enable_npu_cnn"}, {"use_external_data_format", "onnx_specific.use_external_data_format"},
      {"include_cle", "onnx_specific.include_cle"}, {"op_types_to_quantize", "onnx_specific.op_types_to_quantize"},
      {"nodes_to_exclude", "onnx_specific.nodes_to_exclude"}, {"extra_options", "onnx_specific.extra_options"},
      {"kv_cache_dtype", "kv_cache_scheme"}, {"npu_generation", "onnx_specific.npu_generation"}, {"npu", "onnx_specific.npu_generation"}, {"quant_algo", "algorithm"}, {"target", "deployment_target"},
      {"calib_data", "calibration.data_path"}, {"data_path", "calibration.data_path"}, {"model_export", "export_format"},
      {"export", "export_format"}};
  if (auto it = aliases.find(key); it != aliases.end()) key = it->second;
  if (auto it = fixed_rows().find(key); it != fixed_rows().end()) throw UsageError(it->second);
  const auto& keys = flow == "onnx" ? onnx_decision_keys() : torch_decision_keys();
  bool known = std::count(keys.begin(), keys.end(), key) > 0 ||
               (flow == "onnx" && key.rfind("onnx_specific.extra_options.", 0) == 0 && key.size() > 28) ||
               (flow == "torch" && key.rfind("layer_quant_config.", 0) == 0 && key.size() > 19);
  if (!known) {
    std::vector<std::string> all(keys.begin(), keys.end());
    throw UsageError("unknown decision '" + key + "' for the " + flow + " flow" + did_you_mean(key, all) + "; decisions: " + join(all));
  }
  Json value;
  try {
    value = Json::parse(text);
  } catch (...) {
    value = text;
  }
  // Rows that are part of the request rather than a rule's choice.
  if (key == "export_format") {
    std::string v = value_word(value);
    if (v == "hf_format") v = "hf";
    if (v != "hf" && v != "gguf" && v != "onnx") throw UsageError("export_format must be one of hf, gguf, onnx (got '" + value_word(value) + "')");
    req.export_format = v;
    return;
  }
  if (key == "trust_remote_code") {
    if (!value.is_boolean()) throw UsageError("trust_remote_code must be true or false (got '" + value_word(value) + "')");
    req.trust_remote_code = value.get<bool>();
    return;
  }
  if (key == "calibration.data_path") {
    std::string v = value.is_null() ? "none" : value_word(value);
    std::error_code ec;
    if (v.empty()) throw UsageError("calibration.data_path needs a path, or none");
    if (v != "none" && !std::filesystem::exists(v, ec)) throw InputError(v, "calibration data path does not exist");
    req.calib_data = v;
    return;
  }
  if (key == "device_strategy") {
    std::string v = value_word(value);
    for (const auto& [word, recorded] : device_strategies())
      if (v == word || v == recorded) {
        req.choices[key] = recorded;
        return;
      }
    throw UsageError("device_strategy must be one of single, multi_gpu, multi_device, file2file, per_block, cpu (got '" + v + "')");
  }
  if (key == "hardware") req.hardware = value.is_string() ? value.get<std::string>() : "";
  req.choices[key] = value;
  req.choice_flags.erase(key);  // typed at the prompt or with --set: named by its row
}

int64_t max_context(const Json& analysis) {
  if (!analysis.is_object() || !analysis.contains("model")) return 0;
  const Json& m = analysis["model"];
  if (!m.contains("architecture") || !m["architecture"].is_object()) return 0;
  const Json& v = m["architecture"].value("max_position_embeddings", Json(nullptr));
  return v.is_number_integer() && v.get<int64_t>() > 0 ? v.get<int64_t>() : 0;
}

std::vector<std::string> check_request(const Json& analysis, const PlanRequest& req) {
  std::vector<std::string> out;
  const std::string flow = plan_flow(analysis);
  const int64_t model_max = max_context(analysis);
  // Sanity bounds where Quark sets none: a calibration set is at most a million
  // samples; sequences and contexts at most what the model was built for.
  constexpr int64_t kMaxSamples = 1'000'000, kMaxTokens = 1ll << 24, kMaxBatch = 4096;
  struct Limit {
    const char* key;
    const char* flow;
    int64_t min, max;
    const char* bound;  // what the upper bound is
  };
  const int64_t token_max = model_max > 0 ? model_max : kMaxTokens;
  const std::string token_bound = model_max > 0 ? ", the model's max_position_embeddings" : "";
  const Limit limits[] = {
      {"calibration.num_calib_data", "torch", 1, kMaxSamples, ""},
      {"calibration.seq_len", "torch", 1, token_max, token_bound.c_str()},
      {"calibration.batch_size", "torch", 1, kMaxBatch, ""},
      {"calibration.data_size", "onnx", 1, kMaxSamples, ""},
      {"calibration.batch_size", "onnx", 1, 4, " (Quark's planning guide: 1-4)"},
  };
  auto name_of = [&](const std::string& key) {
    auto it = req.choice_flags.find(key);
    return it == req.choice_flags.end() ? key : it->second;
  };
  for (const auto& l : limits) {
    if (flow != l.flow) continue;
    const Json* v = req.choice(l.key);
    if (!v) continue;
    std::string range = "a whole number from " + std::to_string(l.min) + " to " + std::to_string(l.max) + l.bound;
    if (!v->is_number_integer()) out.push_back(name_of(l.key) + " must be " + range + " (got " + v->dump() + ")");
    else if (v->get<int64_t>() < l.min || (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(l.max)) || v->get<int64_t>() > l.max)
      out.push_back(name_of(l.key) + " must be " + range + " (got " + v->dump() + ")");
  }
  if (flow == "torch") {
    if (req.context != 0 && (req.context < 1 || req.context > token_max))
      out.push_back("--context must be a whole number from 1 to " + std::to_string(token_max) + token_bound + " (got " + std::to_string(req.context) + ")");
    if (req.batch < 1 || req.batch > kMaxBatch)
      out.push_back("--batch must be a whole number from 1 to " + std::to_string(kMaxBatch) + " (got " + std::to_string(req.batch) + ")");
  }
  return out;
}

Json request_to_json(const PlanRequest& r) {
  Json choices = Json::object();
  for (const auto& [k, v] : r.choices) choices[k] = v;
  return {{"target", r.target},
          {"target_source", r.target_source},
          {"hardware", r.hardware},
          {"goal", r.goal},
          {"export_format", r.export_format},
          {"calib_data", r.calib_data},
          {"calib_data_check", r.calib_data_check},
          {"choices", choices},
          {"insist", r.insist},
          {"trust_remote_code", r.trust_remote_code},
          {"confirmed", r.confirmed},
          {"context", r.context},
          {"batch", r.batch},
          {"gpus", r.gpus},
          {"env_context", r.env_context},
          {"custom_ops_compile_ok", r.custom_ops_compile_ok ? Json(*r.custom_ops_compile_ok) : Json(nullptr)},
          // The install result's facts the rules read, so explain/validate replay them.
          {"available_providers", r.available_providers ? Json(*r.available_providers) : Json(nullptr)},
          {"install_status", r.install_status},
          {"install_failure_reason", r.install_failure_reason},
          {"install_accelerator_tag", r.install_accelerator_tag},
          {"install_onnxruntime_version", r.install_onnxruntime_version},
          {"catalog_dir", r.catalog_dir},
          {"quark_release", r.quark_release},
          {"quark_release_source", r.quark_release_source},
          {"installed_quark_version", r.installed_quark_version},
          {"installed_quark_source", r.installed_quark_source}};
}

PlanRequest request_from_json(const Json& j) {
  PlanRequest r;
  if (!j.is_object()) throw InputError("", "the plan's request record is not an object");
  try {
    r.target = j.value("target", "");
    r.target_source = j.value("target_source", "");
    r.hardware = j.value("hardware", "");
    r.goal = j.value("goal", "");
    r.export_format = j.value("export_format", "");
    r.calib_data = j.value("calib_data", "");
    if (j.contains("calib_data_check") && j["calib_data_check"].is_object()) r.calib_data_check = j["calib_data_check"];
    if (j.contains("choices") && j["choices"].is_object())
      for (auto& [k, v] : j["choices"].items()) r.choices[k] = v;
    r.insist = j.value("insist", false);
    r.trust_remote_code = j.value("trust_remote_code", false);
    r.confirmed = j.value("confirmed", false);
    r.context = j.value("context", int64_t{0});
    r.batch = j.value("batch", int64_t{1});
    r.gpus = j.value("gpus", int64_t{0});
    r.quark_release = j.value("quark_release", "");
    r.quark_release_source = j.value("quark_release_source", "");
    r.installed_quark_version = j.value("installed_quark_version", "");
    r.installed_quark_source = j.value("installed_quark_source", "");
    r.env_context = j.value("env_context", Json(nullptr));
    if (j.contains("custom_ops_compile_ok") && j["custom_ops_compile_ok"].is_boolean()) r.custom_ops_compile_ok = j["custom_ops_compile_ok"].get<bool>();
    if (j.contains("available_providers") && j["available_providers"].is_array())
      r.available_providers = j["available_providers"].get<std::vector<std::string>>();
    r.install_status = j.value("install_status", "");
    r.install_failure_reason = j.value("install_failure_reason", "");
    r.install_accelerator_tag = j.value("install_accelerator_tag", "");
    r.install_onnxruntime_version = j.value("install_onnxruntime_version", "");
    r.catalog_dir = j.value("catalog_dir", "");
  } catch (const Json::exception& e) {
    throw InputError("", std::string("the plan's request record is malformed: ") + e.what());
  }
  return r;
}

// Fills the optional facts the rules read with neutral defaults, so an analysis
// written by Quark's own intake skill (only the contract's required fields)
// plans as well as one written by quarkplan.
Json normalized_analysis(const Json& in, const Catalog& cat) {
  Json a = in;
  auto def = [](Json& obj, const char* key, const Json& value) {
    if (!obj.contains(key) || obj[key].is_null()) obj[key] = value;
  };
  Json& m = a["model"];
  Json& q = a["quantization_targets"];
  if (!q.contains("exclude_defaults") && q.contains("onnx_specific") && q["onnx_specific"].contains("exclude_defaults"))
    q["exclude_defaults"] = q["onnx_specific"]["exclude_defaults"];
  if (plan_flow(a) == "onnx") {
    Json& o = m["onnx_specific"];
    def(o, "node_count", 0);
    def(o, "subgraph_count", 0);
    def(o, "quantized_op_types", Json::array());
    def(o, "custom_domains", Json::array());
    def(o, "node_names", Json::array());
    def(o, "weights", Json::object());
    def(o["weights"], "total_params", 0);
    def(o["weights"], "by_dtype", Json::object());
    def(o["weights"], "in_constant_nodes", 0);
    def(o["weights"], "quantizable_params", 0);
    def(q, "onnx_specific", Json::object());
    def(q["onnx_specific"], "op_counts", Json::object());
    def(q["onnx_specific"], "preset_candidates", Json::array());
  } else {
    std::string mt = m["model_type"];
    const Json* t = cat.torch_template(mt);
    def(m, "template_supported", t != nullptr && !cat.torch()["unsupported_model_types"].contains(mt));
    def(m, "trust_remote_code", false);
    def(m, "is_moe", false);
    def(m, "modalities", Json::array({"text"}));
    def(m, "architecture", Json::object());
    def(m, "total_params", 0);
    def(m, "params_method", "from the analysis");
    if (!m.contains("pre_quantized")) m["pre_quantized"] = nullptr;
    def(q, "exclude_defaults", t ? (*t)["exclude_defaults"] : Json::array({"lm_head"}));
  }
  def(a, "risks", Json::array());
  return a;
}

PlanOutcome make_plan(const Json& input_analysis, const PlanRequest& user_req) {
  PlanOutcome out;
  const Catalog& cat = Catalog::load(user_req.catalog_dir, user_req.quark_release);
  const Json analysis = normalized_analysis(input_analysis, cat);
  out.flow = plan_flow(analysis);
  // Out-of-range numbers are input errors, found before any rule runs.
  out.errors = check_request(analysis, user_req);
  // An analysis holds release-dependent facts (template support, default
  // exclusions, the transformers range): it is planned with its own release.
  if (const Json* in = analysis.contains("intake") ? &analysis["intake"] : nullptr; in && in->is_object() && in->contains("quark_release") &&
      (*in)["quark_release"].is_string() && (*in)["quark_release"] != cat.release())
    out.errors.push_back("the analysis was read with Quark " + (*in)["quark_release"].get<std::string>() + "'s facts, but the plan is for Quark " +
                         cat.release() + ": re-run intake with --quark-version " + cat.release());
  if (!out.errors.empty()) {
    out.status = PlanStatus::kInvalid;
    return out;
  }
  PlanRequest req = user_req;
  if (req.context == 0) {  // the estimate's default context, never beyond the model's
    int64_t m = max_context(analysis);
    req.context = m > 0 && m < 8192 ? m : 8192;
  }
  PlanState s(analysis, cat, req);
  s.plan = out.flow == "onnx" ? onnx_skeleton(analysis, req) : torch_skeleton(analysis, req);
  for (const Rule* r : rules_for(out.flow)) {
    r->apply(s);
    if (s.refused) {
      out.refusal_rule = r->id;
      break;
    }
  }
  if (s.refused) {
    out.status = PlanStatus::kRefused;
    out.refusal = s.refusal;
    return out;
  }
  if (!s.errors.empty()) {
    out.status = PlanStatus::kInvalid;
    out.errors = s.errors;
    return out;
  }
  Json risks = sorted_risks(s.risks);
  Json& p = s.plan;
  p["requires_confirmation"] = s.draft || !req.confirmed || !s.conflicts.empty();
  p["risks"] = risks;
  p["reasons"] = s.reasons;
  p["open_questions"] = s.open_questions;
  if (!p.contains("estimates")) p["estimates"] = Json::object();
  p["catalog_quark_version"] = out.flow == "onnx" ? cat.onnx()["quark_version"] : cat.torch()["quark_version"];
  p["quark_release"] = cat.release();
  // What was asked, so explain/validate can re-run the rules on it.
  p["request"] = request_to_json(user_req);
  out.plan = p;
  out.decision_table = decision_table(p);
  out.conflicts = s.conflicts;
  if (!s.conflicts.empty()) out.status = PlanStatus::kConflict;
  else if (s.draft || !req.confirmed) out.status = PlanStatus::kDraft;
  else out.status = PlanStatus::kConfirmed;
  auto errors = validate_against_schema(p, "schemas/quant_plan.schema.json");
  if (!errors.empty()) throw std::runtime_error("internal error: the plan does not match its schema: " + errors.front());
  return out;
}

}  // namespace quarkplan
