// The config-driven parts of the Hugging Face analysis: config.json read,
// template support, remote code, pre-quantized checkpoints, the transformers
// version, modalities and hybrid layers, the loading class, and the facts written.
#include "intake/hf/config_facts.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <vector>

#include "catalog/catalog.h"
#include "common/error.h"
#include "common/files.h"
#include "common/strings.h"

namespace fs = std::filesystem;

namespace quarkplan::hf_detail {
namespace {

bool contains(const Json& arr, const std::string& v) {
  return std::find(arr.begin(), arr.end(), v) != arr.end();
}

}  // namespace

hf::Config read_config(const Catalog& cat, const fs::path& dir, const fs::path& cfg_path) {
  if (!fs::exists(cfg_path)) throw InputError(dir.string(), "no config.json: not a Hugging Face model folder");
  hf::Config cfg = hf::parse_config(read_small_file(cfg_path.string(), 16ull << 20), cfg_path.string());
  if (!cfg.tie_word_embeddings_stated) {
    const Json& tied = cat.torch()["tied_embeddings_by_default"];
    std::string text_type = cfg.text_model_type.empty() ? cfg.model_type : cfg.text_model_type;
    cfg.tie_word_embeddings = std::find(tied.begin(), tied.end(), text_type) != tied.end() ||
                              std::find(tied.begin(), tied.end(), cfg.model_type) != tied.end();
  }
  return cfg;
}

size_t add_template_risks(const Json& tc, const hf::Config& cfg, const Json* tmpl, Json& risks, std::vector<std::string>& partial) {
  const std::string& mt = cfg.model_type;
  size_t no_template_risk = SIZE_MAX;
  if (tc["unsupported_model_types"].contains(mt)) {
    partial.push_back("Quark cannot quantize model type '" + mt + "'");
    risks.push_back(make_risk("torch.intake.unsupported_model_type", "high",
                              tc["unsupported_model_types"][mt].get<std::string>() + ".",
                              "Use a supported variant of the model, or register your own template with LLMTemplate.register_template()."));
  } else if (!tmpl) {
    no_template_risk = risks.size();
    partial.push_back("no Quark template for model type '" + mt + "'");
    risks.push_back(make_risk("torch.intake.no_template", "high",
                              "Model type '" + mt + "' has no Quark LLM template: quantize_quark.py rejects it (ValueError listing the supported types).",
                              "Register a template with LLMTemplate.register_template(LLMTemplate(model_type='" + mt +
                                  "', kv_layers_name=[...], q_layer_name=[...], exclude_layers_name=['lm_head'])) and re-run intake, or pick a supported model."));
  }
  return no_template_risk;
}

bool add_remote_code_risks(const IntakeContext& ctx, const Json& tc, const hf::Config& cfg, Json& risks, std::vector<std::string>& partial) {
  const std::string& mt = cfg.model_type;
  bool native = contains(tc["transformers_native_model_types"], mt);
  bool needs_remote = cfg.has_auto_map && !native;
  if (needs_remote) {
    if (!ctx.trust_remote_code) partial.push_back("the model needs trust_remote_code, not approved");
    risks.push_back(make_risk("torch.intake.trust_remote_code", "high",
                              "config.json has an auto_map: loading the model runs Python code from the model repository (trust_remote_code=True)" +
                                  std::string(ctx.trust_remote_code ? "; approved with --trust-remote-code." : ", which is not approved."),
                              "Read the repository's modeling code, then approve with --trust-remote-code; otherwise the plan stays a draft and the command keeps --no_trust_remote_code."));
  } else if (cfg.has_auto_map) {
    risks.push_back(make_risk("torch.intake.auto_map_not_needed", "low",
                              "config.json has an auto_map, but transformers implements '" + mt + "' itself: remote code is not needed.",
                              "Keep --no_trust_remote_code (needs a transformers version that includes '" + mt + "')."));
  }
  return needs_remote;
}

void add_pre_quantized_risk(const Json& tc, const hf::Config& cfg, Json& risks) {
  if (cfg.quant_method) {
    const Json& rec = tc["pre_quantized_recovery"];
    std::string hint = rec.contains(*cfg.quant_method) ? rec[*cfg.quant_method].get<std::string>() : rec["*"].get<std::string>();
    risks.push_back(make_risk("torch.intake.pre_quantized", "high",
                              "The checkpoint is already quantized (quantization_config.quant_method = '" + *cfg.quant_method + "').",
                              hint));
  }
}


std::string transformers_requirement(const Json& tc, const Json* tmpl, const hf::Config& cfg, Json& risks) {
  const std::string& mt = cfg.model_type;
  std::string min_tf = tc["transformers_default_minimum"];
  if (tmpl && (*tmpl)["transformers_min"].is_string()) min_tf = (*tmpl)["transformers_min"];
  // The release of transformers that added the model type, where it is newer than the template says
  // (a transformers fact, not Quark's: catalog transformers_model_types).
  std::string since_source;
  if (const Json types = tc.value("transformers_model_types", Json::object()); types.contains(mt) && types[mt].is_object()) {
    const std::string since = types[mt].value("min", std::string());
    if (!since.empty() && version_numbers(since) > version_numbers(min_tf)) {
      min_tf = since;
      since_source = types[mt].value("source", std::string());
    }
  }
  const std::string upper = tc["transformers_upper_bound"].get<std::string>();
  std::string tf_req = ">=" + min_tf + "," + upper;
  // A minimum at or above the release's upper bound: this Quark cannot load the model at all.
  const bool beyond = upper.rfind("<", 0) == 0 && version_numbers(min_tf) >= version_numbers(upper.substr(1));
  const std::string needs = "Model type '" + mt + "' needs transformers >= " + min_tf + (since_source.empty() ? "" : " (" + since_source + ")") +
                            "; Quark's LLM PTQ supports transformers " + upper;
  if (beyond)
    risks.push_back(make_risk("torch.intake.transformers_version", "high", needs + ": this Quark release cannot load it.",
                              "Use a Quark release whose supported transformers reach " + min_tf + " (quarkplan plan --quark-version)."));
  else if ((tmpl && (*tmpl)["transformers_min"].is_string()) || !since_source.empty())
    risks.push_back(make_risk("torch.intake.transformers_version", "medium", needs + ".",
                              "pip install 'transformers" + tf_req + "' in the Quark environment (ask the router to record it in open_questions)."));
  if (!cfg.transformers_version.empty() && cfg.transformers_version.rfind("5.", 0) == 0) {
    int minor = std::atoi(cfg.transformers_version.c_str() + 2);
    if (minor >= 16)
      risks.push_back(make_risk("torch.intake.transformers_declared_newer", "medium",
                                "The checkpoint was saved with transformers " + cfg.transformers_version + ", newer than Quark's supported range.",
                                "Check the model loads with a transformers version inside " + tf_req + "."));
  }
  return tf_req;
}

void add_modality_and_hybrid_layer_risks(const hf::Config& cfg, Json& risks) {
  if (cfg.modalities.size() > 1)
    risks.push_back(make_risk("torch.intake.multimodal", "low",
                              "Multimodal model (" + std::to_string(cfg.modalities.size() - 1) + (cfg.modalities.size() == 2 ? " non-text tower" : " non-text towers") + "): only the language model is calibrated with text.",
                              "Keep the vision/audio towers excluded unless you calibrate them separately: not every template's defaults do (mllama's leave the vision model in), so quarkplan plan adds the towers they leave in (torch.exclude.template_defaults)."));
  // Only the mixers that replace attention count (Nemotron-H's MoE and MLP
  // layers are neither attention nor state-space).
  size_t linear_attention = 0, mamba = 0;
  for (const auto& lt : cfg.layer_types) {
    linear_attention += lt == "linear_attention";
    mamba += lt == "mamba";
  }
  if (linear_attention + mamba) {
    std::string what = linear_attention && mamba ? std::to_string(linear_attention) + " linear-attention and " + std::to_string(mamba) + " Mamba (state-space)"
                       : linear_attention        ? std::to_string(linear_attention) + " linear-attention"
                                                 : std::to_string(mamba) + " Mamba (state-space)";
    risks.push_back(make_risk("torch.intake.hybrid_layers", "low",
                              what + " layers of " + std::to_string(cfg.layer_types.size()) +
                                  " replace attention: they keep no KV cache and their projections are often excluded by the template.",
                              "Check exclude_defaults before overriding the exclusions."));
  }
}

std::string loading_class(const Json* tmpl, const hf::Config& cfg) {
  const std::string& mt = cfg.model_type;
  std::string loading = tmpl ? (*tmpl)["loading_class"].get<std::string>() : "AutoModelForCausalLM";
  if (!tmpl && !cfg.architectures.empty() && cfg.architectures[0].find("ForConditionalGeneration") != std::string::npos)
    loading = cfg.architectures[0];
  if (mt == "gpt_oss") loading = "AutoModelForCausalLM with Mxfp4Config(dequantize=True)";
  else if (cfg.quant_method == std::string("compressed-tensors")) loading += " (compressed-tensors loader)";
  return loading;
}

void write_model_facts(Json& m, const IntakeContext& ctx, const Json& tc, const hf::Config& cfg, const Json* tmpl, bool needs_remote,
                       const std::string& tf_req, const std::string& loading, bool is_moe, int64_t num_experts) {
  const std::string& mt = cfg.model_type;
  m["model_type"] = mt;
  m["trust_remote_code"] = needs_remote;
  m["trust_remote_code_approved"] = needs_remote && ctx.trust_remote_code;
  m["transformers_version_required"] = tf_req;
  m["transformers_version_declared"] = cfg.transformers_version.empty() ? Json(nullptr) : Json(cfg.transformers_version);
  m["loading_class"] = loading;
  m["architectures"] = cfg.architectures;
  m["is_moe"] = is_moe;
  m["num_experts"] = is_moe ? Json(num_experts) : Json(nullptr);
  m["num_hidden_layers"] = cfg.num_hidden_layers ? Json(*cfg.num_hidden_layers) : Json(nullptr);
  m["hidden_size"] = cfg.hidden_size ? Json(*cfg.hidden_size) : Json(nullptr);
  m["template_supported"] = tmpl != nullptr && !tc["unsupported_model_types"].contains(mt);
  m["pre_quantized"] = cfg.quant_method ? Json(*cfg.quant_method) : Json(nullptr);
  m["modalities"] = cfg.modalities;
  m["dtype"] = cfg.dtype.empty() ? Json(nullptr) : Json(cfg.dtype);
}

void write_config_architecture(Json& arch, const hf::Config& cfg) {
  auto opt = [](const std::optional<int64_t>& v) { return v ? Json(*v) : Json(nullptr); };
  arch["num_attention_heads"] = opt(cfg.num_attention_heads);
  arch["num_key_value_heads"] = opt(cfg.num_key_value_heads ? cfg.num_key_value_heads : cfg.num_attention_heads);
  // MLA (kv_lora_rank) heads are not hidden/heads wide: a query-key head is
  // qk_nope_head_dim + qk_rope_head_dim (DeepSeek-V3: 128 + 64, not 7168/128 =
  // 56), with the defaults the structure uses.
  const bool mla = cfg.kv_lora_rank && *cfg.kv_lora_rank > 0;
  arch["head_dim"] = opt(cfg.head_dim ? cfg.head_dim
                         : mla        ? std::optional<int64_t>(cfg.qk_nope_head_dim.value_or(128) + cfg.qk_rope_head_dim.value_or(64))
                                      : (cfg.hidden_size && cfg.num_attention_heads && *cfg.num_attention_heads > 0
                                             ? std::optional<int64_t>(*cfg.hidden_size / *cfg.num_attention_heads)
                                             : std::nullopt));
  arch["intermediate_size"] = opt(cfg.intermediate_size);
  arch["vocab_size"] = opt(cfg.vocab_size);
  arch["tie_word_embeddings"] = cfg.tie_word_embeddings;
  arch["num_experts_per_tok"] = opt(cfg.num_experts_per_tok);
  arch["moe_intermediate_size"] = opt(cfg.moe_intermediate_size);
  arch["shared_experts"] = opt(cfg.shared_experts);
  arch["first_k_dense_replace"] = opt(cfg.first_k_dense);
  arch["kv_lora_rank"] = opt(cfg.kv_lora_rank);
  arch["q_lora_rank"] = opt(cfg.q_lora_rank);
  arch["qk_rope_head_dim"] = opt(cfg.qk_rope_head_dim);
  arch["layer_types"] = cfg.layer_types;
  arch["max_position_embeddings"] = opt(cfg.max_position_embeddings);
}

}  // namespace quarkplan::hf_detail
