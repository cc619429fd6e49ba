// Which layers stay in full precision and which get their own scheme. Rules torch.exclude.*,
// torch.layer_quant_config.patterns, torch.moe.routers, torch.weight_stats.outliers.
#include <algorithm>
#include <cctype>
#include <set>

#include "common/strings.h"
#include "intake/module_names.h"
#include "plan/rules.h"
#include "plan/torch/rule_helpers.h"

namespace quarkplan {

namespace torch_rules {

using namespace detail;

namespace {

// Whether `pattern` reaches some module only through Quark 0.12's children form (`p.*`): stops at the first.
bool widened_by_children(PlanState& s, const std::string& pattern) {
  QuarkPattern with(pattern, PatternMatch::kWithChildren), verbatim(pattern, PatternMatch::kVerbatim);
  for (const auto& m : s.modules())
    if (with.matches(m) && !verbatim.matches(m)) return true;
  return false;
}

// How many of the model's modules `pattern` matches under `how`.
size_t count_matches(PlanState& s, const std::string& pattern, PatternMatch how) {
  QuarkPattern qp(pattern, how);
  size_t n = 0;
  for (const auto& m : s.modules()) n += qp.matches(m) ? 1 : 0;
  return n;
}

// How many MoE routers `pattern` names by their own name (no replaced child), under the release's matching.
size_t routers_named(PlanState& s, const std::string& pattern) {
  QuarkPattern qp(pattern, s.exclude_match());
  size_t n = 0;
  for (size_t i = 0; i < s.modules().size(); ++i) n += s.is_router(i) && qp.matches(s.modules()[i]) ? 1 : 0;
  return n;
}

// Checks that a pattern matches at least one module; an error otherwise.
bool pattern_matches_something(PlanState& s, const std::string& what, const std::string& pattern) {
  const auto& mods = s.modules();
  if (mods.empty()) return true;  // no names known: nothing to check against
  QuarkPattern qp(pattern, what == "layer_quant_config" ? PatternMatch::kVerbatim : s.exclude_match());
  for (const auto& m : mods)
    if (qp.matches(m)) return true;
  // Suggest the closest module *kinds* (names without layer indices).
  std::set<std::string> kinds;
  for (const auto& m : mods) {
    std::string k;
    size_t start = 0;
    for (size_t i = 0; i <= m.size(); ++i)
      if (i == m.size() || m[i] == '.') {
        std::string part = m.substr(start, i - start);
        bool digits = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
        k += (k.empty() ? "" : ".") + (digits ? std::string("*") : part);
        start = i + 1;
      }
    kinds.insert(k);
    if (kinds.size() > 400) break;
  }
  std::vector<std::string> cand(kinds.begin(), kinds.end());
  std::string stripped = pattern;
  stripped.erase(std::remove(stripped.begin(), stripped.end(), '*'), stripped.end());
  std::string hint = did_you_mean(stripped, cand);
  // Quark 0.13 matches exclusions verbatim: a pattern naming a block (0.12 also excluded what is under it) now names nothing.
  if (what != "layer_quant_config" && s.exclude_match() == PatternMatch::kVerbatim) {
    size_t under = count_matches(s, pattern, PatternMatch::kWithChildren);
    if (under > 0) {
      s.error(what + " pattern '" + pattern + "' matches none of the model's Linear modules under Quark " + s.cat.release() +
              ", which matches exclude patterns verbatim (Quark 0.12 also excluded the modules under it): '" + pattern + ".*' excludes the " +
              std::to_string(under) + " modules under it");
      return false;
    }
  }
  s.error(what + " pattern '" + pattern + "' matches none of the model's " + std::to_string(mods.size()) +
          " Linear modules (it would silently apply nothing)" + hint);
  return false;
}

// Which modules the plan leaves in full precision.
const std::vector<char>& excluded_mask(PlanState& s) { return s.excluded(); }

// Module i is an MoE router (by the structure's role, else by the usual names).
bool is_router(PlanState& s, size_t i) { return s.is_router(i); }

}  // namespace

// The roots of the non-text towers (vision, audio, projector modules) that the template's own
// exclusions leave quantized, as patterns that match them under the plan's release ("" roots skipped).
std::vector<std::string> unexcluded_towers(PlanState& s) {
  const auto& mods = s.modules();
  if (mods.empty()) return {};
  std::vector<QuarkPattern> defaults;
  for (const auto& d : s.analysis["quantization_targets"]["exclude_defaults"])
    if (d.is_string()) defaults.emplace_back(d.get<std::string>(), s.exclude_match());
  std::vector<std::string> roots;
  for (size_t i = 0; i < mods.size(); ++i) {
    const std::string& role = s.module_roles[i];
    if (role != "vision" && role != "audio" && role != "projector") continue;
    bool excluded = false;
    for (const auto& d : defaults) excluded = excluded || d.matches(mods[i]);
    if (excluded) continue;
    // The tower's root: the name up to the first component naming the tower, else the module itself.
    std::string root = mods[i];
    size_t start = 0;
    while (start < mods[i].size()) {
      size_t dot = mods[i].find('.', start);
      std::string part = mods[i].substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      if (role != "projector" && (part.find("vision") != std::string::npos || part.find("visual") != std::string::npos || part.find("audio") != std::string::npos ||
                                  part.find("tower") != std::string::npos || part.find("image") != std::string::npos)) {
        root = mods[i].substr(0, dot) + ".*";
        break;
      }
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    if (std::find(roots.begin(), roots.end(), root) == roots.end()) roots.push_back(root);
  }
  return roots;
}

// The decoder layers the template says a text-only forward skips (catalog templates
// text_calibration_skips: modules named with its marker), as one pattern per layer, when the plan
// calibrates something (a scheme with static activations, or an algorithm that reads activations).
std::vector<std::string> text_calibration_skips(PlanState& s) {
  const Json* t = tmpl(s);
  if (!t || !t->contains("text_calibration_skips") || !(*t)["text_calibration_skips"].is_object()) return {};
  const Json& skip = (*t)["text_calibration_skips"];
  // The plan's schemes so far: the global one and any per-layer ones (chosen or the goal's).
  std::vector<std::string> schemes;
  if (s.plan["global_scheme"].is_string()) schemes.push_back(s.plan["global_scheme"]);
  const Json* guide = s.plan.contains("guide_layer_quant_config") ? &s.plan["guide_layer_quant_config"] : nullptr;
  for (const Json* lqc : std::initializer_list<const Json*>{s.choice("layer_quant_config"), guide})
    if (lqc && lqc->is_object())
      for (const auto& [pattern, sch] : lqc->items())
        if (sch.is_string()) schemes.push_back(sch);
  for (const auto& [k, v] : s.req.choices)
    if (k.rfind("layer_quant_config.", 0) == 0 && v.is_string()) schemes.push_back(v);
  bool calibrates = false;
  for (const auto& name : schemes)
    if (const Json* sc = s.cat.torch_scheme(name)) calibrates = calibrates || (*sc).value("needs_calibration_data", false);
  const Json data_free = skip.value("data_free_algorithms", Json::array());
  for (const auto& a : algorithms_of(s)) calibrates = calibrates || !std::count(data_free.begin(), data_free.end(), a);
  if (!calibrates) return {};
  const std::string marker = skip["module_marker"];
  std::vector<std::string> layers;
  for (const auto& m : s.modules())
    if (size_t at = m.find(marker); at != std::string::npos) {
      std::string pattern = m.substr(0, at) + ".*";
      if (std::find(layers.begin(), layers.end(), pattern) == layers.end()) layers.push_back(pattern);
    }
  return layers;
}

void exclude_layers(PlanState& s) {
  Json defaults = s.analysis["quantization_targets"]["exclude_defaults"];
  const Json* c = s.choice("exclude_layers");
  Json list;
  std::string who;
  if (c) {
    list = c->is_string() ? (*c == "none" ? Json::array() : Json::array({*c})) : *c;
    who = "Your list";
  } else if (s.recipe && (*s.recipe)["exclude_layers"].is_array()) {
    list = (*s.recipe)["exclude_layers"];
    who = "AMD's recipe (" + s.recipe_name + ")";
  } else {
    // Without a template in this release, the defaults are quarkplan's own (lm_head), not Quark's.
    const std::string defaults_text = tmpl(s) ? "The " + model_type(s) + " template's defaults (" + join(string_list(defaults)) + ")"
                                              : "No " + model_type(s) + " template in Quark " + s.cat.release() + ", so quarkplan's own default (" +
                                                    join(string_list(defaults)) + ")";
    s.plan["exclude_layers"] = defaults;
    s.reason("exclude_layers", "torch.exclude.template_defaults",
             defaults_text + ": --exclude_layers is omitted so they apply");
    // Vision and audio towers the template leaves in would get static scales calibrated on text:
    // they join the exclusions (AMD's multimodal cards quantize the language model only).
    std::vector<std::string> towers = unexcluded_towers(s);
    // Decoder layers a text-only forward never runs (mllama's cross-attention layers take the image
    // features and are skipped without them): text calibration leaves their static scales and any
    // algorithm's statistics unobserved, so they join the exclusions where the plan calibrates.
    std::vector<std::string> skipped = text_calibration_skips(s);
    if (!towers.empty() || !skipped.empty()) {
      Json with = defaults;
      for (const auto& t : towers) with.push_back(t);
      for (const auto& t : skipped) with.push_back(t);
      list = with;
      who = defaults_text;
      if (!towers.empty())
        who += " and the non-text towers that would still be quantized (" + join(towers) + ": calibration is text, and AMD's multimodal releases quantize the language model only)";
      if (!skipped.empty()) {
        const Json& skip = (*tmpl(s))["text_calibration_skips"];
        who += std::string(towers.empty() ? " and" : ", and") + " the " + std::to_string(skipped.size()) + " " + skip["what"].get<std::string>() + " (" +
               skipped.front() + (skipped.size() > 1 ? ", ..." : "") + "): " + skip["why"].get<std::string>() + "; " + skip["alternative"].get<std::string>();
      }
    }
  }
  if (!list.is_null()) {
    if (!list.is_array()) {
      s.error("exclude_layers must be a list of patterns");
      return;
    }
    // AMD's recipes exclude the MTP layers by index (model.layers.61.* for DeepSeek).
    if (!c && s.recipe && s.recipe->value("exclude_mtp_layers", false)) {
      const Json& arch = model(s).value("architecture", Json::object());
      int64_t mtp = arch.value("mtp_layers", int64_t{0}), layers = model(s).value("num_hidden_layers", Json(0)).is_number() ? model(s)["num_hidden_layers"].get<int64_t>() : 0;
      std::string root = tmpl(s) ? (*tmpl(s))["decoder_root"].get<std::string>() : "model.layers";
      // In the card's own form ('*layers.78.*' on GLM's card), at this model's index.
      const std::string form = s.recipe->value("mtp_pattern", root + ".{index}.*");
      for (int64_t i = 0; i < mtp; ++i) {
        std::string pattern = form;
        if (auto at = pattern.find("{index}"); at != std::string::npos) pattern.replace(at, 7, std::to_string(layers + i));
        list.push_back(pattern);
      }
    }
    Json kept = Json::array();
    std::vector<std::string> rewritten;  // recipe patterns given their '.*' form for verbatim matching
    std::vector<std::string> router_named;  // recipe patterns for a router child the release does not have
    for (const auto& p : list) {
      if (!p.is_string()) {
        s.error("exclude_layers must list patterns (strings), not " + p.dump());
        continue;
      }
      if (c) {
        if (pattern_matches_something(s, "exclude", p)) kept.push_back(p);
      } else {
        kept.push_back(p);  // a recipe pattern for parts this checkpoint may not have is harmless
        // AMD's recipes were written for Quark before 0.13, which also excluded the modules under
        // each pattern: under verbatim matching the plan lists them too, so it excludes the same.
        const std::string text = p.get<std::string>();
        if (s.exclude_match() == PatternMatch::kVerbatim && !text.ends_with(".*") &&
            widened_by_children(s, text)) {
          kept.push_back(text + ".*");
          rewritten.push_back(text);
        }
        // A recipe pattern for the router's Linear child (Quark 0.12's "NAME.linear"): where the release
        // makes the router the Linear itself, the router's own name is what excludes it.
        // Quark 0.12 gives a router it loads in memory a Linear child ("mlp.gate.linear"), which the card's
        // '*mlp.gate.*' names; file-to-file (any release) and Quark 0.13 see the router as the Linear itself.
        // The router's own name excludes it in every flow and release.
        if (text.ends_with(".*") && routers_named(s, text) == 0 && routers_named(s, text.substr(0, text.size() - 2)) > 0) {
          if (count_matches(s, text, s.exclude_match()) == 0) kept.erase(kept.end() - 1);  // it names nothing here: replaced
          kept.push_back(text.substr(0, text.size() - 2));
          router_named.push_back(text);
        }
      }
    }
    s.plan["exclude_layers"] = kept;
    // A default counts as dropped only when modules it excluded are no longer
    // excluded: compared by what the patterns match ('*lm_head' keeps 'lm_head').
    std::vector<std::string> dropped, dropped_other;
    std::vector<QuarkPattern> kept_patterns;
    for (const auto& k : kept) kept_patterns.emplace_back(k.get<std::string>(), s.exclude_match());
    const auto& mods = s.modules();
    for (const auto& d : defaults) {
      if (!d.is_string() || std::count(kept.begin(), kept.end(), d)) continue;
      QuarkPattern dp(d.get<std::string>(), s.exclude_match());
      size_t lost = 0, lost_routers = 0;
      for (size_t i = 0; i < mods.size(); ++i) {
        const std::string& m = mods[i];
        if (!dp.matches(m)) continue;
        // Routers may be wrapped as "<router>.linear": either name covers one (as torch.moe.routers counts it).
        bool router = is_router(s, i);
        bool still = false;
        for (const auto& kp : kept_patterns) still = still || kp.matches(m) || (router && kp.matches(m + ".linear"));
        lost += still ? 0 : 1;
        lost_routers += !still && router ? 1 : 0;
      }
      if (lost == 0) continue;
      std::string entry = d.get<std::string>() + " (" + std::to_string(lost) + (lost == 1 ? " module)" : " modules)");
      dropped.push_back(entry);
      // lm_head (torch.exclude.lm_head) and routers (torch.moe.routers) have their own risks: not said twice.
      bool lm_head = d == "lm_head" || d == "*lm_head" || (tmpl(s) && d == (*tmpl(s))["lm_head"]);
      if (!lm_head && lost_routers < lost) dropped_other.push_back(entry);
    }
    std::vector<std::string> widened;
    for (const auto& r : rewritten) widened.push_back("'" + r + ".*'");
    s.reason("exclude_layers", "torch.exclude.template_defaults",
             who + (c || s.recipe ? " REPLACES the template defaults (--exclude_layers is not additive)"
                                  : "; the printed --exclude_layers repeats the defaults, since the flag replaces them") +
                 (dropped.empty() ? std::string() : "; no longer excluded: " + join(dropped)) +
                 (widened.empty() ? std::string()
                                  : "; " + join(widened) + " added: the recipe was written for Quark before 0.13, which also excluded the modules under each pattern, and Quark " +
                                        s.cat.release() + " matches them verbatim") +
                 (router_named.empty() ? std::string()
                                       : "; " + join(router_named) + " names only the Linear child Quark 0.12 gives a router it loads in memory ('.linear'); " +
                                             "file-to-file and Quark 0.13 see the router as the Linear itself, so its own name excludes it in every flow (" + [&] {
                                               std::vector<std::string> names;
                                               for (const auto& r : router_named) names.push_back("'" + r.substr(0, r.size() - 2) + "'");
                                               return join(names);
                                             }() + ")"));
    if (kept.empty() && c && !dropped_other.empty())
      s.risk("torch.exclude.template_defaults", "high", "Nothing is excluded: the template defaults get quantized too: " + join(dropped_other) + ".",
             "Omit --exclude to keep the template defaults (" + join(string_list(defaults)) + ").");
    else if (!dropped_other.empty() && c)
      s.risk("torch.exclude.template_defaults", "medium", "Your exclusions replace the template defaults; these are now quantized: " + join(dropped_other) + ".",
             "Add them to your --exclude list to keep them in full precision.");
  }
}

void layer_quant_config(PlanState& s) {
  Json cfg = Json::object();
  std::string who;
  bool user = false;
  if (const Json* c = s.choice("layer_quant_config")) {
    if (!c->is_object()) s.error("layer_quant_config must be an object {pattern: scheme}");
    else cfg = *c;
    user = true;
  } else if (s.plan.contains("guide_layer_quant_config")) {
    cfg = s.plan["guide_layer_quant_config"];
    who = s.plan.value("guide_layer_quant_config_who", "The " + s.goal + " goal's mixed precision");
  }
  s.plan.erase("guide_layer_quant_config");
  s.plan.erase("guide_layer_quant_config_who");
  for (const auto& [k, v] : s.req.choices)
    if (k.rfind("layer_quant_config.", 0) == 0) {
      cfg[k.substr(19)] = v;
      user = true;
    }
  if (user) who = "Your overrides";
  Json checked = Json::object();
  std::vector<std::string> dropped_by_exclusion;
  std::string global = s.plan["global_scheme"].is_string() ? s.plan["global_scheme"].get<std::string>() : "";
  for (auto& [pattern, sch] : cfg.items()) {
    if (!sch.is_string() || !s.cat.torch_scheme(sch)) {
      std::string n = sch.is_string() ? sch.get<std::string>() : sch.dump();
      s.error("layer_quant_config['" + pattern + "']: unknown scheme '" + n + "'" + did_you_mean(n, scheme_names(s)));
      continue;
    }
    if (!pattern_matches_something(s, "layer_quant_config", pattern)) continue;
    if (sch == global) {
      s.risk("torch.layer_quant_config.patterns", "low", "layer_quant_config['" + pattern + "'] names the global scheme " + global + ": it changes nothing and is dropped.",
             "Remove it, or give the pattern another scheme.");
      continue;
    }
    // Exclusion wins in Quark: compared by the modules both match, not by the patterns' text.
    size_t matched = 0, excluded = 0;
    {
      QuarkPattern qp(pattern, PatternMatch::kVerbatim);
      const auto& mods = s.modules();
      const auto& mask = s.excluded();
      for (size_t i = 0; i < mods.size(); ++i)
        if (qp.matches(mods[i])) ++matched, excluded += mask[i] ? 1 : 0;
    }
    if (matched > 0 && excluded == matched && !user) {
      // The goal's own override on layers the exclusions keep in full precision: nothing to do.
      dropped_by_exclusion.push_back("'" + pattern + "'");
      continue;
    }
    if (excluded > 0)
      s.risk("torch.layer_quant_config.patterns", excluded == matched ? "medium" : "low",
             "Pattern '" + pattern + "' gives scheme " + sch.get<std::string>() + " to " + std::to_string(matched) + " modules, " + std::to_string(excluded) +
                 " of which the exclusions keep in full precision: exclusion wins.",
             "Remove the pattern or the exclusions that cover it.");
    checked[pattern] = sch;
  }
  s.plan["layer_quant_config"] = checked;
  const std::string not_needed = dropped_by_exclusion.empty() ? ""
                                 : "; the " + s.goal + " goal's mixed precision left out " + join(dropped_by_exclusion) +
                                       ": the exclusions already keep every module it matches in full precision";
  if (checked.empty())
    s.reason("layer_quant_config", "torch.layer_quant_config.patterns", "{}: every quantized layer uses the global scheme" + not_needed);
  else {
    size_t n = 0;
    for (auto& [p, x] : checked.items()) {
      QuarkPattern qp(p, PatternMatch::kVerbatim);
      for (const auto& m : s.modules()) n += qp.matches(m) ? 1 : 0;
    }
    s.reason("layer_quant_config", "torch.layer_quant_config.patterns",
             who + "; each pattern checked against the model's module names (" + std::to_string(n) + " modules matched); one --layer_quant_scheme each" + not_needed);
  }
}

// The pattern a hint tells the user to exclude `module` with: the template's
// own default that covers it (Llama 4's '*lm_head' covers
// 'language_model.lm_head', which a bare 'lm_head' does not, since Quark
// matches the whole name with fnmatch), else the module's own name.
std::string exclude_pattern_for(PlanState& s, const std::string& module) {
  if (const Json* t = tmpl(s); t && (*t)["exclude_defaults"].is_array())
    for (const auto& d : (*t)["exclude_defaults"])
      if (d.is_string() && QuarkPattern(d.get<std::string>(), s.exclude_match()).matches(module)) return d.get<std::string>();
  return module;
}

void lm_head_excluded(PlanState& s) {
  const Json* t = tmpl(s);
  std::string lm = t ? (*t)["lm_head"].get<std::string>() : "lm_head";
  const auto& mods = s.modules();
  std::vector<size_t> heads;
  for (size_t i = 0; i < mods.size(); ++i) {
    const std::string& m = mods[i];
    bool is_head = s.module_roles[i] == "lm_head" ||
                   (s.module_roles[i].empty() && (m == lm || (m.size() >= 7 && m.compare(m.size() - 7, 7, "lm_head") == 0)));
    if (is_head) heads.push_back(i);
  }
  if (heads.empty()) return;  // an analysis without module names (a tied head is listed as a Linear too)
  auto excluded = excluded_mask(s);
  for (size_t i : heads) {
    if (excluded[i]) continue;
    bool own = false;
    for (auto& [pat, sch] : s.plan["layer_quant_config"].items()) own = own || quark_pattern_matches(pat, mods[i], PatternMatch::kVerbatim);
    if (own) continue;  // deliberately given its own scheme
    if (s.recipe && (*s.recipe)["exclude_layers"].is_array() && (*s.recipe)["exclude_layers"].empty() && !s.choice("exclude_layers")) {
      s.risk("torch.exclude.lm_head", "low", mods[i] + " is quantized, as " + s.recipe_name + " does.",
             "Exclude it (--exclude '" + exclude_pattern_for(s, mods[i]) + "') if the quantized model's accuracy falls short.");
      return;
    }
    const std::string pattern = exclude_pattern_for(s, mods[i]);
    const bool from_template = t && (*t)["exclude_defaults"].is_array() &&
                               std::count((*t)["exclude_defaults"].begin(), (*t)["exclude_defaults"].end(), Json(pattern)) > 0;
    s.risk("torch.exclude.lm_head", "high", mods[i] + " is quantized: a quantized LM head often collapses accuracy.",
           "Add '" + pattern + "' to the exclusions" + (from_template ? " (the template default)." : "."));
    return;
  }
}

void moe_routers(PlanState& s) {
  if (!model(s).value("is_moe", false)) return;
  const auto& mods = s.modules();
  const std::vector<char>& excluded = excluded_mask(s);  // a router's ".linear" child counts
  size_t quantized = 0;
  std::string example;
  for (size_t i = 0; i < mods.size(); ++i) {
    if (is_router(s, i) && !excluded[i]) {
      ++quantized;
      if (example.empty()) example = mods[i];
    }
  }
  if (quantized) {
    // The pattern that names them all: what follows the layer index.
    std::string pattern = exclude_pattern_for(s, example);
    for (size_t p = 0; pattern == example && p + 2 < example.size(); ++p)
      if (example[p] == '.' && std::isdigit(static_cast<unsigned char>(example[p + 1]))) {
        size_t end = example.find('.', p + 1);
        if (end != std::string::npos) pattern = "*" + example.substr(end + 1);
        break;
      }
    std::vector<std::string> keep;
    for (const auto& p : s.plan["exclude_layers"])
      if (p.is_string()) keep.push_back(p.get<std::string>());
    std::string flags;
    for (const auto& p : keep) flags += "--exclude '" + p + "' ";
    flags += "--exclude '" + pattern + "'";
    s.risk("torch.moe.routers", "high", std::to_string(quantized) + " MoE router/gate layers are quantized (e.g. " + example + "): quantized routers pick the wrong experts.",
           std::string(s.cat.torch_template(model_type(s)) ? "Exclude the routers as the template's defaults do: " : "Exclude the routers (") +
               flags + (s.cat.torch_template(model_type(s)) ? "" : "; a registered template would list '" + pattern + "' in exclude_layers_name)") + ".");
  }
}

void nothing_quantized(PlanState& s) {
  const auto& mods = s.modules();
  if (mods.empty()) return;
  auto excluded = excluded_mask(s);
  size_t kept = 0;
  for (char e : excluded) kept += e ? 0 : 1;
  if (kept == 0)
    s.error("the exclusions cover all " + std::to_string(mods.size()) +
            " Linear modules: the plan would quantize nothing (narrow --exclude, or omit it to use the template defaults)");
}

// An FP8 KV cache is calibrated on the template's k/v projections (kv_layers): when the exclusions
// keep every one of them in 16-bit, Quark writes no KV scales and the runtime falls back to 1.0.
void kv_layers_kept(PlanState& s) {
  if (!s.plan["kv_cache_scheme"].is_string() || s.modules().empty()) return;
  const Json* t = tmpl(s);
  if (!t || !(*t)["kv_layers"].is_array() || (*t)["kv_layers"].empty()) return;
  const auto& mods = s.modules();
  const auto& ex = s.excluded();
  size_t matched = 0, kept = 0;
  for (const auto& p : (*t)["kv_layers"]) {
    QuarkPattern pat(p.get<std::string>(), PatternMatch::kVerbatim);
    for (size_t i = 0; i < mods.size(); ++i)
      if (pat.matches(mods[i])) {
        ++matched;
        kept += (i < ex.size() && ex[i]) ? 0 : 1;
      }
  }
  if (matched == 0 || kept > 0) return;
  const std::string msg = "The FP8 KV cache is calibrated on the " + model_type(s) + " template's k/v projections (" + join(string_list((*t)["kv_layers"])) +
                          "), and the exclusions keep all " + std::to_string(matched) +
                          " of them in 16-bit: Quark writes no KV scales, so the runtime runs the FP8 cache with scale 1.0 (uncalibrated).";
  if (s.choice("kv_cache_scheme"))
    s.conflict("torch.kv_cache.layers_kept", "kv_cache_scheme", msg, "kv_cache_scheme=null (--kv-cache none)");
  else
    s.risk("torch.kv_cache.layers_kept", "high", msg, "Keep the KV cache in 16-bit (--kv-cache none).");
}

// The printed exclusions are for the plan's release: one another release would
// match differently (0.12 also excludes the modules under a pattern, 0.13 matches
// verbatim) is named, so the command is not run with the other Quark unawares.
void exclude_release_matching(PlanState& s) {
  if (s.modules().empty() || !s.plan["exclude_layers"].is_array()) return;
  const PatternMatch here = s.exclude_match();
  std::vector<std::string> differ;
  std::string other_release;
  for (const auto& r : Catalog::release_versions(s.req.catalog_dir)) {
    if (r == s.cat.release()) continue;
    const Catalog& other = Catalog::load(s.req.catalog_dir, r);
    const PatternMatch there = other.exclude_covers_children() ? PatternMatch::kWithChildren : PatternMatch::kVerbatim;
    if (there == here) continue;
    for (const auto& p : s.plan["exclude_layers"]) {
      if (!p.is_string()) continue;
      // The children form adds only p + ".*", which a pattern ending in '*' already matches.
      const std::string text = p.get<std::string>();
      if (!text.empty() && text.back() == '*') continue;
      const QuarkPattern ph(text, here), pt(text, there);
      size_t a = 0, b = 0;
      for (const auto& m : s.modules()) {
        a += ph.matches(m) ? 1 : 0;
        b += pt.matches(m) ? 1 : 0;
      }
      if (a != b) differ.push_back("'" + p.get<std::string>() + "' (" + std::to_string(a) + " here, " + std::to_string(b) + " under " + r + ")");
    }
    if (!differ.empty()) {
      other_release = r;
      break;
    }
  }
  if (differ.empty()) return;
  s.risk("torch.exclude.release_matching", "low",
         "These exclusions match other modules under Quark " + other_release + ": " + join(differ) +
             " (Quark 0.12 also excludes the modules under a pattern; 0.13 matches it verbatim). The printed command is for Quark " + s.cat.release() + ".",
         "Run it with amd-quark " + s.cat.release() + ", or plan with --quark-version " + other_release + " for that Quark.");
}

void weight_outliers(PlanState& s) {
  if (!s.analysis.contains("weight_stats") || !s.analysis["weight_stats"].contains("outlier_modules")) return;
  const Json& outliers = s.analysis["weight_stats"]["outlier_modules"];
  std::vector<std::string> quantized;
  std::vector<QuarkPattern> excl;
  for (const auto& p : s.plan["exclude_layers"]) excl.emplace_back(p.get<std::string>(), s.exclude_match());
  for (const auto& m : outliers) {
    if (!m.is_string()) continue;
    bool excluded = false;
    for (const auto& p : excl) excluded = excluded || p.matches(m.get<std::string>());
    if (!excluded) quantized.push_back(m);
  }
  if (quantized.empty()) return;
  const Json* sc = scheme(s);
  std::string global = sc ? (*sc)["name"].get<std::string>() : "";
  std::vector<std::string> shown(quantized.begin(), quantized.begin() + std::min<size_t>(quantized.size(), 5));
  // A finer-grained alternative that differs from the global scheme.
  std::string finer;
  for (const char* c : {"ptpc_fp8", "int4_wo_64", "int8"})
    if (global != c && (!s.accelerator || support_of(s, c) == "native")) {
      finer = c;
      break;
    }
  std::string hint = "Keep them in higher precision: add --exclude " + join(shown, " --exclude ") + " (with the template defaults)";
  if (!finer.empty()) hint += ", or give them a finer-grained scheme with --layer-scheme PATTERN=" + finer;
  if (is_int4_weight_only(sc) && !has_algorithm(s, {"gptq"})) hint += ", or use GPTQ, which compensates the rounding error layer by layer";
  hint += ".";
  if (has_algorithm(s, {"smoothquant", "autosmoothquant"}))
    hint += " Avoid SmoothQuant for these layers: it migrates activation outliers into the weights, making them worse.";
  s.risk("torch.weight_stats.outliers", "medium",
         std::to_string(quantized.size()) + (quantized.size() == 1 ? " quantized module has extreme" : " quantized modules have extreme") + " weight outliers (max > 50 standard deviations): " + join(shown) +
             (quantized.size() > shown.size() ? ", ..." : "") + ".",
         hint);
}

}  // namespace torch_rules
}  // namespace quarkplan
