#include "plan/estimates.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "intake/module_names.h"
#include "plan/onnx_weights.h"

namespace quarkplan {

double scheme_bits(const Json& scheme, uint64_t in_features) {
  double bits = scheme["bits_per_weight"].get<double>();
  double row = scheme.value("per_row_scale_bits", 0.0);
  if (row > 0 && in_features > 0) bits += row / static_cast<double>(in_features);
  return bits;
}

namespace {

double dtype_bits(const std::string& dtype) {
  if (dtype == "float32") return 32;
  if (dtype.rfind("float8", 0) == 0) return 8;
  return 16;
}

}  // namespace

void add_estimates(PlanState& s) {
  const Json& m = s.analysis["model"];
  Json est = Json::object();
  const std::vector<std::string>& names = s.modules();
  const auto& shapes = s.module_shapes;
  const uint64_t total = m.value("total_params", uint64_t{0});
  const Json dtype = m.value("dtype", Json("bfloat16"));
  const double stored_bits = dtype_bits(dtype.is_string() ? dtype.get<std::string>() : "bfloat16");
  const double original_bytes = m["estimated_size_gb"].get<double>() * 1e9;
  uint64_t linear = 0;
  for (const auto& x : shapes) linear += x.first;
  const bool exact = m.value("params_method", "").rfind("exact", 0) == 0;
  std::string method = exact ? "per Linear module from safetensors shapes" : "per Linear module from config.json dimensions";

  Json weights = Json::array();
  weights.push_back({{"scheme", "original"},
                     {"bytes", static_cast<uint64_t>(original_bytes)},
                     {"bits_per_weight_effective", total ? std::round(original_bytes * 8 / static_cast<double>(total) * 1000) / 1000 : 0.0},
                     {"method", exact ? "exact from safetensors headers" : m.value("params_method", "estimated")}});
  // Schemes to estimate: the chosen one, then the guide's alternatives.
  std::vector<std::string> schemes;
  if (s.plan["global_scheme"].is_string()) schemes.push_back(s.plan["global_scheme"]);
  for (const auto& row : s.cat.torch()["decision_guide"])
    if (!schemes.empty() && row["scheme"] == schemes[0])
      for (const auto& a : row["alternatives"]) schemes.push_back(a);
  for (const char* fallback : {"fp8", "int4_wo_128", "mxfp4"})
    if (schemes.size() < 3 && !std::count(schemes.begin(), schemes.end(), fallback)) schemes.push_back(fallback);
  if (schemes.size() > 3) schemes.resize(3);

  const Json& excl = s.plan["exclude_layers"];
  const Json& overrides = s.plan["layer_quant_config"];
  std::vector<QuarkPattern> excl_patterns;
  for (const auto& p : excl) excl_patterns.emplace_back(p.get<std::string>());
  std::vector<std::pair<QuarkPattern, const Json*>> override_patterns;
  for (auto& [p, sch] : overrides.items()) override_patterns.emplace_back(QuarkPattern(p), s.cat.torch_scheme(sch));
  std::vector<char> excluded(names.size(), 0);
  std::vector<const Json*> override_scheme(names.size(), nullptr);
  for (size_t i = 0; i < names.size(); ++i) {
    for (const auto& p : excl_patterns)
      if (p.matches(names[i])) {
        excluded[i] = 1;
        break;
      }
    if (!excluded[i])
      for (const auto& [p, sch] : override_patterns)
        if (p.matches(names[i])) override_scheme[i] = sch;
  }
  double chosen_bytes = 0;
  for (size_t si = 0; si < schemes.size(); ++si) {
    const Json* sc = s.cat.torch_scheme(schemes[si]);
    if (!sc || names.empty() || total == 0) continue;
    double bits = static_cast<double>(total > linear ? total - linear : 0) * stored_bits;
    // Scheme properties read once, not per module.
    auto props = [](const Json* j) {
      return std::pair<double, double>{(*j)["bits_per_weight"].get<double>(), j->value("per_row_scale_bits", 0.0)};
    };
    auto [base, row] = props(sc);
    for (size_t i = 0; i < names.size(); ++i) {
      double p = static_cast<double>(shapes[i].first);
      if (excluded[i]) {
        bits += p * stored_bits;
        continue;
      }
      double b = base, r = row;
      if (si == 0 && override_scheme[i]) std::tie(b, r) = props(override_scheme[i]);
      bits += p * (b + (r > 0 && shapes[i].second ? r / static_cast<double>(shapes[i].second) : 0.0));
    }
    double bytes = bits / 8;
    if (si == 0) chosen_bytes = bytes;
    weights.push_back({{"scheme", schemes[si]},
                       {"bytes", static_cast<uint64_t>(bytes)},
                       {"bits_per_weight_effective", std::round(bits / static_cast<double>(total) * 1000) / 1000},
                       {"method", method + (si == 0 ? "; exclusions and overrides of this plan applied" : "; this plan's exclusions applied") +
                                      "; excluded and non-Linear tensors at " + std::to_string(static_cast<int>(stored_bits)) + " bits"}});
  }
  est["weights"] = weights;

  // KV cache.
  const Json& a = m.value("architecture", Json::object());
  int64_t layers = m["num_hidden_layers"].is_number() ? m["num_hidden_layers"].get<int64_t>() : 0;
  int64_t kv_layers = layers;
  if (a.contains("layer_types") && a["layer_types"].is_array() && !a["layer_types"].empty()) {
    kv_layers = 0;
    for (const auto& t : a["layer_types"])
      if (t == "full_attention" || t == "sliding_attention" || t == "attention") ++kv_layers;
  }
  bool fp8_kv = s.plan["kv_cache_scheme"].is_string();
  double elem = fp8_kv ? 1 : stored_bits / 8;
  uint64_t per_token = 0;
  std::string kv_method;
  if (a.contains("kv_lora_rank") && a["kv_lora_rank"].is_number()) {
    per_token = static_cast<uint64_t>(static_cast<double>(kv_layers) *
                                      static_cast<double>(a["kv_lora_rank"].get<int64_t>() + a.value("qk_rope_head_dim", Json(64)).get<int64_t>()) * elem);
    kv_method = "MLA latent cache: layers x (kv_lora_rank + qk_rope_head_dim)";
  } else if (a.contains("num_key_value_heads") && a["num_key_value_heads"].is_number() && a["head_dim"].is_number()) {
    per_token = static_cast<uint64_t>(2.0 * static_cast<double>(kv_layers) * static_cast<double>(a["num_key_value_heads"].get<int64_t>()) *
                                      static_cast<double>(a["head_dim"].get<int64_t>()) * elem);
    kv_method = "2 x layers x kv_heads x head_dim";
  }
  if (per_token) {
    uint64_t ctx = static_cast<uint64_t>(s.req.context), batch = static_cast<uint64_t>(s.req.batch);
    est["kv_cache"] = {{"dtype", fp8_kv ? "fp8" : (stored_bits == 32 ? "float32" : "bfloat16")},
                       {"bytes_per_token", per_token},
                       {"context_length", ctx},
                       {"batch", batch},
                       {"bytes", per_token * ctx * batch},
                       {"method", kv_method + (kv_layers != layers ? " (" + std::to_string(kv_layers) + " of " + std::to_string(layers) + " layers keep a KV cache)" : "")}};
  } else {
    est["kv_cache"] = nullptr;
  }

  // Fit: calibration loads the original model; deployment holds the quantized
  // weights plus the KV cache.
  if (s.accelerator && (*s.accelerator)["memory_gib"].is_number() && chosen_bytes > 0) {
    uint64_t mem = static_cast<uint64_t>((*s.accelerator)["memory_gib"].get<double>() * 1073741824.0);
    double factor = 1.1;
    std::string algo = s.plan["algorithm"].is_string() ? s.plan["algorithm"].get<std::string>() : "";
    for (const auto& al : s.cat.torch()["algorithms"])
      if (algo.find(al["name"].get<std::string>()) != std::string::npos) factor = std::max(factor, 1.0 + al["calibration_memory_factor"].get<double>() / 10);
    // File-to-file quantization streams one shard at a time: no full load.
    bool streamed = s.plan.value("device_strategy", "").find("file-to-file") != std::string::npos;
    uint64_t calib = streamed ? 0 : static_cast<uint64_t>(original_bytes * factor);
    uint64_t deploy = static_cast<uint64_t>(chosen_bytes) + (est["kv_cache"].is_object() ? est["kv_cache"]["bytes"].get<uint64_t>() : 0);
    uint64_t needed = std::max(calib, deploy);
    est["fit"] = {{"accelerator", (*s.accelerator)["name"]},
                  {"memory_bytes", mem},
                  {"needed_bytes", needed},
                  {"fits", needed <= mem},
                  {"calibration_bytes", calib},
                  {"deployment_bytes", deploy}};
    if (deploy > mem)
      s.risk("torch.device.strategy", "high",
             "The quantized model and its KV cache need " + std::to_string(deploy / 1000000000) + " GB; one " +
                 (*s.accelerator)["name"].get<std::string>() + " has " + std::to_string(mem / 1000000000) + " GB.",
             "Deploy on several accelerators (tensor parallel), pick a smaller scheme, or shorten the context (--context).");
    else if (calib > mem)
      s.risk("torch.device.strategy", "medium",
             "Calibration loads the original " + std::to_string(static_cast<uint64_t>(original_bytes / 1e9)) + " GB model, more than one " +
                 (*s.accelerator)["name"].get<std::string>() + " holds.",
             "Use --multi_gpu, fewer calibration samples, or --file2file_quantization for weight-only/dynamic schemes.");
  } else {
    est["fit"] = nullptr;
  }
  s.plan["estimates"] = est;
}

void add_onnx_estimates(PlanState& s) {
  const Json& m = s.analysis["model"];
  const Json& w = m["onnx_specific"]["weights"];
  double stored = static_cast<double>(m.value("file_size_bytes", uint64_t{0}) + m["onnx_specific"].value("external_data_bytes", uint64_t{0}));
  if (stored == 0) stored = m["estimated_size_gb"].get<double>() * 1e9;
  uint64_t total = w["total_params"].get<uint64_t>();
  uint64_t quantizable = w.value("quantizable_params", uint64_t{0});
  // Bits the quantizable weights take now (the model's float dtype).
  double now_bits = w["by_dtype"].contains("float32") ? 32 : w["by_dtype"].contains("float16") || w["by_dtype"].contains("bfloat16") ? 16 : 32;
  Json weights = Json::array();
  weights.push_back({{"scheme", "original"},
                     {"bytes", static_cast<uint64_t>(stored)},
                     {"bits_per_weight_effective", total ? std::round(stored * 8 / static_cast<double>(total) * 1000) / 1000 : 0.0},
                     {"method", "file size (+ external data)"}});
  std::vector<std::string> presets;
  if (s.plan["preset"].is_string()) presets.push_back(s.plan["preset"]);
  for (const auto& p : s.analysis["quantization_targets"]["onnx_specific"]["preset_candidates"])
    if (presets.size() < 3 && !std::count(presets.begin(), presets.end(), p.get<std::string>())) presets.push_back(p);
  bool subgraphs_on = s.plan["onnx_specific"]["extra_options"].value("EnableSubgraph", false) == true;
  for (const auto& name : presets) {
    const Json* p = s.cat.onnx_preset(name);
    if (!p || !(*p)["weight_bits"].is_number() || total == 0) continue;
    double bits = (*p)["weight_bits"].get<double>();
    // Only the weights the preset's op types quantize shrink; subgraph weights
    // only when Quark goes into the subgraphs.
    PresetWeights pw = preset_weights(s.analysis, s.cat, *p);
    uint64_t q = quantizable;
    std::string what = std::to_string(quantizable) + " Conv/Gemm/MatMul weights";
    if (pw.known) {
      bool into_subgraphs = pw.recurses_into_subgraphs || (name == s.plan["preset"] && subgraphs_on);
      q = pw.main_params + (into_subgraphs ? pw.sub_params : 0);
      what = std::to_string(q) + " weights of " + pw.label;
      if (pw.sub_params > 0 && !into_subgraphs) what += " (" + std::to_string(pw.sub_params) + " inside subgraphs stay float)";
    }
    double bytes = stored - static_cast<double>(q) * (now_bits - bits) / 8;
    if (bytes < 0) bytes = 0;
    weights.push_back({{"scheme", name},
                       {"bytes", static_cast<uint64_t>(bytes)},
                       {"bits_per_weight_effective", std::round(bytes * 8 / static_cast<double>(total) * 1000) / 1000},
                       {"quantized_params", q},
                       {"method", what + " at " + std::to_string(bits).substr(0, 4) + " bits; other tensors as stored"}});
  }
  s.plan["estimates"] = {{"weights", weights}, {"kv_cache", nullptr}, {"fit", nullptr}};
}

}  // namespace quarkplan
