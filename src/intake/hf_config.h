// hf_config: the facts of a Hugging Face config.json that planning needs,
// normalised across families (num_layers/n_layer/num_hidden_layers, nested
// text_config/llm_config/language_config of multimodal wrappers, MoE and MLA
// keys) — never running any of the repository's code.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"

namespace quarkplan::hf {

struct Config {
  Json raw;                  // the whole config.json
  std::string text_key;      // "text_config" etc. when the language model is nested, else ""
  std::string file;          // config.json path, for errors
  // The language model's sub-config (the whole config when not nested).
  const Json& text() const { return text_key.empty() ? raw : raw[text_key]; }
  std::string model_type;    // top-level model_type, else architectures[0]
  std::string text_model_type;  // of the language sub-config, when nested
  std::vector<std::string> architectures;
  std::optional<int64_t> num_hidden_layers, hidden_size, intermediate_size, num_attention_heads,
      num_key_value_heads, head_dim, vocab_size;
  bool tie_word_embeddings = false;
  bool tie_word_embeddings_stated = false;  // false: the config class default applies
  // MoE
  std::optional<int64_t> num_experts, num_experts_per_tok, moe_intermediate_size, shared_experts,
      shared_expert_intermediate_size, first_k_dense, moe_layer_freq;
  bool moe_step_one_based = false;  // decoder_sparse_step / interleave_moe_layer_step
  std::vector<int64_t> mlp_only_layers;
  // MLA (DeepSeek-style latent attention)
  std::optional<int64_t> kv_lora_rank, q_lora_rank, qk_rope_head_dim, qk_nope_head_dim, v_head_dim;
  std::optional<int64_t> num_nextn_predict_layers, max_position_embeddings, sliding_window;
  // Hybrid models: per-layer kinds ("full_attention", "sliding_attention",
  // "linear_attention", "mamba", and for Nemotron-H's one-mixer layers "mlp", "moe")
  std::vector<std::string> layer_types;
  std::string dtype;          // torch_dtype / dtype of the text model ("bfloat16", ...)
  std::string transformers_version;
  bool has_auto_map = false;
  std::optional<std::string> quant_method;  // quantization_config.quant_method
  Json quantization_config;
  std::vector<std::string> modalities;      // "text" + vision/audio/image/video sub-configs
  std::vector<std::string> sources;         // where each fact came from, for the record
  // The key config.json used for each normalised count (e.g. "num_attention_heads"
  // -> "n_head" for GPT-J), so errors name the key the user wrote.
  std::map<std::string, std::string> key_of;
  // The MLP-width key config.json gives as null ("intermediate_size": null),
  // else "": whether null means a default depends on the family.
  std::string null_intermediate_key;
  const std::string& key_for(const std::string& canonical) const {
    auto it = key_of.find(canonical);
    return it == key_of.end() ? canonical : it->second;
  }
};

// Parses config.json text (file named for errors). Throws InputError when the
// text is not a JSON object, names no model type, or a value quarkplan uses has
// the wrong type (a string where a count belongs, a fractional layer count,
// layer_types that do not match the layer count). Ranges are checked by the
// structure step against catalog/architectures.json's limits.
Config parse_config(const std::string& text, const std::string& file);

}  // namespace quarkplan::hf
