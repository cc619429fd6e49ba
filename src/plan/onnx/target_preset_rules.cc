// ONNX targets and presets: which target and preset the plan uses and whether they fit the model —
// onnx.analysis.complete, onnx.refuse.already_quantized, onnx.target.*, onnx.architecture.known,
// onnx.preset.* (choose, known, op_types_present, weight_coverage), onnx.custom_ops.block_formats, onnx.recurrent.risk.
#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/strings.h"
#include "plan/onnx/rule_helpers.h"
#include "plan/onnx_weights.h"
#include "plan/rules.h"

namespace quarkplan::onnx_rules {

using detail::onnx_facts;
using detail::target;
using detail::generation;
using detail::arch;
using detail::plan_arch;
using detail::preset;
using detail::spec;

namespace {

std::string histogram(const PlanState& s, size_t n = 8) {
  std::string out;
  size_t i = 0;
  for (auto& [k, v] : s.analysis["quantization_targets"]["onnx_specific"]["op_counts"].items()) {
    if (i++ == n) break;
    out += (out.empty() ? "" : ", ") + k + "=" + v.dump();
  }
  return out;
}

}  // namespace

void analysis_complete(PlanState& s) {
  if (s.analysis["analysis_status"] != "partial") return;
  std::string why = join(string_list(s.analysis.value("partial_reasons", Json::array())), "; ");
  s.question("The model analysis is partial (" + why + "): fix the model files and re-run intake, or confirm planning on incomplete facts.");
  s.risk("onnx.analysis.complete", "high", "The plan rests on a partial analysis: " + why + ".",
         "Resolve the intake risks, re-run `quarkplan intake`, then plan again.");
}

void refuse_already_quantized(PlanState& s) {
  const Json& o = onnx_facts(s);
  if (!o["has_qdq_already"].get<bool>() && !o["has_quark_custom_ops"].get<bool>()) return;
  s.refused = true;
  // Name the form actually found and its own route back to float (a dynamic
  // model has no QDQ pairs to remove).
  const Json forms = o.value("quantized_forms", Json::array());
  if (!forms.empty()) {
    std::vector<std::string> labels, routes;
    for (const auto& f : forms) {
      labels.push_back(f["label"].get<std::string>() + ": " + join(string_list(f["ops"])));
      routes.push_back(f["recovery"].get<std::string>());
    }
    s.refusal = "The model is already quantized (" + join(labels, "; ") + "): no plan is produced. Recovery: " + join(routes, " ") +
                " Then run `quarkplan intake` on the float model.";
    return;
  }
  s.refusal = "The model is already quantized (" + join(string_list(o["quantized_op_types"])) +
              "): no plan is produced. Recovery: start from the float model, or remove the existing QDQ with "
              "`python -m quark.onnx.tools.remove_qdq` (Quark 0.12 ships remove_qdq_between_ops), then run "
              "`quarkplan intake` on the cleaned model.";
}

void resolve_target(PlanState& s) {
  std::string t = s.req.target;
  std::string source = s.req.target_source;
  if (t.empty() && s.analysis.contains("intake") && s.analysis["intake"]["deployment_target"].is_string()) {
    t = s.analysis["intake"]["deployment_target"];
    source = "the analysis (intake --target / session)";
  }
  if (const Json* c = s.choice("deployment_target"); c && c->is_string()) {
    t = *c;
    source = "your choice";
  }
  // An NPU named with --hardware (or by env_context.json) and no target: the
  // NPU target of the model's kind.
  if (t.empty()) {
    std::string gsource;
    const std::string g = npu_generation_name(s, &gsource);
    const std::string a = plan_arch(s);
    if (!g.empty() && (s.cat.npu_generation(g) || s.cat.npu_generic_name(g)) && (a == "cnn" || a == "transformer")) {
      t = a == "cnn" ? "npu_cnn" : "npu_transformer";
      source = gsource + ", for a " + (a == "cnn" ? std::string("CNN") : std::string("transformer"));
    }
  }
  if (t.empty()) {
    s.plan["deployment_target"] = nullptr;
    s.question("Which deployment target? (cpu | cuda | rocm | npu_cnn | npu_transformer) It decides the preset gates.");
    s.risk("onnx.target.resolve", "high", "The deployment target is unknown: preset, calibration and NPU flags cannot be gated.",
           "Pass --target, or set constraints.deployment_target in session_context.json.");
    s.reason("deployment_target", "onnx.target.resolve", "Not known yet: asked as an open question");
    return;
  }
  if (!s.cat.onnx_target(t)) {
    s.error("unknown deployment target '" + t + "'" + did_you_mean(t, {"cpu", "cuda", "rocm", "npu_cnn", "npu_transformer"}));
    return;
  }
  s.plan["deployment_target"] = t;
  s.reason("deployment_target", "onnx.target.resolve", (*s.cat.onnx_target(t))["label"].get<std::string>() + ", from " + (source.empty() ? "--target" : source));
}

void architecture_known(PlanState& s) {
  if (plan_arch(s) != "unknown") return;
  if (s.choice("preset")) {
    s.risk("onnx.architecture.known", "medium", "The architecture is unknown (op histogram: " + histogram(s) + "); the preset is your choice.",
           "Check the preset suits the model's dominant ops.");
    return;
  }
  s.question("The architecture is unknown (op histogram: " + histogram(s) +
             "). Which path should the plan follow: CNN, transformer or hybrid? (set preset=NAME)");
}

namespace {

// The share of the model's weights a preset quantizes (subgraph weights when
// Quark goes into them: MatMulNBits always, the others with EnableSubgraph,
// which the plan turns on when they hold every weight the preset quantizes).
double quantized_share(const PlanState& s, const Json& p, bool subgraphs_on) {
  PresetWeights w = preset_weights(s.analysis, s.cat, p);
  uint64_t total = onnx_facts(s)["weights"].value("total_params", uint64_t{0});
  if (!w.known || total == 0) return 1.0;
  bool into = w.recurses_into_subgraphs || subgraphs_on || w.only_in_subgraphs();
  return static_cast<double>(w.main_params + (into ? w.sub_params : 0)) / static_cast<double>(total);
}

double min_share(const PlanState& s) { return s.cat.onnx()["weight_coverage_policy"]["min_quantized_share"].get<double>(); }

// The first preset that quantizes most of the model's weights — the target's
// candidates first, then any preset on it, then the other targets' — as the
// text a conflict or a risk offers ("XINT8", "--target npu_cnn with XINT8").
std::string covering_alternative(const PlanState& s, const std::string& t, bool subgraphs_on, bool as_flag) {
  std::vector<std::string> targets = {t};
  for (const auto& tj : s.cat.onnx()["deployment_targets"])
    if (tj["name"] != t) targets.push_back(tj["name"]);
  for (const auto& tt : targets) {
    if (tt.empty()) continue;
    std::vector<std::string> names = s.cat.onnx_preset_candidates(tt, plan_arch(s));
    for (const auto& n : s.cat.onnx_preset_names()) names.push_back(n);
    for (const auto& n : names) {
      const Json* pj = s.cat.onnx_preset(n);
      if (!pj || !s.cat.preset_allowed_on(*pj, tt, generation(s)) || (*pj)["needs_custom_ops"].get<bool>() || !detail::preset_fails_on_model(s, *pj).empty()) continue;
      if (quantized_share(s, *pj, subgraphs_on) >= min_share(s)) return tt == t ? (as_flag ? "--preset " : "") + n : "--target " + tt + " with " + n;
    }
  }
  return "";
}

std::string percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, share < 0.01 ? "%.2f%%" : "%.0f%%", share * 100);
  return buf;
}

}  // namespace

