#include "intake/hf_config.h"

#include "common/error.h"

namespace quarkplan::hf {

namespace {

std::optional<int64_t> int_of(const Json& j, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    auto it = j.find(k);
    if (it != j.end() && it->is_number_integer()) return it->get<int64_t>();
    if (it != j.end() && it->is_number_float()) {
      double d = it->get<double>();  // converting an out-of-range double is undefined
      if (d >= -9.0e18 && d <= 9.0e18) return static_cast<int64_t>(d);
    }
  }
  return std::nullopt;
}

std::string str_of(const Json& j, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    auto it = j.find(k);
    if (it != j.end() && it->is_string()) return it->get<std::string>();
  }
  return "";
}

}  // namespace

Config parse_config(const std::string& text, const std::string& file) {
  Config c;
  c.raw = parse_json(text, file);
  const Json& top = c.raw;
  if (!top.is_object()) throw InputError(file, "config.json is not a JSON object");
  // Multimodal wrappers keep the language model's numbers in a sub-config.
  const Json* text_cfg = &top;
  for (const char* k : {"text_config", "llm_config", "language_config", "thinker_config"}) {
    auto it = top.find(k);
    if (it != top.end() && it->is_object()) {
      text_cfg = &*it;
      c.sources.push_back(std::string("language model numbers from ") + k);
      break;
    }
  }
  const Json& t = *text_cfg;
  if (top.contains("architectures") && top["architectures"].is_array())
    for (const auto& a : top["architectures"])
      if (a.is_string()) c.architectures.push_back(a);
  c.model_type = str_of(top, {"model_type"});
  if (c.model_type.empty() && !c.architectures.empty()) {
    c.model_type = c.architectures.front();
    c.sources.push_back("model_type from architectures[0]");
  }
  if (c.model_type.empty()) throw InputError(file, "config.json names no model_type and no architectures");
  if (text_cfg != &top) c.text_model_type = str_of(t, {"model_type"});

  auto num = [&](std::initializer_list<const char*> keys) {
    auto v = int_of(t, keys);
    return v ? v : (text_cfg != &top ? int_of(top, keys) : std::nullopt);
  };
  c.num_hidden_layers = num({"num_hidden_layers", "num_layers", "n_layer", "n_layers"});
  c.hidden_size = num({"hidden_size", "n_embd", "d_model", "dim"});
  c.intermediate_size = num({"intermediate_size", "ffn_hidden_size", "ffn_dim", "n_inner"});
  c.num_attention_heads = num({"num_attention_heads", "n_head", "num_heads"});
  c.num_key_value_heads = num({"num_key_value_heads", "multi_query_group_num", "num_kv_heads", "n_head_kv"});
  if (!c.num_key_value_heads && t.value("multi_query", false)) c.num_key_value_heads = 1;
  c.head_dim = num({"head_dim", "kv_channels"});
  if (!c.head_dim && c.hidden_size && c.num_attention_heads && *c.num_attention_heads > 0)
    c.head_dim = *c.hidden_size / *c.num_attention_heads;
  c.vocab_size = num({"vocab_size", "padded_vocab_size"});
  c.max_position_embeddings = num({"max_position_embeddings", "n_positions", "max_sequence_length", "seq_length", "n_ctx"});
  c.tie_word_embeddings = false;  // absent: assume an untied lm_head (the larger estimate)
  if (auto it = t.find("tie_word_embeddings"); it != t.end() && it->is_boolean()) {
    c.tie_word_embeddings = it->get<bool>();
    c.tie_word_embeddings_stated = true;
  } else if (auto it2 = top.find("tie_word_embeddings"); it2 != top.end() && it2->is_boolean()) {
    c.tie_word_embeddings = it2->get<bool>();
    c.tie_word_embeddings_stated = true;
  }

  c.num_experts = num({"num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"});
  if (c.num_experts && *c.num_experts <= 1) c.num_experts.reset();
  c.num_experts_per_tok = num({"num_experts_per_tok", "moe_topk", "top_k_experts"});
  c.moe_intermediate_size = num({"moe_intermediate_size", "expert_intermediate_size"});
  c.shared_experts = num({"n_shared_experts", "num_shared_experts"});
  c.shared_expert_intermediate_size = num({"shared_expert_intermediate_size"});
  if (!c.shared_experts && c.shared_expert_intermediate_size && *c.shared_expert_intermediate_size > 0) c.shared_experts = 1;
  c.first_k_dense = num({"first_k_dense_replace"});
  c.moe_layer_freq = num({"moe_layer_freq"});
  if (!c.moe_layer_freq) {
    c.moe_layer_freq = num({"decoder_sparse_step", "interleave_moe_layer_step"});
    c.moe_step_one_based = c.moe_layer_freq.has_value();
  }
  if (t.contains("mlp_only_layers") && t["mlp_only_layers"].is_array())
    for (const auto& v : t["mlp_only_layers"])
      if (v.is_number_integer()) c.mlp_only_layers.push_back(v.get<int64_t>());
  c.kv_lora_rank = num({"kv_lora_rank"});
  c.q_lora_rank = num({"q_lora_rank"});
  c.qk_rope_head_dim = num({"qk_rope_head_dim"});
  c.qk_nope_head_dim = num({"qk_nope_head_dim"});
  c.v_head_dim = num({"v_head_dim"});
  for (const char* k : {"layer_types", "layers_block_type"}) {
    auto it = t.find(k);
    if (it != t.end() && it->is_array()) {
      for (const auto& v : *it)
        if (v.is_string()) c.layer_types.push_back(v);
      break;
    }
  }
  if (c.layer_types.empty() && t.contains("hybrid_override_pattern") && t["hybrid_override_pattern"].is_string()) {
    // Nemotron-H: one character per layer, M = Mamba, * = attention, - / E = MLP/MoE.
    for (char ch : t["hybrid_override_pattern"].get<std::string>())
      c.layer_types.push_back(ch == '*' ? "full_attention" : ch == 'M' ? "mamba" : "mlp");
  }
  if (c.layer_types.empty() && c.num_hidden_layers) {
    // Qwen3-Next: every full_attention_interval-th layer is full attention,
    // the others linear attention (Gated DeltaNet).
    if (auto interval = int_of(t, {"full_attention_interval"}); interval && *interval > 0)
      for (int64_t i = 0; i < *c.num_hidden_layers; ++i)
        c.layer_types.push_back((i + 1) % *interval == 0 ? "full_attention" : "linear_attention");
  }
  c.dtype = str_of(t, {"torch_dtype", "dtype"});
  if (c.dtype.empty()) c.dtype = str_of(top, {"torch_dtype", "dtype"});
  c.transformers_version = str_of(top, {"transformers_version"});
  c.has_auto_map = top.contains("auto_map") && top["auto_map"].is_object() && !top["auto_map"].empty();
  for (const Json* q : {&top, &t}) {
    auto it = q->find("quantization_config");
    if (it != q->end() && it->is_object()) {
      c.quantization_config = *it;
      std::string m = str_of(*it, {"quant_method"});
      c.quant_method = m.empty() ? std::string("unknown") : m;
      break;
    }
  }
  c.modalities.push_back("text");
  for (const auto& [key, name] : std::initializer_list<std::pair<const char*, const char*>>{
           {"vision_config", "vision"}, {"audio_config", "audio"}, {"image_config", "image"}, {"video_config", "video"}})
    if (top.contains(key) && !top[key].is_null()) c.modalities.push_back(name);
  return c;
}

}  // namespace quarkplan::hf
