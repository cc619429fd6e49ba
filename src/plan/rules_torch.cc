// Torch LLM plan rules (quark_contracts.md §4.5, rules 67-87, Quark's planning
// guide for Torch), held to the hardware catalog (a default always runs
// natively; emulation is a conflict the user must insist on) and to AMD's
// published recipes (catalog amd_recipes). Every reason says whose choice it
// was: "Your choice", "Quark's planning guide", "AMD's recipe (amd/...)", or
// the rule's own finding.
#include <algorithm>
#include <regex>
#include <cmath>
#include <fstream>
#include <set>
#include <stdexcept>

#include "common/strings.h"
#include "common/units.h"
#include "intake/module_names.h"
#include "plan/estimates.h"
#include "plan/rules.h"

namespace quarkplan {

const std::vector<std::string>& PlanState::modules() {
  if (!modules_loaded) {
    modules_loaded = true;
    const Json& q = analysis["quantization_targets"];
    if (q.contains("module_names") && q["module_names"].is_array()) {
      const Json& names = q["module_names"];
      const Json* shapes = q.contains("module_shapes") && q["module_shapes"].is_array() ? &q["module_shapes"] : nullptr;
      const Json* roles = q.contains("module_roles") && q["module_roles"].is_array() ? &q["module_roles"] : nullptr;
      for (size_t i = 0; i < names.size(); ++i) {
        if (!names[i].is_string()) continue;
        std::vector<std::string> expanded;
        try {
          expanded = expand_module_names({names[i].get<std::string>()}, 4000000 - std::min<size_t>(module_names.size(), 4000000));
        } catch (const std::invalid_argument& e) {
          error(std::string("the analysis' module names are malformed: ") + e.what());
          module_names.clear();
          module_shapes.clear();
          module_roles.clear();
          return module_names;
        }
        std::pair<uint64_t, uint64_t> shape{0, 0};
        if (shapes && i < shapes->size() && (*shapes)[i].is_array() && (*shapes)[i].size() == 2 && (*shapes)[i][0].is_number_unsigned() &&
            (*shapes)[i][1].is_number_unsigned())
          shape = {(*shapes)[i][0].get<uint64_t>(), (*shapes)[i][1].get<uint64_t>()};
        std::string role = roles && i < roles->size() && (*roles)[i].is_string() ? (*roles)[i].get<std::string>() : "";
        for (auto& n : expanded) {
          module_names.push_back(std::move(n));
          module_shapes.push_back(shape);
          module_roles.push_back(role);
        }
      }
    }
  }
  return module_names;
}

const std::vector<char>& PlanState::excluded() {
  const auto& mods = modules();
  const Json& list = plan.contains("exclude_layers") ? plan["exclude_layers"] : Json::array();
  if (excluded_cache.size() == mods.size() && excluded_for == list) return excluded_cache;
  std::vector<QuarkPattern> excl;
  for (const auto& p : list)
    if (p.is_string()) excl.emplace_back(p.get<std::string>());
  excluded_cache.assign(mods.size(), 0);
  for (size_t i = 0; i < mods.size(); ++i)
    for (const auto& p : excl)
      if (p.matches(mods[i])) {
        excluded_cache[i] = 1;
        break;
      }
  excluded_for = list;
  return excluded_cache;
}

namespace torch_rules {

namespace {

// "1 is available", "2 are available".
std::string available(int64_t n) { return std::to_string(n) + (n == 1 ? " is available" : " are available"); }

const Json& model(const PlanState& s) { return s.analysis["model"]; }
std::string model_type(const PlanState& s) { return model(s)["model_type"]; }
const Json* tmpl(const PlanState& s) { return s.cat.torch_template(model_type(s)); }
const Json* scheme(const PlanState& s) {
  return s.plan["global_scheme"].is_string() ? s.cat.torch_scheme(s.plan["global_scheme"]) : nullptr;
}
std::string hw_name(const PlanState& s) { return s.accelerator ? (*s.accelerator)["name"].get<std::string>() : ""; }
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
bool has_algorithm(const PlanState& s, std::initializer_list<const char*> names) {
  auto algos = algorithms_of(s);
  for (const char* n : names)
    if (std::count(algos.begin(), algos.end(), n)) return true;
  return false;
}
// Support level of a scheme family on the resolved accelerator ("" when unknown).
std::string support(const PlanState& s, const std::string& family) {
  if (!s.accelerator) return "";
  const Json& sup = (*s.accelerator)["support"];
  return sup.contains(family) ? sup[family].get<std::string>() : "emulated";
}
std::string support_of(const PlanState& s, const std::string& scheme_name) {
  const Json* sc = s.cat.torch_scheme(scheme_name);
  return sc ? support(s, (*sc)["family"]) : "";
}
std::string hw_note(const PlanState& s, const std::string& family) {
  if (!s.accelerator) return "";
  const Json& notes = (*s.accelerator)["notes"];
  if (notes.contains(family)) return notes[family].get<std::string>();
  if (notes.contains("*")) return notes["*"].get<std::string>();
  return "";
}
bool is_int4_weight_only(const Json* sc) {
  return sc && ((*sc)["family"] == "int4_wo" || (*sc)["family"] == "uint4_wo");
}
std::string describe(const PlanState& s, const std::string& name) {
  const Json* sc = s.cat.torch_scheme(name);
  return sc ? (*sc)["description"].get<std::string>() : name;
}

// Checks that a pattern matches at least one module; an error otherwise.
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

// Which modules the plan leaves in full precision.
const std::vector<char>& excluded_mask(PlanState& s) { return s.excluded(); }

// The planning guide's row for this request (export, CPU, goal, hardware).
const Json* guide_row(const PlanState& s) {
  auto row_for = [&](const char* key, const std::string& value) -> const Json* {
    for (const auto& r : s.cat.torch()["decision_guide"]) {
      if (!r.contains(key)) continue;
      if (r[key].is_string() && r[key] == value) return &r;
      if (r[key].is_array() && std::count(r[key].begin(), r[key].end(), value)) return &r;
    }
    return nullptr;
  };
  std::string hw = hw_name(s);
  const Json* row = nullptr;
  if (s.req.export_format == "gguf") row = row_for("export", "gguf");
  if (!row && hw == "cpu") row = row_for("hardware", "cpu");
  if (!row && !s.req.goal.empty()) row = row_for("goal", s.req.goal);
  if (!row && !hw.empty()) row = row_for("hardware", hw);
  if (!row) row = row_for("goal", s.goal.empty() ? "balanced" : s.goal);
  return row;
}

// The goal's schemes, in order of preference, for the resolved accelerator.
// The export the plan writes: "hf", "gguf" or "onnx" (a catalog exports key).
std::string export_key(const PlanState& s) {
  std::string e = s.req.export_format.empty() ? "hf" : s.req.export_format;
  if (const Json* c = s.choice("export_format"); c && c->is_string()) e = *c == "hf_format" ? "hf" : c->get<std::string>();
  return e;
}

// Whether Quark's exporter for the plan's export takes `scheme` (catalog exports.*.schemes).
bool exportable(const PlanState& s, const std::string& scheme) {
  const Json& ex = s.cat.torch()["exports"];
  std::string e = export_key(s);
  if (!ex.contains(e) || !ex[e]["schemes"].is_array()) return true;
  return std::count(ex[e]["schemes"].begin(), ex[e]["schemes"].end(), scheme) > 0;
}

std::vector<std::string> only_exportable(const PlanState& s, const std::vector<std::string>& schemes) {
  std::vector<std::string> out;
  for (const auto& x : schemes)
    if (exportable(s, x)) out.push_back(x);
  return out;
}

// The goal's schemes for this hardware, in order, limited to what the plan's
// export accepts (its own list when the goal names none of them): a default
// never conflicts with the export the user asked for.
std::vector<std::string> preferred_schemes(const PlanState& s, const std::string& goal) {
  const Json& prefs = s.cat.torch()["scheme_preferences"];
  std::string hw = hw_name(s);
  std::vector<std::string> all = {"fp8"};
  bool found = false;
  for (const auto& h : prefs["hardware"])
    if (!found && std::count(h["hardware"].begin(), h["hardware"].end(), hw) && h["goals"].contains(goal)) {
      all = string_list(h["goals"][goal]);
      found = true;
    }
  if (!found && prefs["goals"].contains(goal)) all = string_list(prefs["goals"][goal]["schemes"]);
  std::vector<std::string> ok = only_exportable(s, all);
  if (ok.empty()) ok = string_list(s.cat.torch()["exports"][export_key(s)]["schemes"]);
  return ok.empty() ? all : ok;
}

// An already-quantized source's bits per weight as stored (0 when the source
// is not pre-quantized): what re-quantizing it must get below to gain anything.
double source_bits_per_weight(const PlanState& s) {
  const Json& m = s.analysis["model"];
  if (!m["pre_quantized"].is_string() || m.value("total_params", uint64_t{0}) == 0) return 0;
  return 8.0 * static_cast<double>(m.value("size_bytes", uint64_t{0})) / static_cast<double>(m["total_params"].get<uint64_t>());
}

// Whether `scheme` is meaningfully (half a bit) smaller than the source; true when there is no source size.
bool smaller_than_source_bits(const PlanState& s, const std::string& scheme, double source_bits) {
  const Json* x = s.cat.torch_scheme(scheme);
  return source_bits <= 0 || (x && (*x)["bits_per_weight"].get<double>() < source_bits - 0.5);
}

// Module i is an MoE router (by the structure's role, else by the usual names).
bool is_router(PlanState& s, size_t i) {
  const std::string& m = s.modules()[i];
  if (!s.module_roles[i].empty()) return s.module_roles[i] == "router";
  auto last = m.substr(m.rfind('.') + 1);
  return last == "gate" || last == "router" || m.find("shared_expert_gate") != std::string::npos;
}

std::string first_native(const PlanState& s, const std::vector<std::string>& candidates) {
  for (const auto& c : candidates)
    if (support_of(s, c) == "native") return c;
  return "";
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
  if (std::count(deq.begin(), deq.end(), m)) return;  // planned with a risk (torch.pre_quantized.dequantized)
  std::string hint = tc["pre_quantized_recovery"].contains(m) ? tc["pre_quantized_recovery"][m].get<std::string>()
                                                              : tc["pre_quantized_recovery"]["*"].get<std::string>();
  s.refused = true;
  s.refusal = "The checkpoint is already quantized (quantization_config.quant_method = '" + m +
              "'), in a form Quark cannot dequantize on load: no plan is produced. Recovery: " + hint;
}

void pre_quantized_dequantized(PlanState& s) {
  if (!model(s)["pre_quantized"].is_string()) return;
  std::string m = model(s)["pre_quantized"];
  const Json& tc = s.cat.torch();
  std::string hint = tc["pre_quantized_recovery"].contains(m) ? tc["pre_quantized_recovery"][m].get<std::string>()
                                                              : tc["pre_quantized_recovery"]["*"].get<std::string>();
  uint64_t params = model(s).value("total_params", uint64_t{0});
  s.risk("torch.pre_quantized.dequantized", "high",
         "The checkpoint is already quantized (" + m + "). Quark dequantizes it to BF16 on load (about " + format_bytes(params * 2) +
             " in memory, not its " + format_bytes(model(s).value("size_bytes", uint64_t{0})) +
             " on disk), so loading and calibration need that memory and the result is bounded by the " + m + " source's quality.",
         hint);
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
    s.reason("trust_remote_code", "torch.remote_code",
             s.req.trust_remote_code ? "Not needed, so your approval is not used: transformers implements '" + model_type(s) +
                                           "' itself and the command keeps --no_trust_remote_code"
                                     : "Not needed: --no_trust_remote_code");
    return;
  }
  if (approved) {
    s.reason("trust_remote_code", "torch.remote_code", "Your choice: approved, the model repository's code will run");
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
  const Json& env = s.req.env_context;
  if (hw.empty() && env.is_object()) {
    const Json& h = env["hardware"];
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
  // How many accelerators: --gpus, else env_context.json's gpu_count.
  if (s.req.gpus > 0) {
    s.accelerator_count = s.req.gpus;
    s.accelerator_count_source = "--gpus";
  } else if (env.is_object() && env["hardware"].contains("gpu_count") && env["hardware"]["gpu_count"].is_number_integer() &&
             env["hardware"]["gpu_count"].get<int64_t>() > 0) {
    s.accelerator_count = env["hardware"]["gpu_count"].get<int64_t>();
    s.accelerator_count_source = "env_context.json";
  }
  if (hw.empty()) {
    s.plan["hardware"] = nullptr;
    s.question("Which accelerator will run the quantization and the model (e.g. mi300x, mi355x, h100, b200, a100, rtx4090, cpu, ryzen-ai)? It gates the scheme.");
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
  s.plan["accelerator_count"] = s.accelerator_count > 0 ? Json(s.accelerator_count) : Json(nullptr);
  const Json& mg = (*s.accelerator)["memory_gib"];
  std::string mem = mg.is_number() ? ", " + format_bytes(static_cast<uint64_t>(mg.get<double>() * static_cast<double>(kGiB))) + " each" : "";
  std::string count = s.accelerator_count > 0 ? std::to_string(s.accelerator_count) + " x " : "";
  s.reason("hardware", "torch.hardware.resolve",
           (source == "your choice" ? "Your choice: " : "From " + source + ": ") + count + (*s.accelerator)["name"].get<std::string>() + " (" +
               (*s.accelerator)["arch"].get<std::string>() + mem + ")" +
               (s.accelerator_count > 0 ? "; the count from " + s.accelerator_count_source : ""));
  // Deployment-only devices (Ryzen AI PCs) run models up to a size and of the
  // families their LLM flow supports (catalog llm_limits).
  if (const Json& lim = (*s.accelerator).value("llm_limits", Json(nullptr)); lim.is_object()) {
    double params_b = static_cast<double>(model(s).value("total_params", uint64_t{0})) / 1e9;
    std::string name = (*s.accelerator)["name"];
    if (lim.contains("max_params_b") && params_b > lim["max_params_b"].get<double>()) {
      char b[32];
      std::snprintf(b, sizeof b, "%.0fB", params_b);
      s.conflict("torch.hardware.resolve", "hardware",
                 "A " + std::string(b) + "-parameter model does not run on " + name + ": " + lim["why"].get<std::string>() + ".",
                 "an Instinct or data-center GPU (e.g. --hardware mi300x), or a model of at most " + lim["max_params_b"].dump() + "B");
    } else if (lim.contains("model_types") && !std::count(lim["model_types"].begin(), lim["model_types"].end(), model_type(s))) {
      s.risk("torch.hardware.resolve", "high",
             "Model type '" + model_type(s) + "' is not among the families " + name + "'s LLM flow supports (" + join(string_list(lim["model_types"])) + ").",
             "Check AMD's Ryzen AI model list before quantizing, or deploy on a GPU.");
    }
  }
}

// The published checkpoint of a recipe closest to this model: the one whose
// name carries the model's size ("8B", "70B"), else the recipe's own id.
std::string published_name(const PlanState& s, const Json& recipe) {
  std::string path = s.analysis["model"].value("model_path", std::string());
  std::string base = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  std::transform(base.begin(), base.end(), base.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  static const std::regex size(R"((^|[-_])(\d+(\.\d+)?b)([-_]|$))");
  std::smatch m;
  if (std::regex_search(base, m, size))
    for (const auto& p : recipe.value("published", Json::array())) {
      std::string name = p.get<std::string>(), low = name;
      std::transform(low.begin(), low.end(), low.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
      if (low.find("-" + m[2].str() + "-") != std::string::npos) return name;
    }
  return recipe["id"].get<std::string>();
}

void amd_recipe(PlanState& s) {
  s.goal = s.req.goal.empty() ? s.cat.torch()["default_goal"].get<std::string>() : s.req.goal;
  if (!s.accelerator || s.req.export_format == "gguf" || s.req.export_format == "onnx") return;
  std::string mt = model_type(s), hw = hw_name(s);
  for (const auto& r : s.cat.torch()["amd_recipes"]) {
    if (!std::count(r["model_types"].begin(), r["model_types"].end(), mt)) continue;
    if (!std::count(r["hardware"].begin(), r["hardware"].end(), hw)) continue;
    if (!std::count(r["goals"].begin(), r["goals"].end(), s.goal)) continue;
    if (support_of(s, r["scheme"]) != "native") continue;  // a recipe is followed only where it runs natively
    // nor for models much smaller than the ones AMD released it for (small models lose more at 4 bits)
    if (r.contains("min_params_b") && static_cast<double>(model(s).value("total_params", uint64_t{0})) < r["min_params_b"].get<double>() * 1e9) continue;
    if (!smaller_than_source_bits(s, r["scheme"], source_bits_per_weight(s))) continue;  // nor to re-quantize a source no smaller
    if (const Json* c = s.choice("global_scheme"); c && *c != r["scheme"]) continue;  // nor against the user's scheme
    s.recipe = &r;
    s.recipe_name = published_name(s, r);
    s.reason("amd_recipe", "torch.recipe.amd",
             "AMD's recipe: " + s.recipe_name + " (published for " + mt + " on " + join(string_list(r["hardware"])) + "): " +
                 r["command"].get<std::string>());
    return;
  }
}

void choose_scheme(PlanState& s) {
  s.plan["goal"] = s.goal;
  const Json* guide = guide_row(s);
  if (const Json* c = s.choice("global_scheme")) {
    std::string name = c->is_string() ? c->get<std::string>() : c->dump();
    s.plan["global_scheme"] = name;
    if (!s.cat.torch_scheme(name)) {
      const Json& legacy = s.cat.torch()["legacy_scheme_names"]["names"];
      if (legacy.contains(name))
        s.error("'" + name + "' is the scheme's name before Quark 0.11 (older AMD model cards use it); today's quantize_quark.py calls it " +
                legacy[name].get<std::string>());
      else
        s.error("unknown scheme '" + name + "'" + did_you_mean(name, scheme_names(s)) + "; list them with `quarkplan catalog torch`");
      return;
    }
    s.reason("global_scheme", "torch.scheme.choose", "Your choice: " + describe(s, name));
    return;
  }
  std::string chosen, why;
  Json alternatives = Json::array();
  auto add_alt = [&](const std::string& sch, const std::string& source, const std::string& note) {
    if (sch.empty() || sch == chosen || !exportable(s, sch)) return;  // an alternative the export rejects is none
    for (const auto& a : alternatives)
      if (a["scheme"] == sch) return;
    alternatives.push_back({{"scheme", sch}, {"source", source}, {"note", note}});
  };
  // The guide's choice, and why the default differs from it (hardware facts or size).
  auto guide_alternative = [&]() {
    if (!guide) return;
    std::string g = (*guide)["scheme"];
    if (g == chosen) return;
    std::string level = support_of(s, g), note;
    if (level == "unsupported") return;  // the guide's row cannot run here at all: no alternative (catalog guide_deviations says so)
    if (!level.empty() && level != "native") {
      const Json* gsc = s.cat.torch_scheme(g);
      std::string hn = gsc ? hw_note(s, (*gsc)["family"]) : "";
      note = g + " is " + (level == "weight_only" ? "weight-only" : level) + " on " + hw_name(s) + (hn.empty() ? "" : ". " + hn);
    } else if (const Json *gsc = s.cat.torch_scheme(g), *csc = s.cat.torch_scheme(chosen);
               gsc && csc && (*gsc)["bits_per_weight"].get<double>() > (*csc)["bits_per_weight"].get<double>()) {
      note = g + " is larger (" + (*gsc)["bits_per_weight"].dump() + " vs " + (*csc)["bits_per_weight"].dump() + " bits per weight) and more accurate";
    } else {
      note = (*guide)["reason"].get<std::string>();
    }
    add_alt(g, "Quark's planning guide", note);
  };

  if (s.req.export_format == "gguf" && guide && guide->contains("export")) {
    chosen = (*guide)["scheme"];
    why = "Quark's planning guide: " + (*guide)["reason"].get<std::string>() + " (Quark's GGUF exporter accepts only this scheme)";
    if ((*guide)["algorithm"].is_string() && !s.choice("algorithm")) s.plan["guide_algorithm"] = (*guide)["algorithm"];
  } else if (s.recipe) {
    chosen = (*s.recipe)["scheme"];
    why = "AMD's recipe (" + s.recipe_name + "): " + describe(s, chosen) + ", native on " + hw_name(s);
    if ((*s.recipe)["algorithm"].is_string() && !s.choice("algorithm")) s.plan["guide_algorithm"] = (*s.recipe)["algorithm"];
    guide_alternative();
  } else if (!s.accelerator) {
    chosen = guide ? (*guide)["scheme"].get<std::string>() : "fp8";
    why = "Quark's planning guide: " + (guide ? (*guide)["reason"].get<std::string>() : std::string("FP8")) +
          " (checked against the hardware once it is known)";
    if (!exportable(s, chosen)) {
      chosen = preferred_schemes(s, s.goal).front();
      why = describe(s, chosen) + ", the first scheme of the " + s.goal + " goal that Quark's " + export_key(s) +
            " export accepts (checked against the hardware once it is known)";
    }
    if (guide && (*guide)["algorithm"].is_string() && !s.choice("algorithm")) s.plan["guide_algorithm"] = (*guide)["algorithm"];
  } else {
    auto prefs = preferred_schemes(s, s.goal);
    chosen = first_native(s, prefs);
    const Json& goal_pref = s.cat.torch()["scheme_preferences"]["goals"][s.goal];
    // An already-quantized source: re-quantizing to its own size or larger
    // gains nothing, so the default is the first native scheme smaller than
    // the source (the goal's, else any goal's), when there is one.
    std::string smaller_than_source;
    double source_bits = source_bits_per_weight(s);
    auto below_source = [&](const std::string& c) { return smaller_than_source_bits(s, c, source_bits); };
    if (source_bits > 0) {
      auto smaller = [&](const std::vector<std::string>& list) {
        std::vector<std::string> out;
        for (const auto& c : list)
          if (below_source(c)) out.push_back(c);
        return out;
      };
      // Smaller is the point here: the size goal's order (MXFP4 on CDNA4,
      // NVFP4 on Blackwell, INT4 elsewhere) unless accuracy was asked for.
      std::vector<std::string> order = s.goal == "accuracy" ? prefs : preferred_schemes(s, "size");
      for (const char* g : {s.goal.c_str(), "balanced", "size", "experiment"})
        for (const auto& c : preferred_schemes(s, g)) order.push_back(c);
      smaller_than_source = first_native(s, smaller(order));
      if (!smaller_than_source.empty() && smaller_than_source != chosen) {
        char bits[16];
        std::snprintf(bits, sizeof bits, "%.1f", source_bits);
        chosen = smaller_than_source;
        why = describe(s, chosen) + ", the first scheme " + hw_name(s) + " runs natively that is smaller than the " +
              model(s)["pre_quantized"].get<std::string>() + " source (" + bits + " bits per weight as stored)";
      }
    }
    if (!why.empty()) {
    } else if (chosen.empty()) {
      // Nothing the goal prefers is native here: the most useful native scheme of any goal.
      chosen = first_native(s, only_exportable(s, {"fp8", "int8", "int4_wo_128", "uint4_wo_128", "mxfp4", "nvfp4"}));
      if (chosen.empty()) chosen = prefs.front();
      why = "No scheme of the " + s.goal + " goal runs natively on " + hw_name(s) + ": " + describe(s, chosen) + " does";
    } else {
      why = describe(s, chosen) + ", the first scheme of the " + s.goal + " goal that " + hw_name(s) + " runs natively";
    }
    if (goal_pref.contains("algorithm") && is_int4_weight_only(s.cat.torch_scheme(chosen)) && !s.choice("algorithm"))
      s.plan["guide_algorithm"] = goal_pref["algorithm"];
    if (goal_pref.contains("layer_quant_config") && !s.choice("layer_quant_config")) {
      Json lqc = Json::object();
      for (auto& [pat, options] : goal_pref["layer_quant_config"].items()) {
        std::string native = first_native(s, only_exportable(s, string_list(options)));
        if (!native.empty() && native != chosen) lqc[pat] = native;
      }
      if (!lqc.empty()) s.plan["guide_layer_quant_config"] = lqc;
    }
    guide_alternative();
    for (const auto& p : prefs)
      if (support_of(s, p) == "native")
        add_alt(p, "the " + s.goal + " goal",
                below_source(p) ? "also native on " + hw_name(s) : "native on " + hw_name(s) + ", but no smaller than the source");
  }
  s.plan["global_scheme"] = chosen;
  s.plan["alternatives"] = alternatives;
  // Alternatives with the same source and note are named together.
  std::string alt_text;
  for (size_t i = 0; i < alternatives.size() && alt_text.size() <= 400;) {
    const Json& a = alternatives[i];
    std::string names = a["scheme"];
    size_t j = i + 1;
    for (; j < alternatives.size() && alternatives[j]["source"] == a["source"] && alternatives[j]["note"] == a["note"]; ++j)
      names += ", " + alternatives[j]["scheme"].get<std::string>();
    if (!alt_text.empty()) alt_text += "; ";
    alt_text += names + " (" + a["source"].get<std::string>() + (a["note"].get<std::string>().empty() ? "" : ": " + a["note"].get<std::string>()) + ")";
    i = j;
  }
  s.reason("global_scheme", "torch.scheme.choose",
           why + (s.req.goal.empty() ? " (no --goal given: " + s.goal + " is the default goal)" : "") +
               (alt_text.empty() ? "" : "; alternatives: " + alt_text));
}

namespace {
// Gate one scheme on the accelerator; `where` names the decision it came from.
void gate_scheme(PlanState& s, const std::string& name, const std::string& decision, const std::string& where, bool user) {
  const Json* sc = s.cat.torch_scheme(name);
  if (!sc || !s.accelerator) return;
  std::string fam = (*sc)["family"], level = support(s, fam), hw = hw_name(s), note = hw_note(s, fam);
  std::string native_alt;
  for (const auto& c : preferred_schemes(s, s.goal.empty() ? "balanced" : s.goal))
    if (support_of(s, c) == "native" && c != name) {
      native_alt = c;
      break;
    }
  if (native_alt.empty()) native_alt = first_native(s, {"fp8", "int8", "int4_wo_128", "uint4_wo_128"});
  if (level == "emulated" || level == "unsupported") {
    std::string what = level == "emulated" ? "has no kernels on " + hw + ": it only runs through an emulation path (no speed-up, research only)"
                                           : "cannot run on " + hw;
    s.conflict("torch.scheme.hardware_gate", decision, where + name + " " + what + "." + (note.empty() ? "" : " " + note + "."),
               native_alt.empty() ? "a scheme native to " + hw + " (quarkplan catalog torch)" : native_alt + " (native on " + hw + ")");
  } else if (level == "weight_only" && !(*sc)["weight_only"].get<bool>()) {
    s.risk("torch.scheme.hardware_gate", user ? "medium" : "high",
           where + name + " quantizes activations, but " + hw + " has no " + fam + " compute: it runs weight-only (weights dequantized to 16-bit)." +
               (note.empty() ? "" : " " + note + "."),
           native_alt.empty() ? "Pick a scheme native to " + hw + "." : "For real speed-ups on " + hw + " use " + native_alt + " (native).");
  }
}
}  // namespace

void scheme_hardware(PlanState& s) {
  const Json* sc = scheme(s);
  if (!sc || !s.accelerator) return;
  std::string fam = (*sc)["family"], level = support(s, fam), name = (*sc)["name"], hw = hw_name(s), note = hw_note(s, fam);
  // Every layer_quant_config entry runs on the same accelerator: the support
  // the plan reports is the weakest of all the schemes it uses.
  static const std::vector<std::string> order = {"native", "weight_only", "emulated", "unsupported"};
  std::string worst = level;
  for (const auto& [k, v] : s.req.choices)
    if ((k == "layer_quant_config" && v.is_object()) || k.rfind("layer_quant_config.", 0) == 0) {
      std::vector<std::pair<std::string, std::string>> entries;
      if (v.is_object())
        for (auto& [p, x] : v.items()) entries.emplace_back(p, x.is_string() ? x.get<std::string>() : "");
      else entries.emplace_back(k.substr(19), v.is_string() ? v.get<std::string>() : "");
      for (auto& [p, x] : entries) {
        gate_scheme(s, x, "layer_quant_config", "layer_quant_config['" + p + "']: ", true);
        std::string l = support_of(s, x);
        if (!l.empty() && std::find(order.begin(), order.end(), l) > std::find(order.begin(), order.end(), worst)) worst = l;
      }
    }
  s.plan["hardware_support"] = worst;
  gate_scheme(s, name, "global_scheme", "", s.choice("global_scheme") != nullptr);
  if (level == "native") {
    s.reason("hardware_support", "torch.scheme.hardware_gate",
             name + " runs natively on " + hw + (worst != "native" ? " (a layer override runs " + worst + ")" : "") + "." + (note.empty() ? "" : " " + note + "."));
    if (fam == "fp8" && (*s.accelerator)["fp8_format"] == "fnuz")
      s.risk("torch.scheme.hardware_gate", "low", hw + " computes FP8 as FNUZ: OCP e4m3fn checkpoints are converted at load.",
             "Nothing to do; the runtime (vLLM/aiter) converts the scales.");
  } else if (level == "weight_only") {
    s.reason("hardware_support", "torch.scheme.hardware_gate", name + " runs weight-only on " + hw + " (weights dequantized, 16-bit compute)." + (note.empty() ? "" : " " + note + "."));
  } else {
    s.reason("hardware_support", "torch.scheme.hardware_gate", name + " is " + level + " on " + hw + "." + (note.empty() ? "" : " " + note + "."));
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
  std::string e = export_key(s);
  const Json& ex = s.cat.torch()["exports"];
  if (!ex.contains(e) || e == "about") {
    s.error("export_format must be hf, gguf or onnx (got '" + e + "')");
    return;
  }
  const Json& spec = ex[e];
  s.plan["export_format"] = spec["flag"];
  if (const Json* acc = s.accelerator; acc && (*acc).contains("llm_export") && (*acc)["llm_export"] != spec["flag"])
    s.conflict("torch.export.format", "export_format",
               "On " + hw_name(s) + ", LLMs run from a " + (*acc)["llm_export"].get<std::string>() + " checkpoint (" +
                   (*acc).value("llm_export_why", std::string("the accelerator's own flow")) + "): Quark's " + e + " export does not run there.",
               "--export hf");
  std::string who = s.req.export_format.empty() && !s.choice("export_format") ? "The default: " : "Your choice: ";
  s.reason("export_format", "torch.export.format", who + spec["flag"].get<std::string>() + (e == "hf" ? " (Hugging Face safetensors)" : ""));
  const Json* sc = scheme(s);
  if (!sc) return;
  std::string name = (*sc)["name"];
  if (spec["schemes"].is_array()) {
    const Json& ok = spec["schemes"];
    auto allowed = [&](const std::string& n) { return std::count(ok.begin(), ok.end(), n) > 0; };
    if (!allowed(name)) {
      // The closest exportable scheme: same family and native here, else native, else the first.
      std::string closest;
      for (int pass = 0; pass < 2 && closest.empty(); ++pass)
        for (const auto& o : ok) {
          const Json* osc = s.cat.torch_scheme(o.get<std::string>());
          bool native = !s.accelerator || support_of(s, o.get<std::string>()) == "native";
          if (osc && native && (pass == 1 || (*osc)["family"] == (*sc)["family"])) {
            closest = o.get<std::string>();
            break;
          }
        }
      if (closest.empty() && !ok.empty()) closest = ok[0].get<std::string>();
      s.conflict("torch.export.format", "global_scheme",
                 "Quark's " + e + " export does not accept " + name + " (" + spec["source"].get<std::string>() + "; it accepts " +
                     join(string_list(ok)) + ").",
                 closest, true);
    }
    // Layer overrides must be exportable too; ONNX export cannot mix INT4 and INT8.
    std::vector<std::string> override_schemes;
    for (const auto& [k, v] : s.req.choices)
      if (k.rfind("layer_quant_config.", 0) == 0 && v.is_string()) override_schemes.push_back(v);
    if (const Json* c = s.choice("layer_quant_config"); c && c->is_object())
      for (auto& [p, v] : c->items())
        if (v.is_string()) override_schemes.push_back(v);
    bool int4 = is_int4_weight_only(sc), int8 = (*sc)["family"] == "int8";
    for (const auto& o : override_schemes) {
      if (!allowed(o))
        s.conflict("torch.export.format", "layer_quant_config", "Quark's " + e + " export does not accept the layer scheme " + o + ".",
                   "drop the override or export to hf_format", true);
      const Json* osc = s.cat.torch_scheme(o);
      int4 = int4 || is_int4_weight_only(osc);
      int8 = int8 || (osc && (*osc)["family"] == "int8");
    }
    if (spec.value("no_int4_with_int8", false) && int4 && int8)
      s.conflict("torch.export.format", "layer_quant_config", "Quark's ONNX export does not support INT4 layers mixed with INT8 layers.",
                 "one scheme for every layer, or export to hf_format", true);
  }
  if (spec.contains("model_types") && !std::count(spec["model_types"].begin(), spec["model_types"].end(), model_type(s)))
    s.conflict("torch.export.format", "export_format",
               "Quark's " + e + " export supports only " + join(string_list(spec["model_types"])) + " architectures, not " + model_type(s) + ".",
               "--export hf (then convert with llama.cpp's own tools)", true);
  if (spec.contains("needs_file") && model(s).contains("model_path")) {
    // A tokenizer.model the exporter reads: only checkable when the files are here.
    std::string dir = model(s)["model_path"];
    if (s.analysis["model"].value("weights", Json::object()).value("source", "none") != "none" &&
        !std::ifstream(dir + "/" + spec["needs_file"].get<std::string>()).good())
      s.risk("torch.export.format", "high", "Quark's " + e + " exporter reads " + spec["needs_file"].get<std::string>() + ", which the model folder does not have.",
             "Llama 3-style tokenizers (tokenizer.json only) cannot be exported to GGUF by Quark: export hf_format and convert with llama.cpp.");
  }
}

void choose_algorithm(PlanState& s) {
  std::vector<std::string> algos;
  if (const Json* c = s.choice("algorithm")) {
    if (c->is_null()) algos = {};
    else if (c->is_array()) algos = string_list(*c);
    else if (c->is_string()) {
      std::string v = c->get<std::string>(), cur;
      for (char ch : v + ",")
        if (ch == ',') {
          if (!cur.empty()) algos.push_back(lower(cur));
          cur.clear();
        } else if (ch != ' ') cur += ch;
    } else {
      s.error("algorithm must be a name or a comma-separated list, not " + c->dump());
      return;
    }
    algos.erase(std::remove(algos.begin(), algos.end(), "none"), algos.end());
    std::vector<std::string> known;
    for (const auto& a : s.cat.torch()["algorithms"]) known.push_back(a["name"]);
    for (const auto& a : algos)
      if (!s.cat.torch_algorithm(a))
        s.error("unknown algorithm '" + a + "'" + did_you_mean(a, known) + " (Quark's --quant_algo takes " + join(known) + ")");
    s.reason("algorithm", "torch.algorithm.choose", algos.empty() ? "Your choice: none" : "Your choice");
  } else if (const Json* d = s.choice("device_strategy"); d && *d == "file2file") {
    s.reason("algorithm", "torch.algorithm.choose", "None: file-to-file quantization (your device_strategy) applies no algorithm");
  } else if (s.plan.contains("guide_algorithm")) {
    algos = {s.plan["guide_algorithm"].get<std::string>()};
    std::string who = s.recipe && (*s.recipe)["algorithm"] == algos[0] ? "AMD's recipe (" + s.recipe_name + ")"
                      : s.req.export_format == "gguf"                  ? "Quark's planning guide (GGUF)"
                                                                        : "The " + s.goal + " goal";
    s.reason("algorithm", "torch.algorithm.choose", who + ": " + algos[0] + " for " + s.plan["global_scheme"].get<std::string>());
  } else if (is_int4_weight_only(scheme(s))) {
    // INT4 weight-only rounds to nearest without an optimizer: take the one
    // Quark has a built-in config for (else torch.algorithm.int4_needs_optimizer says so).
    const Json* t = tmpl(s);
    std::vector<std::string> builtin = t ? string_list((*t)["builtin_algorithms"]) : std::vector<std::string>{};
    for (const char* a : {"awq", "gptq"})
      if (algos.empty() && std::count(builtin.begin(), builtin.end(), a)) algos = {a};
    s.reason("algorithm", "torch.algorithm.choose",
             algos.empty() ? "None: Quark has no built-in AWQ/GPTQ config for " + model_type(s)
                           : algos[0] + ": " + s.plan["global_scheme"].get<std::string>() +
                                 " would otherwise round every weight to nearest (Quark has a built-in " + algos[0] + " config for " + model_type(s) + ")");
  } else {
    const Json* sc = scheme(s);
    std::string name = s.plan["global_scheme"].get<std::string>(), why;
    if (sc && (*sc)["needs_calibration_data"] == true) why = name + " takes its scales from the calibration set; no weight optimizer is needed";
    else if (sc && (*sc)["weight_only"] == true) why = name + " scales its weights directly; no weight optimizer is needed";
    else why = name + " scales activations at run time and its weights directly; no weight optimizer is needed";
    s.reason("algorithm", "torch.algorithm.choose", "None: " + why);
  }
  s.plan.erase("guide_algorithm");
  std::set<std::string> seen;
  std::vector<std::string> unique;
  for (auto& a : algos)
    if (seen.insert(a).second) unique.push_back(a);
  s.plan["algorithm"] = unique.empty() ? Json(nullptr) : Json(join(unique, ","));
  // A Ryzen AI variant (Phi-4: GPTQ) replaces the recipe's algorithm.
  if (s.recipe && !s.choice("algorithm") && s.recipe->contains("variants"))
    for (const auto& v : (*s.recipe)["variants"]) {
      bool match = true;
      for (auto& [k, want] : v["when"].items()) {
        const Json& m = model(s);
        const Json* got = m.contains(k) ? &m[k] : nullptr;
        match = match && got && *got == want;
      }
      if (match && v.contains("algorithm")) {
        s.plan["algorithm"] = v["algorithm"];
        s.reason("algorithm", "torch.algorithm.choose", "AMD's recipe (" + s.recipe_name + "): " + v["note"].get<std::string>());
      }
    }
}

void algorithm_model_support(PlanState& s) {
  const Json* t = tmpl(s);
  if (!t) return;
  const Json& builtin = (*t)["builtin_algorithms"];
  for (const auto& a : algorithms_of(s))
    if (!std::count(builtin.begin(), builtin.end(), a)) {
      bool user = s.choice("algorithm") != nullptr;
      std::string msg = "Quark has no built-in " + a + " configuration for model type '" + model_type(s) +
                        "': quantize_quark.py stops with an error unless --quant_algo_config_file gives one (quarkplan does not write that file).";
      std::string alt = builtin.empty() ? "no algorithm" : join(string_list(builtin));
      if (user) s.conflict("torch.algorithm.model_support", "algorithm", msg, alt, true);
      else {
        // A default the model cannot take is dropped, with the reason.
        auto algos = algorithms_of(s);
        algos.erase(std::remove(algos.begin(), algos.end(), a), algos.end());
        s.plan["algorithm"] = algos.empty() ? Json(nullptr) : Json(join(algos, ","));
        s.reason("algorithm", "torch.algorithm.model_support",
                 "The default " + a + " has no built-in Quark config for " + model_type(s) + ": none" +
                     (builtin.empty() ? "" : " (built in for this model type: " + alt + ")") +
                     "; supply one with --quant_algo_config_file " + a + " FILE to use it");
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

void int4_needs_optimizer(PlanState& s) {
  const Json* sc = scheme(s);
  if (!is_int4_weight_only(sc) || has_algorithm(s, {"awq", "gptq", "gptaq", "qronos"})) return;
  const Json* t = tmpl(s);
  std::vector<std::string> builtin = t ? string_list((*t)["builtin_algorithms"]) : std::vector<std::string>{};
  std::string pick = std::count(builtin.begin(), builtin.end(), "awq") ? "awq" : std::count(builtin.begin(), builtin.end(), "gptq") ? "gptq" : "";
  s.risk("torch.algorithm.int4_needs_optimizer", "medium",
         (*sc)["name"].get<std::string>() + " without AWQ or GPTQ rounds every weight to nearest: INT4 loses noticeably more accuracy that way.",
         pick.empty() ? "Quark has no built-in AWQ/GPTQ config for " + model_type(s) + ": write one for this architecture and add --quant_algo awq --quant_algo_config_file awq FILE to the printed command (quarkplan does not plan that file), or accept round-to-nearest."
                      : "Plan with --algorithm " + pick + " (Quark's --quant_algo " + pick + "; it has a built-in " + pick + " config for " + model_type(s) + ").");
}

void algorithm_count(PlanState& s) {
  auto algos = algorithms_of(s);
  if (algos.size() > 2)
    s.risk("torch.algorithm.at_most_two", "medium", std::to_string(algos.size()) + " algorithms run one after another: atypical and slow.",
           "Keep at most two (e.g. rotation + gptq) unless an evaluation shows the third helps.");
}

void kv_cache(PlanState& s) {
  s.plan["kv_cache_scheme"] = nullptr;
  const Json* c = s.choice("kv_cache_scheme");
  if (!c && s.recipe && (*s.recipe)["kv_cache"].is_string()) {
    s.plan["kv_cache_scheme"] = (*s.recipe)["kv_cache"];
    s.reason("kv_cache_scheme", "torch.kv_cache.fp8_only",
             "AMD's recipe (" + s.recipe_name + "): FP8 KV cache (--kv_cache_dtype fp8; serve with --kv-cache-dtype fp8)");
    return;
  }
  if (!c || c->is_null() || (c->is_string() && (*c == "none" || *c == "null"))) {
    s.reason("kv_cache_scheme", "torch.kv_cache.fp8_only",
             std::string(c ? "Your choice: " : "") + "null: not requested (KV-cache quantization typically costs accuracy" +
                 (s.recipe ? "; " + s.recipe_name + " leaves it in 16-bit too" : "") + ")");
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
    s.risk("torch.kv_cache.fp8_only", "medium", "FP8 KV cache on " + hw_name(s) + ", which has no FP8 compute: the cache is stored in FP8 and upcast for attention.",
           "Keep the KV cache in 16-bit on this accelerator unless memory is the limit.");
  const Json* sc = scheme(s);
  if (sc && (*sc)["family"] != "fp8")
    s.risk("torch.kv_cache.fp8_only", "low", "FP8 KV cache with a non-FP8 scheme (" + (*sc)["name"].get<std::string>() + "): check the runtime supports the mix.",
           "vLLM supports an FP8 KV cache with any weight scheme; other runtimes may not.");
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
    s.plan["exclude_layers"] = defaults;
    s.reason("exclude_layers", "torch.exclude.template_defaults",
             "The " + model_type(s) + " template's defaults (" + join(string_list(defaults)) + "): --exclude_layers is omitted so they apply");
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
      for (int64_t i = 0; i < mtp; ++i) list.push_back(root + "." + std::to_string(layers + i) + ".*");
    }
    Json kept = Json::array();
    for (const auto& p : list) {
      if (!p.is_string()) {
        s.error("exclude_layers must list patterns (strings), not " + p.dump());
        continue;
      }
      if (c) {
        if (pattern_matches_something(s, "exclude", p)) kept.push_back(p);
      } else {
        kept.push_back(p);  // a recipe pattern for parts this checkpoint may not have is harmless
      }
    }
    s.plan["exclude_layers"] = kept;
    // A default counts as dropped only when modules it excluded are no longer
    // excluded: compared by what the patterns match ('*lm_head' keeps 'lm_head').
    std::vector<std::string> dropped, dropped_other;
    std::vector<QuarkPattern> kept_patterns;
    for (const auto& k : kept) kept_patterns.emplace_back(k.get<std::string>());
    const auto& mods = s.modules();
    for (const auto& d : defaults) {
      if (!d.is_string() || std::count(kept.begin(), kept.end(), d)) continue;
      QuarkPattern dp(d.get<std::string>());
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
    s.reason("exclude_layers", "torch.exclude.template_defaults",
             who + " REPLACES the template defaults (--exclude_layers is not additive)" +
                 (dropped.empty() ? std::string() : "; no longer excluded: " + join(dropped)));
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
    who = "The " + s.goal + " goal's mixed precision";
  }
  s.plan.erase("guide_layer_quant_config");
  for (const auto& [k, v] : s.req.choices)
    if (k.rfind("layer_quant_config.", 0) == 0) {
      cfg[k.substr(19)] = v;
      user = true;
    }
  if (user) who = "Your overrides";
  Json checked = Json::object();
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
             who + "; each pattern checked against the model's module names (" + std::to_string(n) + " modules matched); one --layer_quant_scheme each");
  }
}

// The pattern a hint tells the user to exclude `module` with: the template's
// own default that covers it (Llama 4's '*lm_head' covers
// 'language_model.lm_head', which a bare 'lm_head' does not, since Quark
// matches the whole name with fnmatch), else the module's own name.
std::string exclude_pattern_for(PlanState& s, const std::string& module) {
  if (const Json* t = tmpl(s); t && (*t)["exclude_defaults"].is_array())
    for (const auto& d : (*t)["exclude_defaults"])
      if (d.is_string() && QuarkPattern(d.get<std::string>()).matches(module)) return d.get<std::string>();
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
    for (auto& [pat, sch] : s.plan["layer_quant_config"].items()) own = own || quark_pattern_matches(pat, mods[i]);
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
  std::vector<char> excluded = excluded_mask(s);
  // Some transformers versions wrap a router's weight in a child Linear
  // ("mlp.gate.linear"), which is what Quark's templates ("*mlp.gate.linear")
  // and AMD's recipes ("*mlp.gate.*") exclude: either form covers the router.
  std::vector<QuarkPattern> excl;
  for (const auto& p : s.plan["exclude_layers"])
    if (p.is_string()) excl.emplace_back(p.get<std::string>());
  auto covered = [&](const std::string& m) {
    std::string child = m + ".linear";
    for (const auto& p : excl)
      if (p.matches(m) || p.matches(child)) return true;
    return false;
  };
  size_t quantized = 0;
  std::string example;
  for (size_t i = 0; i < mods.size(); ++i) {
    bool router = is_router(s, i);
    if (router && !excluded[i] && covered(mods[i])) excluded[i] = 1;
    if (router && !excluded[i]) {
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

void weight_outliers(PlanState& s) {
  if (!s.analysis.contains("weight_stats") || !s.analysis["weight_stats"].contains("outlier_modules")) return;
  const Json& outliers = s.analysis["weight_stats"]["outlier_modules"];
  std::vector<std::string> quantized;
  std::vector<QuarkPattern> excl;
  for (const auto& p : s.plan["exclude_layers"]) excl.emplace_back(p.get<std::string>());
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

void calibration(PlanState& s) {
  const Json& d = s.cat.torch()["calibration_defaults"];
  Json& cal = s.plan["calibration"];
  cal = {{"dataset", d["dataset"]}, {"num_calib_data", d["num_calib_data"]}, {"seq_len", d["seq_len"]}};
  const Json* r = s.recipe;
  std::string rid = r ? s.recipe_name : "";
  if (r) {
    if (r->contains("dataset")) cal["dataset"] = (*r)["dataset"];
    if (r->contains("num_calib_data")) cal["num_calib_data"] = (*r)["num_calib_data"];
    if (r->contains("seq_len")) cal["seq_len"] = (*r)["seq_len"];
    if (r->value("data_type_from_model", false)) {
      std::string dt = model(s).value("dtype", Json("bfloat16")).is_string() ? model(s)["dtype"].get<std::string>() : "bfloat16";
      s.plan["data_type"] = dt == "float32" ? "float16" : dt;
      s.reason("data_type", "torch.calibration.defaults",
               "AMD's recipe (" + rid + "): --data_type matches the model's dtype (" + dt + (dt == "float32" ? ", float16 for the hybrid flow" : "") + ")");
    }
  }
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
  } else if (r && r->contains("dataset")) {
    s.reason("calibration.dataset", "torch.calibration.defaults", "AMD's recipe (" + rid + "): " + (*r)["dataset"].get<std::string>());
  } else {
    s.reason("calibration.dataset", "torch.calibration.defaults",
             std::string("Quark's planning guide: pileval, the fast default") + (has_algorithm(s, {"awq"}) ? " (pileval_for_awq_benchmark is AWQ's benchmark set)" : ""));
  }
  for (const char* key : {"num_calib_data", "seq_len", "batch_size"}) {
    std::string k = std::string("calibration.") + key;
    if (const Json* c = s.choice(k)) {
      if (!c->is_number_integer() || c->get<int64_t>() < 1 || c->get<int64_t>() > 1000000) {
        s.error(k + " must be an integer from 1 to 1000000 (got " + c->dump() + ")");
        continue;
      }
      cal[key] = *c;
      s.reason(k, "torch.calibration.defaults", "Your choice");
    }
  }
  if (!s.choice("calibration.num_calib_data"))
    s.reason("calibration.num_calib_data", "torch.calibration.defaults",
             r && r->contains("num_calib_data") ? "AMD's recipe (" + rid + "): " + (*r)["num_calib_data"].dump() + " samples"
                                                : "Quark's planning guide: 128 samples (quantize_quark.py's own default is 512)");
  if (!s.choice("calibration.seq_len"))
    s.reason("calibration.seq_len", "torch.calibration.defaults",
             r && r->contains("seq_len") ? "AMD's recipe (" + rid + "): " + (*r)["seq_len"].dump() : "Quark's planning guide: 512");
  const Json* sc = scheme(s);
  if (sc && (*sc)["weight_only"].get<bool>() && algorithms_of(s).empty())
    s.reason("calibration.note", "torch.calibration.defaults", "Weight-only without algorithms: calibration data is loaded but barely used");
}

// quantize_quark.py builds its calibration dataloader in every mode but
// --file2file_quantization, even for weight-only schemes ("still need this
// step for weight only and dynamic quantization"), so `--calib-data none`
// is honoured only by a file-to-file plan.
void calibration_data(PlanState& s) {
  if (s.req.calib_data != "none") return;
  if (s.plan.value("device_strategy", "") == "file2file") return;
  const Json* sc = scheme(s);
  bool needs = (sc && (*sc)["needs_calibration_data"].get<bool>()) || !algorithms_of(s).empty() || s.plan["kv_cache_scheme"].is_string();
  std::string name = sc ? (*sc)["name"].get<std::string>() : "the scheme";
  if (needs) {
    s.question("No calibration data: " + name +
               (algorithms_of(s).empty() ? " has static activation scales" : " with " + s.plan["algorithm"].get<std::string>()) +
               " needs representative text. Allow a calibration dataset (pileval, wikitext, ...)?");
    s.risk("torch.calibration.data", "high", "No calibration data for a plan that calibrates.", "Allow a calibration dataset, or pick a weight-only scheme without algorithms and device_strategy=file2file.");
  } else {
    s.question("No calibration data: quantize_quark.py loads its calibration dataset (" + s.plan["calibration"].value("dataset", std::string("pileval")) +
               ") even for " + name + ", in every mode but file-to-file. Allow the download, or set device_strategy=file2file?");
    s.risk("torch.calibration.data", "medium", "quantize_quark.py downloads a calibration dataset unless it runs file-to-file.",
           "Set device_strategy=file2file (it reads no dataset), or allow the dataset.");
  }
}

void evaluation_intent(PlanState& s) {
  const Json& intents = s.cat.torch()["evaluation_intents"];
  s.plan["evaluation_intent"] = s.cat.torch()["default_evaluation_intent"];
  if (const Json* c = s.choice("evaluation_intent")) {
    if (!c->is_string() || !std::count(intents.begin(), intents.end(), *c)) {
      s.error("evaluation_intent (--eval) must be one of none, smoke, full (got " + c->dump() +
              "): it says how much quantize_quark.py evaluates, not on which dataset");
      return;
    }
    s.plan["evaluation_intent"] = *c;
    s.reason("evaluation_intent", "torch.evaluation_intent", "Your choice");
    return;
  }
  std::string flags = join(string_list(s.cat.torch()["evaluation_flags"]["smoke"]), " ");
  s.reason("evaluation_intent", "torch.evaluation_intent",
           "Quark's planning guide: smoke, a quick perplexity check after quantization" + (flags.empty() ? std::string() : " (" + flags + "; full evaluates every wikitext sample)"));
}

void fit_accelerators(PlanState& s) { add_estimates(s); }

void device_strategy(PlanState& s) {
  const Json& fit = s.plan["estimates"].value("fit", Json(nullptr));
  const Json* sc = scheme(s);
  std::string hw = hw_name(s);
  // File-to-file writes weights and their scales, shard by shard, on CUDA
  // (catalog device_facts.file2file): every scheme it would write, global or
  // per layer, must need neither input scales nor zero points.
  std::string f2f_blocker;
  std::vector<std::string> written = {sc ? (*sc)["name"].get<std::string>() : ""};
  const Json layers = s.plan.value("layer_quant_config", Json::object());
  for (auto& [p, v] : layers.items())
    if (v.is_string()) written.push_back(v);
  for (const auto& n : written) {
    const Json* w = s.cat.torch_scheme(n);
    if (!w || !f2f_blocker.empty()) continue;
    if ((*w)["needs_calibration_data"] == true) f2f_blocker = "static activation scales (" + n + ")";
    else if ((*w)["weight_symmetric"] == false) f2f_blocker = "zero points of asymmetric weights (" + n + ")";
  }
  if (f2f_blocker.empty() && s.plan["kv_cache_scheme"].is_string()) f2f_blocker = "a KV-cache scheme";
  if (f2f_blocker.empty() && s.plan.value("export_format", "hf_format") != "hf_format")
    f2f_blocker = "the " + s.plan["export_format"].get<std::string>() + " export";
  if (f2f_blocker.empty() && hw == "cpu") f2f_blocker = "a CPU run (it always quantizes on cuda)";
  // Only a default algorithm in the way: file-to-file can still run without it.
  bool f2f_but_default_algorithm = sc && f2f_blocker.empty() && !algorithms_of(s).empty() && !s.choice("algorithm");
  if (f2f_blocker.empty() && !algorithms_of(s).empty()) f2f_blocker = "algorithms (" + join(algorithms_of(s)) + ")";
  bool f2f_eligible = sc && f2f_blocker.empty();
  std::string strategy, why;
  int64_t gpus_needed = 1;
  const Json* c = s.choice("device_strategy");
  if (c && !c->is_string()) {
    s.error("device_strategy must be one of single, multi_gpu, multi_device, file2file, cpu");
    return;
  }
  std::string want = c ? c->get<std::string>() : "";
  if (!want.empty() && want != "single" && want != "multi_gpu" && want != "multi_device" && want != "file2file" && want != "cpu") {
    s.error("device_strategy must be one of single, multi_gpu, multi_device, file2file, cpu (got '" + want + "')");
    return;
  }
  if (fit.is_object()) gpus_needed = fit.value("calibration_accelerators", int64_t{1});
  if (!want.empty()) {
    strategy = want;
    why = "Your choice";
    if (want == "file2file" && !f2f_eligible)
      s.conflict("torch.device.strategy", "device_strategy",
                 "--file2file_quantization writes weights and scales shard by shard, without calibration, only as hf_format, on cuda: it cannot do " +
                     f2f_blocker + ".",
                 hw == "cpu" ? "cpu" : gpus_needed <= 1 ? "single" : "multi_gpu", true);
    if (hw == "cpu" && (want == "multi_gpu" || want == "multi_device"))
      s.conflict("torch.device.strategy", "device_strategy",
                 "--" + want + " places the model with accelerate's device map, which overrides --device cpu: on a CPU the plan runs with --device cpu.",
                 "cpu", true);
    // Spreading over one device does nothing: the command names GPUs 0..N-1
    // (CUDA_VISIBLE_DEVICES) from --gpus or the fit.
    const int64_t spread = s.req.gpus > 0 ? s.req.gpus : gpus_needed;
    if (hw != "cpu" && want == "multi_gpu" && spread < 2)
      s.risk("torch.device.strategy", "medium",
             "--multi_gpu over " + std::string(s.req.gpus > 0 ? "the 1 GPU you have" : "1 GPU (the model fits one, and no --gpus was given)") +
                 " spreads nothing: the command makes only GPU 0 visible.",
             "Give the GPUs to spread over with --gpus N, or keep device_strategy=single.");
  } else if (hw == "cpu") {
    strategy = "cpu";
    why = "The CPU runs quantization (--device cpu; the script's default device is cuda)";
  } else if (hw == "ryzen-ai") {
    strategy = "single";
    why = "Quantization runs on a Linux machine with an AMD Instinct or NVIDIA GPU (Ryzen AI's 'Preparing OGA Models' step 1); the Ryzen AI PC runs the exported model";
  } else if (s.recipe && s.recipe->value("file2file", false) && f2f_eligible) {
    strategy = "file2file";
    why = "AMD's recipe (" + s.recipe_name + "): file-to-file, shard by shard (about one shard in memory)";
  } else if (gpus_needed <= 1) {
    strategy = "single";
    why = fit.is_object() ? "Calibration fits one " + hw : "Single accelerator until the hardware is known";
  } else if (f2f_eligible && s.accelerator_count > 0 && s.accelerator_count < gpus_needed) {
    strategy = "file2file";
    why = "Calibration needs " + std::to_string(gpus_needed) + " x " + hw + " but " + available(s.accelerator_count) + ": file-to-file quantization streams the shards instead (no calibration needed for " + (*sc)["name"].get<std::string>() + ")";
  } else if (f2f_but_default_algorithm && s.accelerator_count > 0 && s.accelerator_count < gpus_needed) {
    // The default algorithm needs the whole model in memory, which the
    // accelerators available cannot hold: stream the shards without it.
    strategy = "file2file";
    std::string dropped = s.plan["algorithm"].get<std::string>();
    why = "Calibration with " + dropped + " needs " + std::to_string(gpus_needed) + " x " + hw + " but " + available(s.accelerator_count) + ": file-to-file quantization streams the shards instead, without " + dropped;
    s.plan["algorithm"] = nullptr;
    s.reason("algorithm", "torch.device.strategy",
             "None: the default " + dropped + " needs the whole model in memory (" + std::to_string(gpus_needed) + " x " + hw + "), and file-to-file applies none");
    s.risk("torch.device.strategy", "medium",
           (*sc)["name"].get<std::string>() + " without " + dropped + " rounds every weight to nearest: " + std::to_string(s.accelerator_count) + " x " + hw +
               " cannot hold the model for " + dropped + ".",
           "With " + std::to_string(gpus_needed) + " or more accelerators (--gpus), --algorithm " + dropped + " and device_strategy=multi_gpu.");
  } else if (!f2f_eligible && algorithms_of(s).empty() && s.accelerator_count > 0 && s.accelerator_count < gpus_needed) {
    // Static scales need calibration: CPU offload is the one way that fits.
    strategy = "multi_device";
    why = "Calibration needs " + std::to_string(gpus_needed) + " x " + hw + " but " + available(s.accelerator_count) + ", and file-to-file cannot do " + f2f_blocker + ": --multi_device offloads the rest to CPU memory (slow)";
  } else {
    strategy = "multi_gpu";
    why = "Calibration needs " + std::to_string(gpus_needed) + " x " + hw + " (--multi_gpu spreads the model)";
  }
  if (strategy == "multi_gpu" && s.accelerator_count > 0 && s.accelerator_count < gpus_needed)
    s.risk("torch.device.strategy", "high",
           "Calibration needs " + std::to_string(gpus_needed) + " x " + hw + " but only " + available(s.accelerator_count) + " (" +
               s.accelerator_count_source + ").",
           f2f_eligible ? "Use file-to-file quantization (device_strategy=file2file), or run on a machine with more accelerators."
                        : "Run on a machine with " + std::to_string(gpus_needed) + " accelerators, or use --multi_device (CPU offload: slow, no algorithms).");
  if (strategy == "multi_device" && !algorithms_of(s).empty())
    s.conflict("torch.device.strategy", "device_strategy",
               "--multi_device offloads to CPU and, as its help text says, supports only quantization without algorithms (the plan has " +
                   s.plan["algorithm"].get<std::string>() + ").",
               gpus_needed <= 1 ? "single" : "multi_gpu");
  // File-to-file loads about one shard and never calibrates: the calibration
  // rows and the calibration-memory risk no longer apply.
  if (strategy == "file2file") {
    for (const char* row : {"calibration_dataset", "num_calib_data", "seq_len"})
      if (s.reasons.contains(row)) s.reason(row, "torch.device.strategy", "Not used: file-to-file quantization does not calibrate (the command leaves it out)");
    Json kept = Json::array();
    for (auto r : s.risks) {
      if (r["rule"] == "torch.fit.accelerators" && r["message"].get<std::string>().rfind("Calibration loads", 0) == 0) continue;
      if (r["rule"] == "torch.pre_quantized.dequantized" && r["message"].get<std::string>().find("dequantizes it to BF16 on load") != std::string::npos) {
        std::string m = model(s)["pre_quantized"];
        r["message"] = "The checkpoint is already quantized (" + m + "). File-to-file dequantizes it shard by shard (FP8 sources with a Triton kernel on CUDA), so memory stays at about one shard, and the result is bounded by the " + m + " source's quality.";
      }
      kept.push_back(r);
    }
    s.risks = kept;
  }
  s.plan["device_strategy"] = strategy;
  s.plan["accelerators_needed"] = fit.is_object() ? Json(gpus_needed) : Json(nullptr);
  s.reason("device_strategy", "torch.device.strategy", why);
  // Ryzen AI: what happens after Quark.
  if (hw == "ryzen-ai") {
    Json steps = Json::array();
    if (s.recipe && s.recipe->contains("after_quark")) steps = (*s.recipe)["after_quark"];
    s.plan["post_quark_steps"] = steps;
    s.reason("post_quark_steps", "torch.device.strategy",
             "AMD's Ryzen AI flow (\"Preparing OGA Models\"): export hf_format, then model_generate on the Ryzen AI PC, which builds the ONNX Runtime GenAI model from it");
  }
}

}  // namespace torch_rules
}  // namespace quarkplan