void choose_preset(PlanState& s) {
  if (const Json* c = s.choice("preset")) {
    std::string want = c->is_string() ? s.cat.canonical_preset(*c) : "";
    s.plan["preset"] = want;
    if (want != (c->is_string() ? c->get<std::string>() : ""))
      s.reason("preset", "onnx.preset.choose", "Your choice (" + c->get<std::string>() + " is Quark's " + want + ")");
    else
      s.reason("preset", "onnx.preset.choose", "Your choice");
    return;
  }
  std::string t = target(s), a = plan_arch(s), goal = s.req.goal.empty() ? "balanced" : s.req.goal;
  if (t.empty() || a == "unknown") {
    s.plan["preset"] = nullptr;
    s.reason("preset", "onnx.preset.choose", t.empty() ? "Waits for the deployment target" : "Waits for the architecture");
    return;
  }
  std::string model = a == "mlp" ? std::string("an MLP") : "a " + a + " model";
  // --goal size wants a smaller file: a format that keeps the float weights
  // behind a quantize-dequantize (catalog qdq_layout keeps_float_weights: BF16,
  // FP16, BFP, MX) is never "smallest", whatever the guide's row says; the
  // guide's choice is named as the alternative.
  std::vector<std::string> float_keeping;
  auto keeps_float = [&](const Json& pj) {
    const Json& types = s.cat.onnx()["qdq_layout"]["types"];
    return pj["weight_type"].is_string() && types.contains(pj["weight_type"].get<std::string>()) &&
           types[pj["weight_type"].get<std::string>()].value("keeps_float_weights", false);
  };
  auto usable = [&](const Json& pj) {
    if (goal == "size" && keeps_float(pj)) {
      if (std::find(float_keeping.begin(), float_keeping.end(), pj["name"].get<std::string>()) == float_keeping.end()) float_keeping.push_back(pj["name"]);
      return false;
    }
    return s.cat.preset_allowed_on(pj, t, generation(s)) && !((pj)["needs_custom_ops"].get<bool>() && s.req.custom_ops_compile_ok == false) &&
           detail::preset_fails_on_model(s, pj).empty();
  };
  auto size_note = [&]() -> std::string {
    if (float_keeping.empty()) return "";
    return "; not " + join(float_keeping) + (float_keeping.size() == 1 ? ", which keeps" : ", which keep") +
           " the float weights in the file (quantize-dequantize: an accuracy simulation, no smaller)";
  };
  // First a preset that quantizes a real share of the weights, else one that
  // quantizes anything (the coverage rule then names the share).
  for (bool want_share : {true, false}) {
    auto fits = [&](const Json& pj) {
      if (!usable(pj)) return false;
      if (want_share) return quantized_share(s, pj, false) >= min_share(s);
      return preset_weights(s.analysis, s.cat, pj).touches_anything();
    };
    // The first preset of a row that fits, and the row's others as alternatives.
    auto first_fit = [&](const Json& presets, std::string& alts) -> std::string {
      for (const auto& p : presets) {
        const Json* pj = s.cat.onnx_preset(p);
        if (!pj || !fits(*pj)) continue;
        std::vector<std::string> others;
        for (const auto& q : presets)
          if (q != p) others.push_back(q);
        alts = others.empty() ? "" : "; alternative: " + join(others);
        return p;
      }
      return "";
    };
    // A known NPU generation: what Ryzen AI documents for it, per goal
    // (catalog npu_generations ... choose), first preset that fits.
    if (const Json* g = generation(s); g && (*g)["targets"].contains(t) && (*g)["targets"][t].contains("choose")) {
      const Json& ch = (*g)["targets"][t]["choose"];
      const Json& row = ch.contains(goal) ? ch[goal] : ch.value("balanced", Json::object());
      std::string alts;
      if (std::string p = first_fit(row.value("presets", Json::array()), alts); !p.empty()) {
        s.plan["preset"] = p;
        s.reason("preset", "onnx.preset.choose", "The " + (*g)["label"].get<std::string>() + " NPU, goal " + goal + ": " + row.value("why", std::string()) + alts);
        return;
      }
    }
    // Quark's planning guide row for goal x target x architecture, first preset that fits.
    for (const auto& row : s.cat.onnx()["decision_guide"]) {
      if (row["goal"] != goal) continue;
      if (!std::count(row["targets"].begin(), row["targets"].end(), t)) continue;
      if (row["architecture"] != "*" && row["architecture"] != a) continue;
      std::string alts;
      const std::string p = first_fit(row["presets"], alts);
      if (p.empty()) continue;
      s.plan["preset"] = p;
      // A row quarkplan adds where the guide's own choice fails a hardware
      // or runtime fact (catalog: deviation): the guide's choice is the alternative.
      if (row.contains("deviation")) {
        const Json& d = row["deviation"];
        s.reason("preset", "onnx.preset.choose",
                 "\"" + row["intent"].get<std::string>() + "\", for " + model + ": " + d["why"].get<std::string>() + alts +
                     "; Quark's planning guide's choice: " + join(string_list(d["guide_presets"])));
        return;
      }
      s.reason("preset", "onnx.preset.choose", "Quark's planning guide: \"" + row["intent"].get<std::string>() + "\", for " + model + alts + size_note());
      return;
    }
    // Else the target's candidates for the architecture (catalog preset_candidates), first that fits.
    std::vector<std::string> cands = s.cat.onnx_preset_candidates(t, a), skipped;
    for (const auto& p : cands) {
      const Json* pj = s.cat.onnx_preset(p);
      if (!pj || !fits(*pj)) {
        if (std::find(float_keeping.begin(), float_keeping.end(), p) == float_keeping.end()) skipped.push_back(p);
        continue;
      }
      s.plan["preset"] = p;
      s.reason("preset", "onnx.preset.choose",
               p + ": no row of Quark's planning guide covers goal " + goal + " on " + t + " for " + model + ", so the first of " + t +
                   "'s candidates (" + join(cands) + ")" + (skipped.empty() ? "" : " that " + std::string(want_share ? "quantizes most of" : "quantizes") +
                   " this model's weights (" + join(skipped) + " do not)") + size_note());
      return;
    }
  }
  // Nothing fits the model's ops: keep the target's first preset, so the
  // op-type check below explains the conflict and its way out.
  for (const auto& p : s.cat.onnx_preset_candidates(t, a)) {
    const Json* pj = s.cat.onnx_preset(p);
    if (!pj || !s.cat.preset_allowed_on(*pj, t, generation(s))) continue;
    s.plan["preset"] = p;
    s.reason("preset", "onnx.preset.choose", p + ": the first preset for " + t + ", although none quantizes this model's ops (see the conflict)");
    return;
  }
  s.plan["preset"] = nullptr;
  s.question("No preset fits target " + t + " for " + model + ": choose one (quarkplan catalog onnx).");
}

