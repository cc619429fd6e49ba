// The structure parts of the Hugging Face analysis: the structure built beside
// the header scan, the Linear modules matched against the checkpoint's tensors
// (hot: every tensor is hashed and probed), the layer count, the structure's facts.
#include "intake/hf/structure_facts.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string_view>
#include <utility>

#include "catalog/catalog.h"
#include "common/parallel.h"
#include "common/string_arena.h"
#include "intake/model_names_gen.h"
#include "intake/model_reader.h"

namespace fs = std::filesystem;

namespace quarkplan::hf_detail {
namespace {

// Layer kinds as runs: ["attention+dense x3", "attention+moe x58"].
Json collapse_kinds(const std::vector<std::string>& kinds) {
  Json out = Json::array();
  for (size_t i = 0; i < kinds.size();) {
    size_t j = i;
    while (j < kinds.size() && kinds[j] == kinds[i]) ++j;
    out.push_back(kinds[i] + " x" + std::to_string(j - i));
    i = j;
  }
  return out;
}

// "1-3, 7, 9-12": layer indices as runs, the first `most` runs.
std::string index_runs(const std::vector<int64_t>& idx, size_t most = 4) {
  std::string out;
  size_t runs = 0;
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && idx[j + 1] == idx[j] + 1) ++j;
    if (runs == most) return out + ", ...";
    if (runs) out += ", ";
    out += std::to_string(idx[i]);
    if (j > i) {
      out += '-';
      out += std::to_string(idx[j]);
    }
    ++runs;
    i = j + 1;
  }
  return out;
}

// The decoder layers config.json declares against those the checkpoint holds.
// An edited config (or a pruned or truncated checkpoint) loads with layers
// initialised at random (missing) or weights dropped (extra): the model Quark
// calibrates is not the model the user has, and every count here is off.
// The checkpoint's layers (`tensors`' loaded names) against config.json's count.
void check_layer_count(const ModelStructure& st, const hf::Config& cfg, const TensorTable& tensors, Json& risks,
                       std::vector<std::string>& partial) {
  std::string prefix;  // "model.layers.": the language model's layer list
  for (const auto& m : st.modules) {
    if (m.part != Part::kLanguage) continue;
    for (size_t p = 0; p + 1 < m.name.size(); ++p)
      if (m.name[p] == '.' && std::isdigit(static_cast<unsigned char>(m.name[p + 1]))) {
        prefix = m.name.substr(0, p + 1);
        break;
      }
    if (!prefix.empty()) break;
  }
  if (prefix.empty() || !cfg.num_hidden_layers) return;
  const int64_t declared = *cfg.num_hidden_layers, limit = declared + st.mtp_layers;
  std::vector<char> seen(static_cast<size_t>(declared), 0);
  std::set<int64_t> extra;
  for (const auto& t : tensors) {
    const std::string_view n = t.name.substr(0, t.loaded_size);
    if (n.size() <= prefix.size() || n.compare(0, prefix.size(), prefix) != 0) continue;
    int64_t idx = 0;
    size_t p = prefix.size(), digits = 0;
    while (p < n.size() && digits < 9 && std::isdigit(static_cast<unsigned char>(n[p]))) idx = idx * 10 + (n[p++] - '0'), ++digits;
    if (digits == 0 || (p < n.size() && n[p] != '.')) continue;
    if (idx < declared) seen[static_cast<size_t>(idx)] = 1;
    else if (idx >= limit) extra.insert(idx);
  }
  std::vector<int64_t> missing;
  for (int64_t i = 0; i < declared; ++i)
    if (!seen[static_cast<size_t>(i)]) missing.push_back(i);
  if (static_cast<int64_t>(missing.size()) == declared) return;  // names the structure does not know: nothing to compare
  const std::string key = cfg.key_for("num_hidden_layers");
  const std::string fix = "Restore the " + key + " the checkpoint was saved with";
  if (!missing.empty() || !extra.empty()) partial.push_back("config.json's " + key + " disagrees with the layers in the checkpoint");
  if (!missing.empty()) {
    std::string msg = "config.json declares " + std::to_string(declared) + (declared == 1 ? " decoder layer (" : " decoder layers (") + key +
                      ") but the checkpoint holds weights for " + std::to_string(declared - static_cast<int64_t>(missing.size())) +
                      (missing.size() == 1 ? " (none for layer " : " (none for layers ") + index_runs(missing) +
                      "): transformers would initialise the missing layers at random.";
    risks.push_back(make_risk("torch.intake.layer_count", "high", msg, fix + ", or download the complete checkpoint, then re-run intake."));
  }
  if (!extra.empty()) {
    std::string declared_text = std::to_string(declared) + (declared == 1 ? " decoder layer" : " decoder layers") + " config.json declares (" + key;
    if (st.mtp_layers) declared_text += " plus " + std::to_string(st.mtp_layers) + " MTP";
    std::string msg = (extra.size() == 1 ? "The checkpoint holds weights for layer " : "The checkpoint holds weights for layers ") +
                      index_runs({extra.begin(), extra.end()}) + " beyond the " + declared_text +
                      "): transformers would drop them, so the model quantized is not the model saved.";
    risks.push_back(make_risk("torch.intake.layer_count", "high", msg, fix + ", then re-run intake."));
  }
}

}  // namespace

