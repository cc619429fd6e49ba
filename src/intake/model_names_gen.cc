#include "intake/model_names_gen.h"

#include <algorithm>

namespace quarkplan {

namespace {

std::string_view last_part(std::string_view module) {
  auto p = module.rfind('.');
  return p == std::string_view::npos ? module : module.substr(p + 1);
}

}  // namespace

namespace {

// The two halves of the test: the module's last name part, and the whole name.
bool non_linear_last_part(std::string_view l) {
  // "embed" also covers word_embeddings, position_embedding, patch_embedding;
  // "ln" counts only as the whole part.
  if (l == "ln") return true;
  for (std::string_view k : {"norm", "ln_", "embed", "wte", "wpe", "rotary", "bias"})
    if (l.find(k) != std::string_view::npos) return true;
  return false;
}

bool embedding_path(std::string_view module) {
  return module.find("embed") != std::string_view::npos &&
         (module.find("embed_tokens") != std::string_view::npos || module.find("embeddings.") != std::string_view::npos);
}

}  // namespace

bool is_non_linear_module(std::string_view module) { return non_linear_last_part(last_part(module)) || embedding_path(module); }

namespace {

void add_expert_linears(std::vector<std::string>& out, const std::string& experts_module, const std::string& kind,
                        int64_t experts) {
  for (int64_t e = 0; e < experts; ++e) {
    std::string base = experts_module + "." + std::to_string(e) + ".";
    if (kind.find("gate_up") != std::string::npos) {
      out.push_back(base + "gate_proj");
      out.push_back(base + "up_proj");
    } else {
      out.push_back(base + kind);
    }
  }
}

}  // namespace

LinearModule config_module_shape(std::string_view name, const hf::Config& cfg) {
  const uint64_t H = static_cast<uint64_t>(cfg.hidden_size.value_or(0));
  const uint64_t heads = static_cast<uint64_t>(cfg.num_attention_heads.value_or(1));
  const uint64_t kvh = static_cast<uint64_t>(cfg.num_key_value_heads.value_or(static_cast<int64_t>(heads)));
  const uint64_t hd = static_cast<uint64_t>(cfg.head_dim.value_or(heads ? static_cast<int64_t>(H / heads) : 0));
  const uint64_t I = static_cast<uint64_t>(cfg.intermediate_size.value_or(static_cast<int64_t>(4 * H)));
  const bool expert = name.find("expert") != std::string::npos;
  const uint64_t Im = expert ? static_cast<uint64_t>(cfg.moe_intermediate_size.value_or(static_cast<int64_t>(I))) : I;
  const uint64_t Is = name.find("shared_expert") != std::string::npos
                          ? static_cast<uint64_t>(cfg.shared_expert_intermediate_size.value_or(static_cast<int64_t>(Im)))
                          : Im;
  const uint64_t V = static_cast<uint64_t>(cfg.vocab_size.value_or(0));
  const uint64_t E = static_cast<uint64_t>(cfg.num_experts.value_or(1));
  const uint64_t rope = static_cast<uint64_t>(cfg.qk_rope_head_dim.value_or(64));
  const uint64_t nope = static_cast<uint64_t>(cfg.qk_nope_head_dim.value_or(128));
  const uint64_t vd = static_cast<uint64_t>(cfg.v_head_dim.value_or(128));
  const uint64_t kvr = static_cast<uint64_t>(cfg.kv_lora_rank.value_or(512));
  const uint64_t qr = static_cast<uint64_t>(cfg.q_lora_rank.value_or(0));
  std::string_view l = last_part(name);
  auto m = [&](uint64_t out, uint64_t in) { return LinearModule{name, out * in, in}; };
  if (l == "lm_head" || l == "output_layer" || l == "head") return m(V, H);
  if (l == "q_a_proj") return m(qr, H);
  if (l == "q_b_proj") return m(heads * (nope + rope), qr);
  if (l == "kv_a_proj_with_mqa") return m(kvr + rope, H);
  if (l == "kv_b_proj") return m(heads * (nope + vd), kvr);
  if (l == "q_proj") return m(cfg.kv_lora_rank ? heads * (nope + rope) : heads * hd, H);
  if (l == "k_proj" || l == "v_proj") return m(kvh * hd, H);
  if (l == "o_proj" || l == "dense" || l == "out_proj" || (l == "c_proj" && name.find("attn") != std::string::npos))
    return m(H, cfg.kv_lora_rank ? heads * vd : heads * hd);
  if (l == "qkv_proj" || l == "query_key_value" || l == "c_attn" || l == "Wqkv") return m((heads + 2 * kvh) * hd, H);
  if (l == "gate_proj" || l == "up_proj" || l == "w1" || l == "w3" || l == "fc1" || l == "fc_in" || l == "dense_h_to_4h")
    return m(Is, H);
  if (l == "gate_up_proj") return m(2 * Is, H);
  if (l == "down_proj" || l == "w2" || l == "fc2" || l == "fc_out" || l == "dense_4h_to_h" || l == "c_proj") return m(H, Is);
  if (l == "gate" || l == "router" || l == "shared_expert_gate") return m(l == "shared_expert_gate" ? 1 : E, H);
  return m(H, H);
}

bool is_moe_layer(const hf::Config& cfg, int64_t i) {
  if (!cfg.num_experts) return false;
  if (std::find(cfg.mlp_only_layers.begin(), cfg.mlp_only_layers.end(), i) != cfg.mlp_only_layers.end()) return false;
  if (cfg.first_k_dense && i < *cfg.first_k_dense) return false;
  if (cfg.moe_layer_freq && *cfg.moe_layer_freq > 1) {
    // DeepSeek's moe_layer_freq counts from 0; Qwen's decoder_sparse_step and
    // Llama 4's interleave_moe_layer_step mark every step-th layer (1-based).
    return cfg.moe_step_one_based ? (i + 1) % *cfg.moe_layer_freq == 0 : i % *cfg.moe_layer_freq == 0;
  }
  return true;
}

std::vector<LinearModule> linear_modules_from_tensors(const std::vector<LinearTensor>& tensors, const hf::Config& cfg,
                                                      bool& fused, NameStore& made) {
  std::vector<LinearModule> out;
  out.reserve(tensors.size() / 2);
  fused = false;
  const int64_t experts = cfg.num_experts.value_or(0);
  // 45,000 names share a handful of last parts (gate_proj, up_proj, ...).
  std::vector<std::pair<std::string_view, bool>> last_parts;
  auto non_linear = [&](std::string_view module) {
    std::string_view l = last_part(module);
    auto it = std::find_if(last_parts.begin(), last_parts.end(), [&](const auto& p) { return p.first == l; });
    bool v = it != last_parts.end() ? it->second : non_linear_last_part(l);
    if (it == last_parts.end() && last_parts.size() < 64) last_parts.emplace_back(l, v);
    return v || embedding_path(module);
  };
  for (const auto& t : tensors) {
    std::string_view n = t.name;
    // Fused expert tensors: "...experts.gate_up_proj", "...experts.down_proj"
    // (3-D), gpt-oss MXFP4 "..._blocks"; counted per expert. ("experts." right
    // before the last part.)
    auto last_dot = n.rfind('.');
    size_t experts_pos = last_dot != std::string_view::npos && last_dot >= 7 && n.compare(last_dot - 7, 8, "experts.") == 0
                             ? last_dot - 7
                             : std::string_view::npos;
    if (experts_pos != std::string_view::npos) {
      std::string kind(n.substr(experts_pos + 8));
      bool blocks = kind.ends_with("_blocks");
      if (blocks) kind = kind.substr(0, kind.size() - 7);
      bool is_3d = t.shape_known && !blocks ? t.ndim == 3 : true;
      if (is_3d && (kind == "gate_up_proj" || kind == "down_proj" || kind == "up_proj" || kind == "gate_proj")) {
        int64_t e = t.shape_known && t.ndim >= 3 ? static_cast<int64_t>(t.dims[0]) : experts;
        std::string base(n.substr(0, experts_pos + 7));
        std::vector<std::string> names;
        add_expert_linears(names, base, kind, e);
        for (auto& nm : names) {
          made.push_back(std::move(nm));
          LinearModule lm = config_module_shape(made.back(), cfg);
          if (t.shape_known && t.ndim == 3 && !blocks) {
            // Hugging Face stores fused experts as [E, in, out] (x @ W).
            lm.params = t.dims[1] * t.dims[2] / (kind == "gate_up_proj" ? 2 : 1);
            lm.in_features = t.dims[1];
          }
          out.push_back(std::move(lm));
        }
        fused = true;
        continue;
      }
    }
    if (!n.ends_with(".weight")) continue;
    if (t.shape_known && t.ndim != 2) continue;  // norms (1-D), convolutions: not Linear
    std::string_view module = n.substr(0, n.size() - 7);
    if (non_linear(module)) continue;
    if (t.shape_known) out.push_back({module, t.dims[0] * t.dims[1], t.dims[1]});
    else out.push_back(config_module_shape(module, cfg));
  }
  return out;
}

static std::vector<std::string> config_module_names(const hf::Config& cfg, const Json* tmpl) {
  std::vector<std::string> out;
  const int64_t layers = cfg.num_hidden_layers.value_or(0);
  std::string root = tmpl ? (*tmpl)["decoder_root"].get<std::string>() : "model.layers";
  std::string attn = tmpl ? (*tmpl)["attention_module"].get<std::string>() : "self_attn";
  std::string mlp = tmpl && (*tmpl)["mlp_module"].is_string() ? (*tmpl)["mlp_module"].get<std::string>() : "mlp";
  std::string experts_mod = tmpl && (*tmpl)["experts_module"].is_string() ? (*tmpl)["experts_module"].get<std::string>() : mlp + ".experts";
  bool mixtral_style = experts_mod.find("block_sparse_moe") != std::string::npos;
  const Json* explicit_linears = tmpl && (*tmpl)["layer_linears"].is_array() ? &(*tmpl)["layer_linears"] : nullptr;
  for (int64_t i = 0; i < layers; ++i) {
    std::string L = root + "." + std::to_string(i) + ".";
    if (explicit_linears && !cfg.num_experts) {
      for (const auto& l : *explicit_linears) out.push_back(L + l.get<std::string>());
      continue;
    }
    if (cfg.kv_lora_rank) {  // MLA
      if (cfg.q_lora_rank) {
        out.push_back(L + attn + ".q_a_proj");
        out.push_back(L + attn + ".q_b_proj");
      } else {
        out.push_back(L + attn + ".q_proj");
      }
      out.push_back(L + attn + ".kv_a_proj_with_mqa");
      out.push_back(L + attn + ".kv_b_proj");
      out.push_back(L + attn + ".o_proj");
    } else {
      for (const char* p : {"q_proj", "k_proj", "v_proj", "o_proj"}) out.push_back(L + attn + "." + p);
    }
    if (is_moe_layer(cfg, i)) {
      std::string E = L + experts_mod;
      for (int64_t e = 0; e < *cfg.num_experts; ++e) {
        if (mixtral_style)
          for (const char* p : {"w1", "w2", "w3"}) out.push_back(E + "." + std::to_string(e) + "." + p);
        else
          for (const char* p : {"gate_proj", "up_proj", "down_proj"}) out.push_back(E + "." + std::to_string(e) + "." + p);
      }
      out.push_back(L + (mixtral_style ? "block_sparse_moe.gate" : mlp + (tmpl && (*tmpl)["model_type"] == "gpt_oss" ? ".router" : ".gate")));
      if (cfg.shared_experts && *cfg.shared_experts > 0) {
        bool qwen_style = cfg.shared_expert_intermediate_size.has_value();
        std::string S = L + mlp + (qwen_style ? ".shared_expert" : ".shared_experts");
        for (const char* p : {"gate_proj", "up_proj", "down_proj"}) out.push_back(S + "." + p);
        if (qwen_style) out.push_back(L + mlp + ".shared_expert_gate");
      }
    } else {
      for (const char* p : {"gate_proj", "up_proj", "down_proj"}) out.push_back(L + mlp + "." + p);
    }
  }
  std::string lm = tmpl ? (*tmpl)["lm_head"].get<std::string>() : "lm_head";
  out.push_back(lm);  // tied or not: transformers builds the head as a Linear
  return out;
}

std::vector<LinearModule> linear_modules_from_config(const hf::Config& cfg, const Json* tmpl, NameStore& made) {
  std::vector<LinearModule> out;
  for (auto& n : config_module_names(cfg, tmpl)) {
    made.push_back(std::move(n));
    out.push_back(config_module_shape(made.back(), cfg));
  }
  return out;
}

ParamEstimate estimate_params(const hf::Config& cfg, const Json& tc) {
  ParamEstimate e;
  const uint64_t H = static_cast<uint64_t>(cfg.hidden_size.value_or(0));
  const uint64_t L = static_cast<uint64_t>(cfg.num_hidden_layers.value_or(0));
  const uint64_t heads = static_cast<uint64_t>(cfg.num_attention_heads.value_or(0));
  const uint64_t kvh = static_cast<uint64_t>(cfg.num_key_value_heads.value_or(static_cast<int64_t>(heads)));
  const uint64_t hd = static_cast<uint64_t>(cfg.head_dim.value_or(heads ? static_cast<int64_t>(H / heads) : 0));
  const uint64_t I = static_cast<uint64_t>(cfg.intermediate_size.value_or(static_cast<int64_t>(4 * H)));
  const uint64_t V = static_cast<uint64_t>(cfg.vocab_size.value_or(0));
  bool gated = std::find(tc["non_gated_mlp_model_types"].begin(), tc["non_gated_mlp_model_types"].end(), cfg.model_type) ==
               tc["non_gated_mlp_model_types"].end();
  uint64_t attn;
  if (cfg.kv_lora_rank) {
    uint64_t rope = static_cast<uint64_t>(cfg.qk_rope_head_dim.value_or(64));
    uint64_t nope = static_cast<uint64_t>(cfg.qk_nope_head_dim.value_or(128));
    uint64_t vd = static_cast<uint64_t>(cfg.v_head_dim.value_or(128));
    uint64_t kvr = static_cast<uint64_t>(*cfg.kv_lora_rank);
    uint64_t q = cfg.q_lora_rank ? H * static_cast<uint64_t>(*cfg.q_lora_rank) + static_cast<uint64_t>(*cfg.q_lora_rank) * heads * (nope + rope)
                                 : H * heads * (nope + rope);
    attn = q + H * (kvr + rope) + kvr * heads * (nope + vd) + heads * vd * H;
  } else {
    attn = H * heads * hd + 2 * H * kvh * hd + heads * hd * H;
  }
  uint64_t dense_mlp = (gated ? 3 : 2) * H * I;
  uint64_t total = 0, linear = 0;
  for (uint64_t i = 0; i < L; ++i) {
    uint64_t layer = attn;
    if (is_moe_layer(cfg, static_cast<int64_t>(i))) {
      uint64_t Im = static_cast<uint64_t>(cfg.moe_intermediate_size.value_or(static_cast<int64_t>(I)));
      uint64_t E = static_cast<uint64_t>(*cfg.num_experts);
      uint64_t Is = static_cast<uint64_t>(cfg.shared_expert_intermediate_size.value_or(static_cast<int64_t>(Im)));
      uint64_t S = static_cast<uint64_t>(cfg.shared_experts.value_or(0));
      layer += E * 3 * H * Im + S * 3 * H * Is + H * E;
    } else {
      layer += dense_mlp;
    }
    linear += layer;
    total += layer + 2 * H;  // + the two norms
  }
  uint64_t embed = V * H;
  uint64_t head = cfg.tie_word_embeddings ? 0 : V * H;
  total += embed + head + H;
  linear += head;
  e.total = total;
  // Bytes at the stored dtype; FP8 checkpoints keep Linear weights at 1 byte.
  double bpe = cfg.dtype == "float32" ? 4 : (cfg.dtype == "float16" || cfg.dtype == "bfloat16" || cfg.dtype.empty()) ? 2 : 2;
  double linear_bpe = bpe;
  if (cfg.quant_method && (*cfg.quant_method == "fp8")) linear_bpe = 1;
  if (cfg.quant_method && (*cfg.quant_method == "mxfp4")) linear_bpe = 0.53;  // 4-bit + E8M0 per 32 (experts)
  e.bytes = static_cast<uint64_t>(static_cast<double>(linear) * linear_bpe + static_cast<double>(total - linear) * bpe);
  e.method = std::string("attention ") + (cfg.kv_lora_rank ? "MLA" : "GQA") + ", " + (gated ? "gated" : "plain") + " MLP" +
             (cfg.num_experts ? ", MoE experts" : "") + ", embeddings" + (cfg.tie_word_embeddings ? " tied" : " + lm_head") +
             "; language model only";
  return e;
}

}  // namespace quarkplan