void preset_known(PlanState& s) {
  if (!s.plan["preset"].is_string() || preset(s)) return;
  std::string name = s.plan["preset"];
  s.error("unknown preset '" + name + "'" + did_you_mean(name, s.cat.onnx_preset_names()) + "; list them with `quarkplan catalog onnx`");
}

namespace {
std::pair<std::string, std::string> fitting_alternative(const PlanState& s, const std::string& t);
}  // namespace

void target_gate(PlanState& s) {
  const Json* p = preset(s);
  std::string t = target(s);
  if (!p || t.empty()) return;
  const Json* g = generation(s);
  if (s.cat.preset_allowed_on(*p, t, g)) {
    // What the generation's documentation adds about this format (a BF16 model
    // the Vitis AI EP compiles itself, a preset only an older release offered).
    if (const Json* grp = g ? s.cat.npu_group(*g, t, (*p)["name"].get<std::string>()) : nullptr; grp && grp->contains("note"))
      s.risk("onnx.npu.generation", "medium", (*grp)["note"].get<std::string>() + ".", "Ryzen AI's documentation: " + (*grp)["source"].get<std::string>());
    return;
  }
  const Json& tj = *s.cat.onnx_target(t);
  std::string name = (*p)["name"];
  std::string why;
  if (g && (*g)["targets"].contains(t)) {
    // What Ryzen AI documents for this generation, and the first of it that fits.
    // Groups marked documented: false are what quarkplan keeps without a
    // current Ryzen AI page (Quark's NPU transformer presets, Ryzen AI 1.0's route).
    std::vector<std::string> documented, kept;
    for (const auto& grp : (*g)["targets"][t]["groups"])
      for (const auto& q : grp["presets"]) (grp.value("documented", true) ? documented : kept).push_back(q);
    const std::vector<std::string> any = [&] {
      std::vector<std::string> v = documented;
      v.insert(v.end(), kept.begin(), kept.end());
      return v;
    }();
    std::string alt;
    for (const auto& q : any)
      if (const Json* qj = s.cat.onnx_preset(q); qj && quantized_share(s, *qj, false) >= min_share(s)) {
        alt = q;
        break;
      }
    if (alt.empty() && !any.empty()) alt = any.front();
    const Json& tg = (*g)["targets"][t];
    s.conflict("onnx.target.gate", "preset",
               "Preset " + name + " is not documented for the " + (*g)["label"].get<std::string>() + " NPU (" + t + "): " +
                   (documented.empty() ? std::string("Ryzen AI documents no format there") : "Ryzen AI documents " + join(documented) + " there") +
                   (kept.empty() ? std::string() : "; quarkplan also keeps " + join(kept)) + (tg.contains("why") ? " (" + tg["why"].get<std::string>() + ")" : "") + ".",
               alt.empty() ? "--target cpu" : alt);
    return;
  }
  if (t == "npu_cnn" && !(*p)["power_of_two"].get<bool>() && !(*p)["enable_npu_cnn"].get<bool>())
    why = name + " runs there only on STX/KRK and newer NPUs: name the NPU (--hardware strix|strix-halo|krackan), or keep XINT8 for an NPU of unknown generation.";
  else if ((*p)["enable_npu_cnn"].get<bool>()) why = name + " sets enable_npu_cnn, which is tied to the npu_cnn target.";
  else if ((*p)["enable_npu_transformer"].get<bool>()) why = name + " sets enable_npu_transformer, which is tied to the npu_transformer target.";
  // The alternative must itself pass: the target's closest preset when it
  // quantizes this model's ops, else the first preset (and target) that does.
  // "Fits" means it quantizes most of the weights (weight_coverage_policy).
  std::string alt = tj["closest_alternative"];
  const Json* aj = s.cat.onnx_preset(alt);
  if (!aj || quantized_share(s, *aj, false) < min_share(s)) {
    alt = covering_alternative(s, t, false, false);
    if (alt.empty()) {
      auto [alt_t, alt_p] = fitting_alternative(s, t);
      alt = alt_p.empty() ? "a float deployment (no preset fits this model's ops)" : alt_t == t ? alt_p : "--target " + alt_t + " with " + alt_p;
    }
  }
  const bool named_npu = t == "npu_cnn" && !(*p)["power_of_two"].get<bool>() && !(*p)["enable_npu_cnn"].get<bool>();
  s.conflict("onnx.target.gate", "preset",
             "Preset " + name + (named_npu ? " needs a named NPU on " : " does not run on ") + t + ": " + (why.empty() ? tj["why"].get<std::string>() : why), alt);
}