std::future<ModelStructure> start_structure(const Catalog& cat, const hf::Config& cfg, const fs::path& cfg_path,
                                            std::vector<std::string>& partial, bool& family_guessed) {
  // The model's structure from config.json and its family's description: one
  // source for parameters, module names and roles, and the KV cache. Bad
  // values in config.json are input errors here, before anything is sized.
  // The family is looked up (architectures.json parsed) and the structure
  // built on its own thread while the shard headers are read: it needs only
  // config.json and the catalog (~20 ms of DeepSeek-V3's 45,000 modules).
  auto find_family = [&cat, &cfg](bool& guessed) {
    const Json* family = architecture_family(cat.architectures(), cfg);
    guessed = family == nullptr;
    if (!family)
      for (const auto& f : cat.architectures()["families"])
        if (f["family"] == "llama") family = &f;
    return family;
  };
  std::future<ModelStructure> structure_job;
  const bool have_structure = cfg.num_hidden_layers && cfg.hidden_size;
  if (!have_structure) {
    partial.push_back("config.json lacks the layer count or hidden size");
    find_family(family_guessed);
  } else {
    structure_job = std::async(std::launch::async, [&cfg, &cat, &family_guessed, find_family, file = cfg_path.string()] {
      const Json* family = find_family(family_guessed);
      return build_structure(cfg, *family, cat.architectures(), file);
    });
  }
  return structure_job;
}

void add_structure_guessed_risk(const hf::Config& cfg, Json& risks, size_t& no_template_risk) {
  risks.insert(risks.begin(), make_risk("torch.intake.structure_guessed", "medium",
                                        "quarkplan has no structure description for model type '" + cfg.model_type +
                                            "': parameter counts and module names follow the Llama layout and may be wrong.",
                                        "Trust the counts only when the safetensors shards are present (they are then read from the headers)."));
  if (no_template_risk != SIZE_MAX) ++no_template_risk;
}

void add_exclusions_to_template_hint(const ModelStructure& st, Json& risks, size_t no_template_risk) {
  std::set<std::string> routers;  // "*mlp.gate": what follows the layer index
  for (const auto& m : st.modules)
    if (m.role == "router" && m.part == Part::kLanguage) {
      const std::string n(m.name);
      for (size_t p = 0; p + 2 < n.size(); ++p)
        if (n[p] == '.' && std::isdigit(static_cast<unsigned char>(n[p + 1]))) {
          if (size_t end = n.find('.', p + 1); end != std::string::npos) routers.insert("*" + n.substr(end + 1));
          break;
        }
    }
  // The head as the model names it: a bare 'lm_head' (matched against the
  // whole name) misses 'language_model.lm_head'.
  std::string head = "lm_head";
  for (const auto& m : st.modules)
    if (m.role == "lm_head" && m.part == Part::kLanguage) {
      head = m.name == "lm_head" ? std::string(m.name) : "*" + std::string(m.name.substr(m.name.rfind('.') + 1));
      break;
    }
  if (!routers.empty() || head != "lm_head") {
    std::string list = "'" + head + "'";
    for (const auto& r : routers) list += ", '" + r + "'";
    Json& hint = risks[no_template_risk]["recovery_hint"];
    if (hint.is_string()) {
      std::string h = hint.get<std::string>();
      if (size_t at = h.find("exclude_layers_name=['lm_head']"); at != std::string::npos)
        h.replace(at, std::string("exclude_layers_name=['lm_head']").size(), "exclude_layers_name=[" + list + "]");
      if (!routers.empty()) {
        if (!h.empty() && h.back() == '.') h.pop_back();
        h += "; listing the routers keeps them in float (quantized routers pick the wrong experts).";
      }
      hint = h;
    }
  }
}

