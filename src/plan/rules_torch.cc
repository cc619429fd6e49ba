// Torch LLM plan rules (quark_contracts.md §4.5, rules 67-87, and the Torch seed).
#include <algorithm>
#include <set>

#include "common/strings.h"
#include "intake/module_names.h"
#include "plan/rules.h"

namespace quarkplan {

const std::vector<std::string>& PlanState::modules() {
  if (!modules_loaded) {
    const Json& q = analysis["quantization_targets"];
    if (q.contains("module_names") && q["module_names"].is_array()) {
      const Json& names = q["module_names"];
      const Json* shapes = q.contains("module_shapes") && q["module_shapes"].is_array() ? &q["module_shapes"] : nullptr;
      for (size_t i = 0; i < names.size(); ++i) {
        auto expanded = expand_module_names({names[i].get<std::string>()});
        std::pair<uint64_t, uint64_t> shape{0, 0};
        if (shapes && i < shapes->size() && (*shapes)[i].is_array() && (*shapes)[i].size() == 2)
          shape = {(*shapes)[i][0].get<uint64_t>(), (*shapes)[i][1].get<uint64_t>()};
        for (auto& n : expanded) {
          module_names.push_back(std::move(n));
          module_shapes.push_back(shape);
        }
      }
    }
    modules_loaded = true;
  }
  return module_names;
}

namespace torch_rules {

namespace {

const Json& model(const PlanState& s) { return s.analysis["model"]; }
std::string model_type(const PlanState& s) { return model(s)["model_type"]; }
const Json* tmpl(const PlanState& s) { return s.cat.torch_template(model_type(s)); }
const Json* scheme(const PlanState& s) {
  return s.plan["global_scheme"].is_string() ? s.cat.torch_scheme(s.plan["global_scheme"]) : nullptr;
}
std::vector<std::string> scheme_names(const PlanState& s) {
  std::vector<std::string> v;
  for (const auto& x : s.cat.torch()["schemes"]) v.push_back(x["name"]);
  for (auto& [k, x] : s.cat.torch()["scheme_aliases"].items()) v.push_back(k);
  return v;
}
std::vector<std::string> algorithms_of(const PlanState& s) {
  std::vector<std::string> v;
  if (!s.plan["algorithm"].is_string()) return v;
  std::string a = s.plan["algorithm"], cur;
  for (char c : a + ",")
    if (c == ',') {
      if (!cur.empty()) v.push_back(cur);
      cur.clear();
    } else cur += c;
  return v;
}
std::string support(const PlanState& s, const std::string& family) {
  if (!s.accelerator) return "";
  const Json& sup = (*s.accelerator)["support"];
  return sup.contains(family) ? sup[family].get<std::string>() : "emulated";
}
// Checks that a user pattern matches at least one module; an error otherwise.
bool pattern_matches_something(PlanState& s, const std::string& what, const std::string& pattern) {
  const auto& mods = s.modules();
  if (mods.empty()) return true;  // no names known: nothing to check against
  QuarkPattern qp(pattern);
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
  s.error(what + " pattern '" + pattern + "' matches none of the model's " + std::to_string(mods.size()) +
          " Linear modules (it would silently apply nothing)" + hint);
  return false;
}

}  // namespace

void analysis_complete(PlanState& s) {
  if (s.analysis["analysis_status"] != "partial") return;
  for (const auto& r : s.analysis.value("partial_reasons", Json::array())) {
    std::string why = r;
    if (why.find("trust_remote_code") != std::string::npos) continue;  // remote_code asks its own question
    if (why.find("Quark template") != std::string::npos || why.find("cannot quantize") != std::string::npos) continue;
    s.question("The analysis is incomplete: " + why + ". Resolve it and re-run intake, or confirm planning without it.");
  }
}

void refuse_pre_quantized(PlanState& s) {
  if (!model(s)["pre_quantized"].is_string()) return;
  std::string m = model(s)["pre_quantized"];
  const Json& tc = s.cat.torch();
  const Json& deq = tc["dequantizable_pre_quantized"];
  std::string hint = tc["pre_quantized_recovery"].contains(m) ? tc["pre_quantized_recovery"][m].get<std::string>()
                                                              : tc["pre_quantized_recovery"]["*"].get<std::string>();
  if (std::count(deq.begin(), deq.end(), m)) {
    s.risk("torch.refuse.pre_quantized", "high", "The checkpoint is already quantized (" + m + "); Quark dequantizes it on load, so quality is bounded by the source.", hint);
    return;
  }
  s.refused = true;
  s.refusal = "The checkpoint is already quantized (quantization_config.quant_method = '" + m + "'): no plan is produced. Recovery: " + hint;
}

void template_required(PlanState& s) {
  if (model(s)["template_supported"].get<bool>()) return;
  s.question("Model type '" + model_type(s) + "' has no Quark template: register one with LLMTemplate.register_template() "
             "(kv_layers_name, q_layer_name, exclude_layers_name) and confirm its name, or pick a supported model.");
}

void remote_code(PlanState& s) {
  bool needs = model(s).value("trust_remote_code", false);
  bool approved = s.req.trust_remote_code || model(s).value("trust_remote_code_approved", false);
  s.plan["trust_remote_code"] = needs && approved;
  if (!needs) {
    s.reason("trust_remote_code", "torch.remote_code", "Not needed: --no_trust_remote_code");
    return;
  }
  if (approved) {
    s.reason("trust_remote_code", "torch.remote_code", "Approved by the user: the model repository's code will run");
    s.risk("torch.remote_code", "high", "The plan runs the model repository's own Python code (trust_remote_code).",
           "Review the repository's modeling files before executing the plan.");
  } else {
    s.reason("trust_remote_code", "torch.remote_code", "Needed but not approved: the command keeps --no_trust_remote_code");
    s.question("The model needs trust_remote_code (its config has an auto_map): approve running the repository's code with --trust-remote-code?");
  }
}

void resolve_hardware(PlanState& s) {
  std::string hw = s.req.hardware;
  std::string source = "--hardware";
  if (const Json* c = s.choice("hardware"); c && c->is_string()) {
    hw = *c;
    source = "your choice";
  }
  if (hw.empty() && s.req.env_context.is_object()) {
    const Json& h = s.req.env_context["hardware"];
    std::string acc = h.value("accelerator", "unknown");
    if (acc == "cpu") hw = "cpu";
    else if (acc != "unknown") {
      std::string model_name = h.contains("gpu_model") && h["gpu_model"].is_string() ? h["gpu_model"].get<std::string>() : "";
      std::string arch = h.contains("gpu_arch") && h["gpu_arch"].is_string() ? h["gpu_arch"].get<std::string>() : "";
      for (const auto& p : s.cat.hardware()["gpu_name_patterns"]) {
        std::string pat = p["pattern"];
        if ((!model_name.empty() && model_name.find(pat) != std::string::npos) || (!arch.empty() && arch == pat)) {
          hw = p["name"];
          break;
        }
      }
    }
    source = "env_context.json";
  }
  if (hw.empty()) {
    s.plan["hardware"] = nullptr;
    s.question("Which accelerator will run the quantization and the model (e.g. mi300x, mi355x, h100, b200, a100, rtx4090, cpu)? It gates the scheme.");
    s.reason("hardware", "torch.hardware.resolve", "Not known yet: asked as an open question");
    return;
  }
  s.accelerator = s.cat.accelerator(hw);
  if (!s.accelerator) {
    std::vector<std::string> names;
    for (const auto& a : s.cat.hardware()["accelerators"]) names.push_back(a["name"]);
    s.error("unknown hardware '" + hw + "'" + did_you_mean(hw, names) + "; known: " + join(names));
    return;
  }
  s.plan["hardware"] = (*s.accelerator)["name"];
  std::string mem = (*s.accelerator)["memory_gib"].is_number() ? ", " + (*s.accelerator)["memory_gib"].dump() + " GiB" : "";
  s.reason("hardware", "torch.hardware.resolve", (*s.accelerator)["name"].get<std::string>() + " (" + (*s.accelerator)["arch"].get<std::string>() + mem + ") from " + source);
}

void choose_scheme(PlanState& s) {
  if (const Json* c = s.choice("global_scheme")) {
    std::string name = c->is_string() ? c->get<std::string>() : c->dump();
    s.plan["global_scheme"] = name;
    if (!s.cat.torch_scheme(name)) {
      s.error("unknown scheme '" + name + "'" + did_you_mean(name, scheme_names(s)) + "; list them with `quarkplan catalog torch`");
      return;
    }
    s.reason("global_scheme", "torch.scheme.choose", "Your choice: " + (*s.cat.torch_scheme(name))["description"].get<std::string>());
    return;
  }
  const Json* row = nullptr;
  std::string why;
  std::string hw = s.accelerator ? (*s.accelerator)["name"].get<std::string>() : "";
  auto row_for = [&](const char* key, const std::string& value) -> const Json* {
    for (const auto& r : s.cat.torch()["decision_guide"]) {
      if (!r.contains(key)) continue;
      if (r[key].is_string() && r[key] == value) return &r;
      if (r[key].is_array() && std::count(r[key].begin(), r[key].end(), value)) return &r;
    }
    return nullptr;
  };
  if (s.req.export_format == "gguf") row = row_for("export", "gguf");
  if (!row && hw == "cpu") row = row_for("hardware", "cpu");
  if (!row && !s.req.goal.empty()) row = row_for("goal", s.req.goal);
  if (!row && !hw.empty()) row = row_for("hardware", hw);
  if (!row) row = row_for("goal", "balanced");
  s.plan["global_scheme"] = (*row)["scheme"];
  s.reason("global_scheme", "torch.scheme.choose",
           (*row)["reason"].get<std::string>() + "; alternatives: " + join(string_list((*row)["alternatives"])));
  // The guide's per-pattern overrides (mixed precision) unless the user set their own.
  if (row->contains("layer_quant_config") && !s.choice("layer_quant_config")) s.plan["guide_layer_quant_config"] = (*row)["layer_quant_config"];
  if ((*row)["algorithm"].is_string() && !s.choice("algorithm")) s.plan["guide_algorithm"] = (*row)["algorithm"];
}

void scheme_hardware(PlanState& s) {
  const Json* sc = scheme(s);
  if (!sc || !s.accelerator) return;
  std::string fam = (*sc)["family"], level = support(s, fam), name = (*sc)["name"];
  std::string hw = (*s.accelerator)["name"];
  const Json& notes = (*s.accelerator)["notes"];
  std::string note = notes.contains(fam) ? " " + notes[fam].get<std::string>() + "." : "";
  s.plan["hardware_support"] = level;
  if (level == "native") {
    s.reason("hardware_support", "torch.scheme.hardware_gate", name + " runs natively on " + hw + "." + note);
    if (fam == "fp8" && (*s.accelerator)["fp8_format"] == "fnuz")
      s.risk("torch.scheme.hardware_gate", "low", hw + " computes FP8 as FNUZ: OCP e4m3fn checkpoints are converted at load.",
             "Nothing to do; expect the runtime (vLLM/aiter) to convert scales.");
  } else if (level == "weight_only") {
    bool wo = (*sc)["weight_only"].get<bool>();
    s.reason("hardware_support", "torch.scheme.hardware_gate", name + " runs weight-only on " + hw + " (weights dequantized, 16-bit compute)." + note);
    if (!wo)
      s.risk("torch.scheme.hardware_gate", "medium", name + " quantizes activations, but " + hw + " has no " + fam + " compute: it runs weight-only." + note,
             "For real speed-ups on " + hw + " pick a natively supported scheme (see `quarkplan catalog torch`).");
  } else if (level == "emulated") {
    s.reason("hardware_support", "torch.scheme.hardware_gate", name + " is emulated on " + hw + ": research only." + note);
    s.risk("torch.scheme.hardware_gate", "high", name + " has no kernels on " + hw + ": it runs through an emulation path (research only, no speed-up)." + note,
           "Pick a scheme native to " + hw + ", or deploy on hardware that runs " + fam + " natively.");
  } else if (level == "unsupported") {
    s.conflict("torch.scheme.hardware_gate", "global_scheme", name + " cannot run on " + hw + "." + note, "int4_wo_128 or int8");
  }
}

void scheme_risky(PlanState& s) {
  const Json* sc = scheme(s);
  if (!sc) return;
  if ((*sc)["risk"].is_string())
    s.risk("torch.scheme.risky", (*sc)["experimental"].get<bool>() ? "high" : "medium", (*sc)["risk"].get<std::string>() + ".",
           "Keep it if intended; evaluate with evaluation_intent=full before deploying.");
}

void export_format(PlanState& s) {
  const Json* sc = scheme(s);
  if (!sc) return;
  std::string fam = (*sc)["family"];
  if (s.req.export_format == "gguf" && fam != "uint4_wo")
    s.conflict("torch.export.format", "global_scheme", "GGUF export needs an unsigned INT4 weight-only scheme; " + (*sc)["name"].get<std::string>() + " is not one.", "uint4_wo_32");
  if (s.req.export_format == "onnx" && fam != "int4_wo" && fam != "uint4_wo" && fam != "int8" && fam != "fp8")
    s.risk("torch.export.format", "medium", "ONNX export of " + (*sc)["name"].get<std::string>() + " is not a common path in Quark.",
           "INT4/UINT4 weight-only, int8 and fp8 export to ONNX best.");
  s.plan["export_format"] = s.req.export_format.empty() ? "hf_format" : (s.req.export_format == "hf" ? "hf_format" : s.req.export_format);
  s.reason("export_format", "torch.export.format", s.req.export_format.empty() ? "Hugging Face safetensors (the default)" : "Your choice");
}

void choose_algorithm(PlanState& s) {
  std::vector<std::string> algos;
  if (const Json* c = s.choice("algorithm")) {
    if (c->is_null()) algos = {};
    else if (c->is_array()) algos = string_list(*c);
    else {
      std::string v = c->get<std::string>(), cur;
      for (char ch : v + ",")
        if (ch == ',') {
          if (!cur.empty()) algos.push_back(lower(cur));
          cur.clear();
        } else if (ch != ' ') cur += ch;
    }
    algos.erase(std::remove(algos.begin(), algos.end(), "none"), algos.end());
    std::vector<std::string> known;
    for (const auto& a : s.cat.torch()["algorithms"]) known.push_back(a["name"]);
    for (const auto& a : algos)
      if (!s.cat.torch_algorithm(a))
        s.error("unknown algorithm '" + a + "'" + did_you_mean(a, known) + " (Quark's --quant_algo takes " + join(known) + ")");
    s.reason("algorithm", "torch.algorithm.choose", algos.empty() ? "Your choice: none" : "Your choice");
  } else if (s.plan.contains("guide_algorithm")) {
    algos = {s.plan["guide_algorithm"].get<std::string>()};
    s.reason("algorithm", "torch.algorithm.choose", "Quark's planning guide pairs " + algos[0] + " with INT4 weight-only");
  } else {
    s.reason("algorithm", "torch.algorithm.choose", "None: the scheme calibrates well on its own");
  }
  s.plan.erase("guide_algorithm");
  std::set<std::string> seen;
  std::vector<std::string> unique;
  for (auto& a : algos)
    if (seen.insert(a).second) unique.push_back(a);
  s.plan["algorithm"] = unique.empty() ? Json(nullptr) : Json(join(unique, ","));
}

void algorithm_model_support(PlanState& s) {
  const Json* t = tmpl(s);
  if (!t) return;
  const Json& builtin = (*t)["builtin_algorithms"];
  for (const auto& a : algorithms_of(s))
    if (!std::count(builtin.begin(), builtin.end(), a)) {
      bool user = s.choice("algorithm") != nullptr;
      std::string msg = "Quark has no built-in " + a + " configuration for model type '" + model_type(s) +
                        "': quantize_quark.py raises NotImplementedError unless --quant_algo_config_file gives one.";
      std::string alt = builtin.empty() ? "no algorithm" : join(string_list(builtin));
      if (user) s.conflict("torch.algorithm.model_support", "algorithm", msg, alt);
      else {
        // A guide default the model cannot take is dropped, with the reason.
        auto algos = algorithms_of(s);
        algos.erase(std::remove(algos.begin(), algos.end(), a), algos.end());
        s.plan["algorithm"] = algos.empty() ? Json(nullptr) : Json(join(algos, ","));
        s.reason("algorithm", "torch.algorithm.model_support", "Quark's planning guide suggests " + a + ", which has no built-in config for " + model_type(s) + ": none" +
                                                                  (builtin.empty() ? "" : " (available: " + alt + ")"));
      }
    }
  if ((*t)["note"].is_string() && !algorithms_of(s).empty())
    s.risk("torch.algorithm.model_support", "low", "Template note for " + model_type(s) + ": " + (*t)["note"].get<std::string>() + ".",
           "Check the algorithm touches the layers you expect.");
}

namespace {
// Algorithms of one kind (weight optimisers or activation smoothers) checked
// against the scheme family; an unusual pairing is explained and recorded.
void algorithm_compat_for(PlanState& s, bool smoothers, const char* rule) {
  const Json* sc = scheme(s);
  if (!sc) return;
  std::string fam = (*sc)["family"], name = (*sc)["name"];
  for (const auto& a : algorithms_of(s)) {
    bool is_smoother = a == "smoothquant" || a == "autosmoothquant";
    if (is_smoother != smoothers) continue;
    const Json* aj = s.cat.torch_algorithm(a);
    if (!aj) continue;
    const Json& fams = (*aj)["compatible_families"];
    if (std::count(fams.begin(), fams.end(), fam)) continue;
    std::string suggestion = smoothers ? "fp8 or int8 with " + a + ", or " + name + " without " + a
                                       : "int4_wo_128 or uint4_wo_128 with " + a + ", or " + name + " without " + a;
    s.risk(rule, "medium", "Unusual combination: " + a + " with " + name + " (" + (*aj)["description"].get<std::string>() + "; designed for " +
                               join(string_list(fams)) + ").",
           "Suggested: " + suggestion + ".");
  }
}
}  // namespace

void awq_needs_int4(PlanState& s) { algorithm_compat_for(s, false, "torch.algorithm.awq_needs_int4"); }
void smoothquant_needs_activations(PlanState& s) { algorithm_compat_for(s, true, "torch.algorithm.smoothquant_needs_activations"); }

void algorithm_count(PlanState& s) {
  auto algos = algorithms_of(s);
  if (algos.size() > 2)
    s.risk("torch.algorithm.at_most_two", "medium", std::to_string(algos.size()) + " algorithms run one after another: atypical and slow.",
           "Keep at most two (e.g. rotation + gptq) unless an evaluation shows the third helps.");
}

void kv_cache(PlanState& s) {
  s.plan["kv_cache_scheme"] = nullptr;
  const Json* c = s.choice("kv_cache_scheme");
  if (!c || c->is_null() || (c->is_string() && (*c == "none" || *c == "null"))) {
    s.reason("kv_cache_scheme", "torch.kv_cache.fp8_only", "null: not requested (KV-cache quantization typically costs accuracy)");
    return;
  }
  const Json& allowed = s.cat.torch()["kv_cache"]["schemes"];
  if (!c->is_string() || !std::count(allowed.begin(), allowed.end(), *c)) {
    s.error("kv_cache_scheme must be fp8 or null: Quark's templates support only fp8 (got " + c->dump() + ")");
    return;
  }
  s.plan["kv_cache_scheme"] = *c;
  s.reason("kv_cache_scheme", "torch.kv_cache.fp8_only", "Your choice: FP8 KV cache (--kv_cache_dtype fp8, min_kv_scale 0.0)");
  if (s.accelerator && support(s, "fp8") != "native")
    s.risk("torch.kv_cache.fp8_only", "medium", "FP8 KV cache on " + (*s.accelerator)["name"].get<std::string>() + ", which has no FP8 compute.",
           "Keep the KV cache in 16-bit on this accelerator.");
  const Json* sc = scheme(s);
  if (sc && (*sc)["family"] != "fp8")
    s.risk("torch.kv_cache.fp8_only", "low", "FP8 KV cache with a non-FP8 scheme (" + (*sc)["name"].get<std::string>() + "): check the runtime supports the mix.",
           "vLLM supports fp8 KV with any weight scheme; other runtimes may not.");
}

void exclude_layers(PlanState& s) {
  Json defaults = s.analysis["quantization_targets"]["exclude_defaults"];
  const Json* c = s.choice("exclude_layers");
  if (!c) {
    s.plan["exclude_layers"] = defaults;
    s.reason("exclude_layers", "torch.exclude.template_defaults",
             "The " + model_type(s) + " template's defaults (" + join(string_list(defaults)) + "): --exclude_layers is omitted so they apply");
    return;
  }
  Json list = c->is_string() ? (*c == "none" ? Json::array() : Json::array({*c})) : *c;
  if (!list.is_array()) {
    s.error("exclude_layers must be a list of patterns");
    return;
  }
  for (const auto& p : list)
    if (p.is_string()) pattern_matches_something(s, "exclude", p);
  s.plan["exclude_layers"] = list;
  std::vector<std::string> dropped;
  for (const auto& d : defaults)
    if (!std::count(list.begin(), list.end(), d)) dropped.push_back(d);
  s.reason("exclude_layers", "torch.exclude.template_defaults",
           "Your list REPLACES the template defaults (--exclude_layers is not additive)" +
               (dropped.empty() ? std::string() : "; no longer excluded: " + join(dropped)));
  if (list.empty())
    s.risk("torch.exclude.template_defaults", "high", "Nothing is excluded: lm_head, routers and every template default get quantized.",
           "Omit --exclude to keep the template defaults (" + join(string_list(defaults)) + ").");
  else if (!dropped.empty())
    s.risk("torch.exclude.template_defaults", "medium", "Your exclusions replace the template defaults; these are now quantized: " + join(dropped) + ".",
           "Add them to your --exclude list to keep them in full precision.");
}

void lm_head_excluded(PlanState& s) {
  const Json* t = tmpl(s);
  std::string lm = t ? (*t)["lm_head"].get<std::string>() : "lm_head";
  bool has_lm = false;
  for (const auto& m : s.modules()) has_lm = has_lm || m == lm || (m.size() >= 7 && m.compare(m.size() - 7, 7, "lm_head") == 0);
  if (!has_lm) return;  // tied embeddings: no separate lm_head Linear
  for (const auto& p : s.plan["exclude_layers"])
    if (quark_pattern_matches(p, lm)) return;
  for (auto& [pat, sch] : s.plan["layer_quant_config"].items())
    if (quark_pattern_matches(pat, lm)) return;  // deliberately given its own scheme
  s.risk("torch.exclude.lm_head", "high", lm + " is quantized: a quantized LM head often collapses accuracy.",
         "Add '" + lm + "' to the exclusions (the template default).");
}

void moe_routers(PlanState& s) {
  if (!model(s).value("is_moe", false)) return;
  std::vector<std::string> routers;
  for (const auto& m : s.modules()) {
    auto last = m.substr(m.rfind('.') + 1);
    if (last == "gate" || last == "router" || m.find("shared_expert_gate") != std::string::npos) routers.push_back(m);
  }
  size_t quantized = 0;
  std::string example;
  std::vector<QuarkPattern> excl;
  for (const auto& p : s.plan["exclude_layers"]) excl.emplace_back(p.get<std::string>());
  for (const auto& r : routers) {
    bool excluded = false;
    for (const auto& p : excl) excluded = excluded || p.matches(r);
    if (!excluded) {
      ++quantized;
      if (example.empty()) example = r;
    }
  }
  if (quantized)
    s.risk("torch.moe.routers", "high", std::to_string(quantized) + " MoE router/gate layers are quantized (e.g. " + example + "): quantized routers pick the wrong experts.",
           "Exclude the routers (the template's defaults do: '*mlp.gate' / '*router*').");
}

void weight_outliers(PlanState& s) {
  if (!s.analysis.contains("weight_stats")) return;
  const Json& outliers = s.analysis["weight_stats"]["outlier_modules"];
  std::vector<std::string> quantized;
  std::vector<QuarkPattern> excl;
  for (const auto& p : s.plan["exclude_layers"]) excl.emplace_back(p.get<std::string>());
  for (const auto& m : outliers) {
    bool excluded = false;
    for (const auto& p : excl) excluded = excluded || p.matches(m.get<std::string>());
    if (!excluded) quantized.push_back(m);
  }
  if (quantized.empty()) return;
  const Json* sc = scheme(s);
  bool static_acts = sc && (*sc)["needs_calibration_data"].get<bool>();
  std::vector<std::string> shown(quantized.begin(), quantized.begin() + std::min<size_t>(quantized.size(), 5));
  s.risk("torch.weight_stats.outliers", "medium",
         std::to_string(quantized.size()) + " quantized modules have extreme weight outliers (max > 50 sigma): " + join(shown) +
             (quantized.size() > shown.size() ? ", ..." : "") + ".",
         "Keep them in higher precision: --exclude " + join(shown, " --exclude ") + " (with the template defaults), or --layer-scheme PATTERN=fp8" +
             (static_acts ? "; smoothquant moves activation outliers into the weights" : "") + ".");
}

void layer_quant_config(PlanState& s) {
  Json cfg = Json::object();
  if (const Json* c = s.choice("layer_quant_config")) {
    if (!c->is_object()) s.error("layer_quant_config must be an object {pattern: scheme}");
    else cfg = *c;
  } else if (s.plan.contains("guide_layer_quant_config")) {
    cfg = s.plan["guide_layer_quant_config"];
  }
  s.plan.erase("guide_layer_quant_config");
  for (const auto& [k, v] : s.req.choices)
    if (k.rfind("layer_quant_config.", 0) == 0) cfg[k.substr(19)] = v;
  Json checked = Json::object();
  for (auto& [pattern, sch] : cfg.items()) {
    if (!sch.is_string() || !s.cat.torch_scheme(sch)) {
      std::string n = sch.is_string() ? sch.get<std::string>() : sch.dump();
      s.error("layer_quant_config['" + pattern + "']: unknown scheme '" + n + "'" + did_you_mean(n, scheme_names(s)));
      continue;
    }
    if (!pattern_matches_something(s, "layer_quant_config", pattern)) continue;
    for (const auto& e : s.plan["exclude_layers"])
      if (e == pattern)
        s.risk("torch.layer_quant_config.patterns", "medium", "Pattern '" + pattern + "' is both excluded and given scheme " + sch.get<std::string>() + ": exclusion wins.",
               "Remove it from one of the two lists.");
    checked[pattern] = sch;
  }
  s.plan["layer_quant_config"] = checked;
  if (checked.empty())
    s.reason("layer_quant_config", "torch.layer_quant_config.patterns", "{}: every quantized layer uses the global scheme");
  else {
    size_t n = 0;
    for (auto& [p, x] : checked.items()) {
      QuarkPattern qp(p);
      for (const auto& m : s.modules()) n += qp.matches(m) ? 1 : 0;
    }
    s.reason("layer_quant_config", "torch.layer_quant_config.patterns",
             std::string(s.choice("layer_quant_config") ? "Your overrides" : "Mixed precision from Quark's planning guide") +
                 "; each pattern checked against the model's module names (" + std::to_string(n) + " modules matched); one --layer_quant_scheme each");
  }
}

void calibration(PlanState& s) {
  const Json& d = s.cat.torch()["calibration_defaults"];
  Json& cal = s.plan["calibration"];
  cal = {{"dataset", d["dataset"]}, {"num_calib_data", d["num_calib_data"]}, {"seq_len", d["seq_len"]}};
  std::vector<std::string> datasets;
  for (const auto& x : s.cat.torch()["calibration_datasets"]) datasets.push_back(x["name"]);
  if (const Json* c = s.choice("calibration.dataset")) {
    std::string n = c->is_string() ? c->get<std::string>() : c->dump();
    const Json* ds = nullptr;
    for (const auto& x : s.cat.torch()["calibration_datasets"])
      if (x["name"] == n) ds = &x;
    if (!ds) s.error("unknown calibration dataset '" + n + "'" + did_you_mean(n, datasets) + "; Quark's --dataset takes " + join(datasets));
    else if (ds->value("broken", false)) s.error("calibration dataset " + n + ": " + (*ds)["note"].get<std::string>());
    else {
      cal["dataset"] = n;
      s.reason("calibration.dataset", "torch.calibration.defaults", "Your choice: " + (*ds)["note"].get<std::string>());
    }
  } else {
    auto algos = algorithms_of(s);
    s.reason("calibration.dataset", "torch.calibration.defaults",
             std::string("pileval: fast default") + (std::count(algos.begin(), algos.end(), "awq") ? " (pileval_for_awq_benchmark is AWQ's benchmark set)" : ""));
  }
  for (const char* key : {"num_calib_data", "seq_len", "batch_size"}) {
    std::string k = std::string("calibration.") + key;
    if (const Json* c = s.choice(k)) {
      if (!c->is_number_integer() || c->get<int64_t>() < 1) {
        s.error(k + " must be a positive integer");
        continue;
      }
      cal[key] = *c;
      s.reason(k, "torch.calibration.defaults", "Your choice");
    }
  }
  if (!s.choice("calibration.num_calib_data"))
    s.reason("calibration.num_calib_data", "torch.calibration.defaults", "128, the default of Quark's planning guide (quantize_quark.py's own default is 512)");
  if (!s.choice("calibration.seq_len")) s.reason("calibration.seq_len", "torch.calibration.defaults", "512: standard default");
  const Json* sc = scheme(s);
  if (sc && (*sc)["weight_only"].get<bool>() && algorithms_of(s).empty())
    s.reason("calibration.note", "torch.calibration.defaults", "Weight-only without algorithms: calibration data is loaded but barely used");
}

void calibration_data(PlanState& s) {
  if (s.req.calib_data != "none") return;
  const Json* sc = scheme(s);
  bool needs = (sc && (*sc)["needs_calibration_data"].get<bool>()) || !algorithms_of(s).empty() || s.plan["kv_cache_scheme"].is_string();
  if (needs) {
    s.question("No calibration data: " + std::string(sc ? (*sc)["name"].get<std::string>() : "the scheme") +
               (algorithms_of(s).empty() ? " has static activation scales" : " with " + s.plan["algorithm"].get<std::string>()) +
               " needs representative text. Allow a calibration dataset (pileval, wikitext, ...)?");
    s.risk("torch.calibration.data", "high", "No calibration data for a plan that calibrates.", "Allow a calibration dataset, or pick a weight-only scheme without algorithms.");
  }
}

void evaluation_intent(PlanState& s) {
  const Json& intents = s.cat.torch()["evaluation_intents"];
  s.plan["evaluation_intent"] = s.cat.torch()["default_evaluation_intent"];
  if (const Json* c = s.choice("evaluation_intent")) {
    if (!c->is_string() || !std::count(intents.begin(), intents.end(), *c)) {
      s.error("evaluation_intent must be one of none, smoke, full");
      return;
    }
    s.plan["evaluation_intent"] = *c;
    s.reason("evaluation_intent", "torch.evaluation_intent", "Your choice");
    return;
  }
  s.reason("evaluation_intent", "torch.evaluation_intent", "smoke: quick perplexity check after quantization");
}

void device_strategy(PlanState& s) {
  double gb = model(s)["estimated_size_gb"].get<double>();
  std::string strategy = "single accelerator";
  if (s.accelerator && (*s.accelerator)["memory_gib"].is_number()) {
    double mem = (*s.accelerator)["memory_gib"].get<double>() * 1.073741824;
    if (gb * 1.2 > mem) {
      const Json* sc = scheme(s);
      bool f2f_ok = sc && !(*sc)["needs_calibration_data"].get<bool>() && algorithms_of(s).empty();
      strategy = f2f_ok ? "file-to-file (--file2file_quantization) or multi-GPU (--multi_gpu)" : "multi-GPU (--multi_gpu)";
      s.risk("torch.device.strategy", "high",
             "The model (" + std::to_string(static_cast<int>(gb)) + " GB) does not fit one " + (*s.accelerator)["name"].get<std::string>() + ".",
             f2f_ok ? "Use --file2file_quantization (weight-only/dynamic schemes, no calibration) or --multi_gpu across several accelerators."
                    : "Use --multi_gpu across several accelerators (or --multi_device offload, which supports no algorithms).");
    }
  } else if (s.accelerator && (*s.accelerator)["name"] == "cpu") {
    strategy = "CPU";
  }
  // The user's choice (device_strategy=... at the prompt or with --set) wins
  // when the plan can run that way.
  if (const Json* c = s.choice("device_strategy"); c && c->is_string() && *c != strategy) {
    std::string want = *c;
    const Json* sc = scheme(s);
    bool calibrates = (sc && (*sc)["needs_calibration_data"].get<bool>()) || !algorithms_of(s).empty();
    if (strategy == "CPU") {
      s.error("device_strategy " + want + " needs accelerators, but the hardware is cpu: change hardware first");
      return;
    }
    if (want.rfind("file-to-file", 0) == 0 && calibrates)
      s.conflict("torch.device.strategy", "device_strategy",
                 "File-to-file quantization (--file2file_quantization) runs weight-only and dynamic schemes without calibration, and this plan calibrates.",
                 "multi-GPU (--multi_gpu)");
    s.plan["device_strategy"] = want;
    s.reason("device_strategy", "torch.device.strategy", "Your choice (the rules gave: " + strategy + ")");
    return;
  }
  s.plan["device_strategy"] = strategy;
  s.reason("device_strategy", "torch.device.strategy", strategy == "single accelerator" && !s.accelerator ? "Single accelerator until the hardware is known" : strategy);
}

}  // namespace torch_rules
}  // namespace quarkplan