// Formats written with Quark's own ops (catalog qdq_layout types:
// custom_domain): BF16/FP16 Extended Q/DQ, BFP and MX. ONNX Runtime loads such
// a model only with Quark's custom-op library registered, and the float
// formats are a quantize-dequantize simulation, not a faster model.
namespace {
void custom_op_runtime_risk(PlanState& s, const Json& p) {
  const Json& types = s.cat.onnx()["qdq_layout"]["types"];
  bool custom = false, simulation = false;
  for (const char* k : {"activation_type", "weight_type"})
    if (p[k].is_string() && types.contains(p[k].get<std::string>())) {
      const Json& t = types[p[k].get<std::string>()];
      custom = custom || t.value("custom_domain", false);
      simulation = simulation || t.value("keeps_float_weights", false);
    }
  if (!custom) return;
  const std::string name = p["name"];
  s.risk("onnx.custom_ops.block_formats", "medium",
         name + " writes Quark's own ops (com.amd.quark)" + (simulation ? ", quantize-dequantize in place around float weights" : "") +
             ": ONNX Runtime runs the result only with Quark's custom-op library registered" +
             (simulation ? ", and it runs no faster on a CPU or GPU than the float model (an accuracy simulation)." : "."),
         "At inference: so = onnxruntime.SessionOptions(); so.register_custom_ops_library(quark.onnx.get_library_path()) before creating the session"
         " (\"CUDA\" or \"ROCM\" as get_library_path's device on a GPU). To deploy a smaller, faster model, choose an integer preset such as A8W8.");
}
}  // namespace