LinearModules linear_modules(WeightFacts& w, const std::optional<ModelStructure>& st, const hf::Config& cfg, Json& risks,
                             std::vector<std::string>& partial) {
  // Linear modules (rule 39): the structure's modules, kept when their weight is
  // in the checkpoint (names as transformers loads them), with the header's
  // shape when known; checkpoint Linears the structure does not describe are
  // added by name. Without weights: the structure's modules. Names stay views
  // (into the headers, the structure, or `made`): 45,000 modules, no copies.
  std::vector<SizedView> sized;
  if (st) sized.reserve(st->modules.size());
  std::string names_source;
  bool fused_experts = st && st->fused_experts;
  uint64_t linear_params = 0;
  // Linear modules whose weight is the input embedding's (tied lm_head):
  // counted once in total_params and the checkpoint size.
  Json tied_modules = Json::array();
  NameStore& made = w.made_names.emplace_back();
  auto add_module = [&](std::string_view name, uint64_t params, uint64_t in, std::string_view role) {
    linear_params += params;
    sized.push_back({name, params, in, role});
  };
  if (!w.tensors.empty()) {
    names_source = w.source == "index" ? "safetensors_index" : "safetensors";
    const bool renames = st && !st->checkpoint_renames.empty();
    // Names as transformers loads them: the scan's workers dropped MXFP4's
    // "_blocks" and hashed the names; the family's renames (two families)
    // replace a name and its hash here, in place.
    if (renames)
      for (size_t i = 0; i < w.tensors.size(); ++i) {
        LinearTensor& t = w.tensors.mutable_at(i);
        std::string r = st->loaded_name(t.name);
        if (r == t.name) continue;
        std::string_view n = made.emplace_back(std::move(r));
        if (n.ends_with("_blocks")) n.remove_suffix(7);
        t.name = n;
        t.loaded_size = static_cast<uint32_t>(n.size());
        t.hash = name_hash(n);
      }
    const size_t count = w.tensors.size();
    auto loaded = [&w](size_t i) { return w.tensors[i].name.substr(0, w.tensors[i].loaded_size); };
    // The names in an open-addressing table (90,000 of them for DeepSeek-V3),
    // each slot tagged with the top of its hash: a probe reads a name (in one
    // of 163 headers: a cache miss) only when the tags agree.
    struct Slot {
      uint32_t index = UINT32_MAX, tag = 0;
    };
    size_t cap = 16;
    while (cap < 2 * count) cap *= 2;
    const size_t mask = cap - 1;
    std::vector<Slot> slots(cap);
    for (uint32_t i = 0; i < count; ++i) {
      const uint64_t hash = w.tensors[i].hash;
      const uint32_t tag = static_cast<uint32_t>(hash >> 32);
      for (size_t h = hash & mask;; h = (h + 1) & mask)
        if (slots[h].index == UINT32_MAX) {
          slots[h] = {i, tag};
          break;
        } else if (slots[h].tag == tag && loaded(slots[h].index) == loaded(i)) {
          break;
        }
    }
    auto find = [&](std::string_view name, uint64_t hash) -> uint32_t {
      const uint32_t tag = static_cast<uint32_t>(hash >> 32);
      for (size_t h = hash & mask; slots[h].index != UINT32_MAX; h = (h + 1) & mask)
        if (slots[h].tag == tag && loaded(slots[h].index) == name) return slots[h].index;
      return UINT32_MAX;
    };
    std::vector<char> explained(count, 0);
    if (st) {
      const size_t n = st->tensors.size();
      std::vector<uint32_t> found(n);  // structure tensor -> checkpoint tensor
      const size_t chunks = std::min<size_t>(n, 64);
      parallel_for(chunks, [&](size_t c) {
        for (size_t k = n * c / chunks, end = n * (c + 1) / chunks; k < end; ++k) {
          found[k] = find(st->tensors[k].name, st->tensors[k].hash);
        }
      });
      for (uint32_t i : found)
        if (i != UINT32_MAX) explained[i] = 1;
      for (const auto& m : st->modules) {
        if (m.tied) {
          // A checkpoint that stores the tied head anyway (some exporters do)
          // holds its own weight: then it is an ordinary, stored Linear.
          const std::string own = std::string(m.name) + ".weight";
          const uint32_t j = find(own, name_hash(own));
          if (j != UINT32_MAX) {
            explained[j] = 1;
            const LinearTensor& t = w.tensors[j];
            bool two_d = t.shape_known && t.ndim == 2;
            add_module(m.name, two_d ? t.dims[0] * t.dims[1] : m.out * m.in, two_d ? t.dims[1] : m.in, m.role);
          } else if (found[m.source] != UINT32_MAX) {  // the embedding it shares is in the checkpoint
            add_module(m.name, m.out * m.in, m.in, m.role);
            tied_modules.push_back(m.name);
          }
          continue;
        }
        uint32_t i = found[m.source];
        if (i == UINT32_MAX) continue;
        const LinearTensor& t = w.tensors[i];
        bool two_d = t.shape_known && t.ndim == 2 && m.source_is_weight;
        add_module(m.name, two_d ? t.dims[0] * t.dims[1] : m.out * m.in, two_d ? t.dims[1] : m.in, m.role);
      }
    }
    std::vector<LinearTensor> rest;
    // Quantization scales (FP8 weight_scale_inv: 45,000 of them in DeepSeek-V3)
    // are never Linear weights: not worth a copy.
    for (size_t i = 0; i < w.tensors.size(); ++i)
      if (!explained[i] && !w.tensors[i].quant_scale) {
        LinearTensor r = w.tensors[i];
        r.name = loaded(i);
        rest.push_back(r);
      }
    bool rest_fused = false;
    for (const auto& lm : linear_modules_from_tensors(rest, cfg, rest_fused, made)) {
      std::string_view role;
      if (st) role = made.emplace_back(st->classify(lm.name).first);
      add_module(lm.name, lm.params, lm.in_features, role);
    }
    fused_experts = fused_experts || rest_fused;
    if (st && w.missing_shards.empty()) check_layer_count(*st, cfg, w.tensors, risks, partial);
  } else if (st) {
    names_source = "config";
    for (const auto& m : st->modules) {
      add_module(m.name, m.out * m.in, m.in, m.role);
      if (m.tied) tied_modules.push_back(m.name);
    }
  }
  std::vector<SizedName> collapsed = collapse_sized(sized);
  Json names_json = Json::array(), shapes_json = Json::array(), roles_json = Json::array();
  for (const auto& c : collapsed) {
    names_json.push_back(c.name);
    shapes_json.push_back({c.params, c.in_features});
    roles_json.push_back(c.role);
  }
  return {std::move(sized),        std::move(names_source), fused_experts,          linear_params,
          std::move(tied_modules), std::move(names_json),   std::move(shapes_json), std::move(roles_json)};
}

