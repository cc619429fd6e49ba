// The runtime that serves the result, as the fourth reference a plan is held
// to (catalog/runtimes.json): which runtime (torch.serve.runtime), whether its
// loader takes every planned layer (torch.serve.loads), and how to serve the
// result with a parallel layout the model allows (torch.serve.parallel).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "common/strings.h"
#include "common/units.h"
#include "intake/module_names.h"
#include "plan/invocation.h"
#include "plan/rules.h"
#include "plan/serve_memory.h"
#include "plan/torch/rule_helpers.h"

namespace quarkplan {
namespace torch_rules {

using namespace detail;

namespace detail {

namespace {
// An entry's platform list names a platform or a prefix of it ("rocm" is every rocm-*).
bool on_platform(const Json& entry, const std::string& platform) {
  if (!entry.contains("platforms")) return true;
  for (const auto& p : entry["platforms"]) {
    const std::string& n = p.get_ref<const std::string&>();
    if (platform == n || (platform.size() > n.size() && platform.compare(0, n.size(), n) == 0 && platform[n.size()] == '-')) return true;
  }
  return false;
}
int level_rank(const std::string& level) {
  static const std::vector<std::string> order = {"loads", "recent", "emulated", "refused"};
  return static_cast<int>(std::find(order.begin(), order.end(), level) - order.begin());
}
}  // namespace

RuntimeLoad runtime_load(const Json& runtime, const std::string& platform, const std::string& kind, const std::string& scheme, const std::string& model_type) {
  const Json& entries = runtime["loads"][kind];
  for (const auto& e : entries) {
    if (e.contains("model_types") && !std::count(e["model_types"].begin(), e["model_types"].end(), model_type)) continue;
    bool named = false;
    for (const auto& x : e["schemes"]) named = named || x == scheme || x == "*";
    if (named && on_platform(e, platform)) return {e["level"].get<std::string>(), &e};
  }
  return {"refused", nullptr};
}

bool runtime_on_platform(const Json& runtime, const std::string& platform) { return platform.empty() || on_platform(runtime, platform); }

std::string servable(const PlanState& s, const std::string& scheme) {
  if (!s.runtime) return "loads";
  std::string worst = "loads";
  auto weigh = [&](const std::string& kind) {
    std::string l = runtime_load(*s.runtime, s.platform, kind, scheme, model_type(s)).level;
    if (level_rank(l) > level_rank(worst)) worst = l;
  };
  weigh("dense");
  if (model(s).value("is_moe", false)) weigh("experts");
  return worst;
}

HeadCounts head_counts(const PlanState& s) {
  const Json arch = model(s).value("architecture", Json::object());
  auto count_of = [&](const char* key) -> int64_t {  // a named copy: never operator[] on a key that may be missing
    const Json v = arch.is_object() ? arch.value(key, Json(nullptr)) : Json(nullptr);
    return v.is_number_integer() ? std::clamp<int64_t>(v.get<int64_t>(), 0, 1 << 20) : 0;
  };
  HeadCounts h{count_of("num_attention_heads"), count_of("num_key_value_heads")};
  if (h.kv <= 0) h.kv = h.heads;
  return h;
}

std::string heads_split_problem(const HeadCounts& h, int64_t tp) {
  if (h.heads > 0 && h.heads % tp != 0) return std::to_string(h.heads) + " attention heads are not divisible by " + std::to_string(tp);
  if (h.kv > 0 && (h.kv >= tp ? h.kv % tp != 0 : tp % h.kv != 0))
    return std::to_string(h.kv) + " KV heads neither divide nor are divisible by " + std::to_string(tp);
  return "";
}

std::string attention_kernel_problem(const PlanState& s, const Json& env, int64_t tp) {
  if (!s.runtime || tp < 1) return "";
  const Json serve = (*s.runtime).value("serve", Json::object());
  const Json arch = model(s).value("architecture", Json::object());
  const Json kv = arch.is_object() ? arch.value("kv_cache", Json(nullptr)) : Json(nullptr);
  const std::string kind = kv.is_object() ? kv.value("kind", std::string()) : std::string();
  const HeadCounts heads = head_counts(s);
  for (const auto& c : serve.value("attention_constraints", Json::array())) {
    if (c["kv_kind"] != kind || !env.is_object() || env.value(c["env"].get<std::string>(), std::string()) != "1") continue;
    // (DeepSeek Sparse Attention runs another AITER backend, without this head rule)
    if (const Json except = c.value("except_model_types", Json::array()); std::count(except.begin(), except.end(), model_type(s))) continue;
    if (c.contains("off_env") && env.value(c["off_env"].get<std::string>(), std::string()) == "0") continue;
    if (heads.heads <= 0 || heads.heads % tp != 0) continue;  // the heads split problem says it
    const int64_t per_rank = heads.heads / tp;
    if (std::count(c["heads_per_rank"].begin(), c["heads_per_rank"].end(), per_rank)) continue;
    std::vector<std::string> ok;
    for (const auto& h : c["heads_per_rank"]) ok.push_back(h.dump());
    return c["what"].get<std::string>() + " takes " + join(ok, " or ") + " heads per rank, and " + std::to_string(heads.heads) + " heads split " +
           std::to_string(tp) + " ways leave " + std::to_string(per_rank);
  }
  return "";
}

std::string replace_layer(std::string text, const std::string& layer) {
  if (auto at = text.find("<layer>"); at != std::string::npos) text.replace(at, 7, layer);
  return text;
}

std::vector<std::string> module_schemes(PlanState& s) {
  const auto& mods = s.modules();
  const auto& ex = s.excluded();
  const std::string global = s.plan["global_scheme"].is_string() ? s.plan["global_scheme"].get<std::string>() : "";
  const Json lqc = s.plan.value("layer_quant_config", Json::object());
  // Three serve rules ask in turn for DeepSeek's 45,870 modules: computed once per plan state.
  Json key = Json::array({global, lqc, s.plan.value("exclude_layers", Json::array())});
  if (s.schemes_cache.size() == mods.size() && s.schemes_for == key) return s.schemes_cache;
  std::vector<std::pair<std::string, QuarkPattern>> overrides;
  for (auto& [p, v] : lqc.items())
    if (v.is_string()) overrides.emplace_back(v.get<std::string>(), QuarkPattern(p, PatternMatch::kVerbatim));
  std::vector<std::string> out(mods.size());
  for (size_t i = 0; i < mods.size(); ++i) {
    if (i < ex.size() && ex[i]) continue;
    out[i] = global;
    for (const auto& [x, p] : overrides)
      if (p.matches(mods[i])) {
        out[i] = x;
        break;
      }
  }
  s.schemes_for = std::move(key);
  s.schemes_cache = out;
  return out;
}

}  // namespace detail

namespace {

std::string label(const PlanState& s) { return (*s.runtime)["label"]; }

std::string kind_text(const std::string& kind) { return kind == "experts" ? "MoE experts" : kind == "dense" ? "dense Linear layers" : "the KV cache"; }

// The runtimes of the catalog that load `scheme` for every layer kind the model has, on this platform.
std::vector<std::string> runtimes_loading(const PlanState& s, const std::string& scheme) {
  std::vector<std::string> out;
  for (const char* want : {"loads", "recent"})
    for (const auto& r : s.cat.runtimes()["runtimes"]) {
      if (&r == s.runtime || !runtime_on_platform(r, s.platform) || !std::count(r["exports"].begin(), r["exports"].end(), export_key(s))) continue;
      std::string worst = runtime_load(r, s.platform, "dense", scheme, model_type(s)).level;
      if (model(s).value("is_moe", false) && worst == "loads") worst = runtime_load(r, s.platform, "experts", scheme, model_type(s)).level;
      else if (model(s).value("is_moe", false) && runtime_load(r, s.platform, "experts", scheme).level != "loads" && runtime_load(r, s.platform, "experts", scheme).level != "recent") worst = "refused";
      if (worst == want) out.push_back(r["name"].get<std::string>() + (worst == "recent" ? " (its newest code)" : ""));
    }
  return out;
}

// Whether the user chose `scheme`, globally or for a layer pattern.
bool user_scheme(const PlanState& s, const std::string& scheme) {
  if (const Json* c = s.choice("global_scheme"); c && *c == scheme) return true;
  for (const auto& [k, v] : s.req.choices) {
    if (k.rfind("layer_quant_config.", 0) == 0 && v == scheme) return true;
    if (k == "layer_quant_config" && v.is_object())
      for (auto& [p, x] : v.items())
        if (x == scheme) return true;
  }
  return false;
}

// The closest scheme the runtime loads for every layer kind and the accelerator runs natively:
// the goal's order first, then the usual defaults.
std::string loadable_alternative(const PlanState& s, const std::string& not_this) {
  std::vector<std::string> order;
  const Json& prefs = s.cat.torch()["scheme_preferences"];
  std::string goal = s.goal.empty() ? "balanced" : s.goal, hw = hw_name(s);
  for (const auto& h : prefs["hardware"])
    if (std::count(h["hardware"].begin(), h["hardware"].end(), hw) && h["goals"].contains(goal)) order = string_list(h["goals"][goal]);
  if (order.empty() && prefs["goals"].contains(goal)) order = string_list(prefs["goals"][goal]["schemes"]);
  for (const char* x : {"fp8", "ptpc_fp8", "mxfp4", "int8", "int4_fp8", "nvfp4", "int4_wo_128", "uint4_wo_128", "uint4_wo_32"}) order.push_back(x);
  for (const char* want : {"loads", "recent"})
    for (const auto& c : order)
      if (c != not_this && (support_of(s, c) == "native" || !s.accelerator) && servable(s, c) == want) return c;
  return "";
}

}  // namespace

void serve_runtime(PlanState& s) {
  s.runtime = nullptr;
  s.platform = s.accelerator ? s.cat.runtime_platform(*s.accelerator) : "";
  s.plan["serve_runtime"] = nullptr;
  const std::string exp = export_key(s);
  if (const Json* c = s.choice("serve_runtime"); c && !c->is_null()) {
    std::string name = c->is_string() ? c->get<std::string>() : c->dump();
    const Json* r = s.cat.runtime(name);
    if (!r) {
      std::vector<std::string> names;
      for (const auto& x : s.cat.runtimes()["runtimes"]) names.push_back(x["name"]);
      s.error("unknown serving runtime '" + name + "'" + did_you_mean(name, names) + "; runtimes: " + join(names));
      return;
    }
    s.runtime = r;
    s.plan["serve_runtime"] = (*r)["name"];
    if (!std::count((*r)["exports"].begin(), (*r)["exports"].end(), exp)) {
      std::string fits;
      for (const auto& x : s.cat.runtimes()["runtimes"])
        if (std::count(x["exports"].begin(), x["exports"].end(), exp) && runtime_on_platform(x, s.platform)) fits += (fits.empty() ? "" : ", ") + x["name"].get<std::string>();
      s.conflict("torch.serve.runtime", "serve_runtime",
                 label(s) + " serves " + join(string_list((*r)["exports"])) + " exports, not the plan's " + exp + " export.",
                 (fits.empty() ? "" : "--serve " + fits + ", or ") + "--export " + (*r)["exports"][0].get<std::string>(), true);
      return;
    }
    if (!runtime_on_platform(*r, s.platform)) {
      s.conflict("torch.serve.runtime", "serve_runtime", label(s) + " does not run on " + hw_name(s) + " (it runs on " + join(string_list((*r)["platforms"])) + ").",
                 "the runtime " + hw_name(s) + " uses (omit --serve)", true);
      return;
    }
    s.reason("serve_runtime", "torch.serve.runtime", "Your choice: " + label(s));
    return;
  }
  for (const auto& d : s.cat.runtimes()["defaults"]) {
    bool match = d.contains("export") ? d["export"] == exp : !s.platform.empty() && runtime_on_platform(d, s.platform);
    if (!match) continue;
    if (d["runtime"].is_null()) {
      s.reason("serve_runtime", "torch.serve.runtime", "None: " + d["why"].get<std::string>());
      return;
    }
    s.runtime = s.cat.runtime(d["runtime"]);
    if (!s.runtime) continue;
    s.plan["serve_runtime"] = (*s.runtime)["name"];
    s.reason("serve_runtime", "torch.serve.runtime", label(s) + ": " + d["why"].get<std::string>() + " (--serve RUNTIME for another)");
    return;
  }
  s.reason("serve_runtime", "torch.serve.runtime", "Decided once the hardware is known (--hardware), or named with --serve RUNTIME");
}

// The runtime's entry for an architecture it serves only on some accelerators (catalog runtimes
// `architectures`), or nullptr when it serves this model type wherever it runs.
const Json* runtime_architecture(const Json& runtime, const std::string& model_type) {
  if (!runtime.contains("architectures")) return nullptr;
  for (const auto& a : runtime["architectures"])
    if (std::count(a["model_types"].begin(), a["model_types"].end(), model_type)) return &a;
  return nullptr;
}

// Why the plan's runtime cannot serve this model's architecture on this accelerator ("" when it can).
std::string architecture_problem(const PlanState& s) {
  if (!s.runtime || !s.accelerator) return "";
  const Json* a = runtime_architecture(*s.runtime, model_type(s));
  if (!a) return "";
  const std::string arch = s.accelerator->value("arch", std::string());
  if (std::count((*a)["arches"].begin(), (*a)["arches"].end(), arch)) return "";
  return label(s) + " serves " + model_type(s) + "'s " + (*a)["what"].get<std::string>() + " only on " + join(string_list((*a)["arches"])) + "; " + hw_name(s) +
         " is " + arch + (a->contains("note") ? " (" + (*a)["note"].get<std::string>() + ")" : std::string());
}

void serve_architecture(PlanState& s) {
  // An architecture the runtime has removed: its current release refuses the model, whatever the hardware.
  if (s.runtime && (*s.runtime).contains("removed_architectures")) {
    const Json& removed = (*s.runtime)["removed_architectures"];
    for (const auto& arch : model(s).value("architectures", Json::array())) {
      if (arch.is_string() && removed.value("never", Json::object()).contains(arch.get<std::string>())) {
        s.conflict("torch.serve.architecture", "serve_runtime",
                   label(s) + " has no implementation of " + arch.get<std::string>() + ": " + removed["never"][arch.get<std::string>()].get<std::string>() + ".",
                   "another runtime that implements " + arch.get<std::string>() + " (--serve RUNTIME)");
        return;
      }
      if (!arch.is_string() || !removed["last_releases"].contains(arch.get<std::string>())) continue;
      const std::string a = arch, last = removed["last_releases"][a];
      std::string err = replace_layer(removed["error"].get<std::string>(), "");
      if (auto at = err.find("<arch>"); at != std::string::npos) err.replace(at, 6, a);
      if (auto at = err.find("<version>"); at != std::string::npos) err.replace(at, 9, last);
      s.conflict("torch.serve.architecture", "serve_runtime",
                 label(s) + " no longer implements " + a + ": its releases after " + last + " refuse the model ('" + err + "'; " + removed["source"].get<std::string>() + ").",
                 "serve with " + label(s) + " " + last + ", the last release that implements it (its Quark loader predates this plan's newest schemes: check the scheme loads there), or "
                 "another runtime that implements " + a + " (--serve RUNTIME)");
      return;
    }
  }
  const std::string problem = architecture_problem(s);
  if (problem.empty()) return;
  // Accelerators of the catalog whose architecture the runtime serves it on.
  const Json* a = runtime_architecture(*s.runtime, model_type(s));
  std::vector<std::string> there;
  for (const auto& acc : s.cat.hardware()["accelerators"])
    if (std::count((*a)["arches"].begin(), (*a)["arches"].end(), acc.value("arch", std::string())) && there.size() < 6) there.push_back(acc["name"]);
  s.conflict("torch.serve.architecture", "serve_runtime", problem + ": the quantized model would not serve here.",
             "plan for an accelerator it runs on (--hardware " + join(there, " | ") + "), where " + label(s) + " serves it; source: " + (*a)["source"].get<std::string>());
}

void serve_loads(PlanState& s) {
  s.plan.erase("serve");
  if (!s.runtime || !s.plan["global_scheme"].is_string() || !s.conflicts.empty()) return;
  const std::string global = s.plan["global_scheme"];
  // Which scheme each planned layer kind gets; excluded modules stay in 16-bit and need nothing from the runtime.
  std::map<std::string, std::map<std::string, size_t>> used;  // kind -> scheme -> modules
  const auto& mods = s.modules();
  const std::vector<std::string> schemes_of = module_schemes(s);
  for (size_t i = 0; i < mods.size(); ++i)
    if (!schemes_of[i].empty()) ++used[s.module_roles[i] == "expert" ? "experts" : "dense"][schemes_of[i]];
  if (mods.empty()) {  // no module names: every kind the model has takes the global scheme
    used["dense"][global] = 1;
    if (model(s).value("is_moe", false)) used["experts"][global] = 1;
  }
  // Experts Quark leaves 16-bit (torch.intake.experts_not_linear) are still one fused MoE layer in a
  // runtime that takes its scheme from the quantization config: with no exclusion reaching that
  // layer it is built for the global scheme, and meets 16-bit weights without scales.
  if (intake_risk(s, "torch.intake.experts_not_linear") && s.runtime->contains("moe_layer_config") && !used.count("experts")) {
    uint64_t linear = 0;
    for (const auto& sh : s.analysis["quantization_targets"].value("module_shapes", Json::array()))
      if (sh.is_array() && !sh.empty() && sh[0].is_number_unsigned()) linear += sh[0].get<uint64_t>();
    const double total = model(s).value("total_params", 0.0);
    const int pct = total > 0 ? static_cast<int>(std::lround(100.0 * static_cast<double>(linear) / total)) : 0;
    s.conflict("torch.serve.loads", "global_scheme",
               label(s) + " builds each layer's experts as one fused MoE layer and gives it the checkpoint's global scheme (" + global +
                   "; no exclusion or layer_quant_config names it), but Quark leaves these experts 16-bit (torch.intake.experts_not_linear): " + label(s) +
                   " would refuse them or load them with scales they do not have (" + (*s.runtime)["moe_layer_config"]["source"].get<std::string>() + ").",
               "serve the 16-bit source as it is (Quark reaches only its Linear layers here, " + std::to_string(pct) + "% of the parameters)");
    return;
  }
  Json env = Json::object();
  std::vector<std::string> loaded, recent;
  for (const auto& [kind, schemes] : used)
    for (const auto& [scheme_name, n] : schemes) {
      const std::string sch = scheme_name;  // a named copy: clang's C++20 lets no lambda capture a structured binding
      RuntimeLoad l = runtime_load(*s.runtime, s.platform, kind, sch, model_type(s));
      const std::string src = l.entry ? (*l.entry)["source"].get<std::string>() : "catalog/runtimes.json lists no such scheme for " + kind_text(kind);
      const std::string decision = sch == global ? "global_scheme" : "layer_quant_config";
      const std::string what = sch + " for " + std::to_string(n) + " " + kind_text(kind) + (sch == global ? "" : " (a layer_quant_config override)");
      if (l.entry && l.entry->contains("env"))
        for (auto& [k, v] : (*l.entry)["env"].items()) env[k] = v;
      if (l.level == "refused") {
        std::string alt = loadable_alternative(s, sch), others = join(runtimes_loading(s, sch));
        std::string err = l.entry ? (*l.entry)["error"].get<std::string>() : "";
        std::string offer = alt.empty() ? "" : alt + " (" + label(s) + " loads it" + (support_of(s, alt) == "native" ? ", native on " + hw_name(s) : "") + ")";
        if (!others.empty()) offer += (offer.empty() ? "" : ", or ") + std::string("--serve ") + others;
        if (offer.empty())
          offer = "none: no scheme " + label(s) + " loads for " + kind_text(kind) + " runs natively on " + hw_name(s) +
                  ", and no other runtime quarkplan knows there loads " + sch + " (catalog/runtimes.json); serve with another runtime (omit --serve)";
        s.conflict("torch.serve.loads", decision,
                   label(s) + " cannot load " + what + " on " + (hw_name(s).empty() ? "this platform" : hw_name(s)) + ": " +
                       (err.empty() ? "its loader names no such scheme"
                                   : l.entry && l.entry->value("paraphrase", false) ? "its kernels cannot take it: " + err
                                                                                     : "its loader raises '" + err + "'") + " (" + src + ").",
                   offer);
      } else if (l.level == "emulated" && (support_of(s, sch) == "native" || support_of(s, sch) == "weight_only") &&
                 ((!s.choice("serve_runtime") && !user_scheme(s, sch)) || (runtimes_loading(s, sch).empty() && loadable_alternative(s, sch).empty()))) {
        // The default runtime of the platform (transformers on a CPU) with a default scheme, or nothing on this
        // platform does better: said with where the kernels are, not refused.
        loaded.push_back(what + " (emulated)");
        std::vector<std::string> better = runtimes_loading(s, sch);
        s.risk("torch.serve.loads", "medium",
               label(s) + " runs " + what + " emulated on " + hw_name(s) + ": " + (l.entry->contains("note") ? (*l.entry)["note"].get<std::string>() : "no kernel") + ".",
               better.empty() ? "Expect no speed-up over 16-bit from the runtime; the checkpoint is smaller."
                              : "--serve " + join(better) + " has kernels for it (its loader takes " + sch + " for every layer kind of this model).");
      } else if (l.level == "emulated" && (support_of(s, sch) == "native" || support_of(s, sch) == "weight_only")) {
        std::string alt = loadable_alternative(s, sch);
        s.conflict("torch.serve.loads", decision,
                   label(s) + " loads " + what + " but runs it emulated on " + hw_name(s) + ": " + (l.entry->contains("note") ? (*l.entry)["note"].get<std::string>() : "no kernel") +
                       " (" + src + ").",
                   alt.empty() ? "--serve " + join(runtimes_loading(s, sch)) : alt + " (" + label(s) + " has a kernel for it)");
      } else if (l.level == "recent") {
        recent.push_back(what);
        s.risk("torch.serve.loads", "medium", label(s) + " loads " + what + " only in its newest code: " + (*l.entry)["since"].get<std::string>() + ".",
               "Serve with a " + label(s) + " that has it" + [&] {
                 std::string alt = loadable_alternative(s, sch);
                 return alt.empty() || servable(s, alt) != "loads" ? std::string(".") : ", or plan " + alt + ", which every " + label(s) + " release loads.";
               }());
      } else {
        loaded.push_back(what + (l.level == "emulated" ? " (emulated)" : ""));
      }
    }
  // The KV cache.
  if (s.plan["kv_cache_scheme"].is_string()) {
    RuntimeLoad l = runtime_load(*s.runtime, s.platform, "kv_cache", s.plan["kv_cache_scheme"]);
    if (l.level == "refused")
      s.conflict("torch.serve.loads", "kv_cache_scheme", label(s) + " has no FP8 KV cache for a Quark checkpoint (catalog/runtimes.json).", "kv_cache_scheme=null (--kv-cache none)");
    else if (l.level == "emulated")
      s.risk("torch.serve.loads", "low", label(s) + ": " + (*l.entry)["note"].get<std::string>() + ".", "Serve with vLLM or SGLang to use the FP8 KV cache.");
    else
      loaded.push_back("an FP8 KV cache (" + join(string_list((*l.entry)["flag"]), " ") + ")");
  }
  Json serve = {{"runtime", (*s.runtime)["name"]}, {"env", env}};
  s.plan["serve"] = serve;
  if (!loaded.empty() || !recent.empty())
    s.reason("serve_runtime", "torch.serve.loads",
             s.reasons["serve_runtime"].get<std::string>() + "; it loads " +
                 join(loaded) + (recent.empty() ? "" : (loaded.empty() ? "" : "; ") + std::string("in its newest code only: ") + join(recent)) +
                 (env.empty() ? "" : "; with " + [&] {
                   std::string e;
                   for (auto& [k, v] : env.items()) e += (e.empty() ? "" : " ") + k + "=" + v.get<std::string>();
                   return e;
                 }()));
}

namespace {
// Row-parallel layers (their input features are split across tensor-parallel ranks).
bool row_parallel(const std::string& name) {
  for (const char* suffix : {".o_proj", ".down_proj", ".w2", ".out_proj", ".dense_4h_to_h", ".fc2", ".c_proj", ".wo"})
    if (name.size() > std::strlen(suffix) && name.compare(name.size() - std::strlen(suffix), std::strlen(suffix), suffix) == 0) return true;
  return false;
}
int64_t group_of(const PlanState& s, const std::string& scheme) {
  const Json* sc = s.cat.torch_scheme(scheme);
  return sc && (*sc)["group_size"].is_number_integer() ? (*sc)["group_size"].get<int64_t>() : 0;
}
}  // namespace

void serve_parallel(PlanState& s) {
  if (!s.runtime || !s.plan.contains("serve")) return;
  const Json& srv = (*s.runtime)["serve"];
  int64_t per_node = srv.value("gpus_per_node", int64_t{0});
  Json& serve = s.plan["serve"];
  serve["kv_cache_flag"] = nullptr;
  if (s.plan["kv_cache_scheme"].is_string()) {
    RuntimeLoad l = runtime_load(*s.runtime, s.platform, "kv_cache", s.plan["kv_cache_scheme"]);
    if (l.level == "loads" && l.entry->contains("flag")) serve["kv_cache_flag"] = (*l.entry)["flag"];
  }
  serve["trust_remote_code"] = model(s).value("trust_remote_code", false) && s.req.trust_remote_code;
  // The context the KV cache was sized for: the runtime must not reserve for the model's maximum instead.
  const Json est = s.plan.value("estimates", Json::object());
  if (est.is_object() && est.value("kv_cache", Json(nullptr)).is_object() && est["kv_cache"].value("context_length", Json(nullptr)).is_number_integer())
    serve["max_model_len"] = est["kv_cache"]["context_length"];
  if (per_node <= 0 || !s.accelerator || s.platform == "cpu" || s.platform == "npu") return;
  const HeadCounts heads = head_counts(s);
  const Json fit = s.plan.contains("estimates") && s.plan["estimates"].is_object() ? s.plan["estimates"].value("fit", Json(nullptr)) : Json(nullptr);
  int64_t need = fit.is_object() ? fit.value("deployment_accelerators", int64_t{1}) : 1;
  // Group-quantized row-parallel layers: each rank's share of the input features must hold whole groups.
  const auto& mods = s.modules();
  const std::vector<std::string> schemes_of = module_schemes(s);
  std::map<std::pair<uint64_t, int64_t>, std::vector<std::string>> row_shapes;  // (in_features, group) -> modules
  std::map<std::string, int64_t> groups;  // per scheme, looked up once (45,000 modules share a few schemes)
  for (size_t i = 0; i < mods.size(); ++i) {
    if (schemes_of[i].empty() || !row_parallel(mods[i]) || s.module_shapes[i].second == 0) continue;
    auto [it, fresh] = groups.try_emplace(schemes_of[i], 0);
    if (fresh) it->second = group_of(s, schemes_of[i]);
    if (it->second > 0) row_shapes[{s.module_shapes[i].second, it->second}].push_back(mods[i]);
  }
  std::string why_not;
  const Json serve_env = serve.value("env", Json::object());
  auto valid = [&](int64_t tp, bool note) {
    if (std::string problem = heads_split_problem(heads, tp); !problem.empty()) {
      if (note) why_not = problem;
      return false;
    }
    if (std::string problem = attention_kernel_problem(s, serve_env, tp); !problem.empty()) {
      if (note) why_not = problem;
      return false;
    }
    for (const auto& [shape, names] : row_shapes) {
      auto [in, g] = shape;
      if (in % static_cast<uint64_t>(tp) != 0 || (in / static_cast<uint64_t>(tp)) % static_cast<uint64_t>(g) != 0) {
        if (note) {
          const bool even = in % static_cast<uint64_t>(tp) == 0;
          why_not = std::to_string(names.size()) + " row-parallel layers (" + names.front() + ", " + std::to_string(in) + " input features) split " + std::to_string(tp) +
                    " ways leave " + (even ? std::to_string(in / static_cast<uint64_t>(tp)) + " features per rank, not a whole number of groups of " + std::to_string(g)
                                           : std::string("ranks of unequal features, not whole groups of ") + std::to_string(g));
        }
        return false;
      }
    }
    return true;
  };
  // Layers whose input features hold no whole group even unsplit: no parallel size helps; a smaller
  // group of the same family (or excluding them) does.
  for (const auto& [shape, names] : row_shapes)
    if (shape.first % static_cast<uint64_t>(shape.second) != 0) {
      std::string repair;
      const Json* sc = s.cat.torch_scheme(s.plan["global_scheme"]);
      for (const auto& x : s.cat.torch()["schemes"])
        if (sc && x["family"] == (*sc)["family"] && x["group_size"].is_number_integer() && shape.first % x["group_size"].get<uint64_t>() == 0 &&
            (repair.empty() || x["group_size"].get<int64_t>() > s.cat.torch_scheme(repair)->at("group_size").get<int64_t>()))
          repair = x["name"];
      s.risk("torch.serve.parallel", "high",
             std::to_string(names.size()) + " row-parallel layers (" + names.front() + ", ...) have " + std::to_string(shape.first) +
                 " input features, which groups of " + std::to_string(shape.second) + " do not divide: " + label(s) +
                 "'s group-quantized layers need whole groups ('The input size is not aligned with the quantized weight shape').",
             repair.empty() ? "Exclude these layers (--exclude) or pick a scheme without groups." : "Use " + repair + " (its groups divide them), or exclude these layers.");
      break;
    }
  // The runtime's memory on this accelerator: the served weights (the fit's, without MTP layers),
  // its reserve, and the KV cache per sequence at the estimate's context.
  const Json kv = est.is_object() ? est.value("kv_cache", Json(nullptr)) : Json(nullptr);
  const int64_t batch = kv.is_object() ? std::max<int64_t>(1, kv.value("batch", int64_t{1})) : 1;
  const double kv_bytes = kv.is_object() ? kv.value("bytes", 0.0) : 0.0;
  const int64_t ctx = kv.is_object() ? kv.value("context_length", int64_t{0}) : 0;
  const double state_seq = kv.is_object() ? kv.value("state_bytes_per_sequence", 0.0) : 0.0;
  const ServeMemory sm = serve_memory(s, fit.is_object() ? fit.value("deployment_bytes", 0.0) - kv_bytes : 0.0, kv_bytes / static_cast<double>(batch) - state_seq, state_seq);
  int64_t tp = 0, pp = 1;
  ParallelChoice pc;
  if (const Json* c = s.choice("serve.tensor_parallel_size")) {
    if (!c->is_number_integer() || c->get<int64_t>() < 1 || c->get<int64_t>() > 4096) {
      s.error("serve.tensor_parallel_size must be a whole number from 1 to 4096 (got " + c->dump() + ")");
      return;
    }
    tp = c->get<int64_t>();
    if (!valid(tp, true))
      s.conflict("torch.serve.parallel", "serve.tensor_parallel_size", label(s) + " cannot split this model " + std::to_string(tp) + " ways: " + why_not + ".",
                 "the size the plan computes (drop the setting)");
    while (pp < 4096 && sm.sequences_held(tp, pp) < batch) ++pp;
  } else {
    pc = choose_parallel(sm, [&](int64_t t) { return valid(t, false); }, batch, s.accelerator_count, per_node);
    tp = pc.tp;
    pp = pc.pp;
  }
  serve["tensor_parallel_size"] = tp;
  serve["pipeline_parallel_size"] = pp;
  const std::string seqs = " sequence" + std::string(batch == 1 ? "" : "s") + " of " + std::to_string(ctx) + " tokens";
  std::string text = "tensor parallel " + std::to_string(tp) + (pp > 1 ? " x pipeline parallel " + std::to_string(pp) : "") + ": " +
                     (s.choice("serve.tensor_parallel_size") ? std::string("your choice; ") : std::string("")) +
                     (need > 1 ? "the quantized weights, " + label(s) + "'s reserve for activations and the KV cache of " + std::to_string(batch) + seqs + " need " +
                                     std::to_string(need) + " x " + hw_name(s)
                               : "the model fits one " + hw_name(s));
  if (ctx > 0 && kv_bytes > 0) {
    const int64_t held = sm.sequences_held(tp, pp);
    auto holds = [&](int64_t n) { return n >= (1 << 30) ? std::string("any number of") : std::to_string(n); };
    const std::string aim = "; a server's KV cache should hold " + std::to_string(sm.target) + " (" + sm.target_note + ")";
    if (pc.fewest > 0 && tp > pc.fewest)
      text += "; " + std::to_string(tp) + " for the KV cache: " + std::to_string(pc.fewest) + " would hold " + holds(sm.sequences_held(pc.fewest, 1)) + " sequences of " +
              std::to_string(ctx) + " tokens, " + std::to_string(tp) + " hold " + holds(held) + aim;
    else if (pc.fewest > 0 && !pc.target_met && sm.target > batch) {
      // No size within the accelerators reaches the target: the most any of them holds is said (the
      // size stays the fewest, the user's to raise with --set serve.tensor_parallel_size).
      int64_t best = tp, most = held;
      const int64_t upper = s.accelerator_count > 0 ? std::min(s.accelerator_count, per_node) : per_node;
      for (int64_t t = tp + 1; t <= upper; ++t)
        if (valid(t, false) && sm.sequences_held(t, 1) > most) best = t, most = sm.sequences_held(t, 1);
      text += "; the KV cache holds " + holds(held) + " sequences of " + std::to_string(ctx) + " tokens" + aim + ": " +
              (best > tp ? "tensor parallel " + std::to_string(best) + " holds " + holds(most) + " (--set serve.tensor_parallel_size=" + std::to_string(best) + "), " : std::string()) +
              (s.accelerator_count > 0 && s.accelerator_count < per_node ? "more accelerators, " : std::string()) + "an FP8 KV cache or a shorter context (--context) holds more";
    }
    else
      text += "; the KV cache holds " + holds(held) + " sequences of " + std::to_string(ctx) + " tokens";
  }
  if (tp * pp > per_node) text += "; " + std::to_string(tp * pp) + " GPUs are more than one node holds (" + std::to_string(per_node) + ")";
  if (tp != need && need <= per_node && !s.choice("serve.tensor_parallel_size") && !valid(need, true)) {
    text += "; " + std::to_string(need) + " is not a size " + label(s) + " can split it into (" + why_not + ")";
  }
  const Json kv_facts = model(s).value("architecture", Json::object()).value("kv_cache", Json(nullptr));
  const bool mla = kv_facts.is_object() && kv_facts.value("kind", std::string()) == "mla";
  text += " (" + std::to_string(heads.heads) + " attention heads, " + (mla ? std::string("one MLA latent cache on every rank") : std::to_string(heads.kv) + " KV heads") +
          (row_shapes.empty() ? "" : ", row-parallel layers of " + [&] {
            std::set<uint64_t> ins;
            for (const auto& [shape, names] : row_shapes) ins.insert(shape.first);
            std::string t;
            for (auto x : ins) t += (t.empty() ? "" : "/") + std::to_string(x);
            return t;
          }() + " input features in groups") + ")";
  if (s.accelerator_count > 0 && tp * pp > s.accelerator_count) {
    // Where an attention kernel's head constraint is what forces the size, turning it off is a lever.
    // The levers that help: memory ones only where memory is short at the count given; the kernel one only
    // where the kernel's head rule is all that stands in the way (the heads split, the weights fit).
    const int64_t have = s.accelerator_count;
    const bool memory_short = sm.sequences_held(have, 1) < batch;
    std::string kernel_lever;
    for (const auto& c : (*s.runtime)["serve"].value("attention_constraints", Json::array()))
      if (c.contains("off_env") && !memory_short && !attention_kernel_problem(s, serve_env, have).empty() && heads_split_problem(heads, have).empty())
        kernel_lever = c["off_env"].get<std::string>() + "=0 (" + label(s) + "'s other MLA kernels take any split) serves it on " + std::to_string(have);
    std::string hint = memory_short ? "Plan a smaller scheme, an FP8 KV cache or a shorter context (--context), or serve on more accelerators"
                                    : "Serve on more accelerators (" + std::to_string(have) + " hold it, but " + label(s) + " cannot split it " + std::to_string(have) + " ways)";
    if (!kernel_lever.empty()) hint += "; or " + kernel_lever;
    s.risk("torch.serve.parallel", "high",
           "Serving with " + label(s) + " needs " + std::to_string(tp * pp) + " x " + hw_name(s) + " (tensor parallel " + std::to_string(tp) +
               (pp > 1 ? " x pipeline " + std::to_string(pp) : "") + "), but " + std::to_string(have) + (have == 1 ? " is" : " are") + " available (" +
               s.accelerator_count_source + ").",
           hint + ".");
  }
  // One count for serving: the fit's own (memory only, any count) gives way to the layout the runtime can split into.
  Json* est_fit_ptr = s.plan.contains("estimates") && s.plan["estimates"].is_object() && s.plan["estimates"].contains("fit") ? &s.plan["estimates"]["fit"] : nullptr;
  if (est_fit_ptr && est_fit_ptr->is_object()) {
    Json& est_fit = *est_fit_ptr;
    const int64_t layout = tp * pp;  // the serve command's count
    if (layout != est_fit.value("deployment_accelerators", int64_t{0})) {
      est_fit["deployment_accelerators"] = layout;
      const int64_t have = est_fit["accelerators_available"].is_number_integer() ? est_fit["accelerators_available"].get<int64_t>() : 0;
      if (!est_fit.contains("calibration_streamed") || est_fit["calibration_streamed"].is_null())
        est_fit["fits"] = std::max(layout, est_fit.value("calibration_accelerators", int64_t{1})) <= std::max<int64_t>(have, 1);
      else
        est_fit["fits"] = layout <= std::max<int64_t>(have, 1);
      // The fit's own "Serving needs N" risk names the memory-only count: where this rule's risk says the
      // layout's count it goes; else it names the layout's count.
      const bool said_here = s.accelerator_count > 0 && tp * pp > s.accelerator_count;
      const std::string old_head = "Serving needs " + std::to_string(fit.value("deployment_accelerators", int64_t{0})) + " x ";
      Json kept = Json::array();
      for (auto r : s.risks) {
        const std::string msg = r["message"];
        if (r["rule"] == "torch.fit.accelerators" && msg.rfind("Serving needs ", 0) == 0) {
          if (said_here) continue;
          if (msg.rfind(old_head, 0) == 0)
            r["message"] = "Serving needs " + std::to_string(layout) + " x " + msg.substr(old_head.size()) + " (" + std::to_string(layout) +
                           ": the serve command's size, see serve.tensor_parallel_size)";
        }
        kept.push_back(r);
      }
      s.risks = kept;
    }
  }
  s.reason("serve.tensor_parallel_size", "torch.serve.parallel", text);
}

// The runtime fuses some modules into one layer (q/k/v into qkv_proj, gate/up into gate_up_proj):
// its loader raises unless every shard has the same scheme, or all are excluded. Offenders are
// grouped by what differs, with the repair that makes each group whole.
void fused_shards(PlanState& s) {
  if (!s.runtime || !s.runtime->contains("fused_shards") || !s.plan["global_scheme"].is_string()) return;
  const Json& fs = (*s.runtime)["fused_shards"];
  const auto& mods = s.modules();
  if (mods.empty()) return;
  const std::vector<std::string> schemes_of = module_schemes(s);
  std::map<std::string, std::string> shard_to_fused;
  for (auto& [fused, shards] : fs["groups"].items())
    for (const auto& sh : shards) shard_to_fused[sh.get<std::string>()] = fused;
  // parent.fused -> shard -> scheme ("" excluded)
  std::map<std::string, std::map<std::string, std::string>> layers;
  // A layer's routed experts are one fused MoE layer with one quantization method: every expert's
  // projections share a scheme (or are all excluded). experts prefix -> projection -> schemes.
  std::map<std::string, std::map<std::string, std::set<std::string>>> moe;
  for (size_t i = 0; i < mods.size(); ++i) {
    size_t dot = mods[i].rfind('.');
    if (dot == std::string::npos) continue;
    if (i < s.module_roles.size() && s.module_roles[i] == "expert") {
      size_t at = mods[i].rfind(".experts.");
      std::string prefix = at == std::string::npos ? mods[i].substr(0, dot) : mods[i].substr(0, at + 8);
      moe[prefix][mods[i].substr(dot + 1)].insert(schemes_of[i]);
      continue;
    }
    auto it = shard_to_fused.find(mods[i].substr(dot + 1));
    if (it != shard_to_fused.end()) layers[mods[i].substr(0, dot + 1) + it->second][mods[i].substr(dot + 1)] = schemes_of[i];
  }
  // Offenders by what differs ("q_proj fp8, k_proj 16-bit, v_proj fp8" under "self_attn"), with the layers it happens in.
  std::map<std::string, std::vector<std::string>> offenders;
  std::map<std::string, std::map<std::string, std::string>> example;
  for (const auto& [layer, shards] : layers) {
    std::set<std::string> distinct;
    for (const auto& [sh, sch] : shards) distinct.insert(sch);
    if (distinct.size() < 2) continue;
    std::string parent = layer.substr(0, layer.rfind('.')), block = parent.substr(parent.rfind('.') + 1), sig = block + ":";
    for (const auto& [sh, sch] : shards) sig += " " + sh + " " + (sch.empty() ? "16-bit" : sch);
    offenders[sig].push_back(layer);
    example[sig] = shards;
  }
  std::vector<std::string> said, repairs;
  // MoE layers whose experts differ, by what differs ("gate_proj fp8, up_proj fp8, down_proj 16-bit").
  std::map<std::string, std::vector<std::string>> moe_offenders;
  for (const auto& [prefix, projs] : moe) {
    std::set<std::string> all;
    for (const auto& [proj, schemes] : projs) all.insert(schemes.begin(), schemes.end());
    if (all.size() < 2) continue;
    std::vector<std::string> parts;
    for (const auto& [proj, schemes] : projs) {
      std::vector<std::string> names;
      for (const auto& x : schemes) names.push_back(x.empty() ? "16-bit" : x);
      parts.push_back(proj + " " + join(names, " and "));
    }
    moe_offenders[join(parts)].push_back(prefix);
  }
  std::vector<std::string> moe_said;
  for (const auto& [sig, where] : moe_offenders) {
    moe_said.push_back(std::to_string(where.size()) + (where.size() == 1 ? " MoE layer (" : " MoE layers (") + where.front() + (where.size() > 1 ? ", ..." : "") +
                       "): experts' " + sig);
    const std::string last = where.front().substr(where.front().rfind('.') + 1);
    repairs.push_back("one scheme for every routed expert of a layer: exclude all of them ('*" + last + ".*') or none, and give '*" + last +
                      "*' one --layer-scheme (a pattern that also matches the fused layer's own name), not one per projection or expert");
  }
  // A runtime that picks the fused MoE layer's scheme once matches layer_quant_config against that
  // layer's own name (model.layers.N.mlp.experts), not the per-expert Linear names Quark matched:
  // a pattern that reaches only the latter ('*.experts.*') leaves the layer the global scheme, and
  // the runtime then loads the experts' weights with the wrong method.
  std::map<std::string, std::vector<std::string>> unmatched;  // "pattern scheme" -> fused layers
  if (s.runtime->contains("moe_layer_config") && (*s.runtime)["moe_layer_config"].value("matches", std::string()) == "fused_layer") {
    const std::string global = s.plan["global_scheme"];
    const Json lqc = s.plan.value("layer_quant_config", Json::object());
    for (const auto& [prefix, projs] : moe) {
      std::set<std::string> all;
      for (const auto& [proj, schemes] : projs) all.insert(schemes.begin(), schemes.end());
      if (all.size() != 1 || all.begin()->empty() || *all.begin() == global) continue;
      std::string resolved = global, by;
      for (auto& [pat, sch] : lqc.items()) {
        const std::string pattern = pat;  // vLLM: fnmatch where the pattern has a '*', else a substring test
        if (!sch.is_string()) continue;
        const bool hit = pattern.find('*') == std::string::npos ? pattern.find(prefix) != std::string::npos
                                                                 : QuarkPattern(pattern, PatternMatch::kVerbatim).matches(prefix);
        if (hit) {
          resolved = sch;
          break;
        }
      }
      if (resolved == *all.begin()) continue;
      for (auto& [pat, sch] : lqc.items())
        if (sch.is_string() && sch.get<std::string>() == *all.begin()) by = pat;
      unmatched["'" + by + "' " + *all.begin()].push_back(prefix);
    }
  }
  std::vector<std::string> unmatched_said;
  for (const auto& [what, where] : unmatched) {
    const std::string pattern = what.substr(0, what.rfind(' ')), scheme = what.substr(what.rfind(' ') + 1);
    const std::string last = where.front().substr(where.front().rfind('.') + 1);
    unmatched_said.push_back(std::to_string(where.size()) + (where.size() == 1 ? " MoE layer (" : " MoE layers (") + where.front() + (where.size() > 1 ? ", ..." : "") +
                             "): Quark gives its experts " + scheme + " by " + pattern + ", which does not match the layer's own name, so " + label(s) +
                             " builds them for the global scheme (" + s.plan["global_scheme"].get<std::string>() + ") and meets " + scheme + " weights");
    repairs.push_back("write the experts' pattern so it also matches the fused layer's name: '*." + last + "*' (matches " + where.front() + " and " + where.front() +
                      ".0.down_proj, not shared_" + last + ")");
  }
  if (offenders.empty() && moe_said.empty() && unmatched_said.empty()) return;
  for (const auto& [sig, where] : offenders) {
    const auto& shards = example[sig];
    std::string parent = where.front().substr(0, where.front().rfind('.')), block = parent.substr(parent.rfind('.') + 1);
    std::vector<std::string> parts, quantized, kept;
    const std::string fused = where.front().substr(where.front().rfind('.') + 1);
    std::vector<std::pair<std::string, std::string>> ordered;  // in the runtime's shard order (q, k, v)
    for (const auto& sh : fs["groups"][fused])
      if (shards.count(sh.get<std::string>())) ordered.emplace_back(sh.get<std::string>(), shards.at(sh.get<std::string>()));
    for (const auto& [sh, sch] : ordered) {
      parts.push_back(sh + " " + (sch.empty() ? "in 16-bit" : sch));
      (sch.empty() ? kept : quantized).push_back(sh);
    }
    said.push_back(std::to_string(where.size()) + " x " + where.front().substr(where.front().rfind('.') + 1) + " (" + where.front() + (where.size() > 1 ? ", ..." : "") +
                   "): " + join(parts));
    // The cheapest repair: exclude the fewer shards' partners (all in 16-bit), else one scheme for all.
    if (!kept.empty()) {
      std::vector<std::string> add;
      for (const auto& q : quantized) add.push_back("'*" + block + "." + q + "'");
      repairs.push_back("exclude all of " + block + "'s " + join(quantized) + " too (add " + join(add, " ") + " to the exclusions) or none of " + join(kept));
    } else {
      std::vector<std::string> flags;
      for (const auto& [sh, sch] : ordered) flags.push_back("'*" + block + "." + sh + "'");
      repairs.push_back("give " + join(flags, ", ") + " one scheme (--layer-scheme PATTERN=SCHEME for each, or none)");
    }
  }
  const std::string decision = s.choice("layer_quant_config") || !s.plan.value("layer_quant_config", Json::object()).empty() ? "layer_quant_config" : "exclude_layers";
  s.conflict("torch.serve.fused_shards", decision,
             (offenders.empty() ? std::string()
                                : label(s) + " fuses these modules into one layer and refuses shards with different schemes ('" +
                                      replace_layer(fs["error"].get<std::string>(), offenders.begin()->second.front()) + "'): " + join(said, "; ") + ". ") +
                 (moe_said.empty() ? std::string()
                                   : label(s) + " builds each layer's routed experts as one fused MoE layer with one quantization method (" +
                                         fs.value("experts_note", std::string("its Quark MoE method")) + "), so experts that differ load with another's scales: " +
                                         join(moe_said, "; ") + ".") +
                 (unmatched_said.empty() ? std::string()
                                         : (offenders.empty() && moe_said.empty() ? std::string() : " ") + label(s) +
                                               " picks each fused MoE layer's scheme by matching layer_quant_config against the layer's own name (" +
                                               (*s.runtime)["moe_layer_config"]["source"].get<std::string>() + "): " + join(unmatched_said, "; ") + "."),
             join(repairs, "; "));
}

// Re-quantizing an already-quantized source pays only when the result is meaningfully smaller
// (half a bit per weight): otherwise the outcome is serving the source as it is, with the command
// that serves it (this plan's runtime, parallel size and flags, on the source folder).
void serve_source(PlanState& s) {
  const Json& m = model(s);
  if (!m["pre_quantized"].is_string() || !s.plan.contains("estimates") || !s.plan["estimates"].is_object()) return;
  const Json weights = s.plan["estimates"].value("weights", Json::array());
  if (!weights.is_array() || weights.size() < 2) return;
  const double source_bits = weights[0].value("bits_per_weight_effective", 0.0), plan_bits = weights[1].value("bits_per_weight_effective", 0.0);
  const double margin = s.cat.torch()["pre_quantized_gain"].value("min_bits_per_weight", 0.5);
  if (source_bits <= 0 || plan_bits <= 0 || plan_bits <= source_bits - margin) return;
  const std::string form = m["pre_quantized"], path = m.value("model_path", std::string("MODEL"));
  char bits[64];
  std::snprintf(bits, sizeof bits, "%.2f bits per weight against the source's %.2f", plan_bits, source_bits);
  std::string serve = "serve the source as it is";
  if (const std::string problem = architecture_problem(s); !problem.empty()) {
    serve += " on an accelerator that runs it (" + problem + ")";
  } else if (s.plan.contains("serve") && s.plan["serve"].is_object()) {
    // The source's own command: its size and format decide the parallel size and the variables,
    // not the plan that is refused (the same command whatever the goal).
    Json src = s.plan;
    Json& sv = src["serve"];
    sv["kv_cache_flag"] = nullptr;
    Json env = Json::object();
    for (const char* kind : {"dense", "experts"}) {
      if (std::string(kind) == "experts" && !m.value("is_moe", false)) continue;
      RuntimeLoad l = runtime_load(*s.runtime, s.platform, kind, form);
      if (l.entry && l.entry->contains("env"))
        for (auto& [k, v] : (*l.entry)["env"].items()) env[k] = v;
    }
    sv["env"] = env;
    // The repository's own code: vLLM runs it only when told to (the user reviews it first).
    const bool remote = m.value("trust_remote_code", false);
    sv["trust_remote_code"] = remote;
    const Json fit = s.plan["estimates"].value("fit", Json(nullptr));
    const int64_t per_node = (*s.runtime)["serve"].value("gpus_per_node", int64_t{0});
    if (fit.is_object() && fit.contains("memory_bytes") && per_node > 0 && s.platform != "cpu" && s.platform != "npu") {
      // The source as served: its bytes without the MTP layers (loaded only for speculative
      // decoding), and a 16-bit KV cache (the source's command sets none).
      const Json kv = s.plan["estimates"].value("kv_cache", Json(nullptr));
      const Json parts = m.value("architecture", Json::object()).value("params_by_part", Json::object());
      const double total = m.value("total_params", 0.0), mtp = parts.is_object() ? parts.value("mtp", 0.0) : 0.0;
      const double source = static_cast<double>(weights[0].value("bytes", uint64_t{0})) * (total > 0 ? 1 - mtp / total : 1.0);
      const int64_t batch = kv.is_object() ? std::max<int64_t>(1, kv.value("batch", int64_t{1})) : 1;
      const double state_seq = kv.is_object() ? kv.value("state_bytes_per_sequence", 0.0) : 0.0;
      const double kv_seq =
          kv.is_object() ? (kv.value("bytes", 0.0) / static_cast<double>(batch) - state_seq) * (kv.value("dtype", std::string()) == "fp8" ? 2 : 1) : 0.0;
      const ServeMemory sm = serve_memory(s, source, kv_seq, state_seq);
      const HeadCounts heads = head_counts(s);
      const ParallelChoice pc = choose_parallel(
          sm, [&](int64_t t) { return heads_split_problem(heads, t).empty() && attention_kernel_problem(s, env, t).empty(); }, batch, s.accelerator_count, per_node);
      sv["tensor_parallel_size"] = pc.tp;
      sv["pipeline_parallel_size"] = pc.pp;
    }
    if (Json cmd = serve_command(src, s.cat, path, model_type(s)); cmd.is_object()) {
      // One line: the variables, the program and its arguments (quoted where a shell needs it).
      std::string text;
      for (auto& [k, v] : cmd["env"].items()) text += k + "=" + shell_quote(v.get<std::string>()) + " ";
      text += cmd["program"].get<std::string>();
      for (const auto& a : cmd["args"]) text += " " + shell_quote(a.get<std::string>());
      const std::string tf = newer_transformers(s);
      serve += " (" + text + (remote ? "; --trust-remote-code runs the repository's own code: review it first" : "") +
               (tf.empty() ? "" : "; with a " + label(s) + " built on transformers >= " + tf + ", which knows " + model_type(s)) + ")";
    }
  }
  // The alternatives that are real: a 16-bit original where its maker published one, and the size
  // goal where some scheme estimated here is smaller than the source by the margin.
  const Json& gain = s.cat.torch()["pre_quantized_gain"];
  const Json no_original = gain.value("no_16bit_original", Json::object());
  const bool has_original = !no_original.contains(model_type(s));
  bool smaller_exists = false;
  for (size_t i = 1; i < weights.size(); ++i) smaller_exists = smaller_exists || weights[i].value("bits_per_weight_effective", 99.0) <= source_bits - margin;
  // AMD's own re-quantization at this size, where it publishes one: from the 16-bit original.
  std::string amd;
  for (const auto& r : s.cat.torch()["amd_recipes"]) {
    const Json* rs = s.cat.torch_scheme(r["scheme"]);
    if (!rs || !std::count(r["model_types"].begin(), r["model_types"].end(), model_type(s)) ||
        !std::count(r["hardware"].begin(), r["hardware"].end(), hw_name(s)) || (*rs)["bits_per_weight"].get<double>() <= source_bits - margin)
      continue;
    amd = " (AMD publishes " + r["scheme"].get<std::string>() + " of this family as " + r["id"].get<std::string>() +
          (r.contains("quantized_from") ? ", made from " + r["quantized_from"].get<std::string>() : std::string()) + ": " + r["command"].get<std::string>() + ")";
    break;
  }
  // The plan's schemes as the user would name them: the global one and each layer pattern's.
  std::string planned = s.plan["global_scheme"].get<std::string>();
  if (const Json lqc = s.plan.value("layer_quant_config", Json::object()); lqc.is_object())
    for (const auto& [pattern, sch] : lqc.items())
      if (sch.is_string()) planned += " + '" + pattern + "' " + sch.get<std::string>();
  s.conflict("torch.pre_quantized.serve_source", "global_scheme",
             "The planned " + planned + " model (" + format_bytes(weights[1].value("bytes", uint64_t{0})) + ", " + bits +
                 ") is not half a bit per weight smaller than its already-quantized source (" + format_bytes(weights[0].value("bytes", uint64_t{0})) + ", " + form +
                 "): re-quantizing it gains nothing and is bounded by the " + form + " source's quality.",
             serve + (has_original ? "; or quantize 16-bit weights (the original where one was published)" + amd
                                  : std::string("; no 16-bit original exists: ") + no_original[model_type(s)].get<std::string>()) +
                 (s.goal == "size" || !smaller_exists ? std::string() : std::string("; or --goal size for a scheme smaller than the source")));
}

}  // namespace torch_rules
}  // namespace quarkplan