void custom_ops_gate(PlanState& s) {
  const Json* p = preset(s);
  if (p) custom_op_runtime_risk(s, *p);
  if (!p || !(*p)["needs_custom_ops"].get<bool>()) return;
  std::string name = (*p)["name"];
  if (s.req.custom_ops_compile_ok == false) {
    s.conflict("onnx.custom_ops.block_formats", "preset",
               "Block-format preset " + name + " needs the Quark custom-ops library, and onnx_install_result.json says it failed to compile.",
               "A16W8 or BF16 (no custom ops), or fix the build with quark-onnx-install");
    return;
  }
  if (!s.req.custom_ops_compile_ok) {
    s.question("Block-format preset " + name + " needs the Quark custom-ops library: run quark-onnx-install to verify "
               "`import quark.onnx.operators.custom_ops`, then pass --install-result onnx_install_result.json.");
    s.risk("onnx.custom_ops.block_formats", "medium", "Custom-ops compile is unverified for block-format preset " + name + ".",
           "Hand off to quark-onnx-install, then resume planning.");
  } else {
    s.reason("custom_ops", "onnx.custom_ops.block_formats", "Quark custom-ops library compiled (onnx_install_result.json)");
  }
}

// NPU presets on the CPU or a GPU: ONNX Runtime's providers run their QDQ
// models (the usual accuracy check off the NPU), so they are a risk, not a refusal.
void npu_preset_off_npu(PlanState& s) {
  const Json* p = preset(s);
  std::string t = target(s);
  if (!p || t.empty() || !s.cat.onnx_target(t)) return;
  const Json& tj = *s.cat.onnx_target(t);
  std::string fam = (*p)["family"];
  if (tj.contains("emulated_families") && tj["emulated_families"].contains(fam))
    s.risk("onnx.target.npu_preset_off_npu", "medium",
           (*p)["name"].get<std::string>() + " on " + t + ": " + tj["emulated_families"][fam].get<std::string>(),
           "Keep it to check the NPU model's accuracy; for deployment on " + t + " prefer " + tj["closest_alternative"].get<std::string>() + ".");
}