void write_structure_architecture(Json& arch, const ModelStructure& st) {
  arch["layer_kinds"] = collapse_kinds(st.layer_kinds);
  arch["mtp_layers"] = st.mtp_layers;
  Json parts = Json::object();
  for (int p = 0; p < 5; ++p)
    if (st.params_by_part[p]) parts[part_name(static_cast<Part>(p))] = st.params_by_part[p];
  arch["params_by_part"] = parts;
  arch["kv_cache"] = {{"kind", st.kv.kind},
                      {"full_attention_layers", st.kv.full_layers},
                      {"sliding_window_layers", st.kv.sliding_layers},
                      {"sliding_window", st.kv.sliding_window},
                      {"elements_per_token_full", st.kv.elements_full},
                      {"elements_per_token_sliding", st.kv.elements_sliding}};
  if (st.kv.recurrent_layers > 0)
    arch["kv_cache"]["recurrent_state"] = {{"layers", st.kv.recurrent_layers},
                                           {"conv_elements_per_sequence", st.kv.state_conv_elements},
                                           {"ssm_elements_per_sequence", st.kv.state_ssm_elements},
                                           {"ssm_dtype", st.kv.state_ssm_dtype.empty() ? Json(nullptr) : Json(st.kv.state_ssm_dtype)}};
}

