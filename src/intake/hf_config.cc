#include "intake/hf_config.h"

#include <set>

#include "common/error.h"

namespace quarkplan::hf {

namespace {

std::string shown(const Json& v) {
  std::string d = v.dump();
  return d.size() > 40 ? d.substr(0, 37) + "..." : d;
}

// A count from config.json: an integer (or an integral float, as some exporters
// write 4096.0), or null/absent. Anything else is an input error naming the key.
std::optional<int64_t> int_of(const Json& j, std::initializer_list<const char*> keys, const std::string& file,
                              std::string* found = nullptr) {
  for (const char* k : keys) {
    auto it = j.find(k);
    if (it == j.end() || it->is_null()) continue;
    if (found) *found = k;
    if (it->is_number_integer()) {
      if (it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
        throw InputError(file, std::string("'") + k + "' is out of range (" + shown(*it) + ")");
      return it->get<int64_t>();
    }
    if (it->is_number_float()) {
      double d = it->get<double>();
      // Range first: casting a double beyond int64 is undefined behaviour.
      if (d > -9.2e18 && d < 9.2e18 && d == static_cast<double>(static_cast<int64_t>(d))) return static_cast<int64_t>(d);
      throw InputError(file, std::string("'") + k + "' must be a whole number, not " + shown(*it));
    }
    throw InputError(file, std::string("'") + k + "' must be an integer, not " + shown(*it));
  }
  return std::nullopt;
}

// Per-layer lists and strings are bounded before anything is built from them:
// one entry per decoder layer, so never more than the layer count (checked
// exactly where it is known) and never more than this, far beyond any real
// model (the structure step then bounds the layer count by the catalog).
constexpr size_t kMaxLayerEntries = 65536;

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
  c.file = file;
  c.raw = parse_json(text, file);
  const Json& top = c.raw;
  if (!top.is_object()) throw InputError(file, "config.json is not a JSON object");
  // Every nested object quarkplan reads must be an object: a string, list or
  // number there would otherwise be skipped silently (a model of 0 parameters,
  // or an error about a key the file does not have).
  static const char* const kTextKeys[] = {"text_config", "llm_config", "language_config", "thinker_config"};
  auto check_objects = [&](const Json& j, const std::string& where) {
    for (const char* k : {"text_config", "llm_config", "language_config", "thinker_config", "vision_config", "audio_config", "image_config",
                          "video_config", "ffn_config", "attn_config", "rope_scaling", "rope_parameters", "quantization_config", "auto_map"}) {
      auto it = j.find(k);
      if (it != j.end() && !it->is_null() && !it->is_object())
        throw InputError(file, "'" + where + k + "' must be an object, not " + shown(*it));
    }
  };
  check_objects(top, "");
  // Multimodal wrappers keep the language model's numbers in a sub-config.
  const Json* text_cfg = &top;
  for (const char* k : kTextKeys) {
    auto it = top.find(k);
    // A null language-model config leaves transformers to build its default
    // model, not this checkpoint's: refused unless the sizes are at the top.
    if (it != top.end() && it->is_null() && !top.contains("num_hidden_layers") && !top.contains("hidden_size") &&
        !top.contains("num_layers") && !top.contains("n_layer"))
      throw InputError(file, std::string("'") + k + "' is null: it must be an object holding the language model's sizes (num_hidden_layers, hidden_size, ...)");
    if (it != top.end() && it->is_object()) {
      text_cfg = &*it;
      c.text_key = k;
      c.sources.push_back(std::string("language model numbers from ") + k);
      break;
    }
  }
  const Json& t = *text_cfg;
  if (text_cfg != &top) check_objects(t, c.text_key + ".");
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

  // A count under any of its names; the name found is kept for messages.
  // An explicit null is treated as absent (real configs write
  // "sliding_window": null, GPT-J "n_inner": null) except for the sizes every
  // architecture needs, where null is an input error naming the key.
  auto num = [&](std::initializer_list<const char*> keys) {
    std::string found;
    auto v = int_of(t, keys, file, &found);
    if (!v && text_cfg != &top) v = int_of(top, keys, file, &found);
    if (v) c.key_of[*keys.begin()] = found;
    return v;
  };
  for (const char* k : {"num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size", "num_local_experts", "num_experts",
                        "n_routed_experts", "moe_intermediate_size", "num_experts_per_tok", "moe_layer_freq", "decoder_sparse_step",
                        "interleave_moe_layer_step", "full_attention_interval", "max_position_embeddings"})
    if (auto it = t.find(k); it != t.end() && it->is_null())
      throw InputError(file, std::string("'") + k + "' is null: it must be a positive integer (or left out where the architecture allows)");
  // A count that must be positive where config.json gives it.
  auto positive = [&](const std::optional<int64_t>& v, const char* canonical, const char* why) {
    if (v && *v < 1)
      throw InputError(file, "'" + c.key_for(canonical) + "' is " + std::to_string(*v) + ": it must be a positive integer (" + why + ")");
  };
  c.num_hidden_layers = num({"num_hidden_layers", "num_layers", "n_layer", "n_layers"});
  c.hidden_size = num({"hidden_size", "n_embd", "d_model", "dim"});
  c.intermediate_size = num({"intermediate_size", "ffn_hidden_size", "ffn_dim", "n_inner"});
  if (!c.intermediate_size)
    for (const char* k : {"intermediate_size", "ffn_hidden_size", "ffn_dim", "n_inner"})
      if (auto it = t.find(k); it != t.end() && it->is_null()) {
        c.null_intermediate_key = k;
        break;
      }
  c.num_attention_heads = num({"num_attention_heads", "n_head", "n_heads", "num_heads"});
  c.num_key_value_heads = num({"num_key_value_heads", "multi_query_group_num", "num_kv_heads", "n_head_kv"});
  if (!c.num_key_value_heads && t.contains("multi_query") && t["multi_query"] == true) c.num_key_value_heads = 1;
  // DBRX keeps its KV heads in attn_config (kv_n_heads), as vLLM's DbrxAttention reads them.
  if (!c.num_key_value_heads)
    if (auto ac = t.find("attn_config"); ac != t.end() && ac->is_object())
      if (auto kv = ac->find("kv_n_heads"); kv != ac->end() && kv->is_number_integer() && kv->get<int64_t>() > 0) c.num_key_value_heads = kv->get<int64_t>();
  c.head_dim = num({"head_dim", "kv_channels"});
  positive(c.head_dim, "head_dim", "the size of one attention head");
  c.vocab_size = num({"vocab_size", "padded_vocab_size"});
  c.tie_word_embeddings = false;  // absent: assume an untied lm_head (the larger estimate)
  if (auto it = t.find("tie_word_embeddings"); it != t.end() && it->is_boolean()) {
    c.tie_word_embeddings = it->get<bool>();
    c.tie_word_embeddings_stated = true;
  } else if (auto it2 = top.find("tie_word_embeddings"); it2 != top.end() && it2->is_boolean()) {
    c.tie_word_embeddings = it2->get<bool>();
    c.tie_word_embeddings_stated = true;
  }

  c.num_experts = num({"num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"});
  // transformers builds a router with that many outputs: 0 or a negative
  // count cannot load. One expert is a dense model.
  positive(c.num_experts, "num_local_experts", "the number of routed experts; leave it out for a dense model");
  if (c.num_experts && *c.num_experts <= 1) c.num_experts.reset();
  c.num_experts_per_tok = num({"num_experts_per_tok", "moe_topk", "top_k_experts"});
  positive(c.num_experts_per_tok, "num_experts_per_tok", "the experts each token is routed to");
  c.moe_intermediate_size = num({"moe_intermediate_size", "expert_intermediate_size"});
  c.shared_experts = num({"n_shared_experts", "num_shared_experts"});
  c.shared_expert_intermediate_size = num({"shared_expert_intermediate_size"});
  if (!c.shared_experts && c.shared_expert_intermediate_size && *c.shared_expert_intermediate_size > 0) c.shared_experts = 1;
  c.first_k_dense = num({"first_k_dense_replace"});
  c.moe_layer_freq = num({"moe_layer_freq"});
  positive(c.moe_layer_freq, "moe_layer_freq", "transformers takes the layer index modulo it");
  if (!c.moe_layer_freq) {
    c.moe_layer_freq = num({"decoder_sparse_step", "interleave_moe_layer_step"});
    c.moe_step_one_based = c.moe_layer_freq.has_value();
    positive(c.moe_layer_freq, "decoder_sparse_step", "every n-th layer holds the experts");
  }
  // `key` holds `n` per-layer entries: refused before they are copied when
  // they are more than the model's layers (`exact`: one per layer).
  auto check_layer_entries = [&](const char* key, size_t n, bool exact) {
    const std::string what = std::string("'") + key + "' gives " + std::to_string(n) + (n == 1 ? " layer" : " layers");
    if (n > kMaxLayerEntries)
      throw InputError(file, what + ", more than the " + std::to_string(kMaxLayerEntries) + " any model could have");
    if (c.num_hidden_layers && (exact ? static_cast<int64_t>(n) != *c.num_hidden_layers : static_cast<int64_t>(n) > *c.num_hidden_layers))
      throw InputError(file, what + " but '" + c.key_for("num_hidden_layers") + "' is " + std::to_string(*c.num_hidden_layers));
  };
  if (t.contains("mlp_only_layers") && t["mlp_only_layers"].is_array()) check_layer_entries("mlp_only_layers", t["mlp_only_layers"].size(), false);
  if (t.contains("mlp_only_layers") && !t["mlp_only_layers"].is_null()) {
    if (!t["mlp_only_layers"].is_array()) throw InputError(file, "'mlp_only_layers' must be a list of layer indices");
    for (const auto& v : t["mlp_only_layers"]) {
      if (!v.is_number_integer()) throw InputError(file, "'mlp_only_layers' must list integers, not " + shown(v));
      c.mlp_only_layers.push_back(v.get<int64_t>());
    }
  }
  c.num_nextn_predict_layers = num({"num_nextn_predict_layers", "mtp_num_hidden_layers"});
  c.max_position_embeddings = num({"max_position_embeddings", "max_seq_len", "seq_length", "n_positions", "max_sequence_length"});
  positive(c.max_position_embeddings, "max_position_embeddings", "the longest context the model takes");
  if (c.max_position_embeddings && *c.max_position_embeddings > (int64_t{1} << 24))
    throw InputError(file, "'" + c.key_for("max_position_embeddings") + "' is " + std::to_string(*c.max_position_embeddings) +
                               ", beyond any real model (the longest real context is about 10 million tokens, Llama-4 Scout)");
  c.sliding_window = num({"sliding_window"});
  if (c.sliding_window && *c.sliding_window < 1) c.sliding_window.reset();  // 0 or negative: no window (as transformers reads it)
  c.kv_lora_rank = num({"kv_lora_rank"});
  c.q_lora_rank = num({"q_lora_rank"});
  c.qk_rope_head_dim = num({"qk_rope_head_dim"});
  c.qk_nope_head_dim = num({"qk_nope_head_dim"});
  c.v_head_dim = num({"v_head_dim"});
  for (const char* k : {"layer_types", "layers_block_type"}) {
    auto it = t.find(k);
    if (it == t.end() || it->is_null()) continue;
    if (!it->is_array()) throw InputError(file, std::string("'") + k + "' must be a list of layer kinds");
    if (!it->empty()) check_layer_entries(k, it->size(), true);
    c.layer_types.reserve(it->size());
    for (const auto& v : *it) {
      if (!v.is_string()) throw InputError(file, std::string("'") + k + "' must list strings, not " + shown(v));
      c.layer_types.push_back(v);
    }
    break;
  }
  // Layer kinds transformers knows; anything else is a typo or a newer
  // architecture quarkplan would silently size as full attention.
  static const std::set<std::string> kinds = {"full_attention", "sliding_attention", "chunked_attention", "linear_attention",
                                              "attention", "mamba", "moe", "mlp"};
  for (const auto& k : c.layer_types)
    if (!kinds.count(k)) throw InputError(file, "'layer_types' has an unknown layer kind '" + k + "' (full_attention, sliding_attention, linear_attention, ...)");
  if (c.layer_types.empty() && t.contains("hybrid_override_pattern") && !t["hybrid_override_pattern"].is_null()) {
    if (!t["hybrid_override_pattern"].is_string()) throw InputError(file, "'hybrid_override_pattern' must be a string such as \"M-M*-\"");
    const std::string& pattern = t["hybrid_override_pattern"].get_ref<const std::string&>();
    if (pattern.empty()) throw InputError(file, "'hybrid_override_pattern' is empty: it must give one character per layer");
    check_layer_entries("hybrid_override_pattern", pattern.size(), true);
    // Nemotron-H: one character per layer, M = Mamba, * = attention, - = MLP, E = MoE.
    for (char ch : pattern) {
      if (ch != '*' && ch != 'M' && ch != '-' && ch != 'E')
        throw InputError(file, std::string("'hybrid_override_pattern' has an unknown layer kind '") + ch + "' (M, *, - or E)");
      c.layer_types.push_back(ch == '*' ? "full_attention" : ch == 'M' ? "mamba" : ch == 'E' ? "moe" : "mlp");
    }
  }
  const char* types_key = t.contains("layer_types") ? "layer_types" : t.contains("layers_block_type") ? "layers_block_type" : "hybrid_override_pattern";
  if (!c.layer_types.empty() && c.num_hidden_layers && static_cast<int64_t>(c.layer_types.size()) != *c.num_hidden_layers)
    throw InputError(file, std::string("'") + types_key + "' gives " + std::to_string(c.layer_types.size()) +
                               (c.layer_types.size() == 1 ? " layer" : " layers") + " but '" + c.key_for("num_hidden_layers") + "' is " +
                               std::to_string(*c.num_hidden_layers));
  // Llama 4: layers with RoPE use chunked attention (attention_chunk_size
  // tokens), every fourth layer (NoPE) attends to everything; the chunked
  // layers cache at most one chunk, like a sliding window.
  if (c.layer_types.empty() && c.num_hidden_layers && *c.num_hidden_layers > 0 && *c.num_hidden_layers <= 100000) {
    auto chunk = int_of(t, {"attention_chunk_size"}, file);
    if (chunk && *chunk < 1) throw InputError(file, "'attention_chunk_size' is " + std::to_string(*chunk) + ": it must be a positive integer");
    if (chunk) {
      if (t.contains("no_rope_layers") && !t["no_rope_layers"].is_null() && !t["no_rope_layers"].is_array())
        throw InputError(file, "'no_rope_layers' must be a list of 0/1 per layer, not " + shown(t["no_rope_layers"]));
      const Json* no_rope = t.contains("no_rope_layers") && t["no_rope_layers"].is_array() && !t["no_rope_layers"].empty() ? &t["no_rope_layers"] : nullptr;
      if (no_rope && static_cast<int64_t>(no_rope->size()) != *c.num_hidden_layers)
        throw InputError(file, "'no_rope_layers' gives " + std::to_string(no_rope->size()) + " layers but '" + c.key_for("num_hidden_layers") +
                                   "' is " + std::to_string(*c.num_hidden_layers));
      for (int64_t i = 0; i < *c.num_hidden_layers; ++i) {
        bool rope = no_rope ? (*no_rope)[static_cast<size_t>(i)] != 0 : (i + 1) % 4 != 0;
        c.layer_types.push_back(rope ? "chunked_attention" : "full_attention");
      }
      if (!c.sliding_window) c.sliding_window = chunk;
      c.sources.push_back("chunked attention layers from attention_chunk_size and no_rope_layers");
    }
  }
  if (c.layer_types.empty() && c.num_hidden_layers) {
    // Qwen3-Next: every full_attention_interval-th layer is full attention,
    // the others linear attention (Gated DeltaNet).
    auto interval = int_of(t, {"full_attention_interval"}, file);
    if (interval && *interval < 1)
      throw InputError(file, "'full_attention_interval' is " + std::to_string(*interval) + ": it must be a positive integer (every n-th layer is full attention)");
    if (interval && *interval > 0 && *c.num_hidden_layers > 0 && *c.num_hidden_layers <= 100000)
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