// An NPU target of the other model kind: Ryzen AI's CNN flow (npu_cnn, NPU
// CNN mode) for a transformer, or its transformer flow for a CNN.
void npu_model_kind(PlanState& s) {
  const std::string t = target(s), a = plan_arch(s);
  if ((t != "npu_cnn" || a != "transformer") && (t != "npu_transformer" || a != "cnn")) return;
  const Json& f = onnx_facts(s);
  const std::string what = a == "transformer" ? "a transformer (" + std::to_string(f.value("attention_blocks", 0)) + " attention blocks)" : "a CNN";
  const std::string other = t == "npu_cnn" ? "npu_transformer" : "npu_cnn";
  s.risk("onnx.target.npu_model_kind", "medium",
         "The target is " + t + ", Ryzen AI's " + (t == "npu_cnn" ? "CNN" : "transformer") + " flow, and the model is " + what +
             ": its presets, gates and NPU mode are made for the other kind.",
         "Plan it for --target " + other + (a == "transformer" ? " (on STX/KRK, BF16: --hardware strix)" : "") + ", unless the model really is " +
             (t == "npu_cnn" ? "convolutional" : "attention-based") + " and intake's guess is wrong.");
}

namespace {

std::string op_summary(const PlanState& s) {
  std::vector<std::string> parts;
  const Json& by = s.analysis["quantization_targets"].value("weights_by_op_type", Json::object());
  for (auto& [op, e] : by.items())
    if (e.value("weighted_nodes", uint64_t{0}) > 0) parts.push_back(op + " x" + std::to_string(e["weighted_nodes"].get<uint64_t>()));
  return parts.empty() ? "no weighted ops at all" : "weights feed " + join(parts);
}

// The first preset (target, preset) that fits the model's ops: the chosen
// target's candidates first, then the other targets'.
std::pair<std::string, std::string> fitting_alternative(const PlanState& s, const std::string& t) {
  std::vector<std::string> targets = {t};
  for (const auto& tj : s.cat.onnx()["deployment_targets"])
    if (tj["name"] != t) targets.push_back(tj["name"]);
  for (const auto& tt : targets) {
    std::vector<std::string> names = s.cat.onnx_preset_candidates(tt, plan_arch(s));
    for (const auto& n : s.cat.onnx_preset_names()) names.push_back(n);
    for (const auto& n : names) {
      const Json* pj = s.cat.onnx_preset(n);
      if (!pj || !s.cat.preset_allowed_on(*pj, tt, generation(s)) || (*pj)["needs_custom_ops"].get<bool>() || !detail::preset_fails_on_model(s, *pj).empty()) continue;
      if (preset_weights(s.analysis, s.cat, *pj).touches_anything()) return {tt, n};
    }
  }
  return {"", ""};
}

}  // namespace