Json unmatched_exclude_defaults(const LinearModules& modules, const Json* tmpl, const std::string& model_type, PatternMatch how, Json& risks) {
  Json unmatched = Json::array();
  if (!tmpl || !(*tmpl)["exclude_defaults"].is_array() || modules.sized.empty()) return unmatched;
  for (const auto& d : (*tmpl)["exclude_defaults"]) {
    if (!d.is_string()) continue;
    const QuarkPattern p(d.get<std::string>(), how);
    bool hit = false;
    for (const auto& m : modules.sized)
      if (p.matches(m.name)) {
        hit = true;
        break;
      }
    if (hit) continue;
    unmatched.push_back(d);
    // What it meant: the modules whose names hold the pattern's literal text (its words without '*').
    std::string literal;
    for (char c : d.get<std::string>())
      if (c != '*') literal += c;
    while (!literal.empty() && literal.back() == '.') literal.pop_back();
    std::set<std::string> near;
    for (const auto& m : modules.sized)
      if (!literal.empty() && m.name.find(literal) != std::string_view::npos && near.size() < 3) {
        std::string name(m.name);
        near.insert(name.substr(0, name.find(literal) + literal.size()));
      }
    std::string meant;
    for (const auto& n : near) meant += (meant.empty() ? "" : ", ") + n;
    risks.push_back(make_risk("torch.intake.template_patterns", "low",
                              "The " + model_type + " template's exclusion '" + d.get<std::string>() + "' matches no Linear module " +
                                  (modules.names_source == "config" ? std::string("config.json describes") : std::string("of this checkpoint")) +
                                  (meant.empty() ? std::string(": it excludes nothing.") : " (its modules are named " + meant + "): it excludes nothing."),
                              meant.empty() ? "Nothing to do unless the model has such a part under another name; quarkplan plan checks the exclusions it prints."
                                            : "quarkplan plan excludes the modules it meant where they are a non-text tower (torch.exclude.template_defaults); else name them with --exclude."));
  }
  return unmatched;
}

void write_quantization_targets(Json& q, const LinearModules& modules, const hf::Config& cfg, const Json* tmpl, bool is_moe) {
  const std::string& mt = cfg.model_type;
  q["linear_layer_count"] = modules.sized.size();
  q["linear_layer_count_method"] = modules.names_source == "config" ? "estimated from config.json with the " + mt + " naming" : "counted from tensor names (2-D .weight of Linear modules, fused experts expanded)";
  q["exclude_defaults"] = tmpl ? (*tmpl)["exclude_defaults"] : Json::array({"lm_head"});
  q["has_non_linear_experts"] = modules.fused_experts;
  q["needs_moe_preparation"] = is_moe;
  q["module_names_source"] = modules.names_source;
  q["module_names"] = modules.names_json;
  q["module_shapes"] = modules.shapes_json;  // [params, in_features] per module of each entry
  q["module_roles"] = modules.roles_json;    // attention, expert, router, lm_head, mtp, vision, ... per entry
  q["tied_modules"] = modules.tied_modules;  // weights shared with the embedding: not in total_params a second time
  q["linear_params"] = modules.linear_params;
}

}  // namespace quarkplan::hf_detail
