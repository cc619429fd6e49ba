#include "plan/estimates.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <tuple>

#include "common/strings.h"
#include "common/units.h"
#include "intake/module_names.h"
#include "plan/onnx_weights.h"
#include "plan/serve_memory.h"

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

// A module of a multi-token-prediction layer: its role says so, or it sits in a decoder layer past
// the model's num_hidden_layers (DeepSeek-V3 stores its MTP layer as model.layers.61).
bool is_mtp_module(const std::string& name, const std::string& role, int64_t num_hidden_layers) {
  if (role == "mtp") return true;
  if (num_hidden_layers <= 0) return false;
  size_t at = name.find("layers.");
  if (at == std::string::npos || (at > 0 && name[at - 1] != '.')) return false;
  size_t digits = at + 7, end = digits;
  while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
  if (end == digits || end - digits > 6) return false;
  return std::stoll(name.substr(digits, end - digits)) >= num_hidden_layers;
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
  // The checkpoint as stored (exact bytes when intake had them).
  const uint64_t original_bytes = m.contains("size_bytes") && m["size_bytes"].is_number_unsigned()
                                      ? m["size_bytes"].get<uint64_t>()
                                      : static_cast<uint64_t>(m.value("estimated_size_gb", 0.0) * 1e9);
  // What the model takes once loaded: a pre-quantized source is dequantized
  // to 16-bit by Quark, so loading and calibration need the BF16 size.
  const bool pre_quantized = m.contains("pre_quantized") && m["pre_quantized"].is_string();
  const double float_bits = stored_bits >= 16 ? stored_bits : 16;
  const uint64_t loaded_bytes = pre_quantized ? static_cast<uint64_t>(static_cast<double>(total) * float_bits / 8) : original_bytes;
  uint64_t linear = 0;
  for (const auto& x : shapes) linear += x.first;
  // A tied lm_head's weight is the input embedding's, stored once: its
  // parameters are in `linear`, not a second time among the non-Linear ones.
  // Quantized, it no longer shares the embedding's storage (Quark saves the
  // quantized head -- packed weight and scales -- as its own tensors, and the
  // embedding is not quantized), so the embedding is counted again at float.
  // Assumed from Quark's export (it resolves tied parameters with accelerate's
  // find_tied_parameters); not verified against a quantized checkpoint.
  std::vector<char> tied(names.size(), 0);
  const Json* targets = s.analysis.contains("quantization_targets") ? &s.analysis["quantization_targets"] : nullptr;
  if (targets && targets->is_object() && targets->contains("tied_modules") && (*targets)["tied_modules"].is_array())
    for (const auto& t : (*targets)["tied_modules"])
      if (t.is_string())
        for (size_t i = 0; i < names.size(); ++i) tied[i] = tied[i] || names[i] == t.get<std::string>();
  const bool exact = m.value("params_method", "").rfind("exact", 0) == 0;
  std::string method = exact ? "per Linear module from safetensors shapes" : "per Linear module from config.json dimensions";

  Json weights = Json::array();
  weights.push_back({{"scheme", "original"},
                     {"bytes", original_bytes},
                     {"bits_per_weight_effective", total ? std::round(static_cast<double>(original_bytes) * 8 / static_cast<double>(total) * 1000) / 1000 : 0.0},
                     {"method", exact ? "exact from safetensors headers" : m.value("params_method", "estimated")}});
  // Schemes to estimate: the chosen one, then the plan's alternatives.
  std::vector<std::string> schemes;
  if (s.plan["global_scheme"].is_string()) schemes.push_back(s.plan["global_scheme"]);
  for (const auto& a : s.plan.value("alternatives", Json::array()))
    if (a.contains("scheme") && a["scheme"].is_string() && !std::count(schemes.begin(), schemes.end(), a["scheme"].get<std::string>()))
      schemes.push_back(a["scheme"]);
  for (const char* fallback : {"fp8", "int4_wo_128", "mxfp4"})
    if (schemes.size() < 3 && !std::count(schemes.begin(), schemes.end(), fallback)) schemes.push_back(fallback);
  if (schemes.size() > 4) schemes.resize(4);

  const Json& overrides = s.plan["layer_quant_config"];
  std::vector<std::pair<QuarkPattern, const Json*>> override_patterns;
  for (auto& [p, sch] : overrides.items()) override_patterns.emplace_back(QuarkPattern(p, PatternMatch::kVerbatim), s.cat.torch_scheme(sch));
  const std::vector<char>& excluded = s.excluded();
  std::vector<const Json*> override_scheme(names.size(), nullptr);
  if (!override_patterns.empty())
    for (size_t i = 0; i < names.size(); ++i)
      if (!excluded[i])
        for (const auto& [p, sch] : override_patterns)
          if (p.matches(names[i])) override_scheme[i] = sch;
  double chosen_bytes = 0, mtp_bytes = 0;
  const Json declared_layers = m.value("num_hidden_layers", Json(0));
  const int64_t num_layers = declared_layers.is_number_integer() ? declared_layers.get<int64_t>() : 0;
  for (size_t si = 0; si < schemes.size(); ++si) {
    const Json* sc = s.cat.torch_scheme(schemes[si]);
    if (!sc || names.empty() || total == 0) continue;
    // Non-Linear tensors and excluded modules stay at 16-bit (a dequantized
    // source is saved back at 16-bit, not at its packed format).
    double bits = static_cast<double>(total > linear ? total - linear : 0) * float_bits;
    auto props = [](const Json* j) {
      return std::pair<double, double>{(*j)["bits_per_weight"].get<double>(), j->value("per_row_scale_bits", 0.0)};
    };
    auto [base, row] = props(sc);
    double mtp = 0;  // bits of the multi-token-prediction layers, which serving loads only for speculative decoding
    for (size_t i = 0; i < names.size(); ++i) {
      double p = static_cast<double>(shapes[i].first);
      const double before = bits;
      if (excluded[i]) {
        bits += p * float_bits;
      } else {
        double b = base, r = row;
        if (si == 0 && override_scheme[i]) std::tie(b, r) = props(override_scheme[i]);
        bits += p * (b + (r > 0 && shapes[i].second ? r / static_cast<double>(shapes[i].second) : 0.0));
        if (tied[i]) bits += p * float_bits;  // the embedding it was tied to stays in float
      }
      if (is_mtp_module(names[i], i < s.module_roles.size() ? s.module_roles[i] : "", num_layers)) mtp += bits - before;
    }
    double bytes = bits / 8;
    if (si == 0) {
      chosen_bytes = bytes;
      mtp_bytes = mtp / 8;
    }
    weights.push_back({{"scheme", schemes[si]},
                       {"bytes", static_cast<uint64_t>(bytes)},
                       {"bits_per_weight_effective", std::round(bits / static_cast<double>(total) * 1000) / 1000},
                       {"method", method + (si == 0 ? "; exclusions and overrides of this plan applied" : "; this plan's exclusions applied") +
                                      "; excluded and non-Linear tensors at " + std::to_string(static_cast<int>(float_bits)) + " bits"}});
  }
  est["weights"] = weights;
  // KV cache: from the structure's facts (attention layers only; windowed
  // layers keep at most their window), else the plain GQA formula.
  const Json& a = m.value("architecture", Json::object());
  const uint64_t ctx = static_cast<uint64_t>(s.req.context), batch = static_cast<uint64_t>(s.req.batch);
  bool fp8_kv = s.plan["kv_cache_scheme"].is_string();
  double elem = fp8_kv ? 1 : (stored_bits >= 16 ? stored_bits / 8 : 2);
  uint64_t per_token_full = 0, per_token_window = 0, window = 0;
  std::string kv_method;
  if (a.contains("kv_cache") && a["kv_cache"].is_object()) {
    const Json& kv = a["kv_cache"];
    per_token_full = static_cast<uint64_t>(static_cast<double>(kv.value("elements_per_token_full", uint64_t{0})) * elem);
    per_token_window = static_cast<uint64_t>(static_cast<double>(kv.value("elements_per_token_sliding", uint64_t{0})) * elem);
    window = kv.value("sliding_window", uint64_t{0});
    std::string kind = kv.value("kind", "gqa");
    kv_method = (kind == "mla" ? "MLA latent cache (kv_lora_rank + qk_rope_head_dim per layer)" : "2 x kv_heads x head_dim per attention layer") +
                std::string(" over ") + std::to_string(kv.value("full_attention_layers", 0)) + " full-attention layers" +
                (per_token_window ? " + " + std::to_string(kv.value("sliding_window_layers", 0)) + " sliding-window layers (at most " + std::to_string(window) + " tokens)" : "");
  } else {
    int64_t layers = m["num_hidden_layers"].is_number() ? m["num_hidden_layers"].get<int64_t>() : 0;
    if (a.contains("num_key_value_heads") && a["num_key_value_heads"].is_number() && a.contains("head_dim") && a["head_dim"].is_number())
      per_token_full = static_cast<uint64_t>(2.0 * static_cast<double>(layers) * static_cast<double>(a["num_key_value_heads"].get<int64_t>()) *
                                             static_cast<double>(a["head_dim"].get<int64_t>()) * elem);
    kv_method = "2 x layers x kv_heads x head_dim";
  }
  uint64_t per_token = per_token_full + per_token_window;
  // Linear-attention and Mamba layers hold a fixed state per sequence (convolution inputs and the
  // recurrent state) in the model's dtype, or the SSM dtype the config fixes; an FP8 KV cache
  // does not shorten it (the runtimes keep it apart, vLLM's mamba_cache_dtype).
  uint64_t state_per_sequence = 0;
  if (a.contains("kv_cache") && a["kv_cache"].is_object() && a["kv_cache"].contains("recurrent_state") && a["kv_cache"]["recurrent_state"].is_object()) {
    const Json& rs = a["kv_cache"]["recurrent_state"];
    const double model_elem = stored_bits >= 16 ? stored_bits / 8 : 2;
    const std::string ssm_dtype = rs.value("ssm_dtype", Json(nullptr)).is_string() ? rs["ssm_dtype"].get<std::string>() : "";
    const double ssm_elem = ssm_dtype == "float32" ? 4 : (ssm_dtype == "bfloat16" || ssm_dtype == "float16") ? 2 : model_elem;
    state_per_sequence = static_cast<uint64_t>(static_cast<double>(rs.value("conv_elements_per_sequence", uint64_t{0})) * model_elem +
                                               static_cast<double>(rs.value("ssm_elements_per_sequence", uint64_t{0})) * ssm_elem);
    kv_method += " + a fixed state per sequence for " + std::to_string(rs.value("layers", 0)) + " linear-attention/Mamba layers (convolution inputs" +
                 (ssm_dtype.empty() ? " and recurrent state" : ", and the recurrent state in " + ssm_dtype) + ", not shortened by an FP8 KV cache)";
  }
  if (per_token || state_per_sequence) {
    uint64_t bytes = (per_token_full * ctx + per_token_window * std::min<uint64_t>(ctx, window ? window : ctx) + state_per_sequence) * batch;
    est["kv_cache"] = {{"dtype", fp8_kv ? "fp8" : (stored_bits == 32 ? "float32" : "bfloat16")},
                       {"bytes_per_token", per_token},
                       {"context_length", ctx},
                       {"batch", batch},
                       {"bytes", bytes},
                       {"method", kv_method}};
    if (state_per_sequence) est["kv_cache"]["state_bytes_per_sequence"] = state_per_sequence;
    // A context beyond what the model was trained for is the user's to know.
    int64_t maxpos = a.contains("max_position_embeddings") && a["max_position_embeddings"].is_number_integer() ? a["max_position_embeddings"].get<int64_t>() : 0;
    if (maxpos > 0 && s.req.context > maxpos)
      s.risk("torch.fit.accelerators", "medium",
             "The KV-cache estimate uses a context of " + std::to_string(s.req.context) + " tokens, beyond the model's max_position_embeddings (" +
                 std::to_string(maxpos) + ").",
             "Use --context " + std::to_string(maxpos) + " or less.");
  } else {
    est["kv_cache"] = nullptr;
  }

  // Fit: calibration loads the (dequantized) model plus the algorithm's
  // working set; deployment holds the quantized weights plus the KV cache.
  // Both are counted in accelerators (binary GiB, as the accelerators report).
  if (s.accelerator && (*s.accelerator)["memory_gib"].is_number() && chosen_bytes > 0) {
    const Json& dev = s.cat.torch()["device_facts"];
    double usable_fraction = dev.value("usable_memory_fraction", 0.9);
    uint64_t mem = static_cast<uint64_t>((*s.accelerator)["memory_gib"].get<double>() * static_cast<double>(kGiB));
    double usable = static_cast<double>(mem) * usable_fraction;
    double factor = 1.1;
    std::string algo = s.plan["algorithm"].is_string() ? s.plan["algorithm"].get<std::string>() : "";
    for (const auto& al : s.cat.torch()["algorithms"])
      if (algo.find(al["name"].get<std::string>()) != std::string::npos) factor = std::max(factor, 1.0 + al["calibration_memory_factor"].get<double>() / 10);
    uint64_t calib = static_cast<uint64_t>(static_cast<double>(loaded_bytes) * factor);
    uint64_t kvb = est["kv_cache"].is_object() ? est["kv_cache"]["bytes"].get<uint64_t>() : 0;
    // vLLM and SGLang load a DeepSeek-style MTP layer only for speculative decoding (its weights are skipped otherwise).
    uint64_t deploy = static_cast<uint64_t>(chosen_bytes - mtp_bytes) + kvb;
    auto count = [&](uint64_t need) { return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(static_cast<double>(need) / usable))); };
    int64_t calib_n = count(calib), deploy_n = count(deploy);
    // Serving, where the runtime's memory is known: each accelerator holds its share of the
    // weights, the runtime's reserve for activations and graphs, and the batch's KV cache (an MLA
    // cache whole on each).
    const double state_seq = static_cast<double>(state_per_sequence);
    const ServeMemory sm = serve_memory(s, chosen_bytes - mtp_bytes, batch ? static_cast<double>(kvb) / static_cast<double>(batch) - state_seq : 0.0, state_seq);
    uint64_t reserve = 0;
    if (sm.known) {
      deploy_n = sm.fewest_accelerators(static_cast<int64_t>(batch));
      reserve = static_cast<uint64_t>(sm.reserve(deploy_n, 1));
    }
    int64_t have = s.accelerator_count;
    std::string hw = (*s.accelerator)["name"];
    est["fit"] = {{"accelerator", hw},
                  {"memory_bytes", mem},
                  {"usable_fraction", usable_fraction},
                  {"accelerators_available", have > 0 ? Json(have) : Json(nullptr)},
                  {"needed_bytes", std::max(calib, deploy)},
                  {"fits", std::max(calib_n, deploy_n) <= std::max<int64_t>(have, 1)},
                  {"calibration_bytes", calib},
                  {"calibration_load_bytes", loaded_bytes},
                  {"calibration_accelerators", calib_n},
                  {"deployment_bytes", deploy},
                  {"deployment_reserve_bytes", reserve},
                  {"deployment_accelerators", deploy_n},
                  {"method", std::string("calibration: the ") + (pre_quantized ? "dequantized BF16 model" : "model as stored") + " x " +
                                 std::to_string(factor).substr(0, 4) + " (algorithm working set)" +
                                 (sm.known ? "; deployment (" + (*s.runtime).value("label", std::string("the runtime")) + "): " + sm.method
                                           : "; deployment: quantized weights + KV cache") +
                                 (mtp_bytes > 0 ? " (without the " + format_bytes(static_cast<uint64_t>(mtp_bytes)) + " of MTP layers, loaded only for speculative decoding)" : std::string()) + "; " +
                                 std::to_string(static_cast<int>(usable_fraction * 100)) + "% of each accelerator's memory usable for calibration"}};
    // Accelerators needed with a KV cache of `kv` bytes for the batch.
    auto fp8_kv_count = [&](uint64_t kv) -> int64_t {
      if (!sm.known) return count(static_cast<uint64_t>(chosen_bytes - mtp_bytes) + kv);
      ServeMemory smaller_kv = sm;
      smaller_kv.kv_sequence = batch ? static_cast<double>(kv) / static_cast<double>(batch) - state_seq : 0.0;
      return smaller_kv.fewest_accelerators(static_cast<int64_t>(batch));
    };
    const uint64_t attention_kv = kvb - std::min(kvb, state_per_sequence * batch);  // what an FP8 KV cache halves
    std::string each = format_bytes(mem);
    std::string avail = have > 0 ? std::to_string(have) + " available (" + s.accelerator_count_source + ")" : "count not given (--gpus N)";
    if (deploy_n > std::max<int64_t>(have, 1))
      s.risk("torch.fit.accelerators", deploy_n > 1 && have == 0 ? "medium" : "high",
             "Serving needs " + std::to_string(deploy_n) + " x " + hw + ": the quantized weights and KV cache take " + format_bytes(deploy) +
                 (reserve ? ", and the runtime keeps " + format_bytes(reserve) + " of each for activations and graphs" : std::string()) + " (" + each +
                 " each); " + avail + ".",
             // Where the KV cache is most of it, an FP8 KV cache is the first lever (half its bytes, no weight change).
             (!fp8_kv && attention_kv * 2 >= deploy ? (state_per_sequence ? "The attention layers' KV cache is " : "The KV cache is ") + format_bytes(attention_kv) + " of it: an FP8 KV cache (--kv-cache fp8) halves that, " +
                                                  std::to_string(fp8_kv_count(kvb - attention_kv / 2)) + " x " + hw + " then; or d"
                                           : std::string("D")) +
                 "eploy with tensor parallelism over at least " + std::to_string(deploy_n) +
                 " accelerators (the serve command's size: one the model's heads divide), pick a smaller scheme, or shorten the context (--context).");
    // With a known count, the device_strategy row judges it (it knows whether the shards can be streamed instead).
    if (calib_n > 1 && have == 0)
      s.risk("torch.fit.accelerators", "medium",
             "Calibration loads " + format_bytes(loaded_bytes) + (pre_quantized ? " (the source dequantized to BF16)" : "") + " plus working memory (" +
                 format_bytes(calib) + "): " + std::to_string(calib_n) + " x " + hw + " (" + each + " each); " + avail + ".",
             "The device_strategy row spreads it (--multi_gpu) or streams it (" + s.cat.file2file_flag_text() + " where the scheme allows).");
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
  // Alternatives are estimated as this plan would run them: with its
  // EnableSubgraph, or with the one the plan would set for them (every weight
  // they quantize inside subgraphs) unless the user turned it off.
  const Json& es = s.plan["onnx_specific"]["extra_options"].value("EnableSubgraph", Json(nullptr));
  bool subgraphs_on = es == Json(true), subgraphs_off = es == Json(false);
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
      bool into_subgraphs = pw.recurses_into_subgraphs || subgraphs_on || (!subgraphs_off && pw.only_in_subgraphs());
      q = pw.main_params + (into_subgraphs ? pw.sub_params : 0);
      what = std::to_string(q) + " weights of " + pw.label;
      if (pw.sub_params > 0 && !into_subgraphs) what += " (" + std::to_string(pw.sub_params) + " inside subgraphs stay float)";
    }
    double bytes = stored - static_cast<double>(q) * (now_bits - bits) / 8;
    // Node by node when the analysis has them: only the weights this plan
    // quantizes (its op types and exclusions applied), each from its stored
    // size, so FP16/BF16 weights beside FP32 ones shrink by what they hold.
    const Json& spec = s.plan["onnx_specific"];
    PlanWeights nw = plan_weights(s.analysis, s.cat, *p, spec.value("op_types_to_quantize", Json()), spec.value("nodes_to_exclude", Json()),
                                  subgraphs_on || (!subgraphs_off && pw.only_in_subgraphs()), spec.value("op_types_to_exclude", Json()));
    if (nw.known) {
      q = nw.params;
      bytes = stored - static_cast<double>(nw.stored_bytes) + static_cast<double>(nw.params) * bits / 8;
      what = std::to_string(nw.params) + " weights in " + std::to_string(nw.nodes) + (nw.nodes == 1 ? " node" : " nodes") + " of " + pw.label;
      std::vector<std::string> kept;
      if (nw.other_type_nodes) kept.push_back(std::to_string(nw.other_type_params) + " in " + std::to_string(nw.other_type_nodes) + " nodes outside op_types_to_quantize");
      if (nw.excluded_nodes) kept.push_back(std::to_string(nw.excluded_params) + " in " + std::to_string(nw.excluded_nodes) + " excluded nodes");
      if (pw.known && pw.sub_params > 0 && !(pw.recurses_into_subgraphs || subgraphs_on || (!subgraphs_off && pw.only_in_subgraphs())))
        kept.push_back(std::to_string(pw.sub_params) + " inside subgraphs");
      if (!kept.empty()) what += " (stay float: " + join(kept, ", ") + ")";
    }
    if (bytes < 0) bytes = 0;
    // The Q/DQ graph Quark adds: a QuantizeLinear/DequantizeLinear pair per activation tensor
    // (about every node but constants and the BatchNormalization it folds) with their scale and
    // zero-point initializers, ~240 bytes a node with their tensor names. Measured on Quark's
    // real exports (tests/quark_real: PP-OCR 220-290 bytes, 2.2 Q/DQ nodes per node); for a small
    // CNN it is a third of the file, for an LLM noise.
    const bool static_qdq = !(*p)["activation_type"].is_null() && !(*p).value("dynamic", false) && (*p).value("quant_format", "") != "MatMulNBits";
    double qdq_bytes = 0;
    if (static_qdq) {
      const Json& oc = s.analysis["quantization_targets"]["onnx_specific"]["op_counts"];
      uint64_t nodes = s.analysis["model"]["onnx_specific"].value("node_count", uint64_t{0});
      for (const char* folded : {"Constant", "BatchNormalization", "Identity"})
        if (oc.contains(folded) && oc[folded].is_number_unsigned()) nodes -= std::min(nodes, oc[folded].get<uint64_t>());
      const uint64_t qdq = 2 * nodes;
      qdq_bytes = static_cast<double>(qdq) * 240;
      bytes += qdq_bytes;
      what += " + ~" + std::to_string(qdq) + " Q/DQ nodes (about 240 bytes each)";
    }
    // BF16/FP16 and the block formats (BFP, MX) keep the float weights in the
    // file behind Quark's quantize-dequantize ops (catalog qdq_layout types,
    // keeps_float_weights): an accuracy simulation, not a smaller model.
    const Json& types = s.cat.onnx()["qdq_layout"]["types"];
    const std::string wtype = (*p)["weight_type"].is_string() ? (*p)["weight_type"].get<std::string>() : "";
    if (types.contains(wtype) && types[wtype].value("keeps_float_weights", false)) {
      bytes = stored + qdq_bytes;
      what += " quantize-dequantized in place: the file keeps them as stored (accuracy simulation, no smaller file)";
      weights.push_back({{"scheme", name},
                         {"bytes", static_cast<uint64_t>(bytes)},
                         {"bits_per_weight_effective", std::round(bytes * 8 / static_cast<double>(total) * 1000) / 1000},
                         {"quantized_params", q},
                         {"keeps_float_weights", true},
                         {"method", what + "; other tensors as stored"}});
      continue;
    }
    weights.push_back({{"scheme", name},
                       {"bytes", static_cast<uint64_t>(bytes)},
                       {"bits_per_weight_effective", std::round(bytes * 8 / static_cast<double>(total) * 1000) / 1000},
                       {"quantized_params", q},
                       {"method", what + " at " + std::to_string(bits).substr(0, 4) + " bits; other tensors as stored"}});
  }
  s.plan["estimates"] = {{"weights", weights}, {"kv_cache", nullptr}, {"fit", nullptr}};
}

}  // namespace quarkplan