// A preset whose op types do not occur in the model (outside or inside
// subgraphs) would confirm a plan that quantizes nothing.
void op_types_present(PlanState& s) {
  const Json* p = preset(s);
  if (!p) return;
  PresetWeights w = preset_weights(s.analysis, s.cat, *p);
  if (w.touches_anything()) return;
  std::string t = target(s), name = (*p)["name"];
  auto [alt_t, alt_p] = fitting_alternative(s, t);
  std::string alt = alt_p.empty() ? "a float deployment (no preset fits)" : alt_t == t ? alt_p : "--target " + alt_t + " with " + alt_p;
  bool user_preset = s.choice("preset") != nullptr;
  s.conflict("onnx.preset.op_types_present", user_preset || alt_t == t ? "preset" : "deployment_target",
             "Preset " + name + " quantizes " + w.label + ", and this model has none (" + op_summary(s) +
                 "): the plan would leave every weight in float.",
             alt);
}

// The intake's recurrent finding reaches the plan.
void recurrent_risk(PlanState& s) {
  if (arch(s) != "recurrent") return;
  // A preset whose op set holds the recurrent ops (dynamic: DynamicQuantizeLSTM) quantizes them.
  if (const Json* p = preset(s)) {
    const Json& sets = s.cat.onnx()["preset_op_sets"];
    std::string os = (*p).value("op_set", "static");
    std::vector<std::string> quantized;
    const Json& counts = s.analysis["quantization_targets"]["onnx_specific"]["op_counts"];
    if (sets.contains(os))
      for (const auto& op : sets[os]["ops"])
        for (const auto& r : s.cat.onnx()["recurrent_op_types"])
          if (op == r && counts.contains(op.get<std::string>())) quantized.push_back(op.get<std::string>());
    if (!quantized.empty()) {
      s.risk("onnx.recurrent.risk", "low",
             "The model is recurrent: " + (*p)["name"].get<std::string>() + " quantizes its " + join(quantized) +
                 " weights too (" + sets[os]["label"].get<std::string>() + "), and recurrent state accumulates their rounding error.",
             "Validate on long sequences.");
      return;
    }
  }
  for (const auto& r : s.analysis["risks"])
    if (r.value("rule", "") == "onnx.intake.recurrent_ops") {
      s.risk("onnx.recurrent.risk", r["severity"], r["message"], r["recovery_hint"]);
      return;
    }
  s.risk("onnx.recurrent.risk", "medium", "The model is recurrent: Quark's standard presets leave LSTM/GRU/RNN cells in float.",
         "Expect a smaller speed-up and validate on long sequences.");
}

