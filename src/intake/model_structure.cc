// The model structure's entry points: build_structure (config values checked
// against the catalog's limits, then the two passes over the family's stacks),
// the family lookup, and module names classified and renamed (structure/*).
#include "intake/model_structure.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.h"
#include "intake/structure/config_values.h"
#include "intake/structure/expand.h"
#include "intake/structure/layers.h"

namespace quarkplan {

using namespace structure_detail;

const char* part_name(Part p) {
  switch (p) {
    case Part::kLanguage: return "language";
    case Part::kMtp: return "mtp";
    case Part::kVision: return "vision";
    case Part::kAudio: return "audio";
    case Part::kProjector: return "projector";
  }
  return "language";
}

namespace {

// A config value as an integer: integers, integral floats, booleans (0/1), or
// the length of a list ("count" conversion). Other types are input errors.
std::optional<int64_t> config_int(const hf::Config& cfg, const std::string& path, const std::string& conv) {
  const Json* v = lookup(cfg, path);
  if (!v) return std::nullopt;
  std::string key = path[0] == '/' ? path.substr(1) : path;
  if (conv == "count") {
    if (!v->is_array()) throw InputError(cfg.file, "'" + key + "' must be a list, not " + show(*v));
    return static_cast<int64_t>(v->size());
  }
  if (v->is_boolean()) return v->get<bool>() ? 1 : 0;
  if (v->is_number_integer()) {
    if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      throw InputError(cfg.file, "'" + key + "' is out of range (" + show(*v) + ")");
    return v->get<int64_t>();
  }
  if (v->is_number_float()) {
    double d = v->get<double>();
    if (conv == "percent") return static_cast<int64_t>(d * 100.0 + 0.5);
    // Range first: casting a double beyond int64 is undefined behaviour.
    if (d > -9.2e18 && d < 9.2e18 && d == static_cast<double>(static_cast<int64_t>(d))) return static_cast<int64_t>(d);
    throw InputError(cfg.file, "'" + key + "' must be a whole number, not " + show(*v));
  }
  if (v->is_object() && conv == "present") return 1;
  throw InputError(cfg.file, "'" + key + "' must be a number, not " + show(*v));
}

// Checks one variable against the catalog's limits (derived from the largest
// real models, with headroom).
// `cite`: the limit describes this very quantity, so its largest real value
// is worth quoting (a Mamba state size borrowing the head-dimension range is not).
void check_limit(const Json& limits, const std::string& var, int64_t value, const std::string& key, const std::string& file,
                 bool cite = true) {
  auto it = limits.find(var);
  if (it == limits.end()) return;
  int64_t lo = it->value("min", int64_t{0}), hi = (*it)["max"].get<int64_t>();
  if (value < lo || value > hi) {
    std::string what = key.empty() ? var : "'" + (key[0] == '/' ? key.substr(1) : key) + "'";
    throw InputError(file, what + " is " + std::to_string(value) + ", outside the sane range " + std::to_string(lo) + ".." +
                               std::to_string(hi) + (cite ? " (the largest real model has " + (*it)["largest_real"].get<std::string>() + ")" : std::string()));
  }
}

// The variables every family shares, from the normalised config.
Vars generic_vars(const hf::Config& cfg) {
  Vars v;
  auto put = [&](const char* n, const std::optional<int64_t>& x, int64_t def) { v[n] = x.value_or(def); };
  put("L", cfg.num_hidden_layers, 0);
  put("H", cfg.hidden_size, 0);
  put("V", cfg.vocab_size, 0);
  put("heads", cfg.num_attention_heads, 0);
  put("kvh", cfg.num_key_value_heads, v["heads"]);
  // Saturating: a hostile hidden_size must reach check_limit, not overflow here.
  put("I", cfg.intermediate_size, v["H"] > INT64_MAX / 4 ? INT64_MAX : 4 * v["H"]);
  put("E", cfg.num_experts, 0);
  put("topk", cfg.num_experts_per_tok, 0);
  put("Im", cfg.moe_intermediate_size, v["I"]);
  put("S", cfg.shared_experts, 0);
  put("Is", cfg.shared_expert_intermediate_size, v["Im"] * std::max<int64_t>(v["S"], 1));
  put("kvr", cfg.kv_lora_rank, 0);
  put("qr", cfg.q_lora_rank, 0);
  put("rope", cfg.qk_rope_head_dim, 64);
  put("nope", cfg.qk_nope_head_dim, 128);
  put("vd", cfg.v_head_dim, 128);
  put("nextn", cfg.num_nextn_predict_layers, 0);
  put("first_dense", cfg.first_k_dense, 0);
  v["tied"] = cfg.tie_word_embeddings ? 1 : 0;
  v["hd"] = cfg.head_dim.value_or(0);
  // Switches families turn on: biases, a stored lm_head although tied.
  for (const char* k : {"qkv_bias", "o_bias", "mlp_bias", "ln_bias", "lm_bias", "head_stored"}) v[k] = 0;
  return v;
}

// Which generic variable comes from which config keys (for error messages and limits).
// In checking order: counts before the sizes derived from them (a shared-expert
// size defaults to experts x expert size, so the expert count is checked first).
// The key is the first name hf_config looks up (Config::key_for gives the one used).
const std::vector<std::pair<std::string, std::string>>& generic_keys() {
  static const std::vector<std::pair<std::string, std::string>> k = {
      {"L", "num_hidden_layers"}, {"H", "hidden_size"}, {"V", "vocab_size"}, {"heads", "num_attention_heads"},
      {"kvh", "num_key_value_heads"}, {"I", "intermediate_size"}, {"E", "num_local_experts"}, {"topk", "num_experts_per_tok"},
      {"S", "n_shared_experts"}, {"Im", "moe_intermediate_size"}, {"Is", "shared_expert_intermediate_size"}, {"kvr", "kv_lora_rank"},
      {"qr", "q_lora_rank"}, {"rope", "qk_rope_head_dim"}, {"nope", "qk_nope_head_dim"}, {"vd", "v_head_dim"}, {"hd", "head_dim"},
      {"nextn", "num_nextn_predict_layers"}, {"first_dense", "first_k_dense_replace"}};
  return k;
}

}  // namespace

std::string shape_name(std::string_view module) {
  std::string out;
  out.reserve(module.size());
  size_t i = 0;
  while (i < module.size()) {
    size_t j = module.find('.', i);
    if (j == std::string_view::npos) j = module.size();
    std::string_view part = module.substr(i, j - i);
    bool digits = !part.empty() && std::all_of(part.begin(), part.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    out += digits ? std::string_view("#") : part;
    if (j < module.size()) out += '.';
    i = j + 1;
  }
  return out;
}

std::pair<std::string, Part> ModelStructure::classify(std::string_view module) const {
  std::string sn = shape_name(module);
  auto it = role_by_shape_name.find(sn);
  if (it == role_by_shape_name.end()) return {"", Part::kLanguage};
  auto pt = part_by_shape_name.find(sn);
  return {it->second, pt == part_by_shape_name.end() ? Part::kLanguage : pt->second};
}

std::string ModelStructure::loaded_name(std::string_view name) const {
  for (const auto& [from, to] : checkpoint_renames)
    if (name.substr(0, from.size()) == from) return to + std::string(name.substr(from.size()));
  return std::string(name);
}

const Json* architecture_family(const Json& cat, const hf::Config& cfg) {
  for (const std::string& mt : {cfg.model_type, cfg.text_model_type}) {
    if (mt.empty()) continue;
    for (const auto& f : cat["families"])
      for (const auto& t : f["model_types"])
        if (t == mt) return &f;
  }
  return nullptr;
}

ModelStructure build_structure(const hf::Config& cfg, const Json& family, const Json& cat, const std::string& file) {
  ModelStructure ms;
  ms.family = family["family"];
  if (family.contains("experts_not_linear")) ms.experts_not_linear = family["experts_not_linear"].value("module", std::string());
  Ctx c{cfg, family, cat, file, generic_vars(cfg)};
  const bool head_dim_given = cfg.head_dim.has_value() && *cfg.head_dim > 0;
  auto default_head_dim = [&] {
    if (head_dim_given || family.value("vars", Json::object()).contains("hd") || c.vars["heads"] <= 0) return;
    if (c.vars["H"] % c.vars["heads"] != 0)
      throw InputError(file, cfg.key_for("num_attention_heads") + " (" + std::to_string(c.vars["heads"]) + ") does not divide " + cfg.key_for("hidden_size") + " (" +
                                 std::to_string(c.vars["H"]) + ") and no head_dim is given");
    c.vars["hd"] = c.vars["H"] / c.vars["heads"];
  };
  c.max_tensors = cat["limits"]["tensors"]["max"].get<uint64_t>();
  const Json& limits = cat["limits"];
  // Family variables: config keys (first present wins) or a default expression.
  const Json family_vars = family.value("vars", Json::object());
  std::map<std::string, std::string> family_keys;  // variable -> the config key that gave it
  for (auto& [name, spec] : family_vars.items()) {
    std::optional<int64_t> v;
    std::string used_key;
    std::string conv = spec.value("convert", std::string());
    Json keys = spec.contains("key") ? (spec["key"].is_array() ? spec["key"] : Json::array({spec["key"]})) : Json::array();
    for (const auto& k : keys) {
      v = config_int(cfg, k.get<std::string>(), conv);
      if (v) {
        used_key = k.get<std::string>();
        break;
      }
    }
    if (!v && spec.contains("default")) v = eval_json(spec["default"], c.vars, file);
    if (!v) continue;
    if (spec.contains("limit")) check_limit(limits, spec["limit"], *v, used_key.empty() ? name : used_key, file, spec["limit"] == name);
    if (!used_key.empty()) family_keys[name] = used_key[0] == '/' ? used_key.substr(1) : used_key;
    c.vars[name] = *v;
  }
  if (!c.vars.count("window")) c.vars["window"] = cfg.sliding_window.value_or(0);
  // Every generic variable the structure rests on, range-checked (the head
  // dimension after its default, which divides by the head count).
  std::set<std::string> required;
  for (const auto& r : family.value("requires", Json::array())) required.insert(r.get<std::string>());
  auto check_generic = [&](bool head_dim) {
    for (const auto& [var, canonical] : generic_keys()) {
      if ((var == "hd") != head_dim) continue;
      // The key as config.json spells it (GPT-J's n_head, DBRX's nested ffn_config keys).
      const std::string key = family_keys.count(var) ? family_keys[var] : cfg.key_for(canonical);
      int64_t v = c.vars[var];
      if (required.count(var) && v <= 0 && var != "E") {
        const Json* given = lookup(cfg, key);
        throw InputError(file, "'" + key + "' must be a positive integer (got " + (given ? show(*given) : std::string("none")) + "): the " +
                                   ms.family + " architecture needs it");
      }
      if (required.count(var) && var == "E" && v < 2) {
        const Json* given = lookup(cfg, key);
        throw InputError(file, "'" + key + "' is " + (given ? show(*given) : std::to_string(v)) + ": the " + ms.family +
                                   " architecture routes tokens among experts, so it needs at least 2");
      }
      check_limit(limits, var, v, key, file);
    }
  };
  // A null MLP width: GPT-J's and Falcon's configs mean 4 x hidden_size by it
  // (their families default "I"); elsewhere transformers builds Linear layers
  // from the number and fails on None -- where a layer uses it. A model whose
  // layers are all MoE never reads it (Qwen3-MoE), so the structure is built
  // with two widths: if they differ, the width is needed.
  if (!cfg.null_intermediate_key.empty() && !(family_vars.contains("I") && family_vars["I"].contains("default"))) {
    hf::Config probe = cfg;
    probe.null_intermediate_key.clear();
    probe.intermediate_size = 1;
    const uint64_t one = build_structure(probe, family, cat, file).total_params;
    probe.intermediate_size = 2;
    if (build_structure(probe, family, cat, file).total_params != one)
      throw InputError(file, "'" + cfg.null_intermediate_key + "' is null: the " + ms.family +
                                 " architecture needs the MLP width as a positive integer (transformers has no default for null)");
  }
  // Sizes that may be left out (null: none) but are never 0: DeepSeek's
  // q_lora_rank 0 would build a zero-width query projection.
  for (const auto& v : family.value("positive_or_null", Json::array())) {
    const std::string var = v.get<std::string>();
    for (const auto& [gv, canonical] : generic_keys())
      if (gv == var && lookup(cfg, cfg.key_for(canonical)) && c.vars[var] <= 0)
        throw InputError(file, "'" + cfg.key_for(canonical) + "' is " + std::to_string(c.vars[var]) +
                                   ": it must be a positive integer, or null for none");
  }
  check_generic(false);
  default_head_dim();  // after the family's overrides: DBRX's sizes live in nested configs
  check_generic(true);
  if (c.vars["heads"] > 0 && c.vars["kvh"] > 0 && c.vars["heads"] % c.vars["kvh"] != 0)
    throw InputError(file, cfg.key_for("num_key_value_heads") + " (" + std::to_string(c.vars["kvh"]) + ") must divide " + cfg.key_for("num_attention_heads") + " (" +
                               std::to_string(c.vars["heads"]) + ")");
  if (c.cfg.first_k_dense && *c.cfg.first_k_dense > c.vars["L"])
    throw InputError(file, "first_k_dense_replace (" + std::to_string(*c.cfg.first_k_dense) + ") exceeds num_hidden_layers");

  // Pass 1 counts (bounded), pass 2 materialises.
  run_stacks(c);
  c.count_only = false;
  uint64_t n = c.count;
  c.count = 0;
  c.out = &ms;
  ms.tensors.reserve(n);
  ms.modules.reserve(c.modules);
  run_stacks(c);
  if (const Json& pl = limits["params"]; ms.total_params > pl["max"].get<uint64_t>())
    throw InputError(file, "config.json describes a model of " + std::to_string(ms.total_params) + " parameters, beyond any real model (the largest has " +
                               pl["largest_real"].get<std::string>() + "): check its sizes");
  for (const auto& r : family.value("checkpoint_renames", Json::array())) ms.checkpoint_renames.emplace_back(r[0], r[1]);
  ms.is_moe = c.vars["E"] > 1;
  ms.num_experts = ms.is_moe ? c.vars["E"] : 0;
  for (const auto& t : ms.tensors)
    if (t.part == Part::kMtp) {
      ms.mtp_layers = c.vars.count("mtp") ? c.vars["mtp"] : c.vars["nextn"];
      break;
    }
  ms.kv.max_position_embeddings = cfg.max_position_embeddings.value_or(0);
  return ms;
}

}  // namespace quarkplan
