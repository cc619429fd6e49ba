// The family's stacks run layer by layer: which layers hold experts, each
// layer's tags, Nemotron-NAS per-layer blocks, the layer kinds and the KV cache.
#include "intake/structure/layers.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "common/error.h"
#include "intake/structure/config_values.h"

namespace quarkplan::structure_detail {
namespace {

// Whether decoder layer i holds routed experts: experts exist, the layer is not
// listed in mlp_only_layers, not among the first dense layers, and on the MoE
// step (DeepSeek's moe_layer_freq counts from 0; Qwen's decoder_sparse_step
// and Llama 4's interleave_moe_layer_step mark every step-th layer, 1-based).
bool moe_layer(const Ctx& c, int64_t i) {
  if (c.vars.at("E") <= 1) return false;
  const auto& only = c.cfg.mlp_only_layers;
  if (std::find(only.begin(), only.end(), i) != only.end()) return false;
  if (i < c.vars.at("first_dense")) return false;
  if (c.cfg.moe_layer_freq && *c.cfg.moe_layer_freq > 1)
    return c.cfg.moe_step_one_based ? (i + 1) % *c.cfg.moe_layer_freq == 0 : i % *c.cfg.moe_layer_freq == 0;
  return true;
}

// Per-layer tags of the decoder: attention kind, MLP kind, MTP.
std::vector<std::set<std::string>> decoder_tags(const Ctx& c, int64_t layers, const std::string& mode) {
  std::vector<std::set<std::string>> out(static_cast<size_t>(layers));
  const auto& lt = c.cfg.layer_types;
  std::set<int64_t> cross;
  if (c.family.contains("cross_attention_key"))
    if (const Json* v = lookup(c.cfg, c.family["cross_attention_key"].get<std::string>()); v && v->is_array()) {
      // Bounded by the layer count before anything is built from it.
      if (static_cast<int64_t>(v->size()) > c.vars.at("L"))
        throw InputError(c.file, "'" + c.family["cross_attention_key"].get<std::string>() + "' lists " + std::to_string(v->size()) +
                                     " layers but '" + c.cfg.key_for("num_hidden_layers") + "' is " + std::to_string(c.vars.at("L")));
      for (const auto& x : *v)
        if (x.is_number_integer()) cross.insert(x.get<int64_t>());
    }
  for (int64_t i = 0; i < layers; ++i) {
    auto& t = out[static_cast<size_t>(i)];
    std::string kind = i < static_cast<int64_t>(lt.size()) ? lt[static_cast<size_t>(i)] : "full_attention";
    if (mode == "pattern") {  // one mixer per layer (Nemotron-H)
      if (kind == "mamba") t.insert("mamba");
      else if (kind == "moe") t.insert("moe");
      else if (kind == "mlp") t.insert("dense");
      else t.insert("attention");
      continue;
    }
    if (cross.count(i)) t.insert("cross_attention");
    else if (kind == "linear_attention") t.insert("linear_attention");
    else if (kind == "mamba") t.insert("mamba");
    else {
      t.insert("attention");
      // Chunked attention (Llama 4) caches at most one chunk, like a window.
      t.insert(kind == "sliding_attention" || kind == "chunked_attention" ? "sliding" : "full");
      if (kind == "chunked_attention") t.insert("chunked");
    }
    t.insert(moe_layer(c, i) ? "moe" : "dense");
  }
  return out;
}

// Nemotron-NAS (DeciLM) layers differ one by one: block_configs gives each
// layer's attention (kv groups, no-op, linear replacement) and FFN multiplier.
// Code, because the FFN size is a rounded float formula of the NAS search.
void nas_layer(Ctx& c, const Json& block, std::set<std::string>& tags, int64_t i) {
  if (!block.is_object()) throw InputError(c.file, "block_configs[" + std::to_string(i) + "] must be an object");
  const Json& a = block.value("attention", Json::object());
  const Json& f = block.value("ffn", Json::object());
  if (a.value("no_op", false)) {
  } else if (a.value("replace_with_linear", false)) {
    tags.insert("attention_linear");
  } else {
    tags.insert("attention");
    tags.insert("full");
    const Json& g = a.contains("n_heads_in_group") ? a["n_heads_in_group"] : Json(nullptr);
    if (!g.is_number_integer() || g.get<int64_t>() < 1 || c.vars["heads"] % g.get<int64_t>() != 0)
      throw InputError(c.file, "block_configs[" + std::to_string(i) + "].attention.n_heads_in_group must divide num_attention_heads, not " + show(g));
    c.vars["kvh"] = c.vars["heads"] / g.get<int64_t>();
  }
  if (f.value("no_op", false)) {
  } else if (f.value("replace_with_linear", false)) {
    tags.insert("ffn_linear");
  } else {
    tags.insert("dense");
    const Json& m = f.contains("ffn_mult") ? f["ffn_mult"] : Json(nullptr);
    if (!m.is_number() || m.get<double>() <= 0 || m.get<double>() > 64)
      throw InputError(c.file, "block_configs[" + std::to_string(i) + "].ffn.ffn_mult must be a positive number, not " + show(m));
    // DeciLM's _ffn_mult_to_intermediate_size: int(2 * mult * H / 3) rounded up to 256.
    const double exact = 2.0 * m.get<double>() * static_cast<double>(c.vars["H"]) / 3.0;
    if (!(exact < 9.2e18))  // beyond int64: the cast would be undefined behaviour
      throw InputError(c.file, "block_configs[" + std::to_string(i) + "].ffn.ffn_mult gives an intermediate size beyond any real model");
    int64_t size = static_cast<int64_t>(exact);
    c.vars["I"] = (size + 255) / 256 * 256;
  }
}

// A linear-attention or Mamba layer's state per sequence, as the serving runtime allocates it
// (the family's recurrent_state: element counts over the layer's variables, and the config key
// that fixes the SSM state's dtype; vLLM's mamba_utils.py MambaStateShapeCalculator).
void add_recurrent_state(Ctx& c, const std::set<std::string>& tags) {
  const Json* rs = c.family.contains("recurrent_state") ? &c.family["recurrent_state"] : nullptr;
  if (!rs || !rs->is_object() || !tags.count((*rs).value("tag", std::string()))) return;
  KvFacts& kv = c.out->kv;
  const int64_t conv = eval_json((*rs)["conv"], c.vars, c.file), ssm = eval_json((*rs)["ssm"], c.vars, c.file);
  if (conv < 0 || ssm < 0) throw InputError(c.file, "a recurrent layer's state size from config.json is negative");
  ++kv.recurrent_layers;
  kv.state_conv_elements += static_cast<uint64_t>(conv);
  kv.state_ssm_elements += static_cast<uint64_t>(ssm);
  if (kv.state_ssm_dtype.empty()) {
    const Json* d = (*rs).contains("ssm_dtype_key") ? lookup(c.cfg, (*rs)["ssm_dtype_key"].get<std::string>()) : nullptr;
    kv.state_ssm_dtype = d && d->is_string() ? d->get<std::string>() : (*rs).value("ssm_dtype_default", std::string());
  }
}

}  // namespace

void run_stacks(Ctx& c) {
  for (const auto& g : c.family.value("globals", Json::array())) expand(c, g, "", {"global"}, Part::kLanguage, "");
  for (const auto& st : c.family.value("stacks", Json::array())) {
    if (st.contains("when") && eval_json(st["when"], c.vars, c.file) == 0) continue;
    Part part = part_of(st.value("part", std::string("language")));
    int64_t first = st.contains("first") ? eval_json(st["first"], c.vars, c.file) : 0;
    int64_t count = eval_json(st["count"], c.vars, c.file);
    if (count < 0) throw InputError(c.file, "a layer count in config.json is negative");
    std::string root = st["root"];
    std::string mode = !st.contains("layer_tags") ? "decoder" : st["layer_tags"].is_string() ? st["layer_tags"].get<std::string>() : "fixed";
    std::vector<std::set<std::string>> tags;
    if (mode == "decoder" || mode == "pattern") tags = decoder_tags(c, count, mode);
    else if (st["layer_tags"].is_array()) tags.assign(static_cast<size_t>(count), std::set<std::string>(st["layer_tags"].begin(), st["layer_tags"].end()));
    else tags.assign(static_cast<size_t>(count), std::set<std::string>{"layer"});
    const Json* blocks = nullptr;
    if (mode == "block_configs") {
      blocks = lookup(c.cfg, "block_configs");
      if (!blocks || !blocks->is_array() || static_cast<int64_t>(blocks->size()) != count)
        throw InputError(c.file, "block_configs must list one entry per layer (" + std::to_string(count) + ")");
    }
    Vars saved = c.vars;
    for (int64_t i = 0; i < count; ++i) {
      auto& t = tags[static_cast<size_t>(i)];
      if (blocks) {
        c.vars = saved;
        nas_layer(c, (*blocks)[static_cast<size_t>(i)], t, i);
      }
      if (part == Part::kLanguage && !c.count_only) {
        std::string k;
        for (const char* x : {"attention", "cross_attention", "linear_attention", "mamba", "attention_linear", "moe", "dense", "ffn_linear"})
          if (t.count(x)) k += (k.empty() ? "" : "+") + std::string(x);
        if (t.count("chunked")) k += "(chunked)";
        else if (t.count("sliding")) k += "(sliding)";
        c.out->layer_kinds.push_back(k.empty() ? "none" : k);
      }
      if (!c.count_only && part == Part::kLanguage && (t.count("attention") || t.count("cross_attention"))) {
        KvFacts& kv = c.out->kv;
        bool cross_layer = t.count("cross_attention") > 0;  // cross-attention caches the image tokens, not the text
        if (!cross_layer) {
          uint64_t elems = c.vars["kvr"] > 0 ? static_cast<uint64_t>(c.vars["kvr"] + c.vars["rope"])
                                               : static_cast<uint64_t>(2 * c.vars["kvh"] * c.vars["hd"]);
          kv.kind = c.vars["kvr"] > 0 ? "mla" : "gqa";
          bool sliding = t.count("sliding") && c.vars.count("window") && c.vars["window"] > 0;
          if (sliding) {
            ++kv.sliding_layers;
            kv.elements_sliding += elems;
            kv.sliding_window = c.vars["window"];
          } else {
            ++kv.full_layers;
            kv.elements_full += elems;
          }
        }
      }
      if (!c.count_only && part == Part::kLanguage) add_recurrent_state(c, t);
      std::string prefix = root + "." + std::to_string(first + i) + ".";
      for (const auto& item : st["items"]) expand(c, item, prefix, t, part, "");
    }
    if (blocks) c.vars = saved;
  }
}

}  // namespace quarkplan::structure_detail