// A preset whose op types hold only a small share of the weights confirms a
// plan that leaves most of the model in float: name the share and the preset
// (or target) that quantizes more.
void weight_coverage(PlanState& s) {
  const Json* p = preset(s);
  if (!p) return;
  PresetWeights w = preset_weights(s.analysis, s.cat, *p);
  if (!w.known || !w.touches_anything()) return;  // nothing at all: onnx.preset.op_types_present
  const Json* c = s.choice("onnx_specific.extra_options.EnableSubgraph");
  bool subgraphs_on = spec(s)["extra_options"].value("EnableSubgraph", false) == true || (c && c->is_boolean() && c->get<bool>());
  // Nothing left to quantize: the plan's op types or its exclusions (the
  // user's or --weight-stats') leave every weight the preset takes in float.
  PlanWeights nw = plan_weights(s.analysis, s.cat, *p, spec(s).value("op_types_to_quantize", Json()), spec(s).value("nodes_to_exclude", Json()),
                                subgraphs_on || w.only_in_subgraphs(), spec(s).value("op_types_to_exclude", Json()));
  if (nw.known && nw.candidate_nodes > 0 && nw.nodes == 0) {
    std::string name = (*p)["name"];
    std::string of = std::to_string(nw.candidate_nodes) + (nw.candidate_nodes == 1 ? " weighted node " : " weighted nodes ") + name + " quantizes";
    if (nw.other_type_nodes > 0 && nw.excluded_nodes == 0) {
      std::set<std::string> types;
      for (const auto& n : s.analysis["quantization_targets"]["weighted_nodes"]) types.insert(n.value("op_type", ""));
      s.conflict("onnx.preset.weight_coverage", "onnx_specific.op_types_to_quantize",
                 "op_types_to_quantize " + spec(s)["op_types_to_quantize"].dump() + " holds none of the " + of + " (" + w.label +
                     "): the plan would quantize no weight and leave the model in float.",
                 "op_types_to_quantize=null (every op type " + name + " takes), or op types that hold weights: " +
                     join(std::vector<std::string>(types.begin(), types.end())));
    } else if (spec(s).value("op_types_to_exclude", Json()).is_array() && !nw.excluded_nodes_by_name) {
      s.conflict("onnx.preset.weight_coverage", "onnx_specific.op_types_to_exclude",
                 "op_types_to_exclude " + spec(s)["op_types_to_exclude"].dump() + " keeps every one of the " + of +
                     " in float: the plan would quantize no weight and leave the model in float.",
                 "onnx_specific.op_types_to_exclude=null, or exclude fewer op types");
    } else {
      bool automatic = !s.choice("onnx_specific.nodes_to_exclude");
      s.conflict("onnx.preset.weight_coverage", "onnx_specific.nodes_to_exclude",
                 "nodes_to_exclude" + std::string(automatic ? " (the outlier layers --weight-stats found)" : "") + " keeps every one of the " + of +
                     " in float: the plan would quantize no weight and leave the model in float.",
                 "nodes_to_exclude=[] to quantize them and check accuracy after quantization, or keep the model in float");
    }
    return;
  }
  double share = quantized_share(s, *p, subgraphs_on);
  if (share >= min_share(s)) return;
  uint64_t total = onnx_facts(s)["weights"]["total_params"].get<uint64_t>();
  bool into = w.recurses_into_subgraphs || subgraphs_on || w.only_in_subgraphs();
  uint64_t q = w.main_params + (into ? w.sub_params : 0);
  std::string t = target(s), name = (*p)["name"];
  std::string better = covering_alternative(s, t, subgraphs_on, true);
  s.risk("onnx.preset.weight_coverage", "high",
         name + " quantizes only " + std::to_string(q) + " of the model's " + std::to_string(total) + " weights (" + percent(share) + ", " + w.label +
             "): the rest stays in float, so the plan changes little (" + op_summary(s) + ").",
         better.empty() ? "No preset quantizes more of this model; keep it in float, or accept the small share."
                        : better + " quantizes most of the weights; keep " + name + " only if those " + w.label + " are what you want quantized.");
}

}  // namespace quarkplan::onnx_rules
