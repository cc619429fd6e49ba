// ONNX plan rules (quark_contracts.md §4.6, rules 88-116, and the ONNX seed).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "common/strings.h"
#include "plan/fix_shapes.h"
#include "plan/onnx_weights.h"
#include "plan/estimates.h"
#include "plan/rules.h"

namespace quarkplan::onnx_rules {

namespace {

const Json& onnx_facts(const PlanState& s) { return s.analysis["model"]["onnx_specific"]; }
std::string target(const PlanState& s) {
  return s.plan["deployment_target"].is_string() ? s.plan["deployment_target"].get<std::string>() : "";
}
std::string arch(const PlanState& s) { return onnx_facts(s)["architecture_guess"].get<std::string>(); }
// The architecture the rules plan for: the guess, or "mlp" for a plain stack
// of Gemm/MatMul layers (architecture_guess "unknown", but no question to ask).
std::string plan_arch(const PlanState& s) {
  std::string a = arch(s);
  return a == "unknown" && onnx_facts(s).value("architecture_detail", "") == "mlp" ? "mlp" : a;
}
const Json* preset(const PlanState& s) {
  return s.plan["preset"].is_string() ? s.cat.onnx_preset(s.plan["preset"].get<std::string>()) : nullptr;
}
std::string family(const PlanState& s) {
  const Json* p = preset(s);
  return p ? (*p)["family"].get<std::string>() : "";
}
Json& spec(PlanState& s) { return s.plan["onnx_specific"]; }
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
      if (!pj || !s.cat.preset_allowed_on(*pj, tt) || (*pj)["needs_custom_ops"].get<bool>()) continue;
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
  auto usable = [&](const Json& pj) {
    return s.cat.preset_allowed_on(pj, t) && !((pj)["needs_custom_ops"].get<bool>() && s.req.custom_ops_compile_ok == false);
  };
  // First a preset that quantizes a real share of the weights, else one that
  // quantizes anything (the coverage rule then names the share).
  for (bool want_share : {true, false}) {
    auto fits = [&](const Json& pj) {
      if (!usable(pj)) return false;
      if (want_share) return quantized_share(s, pj, false) >= min_share(s);
      return preset_weights(s.analysis, s.cat, pj).touches_anything();
    };
    // Quark's planning guide row for goal x target x architecture, first preset that fits.
    for (const auto& row : s.cat.onnx()["decision_guide"]) {
      if (row["goal"] != goal) continue;
      if (!std::count(row["targets"].begin(), row["targets"].end(), t)) continue;
      if (row["architecture"] != "*" && row["architecture"] != a) continue;
      for (const auto& p : row["presets"]) {
        const Json* pj = s.cat.onnx_preset(p);
        if (!pj || !fits(*pj)) continue;
        s.plan["preset"] = p;
        std::vector<std::string> alts;
        for (const auto& q : row["presets"])
          if (q != p) alts.push_back(q);
        s.reason("preset", "onnx.preset.choose",
                 "Quark's planning guide: \"" + row["intent"].get<std::string>() + "\", for " + model + (alts.empty() ? "" : "; alternative: " + join(alts)));
        return;
      }
    }
    // Else the target's candidates for the architecture (catalog preset_candidates), first that fits.
    std::vector<std::string> cands = s.cat.onnx_preset_candidates(t, a), skipped;
    for (const auto& p : cands) {
      const Json* pj = s.cat.onnx_preset(p);
      if (!pj || !fits(*pj)) {
        skipped.push_back(p);
        continue;
      }
      s.plan["preset"] = p;
      s.reason("preset", "onnx.preset.choose",
               p + ": no row of Quark's planning guide covers goal " + goal + " on " + t + " for " + model + ", so the first of " + t +
                   "'s candidates (" + join(cands) + ")" + (skipped.empty() ? "" : " that " + std::string(want_share ? "quantizes most of" : "quantizes") +
                   " this model's weights (" + join(skipped) + " do not)"));
      return;
    }
  }
  // Nothing fits the model's ops: keep the target's first preset, so the
  // op-type check below explains the conflict and its way out.
  for (const auto& p : s.cat.onnx_preset_candidates(t, a)) {
    const Json* pj = s.cat.onnx_preset(p);
    if (!pj || !s.cat.preset_allowed_on(*pj, t)) continue;
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
  if (s.cat.preset_allowed_on(*p, t)) return;
  const Json& tj = *s.cat.onnx_target(t);
  std::string name = (*p)["name"];
  std::string why;
  if (t == "npu_cnn" && name == "A8W8") why = "A8W8 uses non-PoF2 scales which the AMD NPU CNN runtime rejects. ";
  else if ((*p)["enable_npu_cnn"].get<bool>()) why = name + " sets enable_npu_cnn, which is tied to the npu_cnn target. ";
  else if ((*p)["enable_npu_transformer"].get<bool>()) why = name + " sets enable_npu_transformer, which is tied to the npu_transformer target. ";
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
  s.conflict("onnx.target.gate", "preset", "Preset " + name + " does not run on " + t + ": " + why + tj["why"].get<std::string>(), alt);
}

void custom_ops_gate(PlanState& s) {
  const Json* p = preset(s);
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
      if (!pj || !s.cat.preset_allowed_on(*pj, tt) || (*pj)["needs_custom_ops"].get<bool>()) continue;
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

void npu_flags_tied(PlanState& s) {
  std::string t = target(s);
  bool cnn = t == "npu_cnn", tr = t == "npu_transformer";
  // An NPU preset checked on the CPU or a GPU keeps its NPU mode: the point is
  // to run the very model the NPU would get (catalog: emulated_families).
  const Json* tj = t.empty() ? nullptr : s.cat.onnx_target(t);
  if (const Json* p = preset(s); p && tj && tj->contains("emulated_families") && (*tj)["emulated_families"].contains((*p)["family"].get<std::string>())) {
    cnn = cnn || (*p)["enable_npu_cnn"].get<bool>();
    tr = tr || (*p)["enable_npu_transformer"].get<bool>();
  }
  for (auto [key, want] : {std::pair<const char*, bool>{"onnx_specific.enable_npu_cnn", cnn}, {"onnx_specific.enable_npu_transformer", tr}}) {
    if (const Json* c = s.choice(key); c && c->is_boolean() && c->get<bool>() != want)
      s.conflict("onnx.npu.flags_tied", key, std::string(key) + " must equal (deployment_target == " + (cnn || std::string(key).find("cnn") != std::string::npos ? "npu_cnn" : "npu_transformer") + ").",
                 std::string(key) + "=" + (want ? "true" : "false"));
  }
  spec(s)["enable_npu_cnn"] = cnn;
  spec(s)["enable_npu_transformer"] = tr;
  s.reason("onnx_specific.enable_npu_cnn", "onnx.npu.flags_tied",
           cnn ? (t == "npu_cnn" ? "Target is npu_cnn" : "The NPU CNN model, run on " + (t == "cpu" ? std::string("the CPU") : t) + " to check its accuracy") : "Tied to the target: only npu_cnn");
  s.reason("onnx_specific.enable_npu_transformer", "onnx.npu.flags_tied",
           tr ? (t == "npu_transformer" ? "Target is npu_transformer" : "The NPU transformer model, run on " + (t == "cpu" ? std::string("the CPU") : t) + " to check its accuracy")
              : "Tied to the target: only npu_transformer");
}

void calibration_method(PlanState& s) {
  Json& cal = s.plan["calibration"];
  if (const Json* c = s.choice("calibration.method")) {
    std::string m = c->is_string() ? s.cat.canonical_calibration(*c) : "";
    if (m.empty()) {
      std::vector<std::string> names;
      for (const auto& x : s.cat.onnx()["calibration_methods"]) names.push_back(x["name"]);
      s.error("unknown calibration method '" + (c->is_string() ? c->get<std::string>() : c->dump()) + "'" +
              did_you_mean(c->is_string() ? c->get<std::string>() : "", names));
      return;
    }
    cal["method"] = m;
    s.reason("calibration.method", "onnx.calibration.method", "Your choice");
    return;
  }
  std::string t = target(s);
  const Json* p = preset(s);
  if (t == "npu_cnn") {
    cal["method"] = "PowerOfTwo_MinMSE";
    s.reason("calibration.method", "onnx.calibration.method", "NPU CNN needs power-of-two scales; MinMSE is usually better than NonOverflow");
  } else if (p) {
    cal["method"] = (*p)["calibration"];
    s.reason("calibration.method", "onnx.calibration.method", "The preset's own calibration (" + (*p)["name"].get<std::string>() + ")");
  } else {
    cal["method"] = nullptr;
    s.reason("calibration.method", "onnx.calibration.method", "Follows the preset");
  }
}

void npu_cnn_pof2(PlanState& s) {
  if (target(s) != "npu_cnn" || !s.plan["calibration"]["method"].is_string()) return;
  std::string m = s.plan["calibration"]["method"];
  const Json* mj = s.cat.onnx_calibration(m);
  if (mj && (*mj)["power_of_two"].get<bool>()) return;
  s.conflict("onnx.npu_cnn.pof2_calibration", "calibration.method",
             "Calibration " + m + " gives non-power-of-two scales, which the AMD NPU CNN runtime rejects.", "PowerOfTwo_MinMSE");
}

void xint8_pof2(PlanState& s) {
  const Json* p = preset(s);
  if (!p || target(s) == "npu_cnn" || !(*p)["power_of_two"].get<bool>() || !s.plan["calibration"]["method"].is_string()) return;
  const Json* mj = s.cat.onnx_calibration(s.plan["calibration"]["method"]);
  if (mj && !(*mj)["power_of_two"].get<bool>())
    s.risk("onnx.combination.xint8_without_pof2", "high",
           (*p)["name"].get<std::string>() + " without power-of-two calibration loses the scales the NPU needs.",
           "Use PowerOfTwo_MinMSE (or pick A8W8 for non-NPU targets).");
}

void npu_cnn_nhwc(PlanState& s) {
  if (target(s) != "npu_cnn") return;
  Json& extra = spec(s)["extra_options"];
  if (onnx_facts(s)["input_layout_guess"] != "NCHW") return;
  // Quark's convert_nchw_to_nhwc skips a 4-D input whose C, H or W is not an
  // integer, and its pre-process runs it before FixShapes: only shapes fixed
  // in the model file reach it.
  std::vector<std::string> skipped = nhwc_skipped_inputs(onnx_facts(s));
  const Json* chosen = s.choice("onnx_specific.extra_options.ConvertNCHWToNHWC");
  if (!skipped.empty()) {
    if (!chosen) {
      extra["ConvertNCHWToNHWC"] = false;
      s.reason("onnx_specific.extra_options.ConvertNCHWToNHWC", "onnx.npu_cnn.nhwc",
               "Quark cannot convert " + join(skipped, "; ") + " to NHWC: its convert_nchw_to_nhwc needs integer C, H and W and runs before FixShapes");
    }
    std::string model = s.analysis["model"].value("model_path", "model.onnx");
    std::string file = model.substr(model.find_last_of('/') == std::string::npos ? 0 : model.find_last_of('/') + 1);
    std::string base = file.size() > 5 && file.ends_with(".onnx") ? file.substr(0, file.size() - 5) : file;
    std::vector<std::string> all;
    for (const auto& sl : fix_shapes_slots(onnx_facts(s), false)) all.push_back(sl.text());
    s.risk("onnx.npu_cnn.nhwc", "high",
           "Inputs are NCHW with dynamic C, H or W (" + join(skipped, "; ") +
               "): Quark's NCHW-to-NHWC conversion skips them (it runs before FixShapes), so the quantized model stays NCHW, which the NPU CNN target does not expect.",
           "Fix the shapes in the model file first: python -m quark.onnx.tools.fix_shapes --input_model_path " + file + " --output_model_path " + base +
               "_fixed.onnx --fix_shapes '" + join(all, ";") + "' (each ? replaced; or onnxruntime's python -m onnxruntime.tools.make_dynamic_shape_fixed), then run quarkplan intake on " +
               base + "_fixed.onnx and plan it: ConvertNCHWToNHWC then converts.");
    return;
  }
  if (!chosen) {
    extra["ConvertNCHWToNHWC"] = true;
    s.reason("onnx_specific.extra_options.ConvertNCHWToNHWC", "onnx.npu_cnn.nhwc",
             "Inputs are NCHW and the NPU CNN target needs NHWC: Quark converts before quantizing");
    s.risk("onnx.npu_cnn.nhwc", "medium", "Inputs are NCHW; the NPU CNN target needs NHWC (ConvertNCHWToNHWC is set).",
           "Or convert first: python -m quark.onnx.tools.convert_nchw_to_nhwc, then re-run intake (node names change after conversion).");
  }
}

void calibration_sizes(PlanState& s) {
  Json& cal = s.plan["calibration"];
  const Json& d = s.cat.onnx()["calibration_defaults"];
  cal["data_size"] = d["data_size"];
  cal["batch_size"] = d["batch_size"];
  if (const Json* c = s.choice("calibration.data_size")) {
    if (!c->is_number_integer() || c->get<int64_t>() < 1) s.error("calibration.data_size must be a positive integer");
    else {
      cal["data_size"] = *c;
      s.reason("calibration.data_size", "onnx.calibration.sizes", "Your choice");
      if (c->get<int64_t>() < d["min_samples_for_final_plan"].get<int64_t>())
        s.risk("onnx.calibration.sizes", "medium", "Only " + c->dump() + " calibration samples: scales will be noisy.",
               d["sample_guidance"].get<std::string>() + ".");
    }
  } else {
    s.reason("calibration.data_size", "onnx.calibration.sizes", "Default 200 (" + d["sample_guidance"].get<std::string>() + ")");
  }
  if (const Json* c = s.choice("calibration.batch_size")) {
    if (!c->is_number_integer() || c->get<int64_t>() < 1 || c->get<int64_t>() > 4)
      s.error("calibration.batch_size must be an integer from 1 to 4");
    else {
      cal["batch_size"] = *c;
      s.reason("calibration.batch_size", "onnx.calibration.sizes", "Your choice");
    }
  } else {
    s.reason("calibration.batch_size", "onnx.calibration.sizes", "1: the smallest memory footprint (1-4 allowed)");
  }
}

void calibration_data(PlanState& s) {
  // Dynamic quantization and weight-only RTN read no calibration data (catalog
  // calibration_free), unless a fine-tuning algorithm is asked for.
  const Json* p = preset(s);
  const Json& free = s.cat.onnx()["calibration_free"]["presets"];
  const Json* algos = s.choice("algorithms");
  bool tuned = algos && !algos->is_null() && !(algos->is_string() && (algos->get<std::string>().empty() || lower(algos->get<std::string>()) == "none")) &&
               !(algos->is_array() && algos->empty());
  if (p && free.contains((*p)["name"].get<std::string>()) && !tuned) {
    s.reason("calibration.data_path", "onnx.calibration.data",
             "Not needed: " + free[(*p)["name"].get<std::string>()].get<std::string>() +
                 (s.req.calib_data.empty() || s.req.calib_data == "none" ? "" : " (the set you gave is not used)"));
    return;
  }
  // Quark's planning guide: PTQ needs representative inputs, asked for before
  // the plan is final, whether the user said "none" or nothing.
  if (s.req.calib_data == "none" || s.req.calib_data.empty()) {
    s.reason("calibration.data_path", "onnx.calibration.data", "Not given yet: asked as an open question");
    s.question("PTQ needs representative inputs for accurate scales: provide a small calibration set (at least a few dozen samples) with --calib-data PATH.");
    s.risk("onnx.calibration.data", "high", "No calibration data: the plan cannot be finalized.",
           "Collect 64-512 representative inputs keyed by the model's input names.");
  } else if (!s.req.calib_data.empty()) {
    s.plan["calibration"]["data_path"] = s.req.calib_data;
    s.reason("calibration.data_path", "onnx.calibration.data", "Your calibration set");
  }
}

void algorithms(PlanState& s) {
  Json& algos = s.plan["algorithms"];
  algos = Json::array();
  if (const Json* c = s.choice("algorithms")) {
    std::vector<std::string> names;
    if (c->is_string()) {
      std::string v = *c, cur;
      for (char ch : v + ",")
        if (ch == ',') {
          if (!cur.empty()) names.push_back(cur);
          cur.clear();
        } else if (ch != ' ') cur += ch;
    } else {
      names = string_list(*c);
    }
    std::vector<std::string> known;
    for (const auto& a : s.cat.onnx()["algorithms"]) known.push_back(a["name"]);
    for (const auto& n : names) {
      if (lower(n) == "none") continue;
      const Json* a = s.cat.onnx_algorithm(n);
      if (!a) {
        s.error("unknown ONNX algorithm '" + n + "'" + did_you_mean(n, known));
        continue;
      }
      if (!std::count(algos.begin(), algos.end(), (*a)["name"])) algos.push_back((*a)["name"]);
    }
    // The preset's built-in fine-tuning runs whatever the list says: the table shows it.
    const Json* p = preset(s);
    std::string ft = p && (*p)["fast_finetune"].is_string() ? (*p)["fast_finetune"].get<std::string>() : "";
    if (!ft.empty() && !std::count(algos.begin(), algos.end(), Json(ft))) {
      algos.push_back(ft);
      s.reason("algorithms", "onnx.algorithms.defaults", "Your choice, plus " + ft + ", which " + (*p)["name"].get<std::string>() + " runs itself");
    } else {
      s.reason("algorithms", "onnx.algorithms.defaults", "Your choice");
    }
  } else {
    std::string a = arch(s), fam = family(s), goal = s.req.goal.empty() ? "balanced" : s.req.goal;
    for (const auto& row : s.cat.onnx()["algorithm_defaults"]) {
      const Json& w = row["when"];
      if (w.contains("architecture") && !std::count(w["architecture"].begin(), w["architecture"].end(), a)) continue;
      if (w.contains("families") && !std::count(w["families"].begin(), w["families"].end(), fam)) continue;
      if (w.contains("goal") && !std::count(w["goal"].begin(), w["goal"].end(), goal)) continue;
      algos = row["algorithms"];
      break;
    }
    // Mixed-precision presets are driven by AutoMixprecision.
    if (const Json* p = preset(s); p && (*p)["auto_mixprecision"].get<bool>()) algos = Json::array({"AutoMixprecision"});
    // A preset with built-in fast-finetune runs its own AdaRound/AdaQuant
    // (Quark keeps only one of them): the table lists exactly that one.
    std::string ft;
    if (const Json* p = preset(s); p && (*p)["fast_finetune"].is_string()) {
      ft = (*p)["fast_finetune"];
      for (auto it = algos.begin(); it != algos.end();)
        it = (*it == "AdaRound" || *it == "AdaQuant") ? algos.erase(it) : it + 1;
      algos.push_back(ft);
    }
    bool has_cle = std::count(algos.begin(), algos.end(), "CLE") > 0;
    std::string why = algos.empty() ? "None needed for this preset and architecture"
                      : algos[0] == "AutoMixprecision" ? "Mixed-precision presets run AutoMixprecision"
                      : !ft.empty() ? std::string(has_cle ? "INT8 CNN: CLE equalizes channel ranges before calibration; " : "") + ft + ", which " +
                                          s.plan["preset"].get<std::string>() + " runs itself"
                      : algos.size() == 1 ? "INT8 CNN: CLE equalizes channel ranges before calibration"
                                          : "Accuracy-tight INT8 CNN: CLE, then AdaRound";
    s.reason("algorithms", "onnx.algorithms.defaults", why);
  }
  bool cle = std::count(algos.begin(), algos.end(), "CLE") > 0;
  const Json* p = preset(s);
  bool ft = std::count(algos.begin(), algos.end(), "AdaRound") || std::count(algos.begin(), algos.end(), "AdaQuant") ||
            (p && (*p)["fast_finetune"].is_string());
  if (const Json* c = s.choice("onnx_specific.include_cle"); c && c->is_boolean()) {
    cle = c->get<bool>();
    s.reason("onnx_specific.include_cle", "onnx.algorithms.defaults", "Your choice");
  } else {
    s.reason("onnx_specific.include_cle", "onnx.algorithms.defaults", cle ? "CLE is in the algorithms" : "No CLE for this preset/architecture");
  }
  spec(s)["include_cle"] = cle;
  spec(s)["include_fast_ft"] = ft;
}

void algorithm_compat(PlanState& s) {
  std::string fam = family(s);
  if (fam.empty()) return;
  for (const auto& a : s.plan["algorithms"]) {
    const Json* aj = s.cat.onnx_algorithm(a);
    if (!aj) continue;
    if (!std::count((*aj)["compatible_families"].begin(), (*aj)["compatible_families"].end(), fam))
      s.risk("onnx.algorithms.compatibility", "medium",
             a.get<std::string>() + " is not a usual companion of " + s.plan["preset"].get<std::string>() + " (" + fam + " family).",
             "Standard recipe: " + std::string(fam == "block" || fam == "mixed" ? "AutoMixprecision or AdaQuant" : "CLE, then AdaRound") + ".");
  }
}

// Quark keeps one of AdaRound/AdaQuant (quark/onnx algorithm.py): a plan that
// lists both would not be what Quark runs, so it is a conflict with the way out.
void algorithm_exclusive(PlanState& s) {
  const Json& al = s.plan["algorithms"];
  if (!std::count(al.begin(), al.end(), "AdaRound") || !std::count(al.begin(), al.end(), "AdaQuant")) return;
  const Json* p = preset(s);
  std::string ft = p && (*p)["fast_finetune"].is_string() ? (*p)["fast_finetune"].get<std::string>() : "";
  if (ft.empty()) {
    s.conflict("onnx.algorithms.exclusive", "algorithms",
               "AdaRound and AdaQuant together: Quark keeps only one fine-tuning algorithm and drops the other with a warning.",
               "--algorithm AdaRound (add CLE if you want it); switch to AdaQuant only if AdaRound is not enough", true);
    return;
  }
  std::string other = ft == "AdaRound" ? "AdaQuant" : "AdaRound";
  std::string name = (*p)["name"];
  // The preset with the other fine-tuning built in, where Quark has one for this target.
  std::string t = target(s), twin;
  // The same preset with the other suffix first (A8W8_ADAROUND -> A8W8_ADAQUANT), else a preset of the same types.
  std::string named = name.substr(0, name.rfind('_')) + (other == "AdaRound" ? "_ADAROUND" : "_ADAQUANT");
  if (const Json* q = s.cat.onnx_preset(named); q && (*q)["fast_finetune"] == other && (t.empty() || s.cat.preset_allowed_on(*q, t))) twin = named;
  for (const auto& q : s.cat.onnx()["presets"]) {
    if (!twin.empty()) break;
    if (q["fast_finetune"] == other && q["family"] == (*p)["family"] && q["activation_type"] == (*p)["activation_type"] &&
        q["weight_type"] == (*p)["weight_type"] && (t.empty() || s.cat.preset_allowed_on(q, t)))
      twin = q["name"];
  }
  s.conflict("onnx.algorithms.exclusive", "algorithms",
             name + " already runs " + ft + ", and Quark keeps only one of AdaRound/AdaQuant: --algorithm " + other + " would be dropped.",
             twin.empty() ? "drop --algorithm " + other + " (" + name + " runs " + ft + ")" : "--preset " + twin + " (" + other + " built in)", true);
}

void algorithm_count(PlanState& s) {
  size_t n = s.plan["algorithms"].size();
  if (n > s.cat.onnx()["max_algorithms_without_justification"].get<size_t>())
    s.risk("onnx.algorithms.at_most_two", "medium",
           std::to_string(n) + " algorithms: more than two is atypical and multiplies calibration time.",
           "Standard recipe: CLE (pre) + AdaRound (post); add more only with a measured accuracy gap.");
}

void cle_transformer(PlanState& s) {
  const Json& al = s.plan["algorithms"];
  if (arch(s) == "transformer" && (std::count(al.begin(), al.end(), "CLE") || spec(s)["include_cle"].get<bool>()))
    s.risk("onnx.algorithms.cle_transformer", "medium",
           "CLE on a transformer is atypical: it equalizes consecutive Conv/Linear pairs, which attention blocks rarely have.",
           "Drop CLE for transformers; prefer Percentile calibration or an INT16 activation preset.");
}

void mx_without_amp(PlanState& s) {
  const Json* p = preset(s);
  if (!p) return;
  std::string name = (*p)["name"];
  const Json& al = s.plan["algorithms"];
  if (name.rfind("MXFP4", 0) == 0 && !std::count(al.begin(), al.end(), "AutoMixprecision"))
    s.risk("onnx.combination.mx_without_amp", "medium",
           name + " on a model not validated with AutoMixprecision can lose significant accuracy.",
           "Add AutoMixprecision (sensitivity-based per-layer types) or validate accuracy after quantization.");
}

void external_data(PlanState& s) {
  double gb = s.analysis["model"]["estimated_size_gb"].get<double>();
  bool want = gb > 2.0;
  if (const Json* c = s.choice("onnx_specific.use_external_data_format"); c && c->is_boolean() && c->get<bool>() != want) {
    if (want)
      s.conflict("onnx.external_data.over_2gb", "onnx_specific.use_external_data_format",
                 "The model is " + std::to_string(gb) + " GB: protobuf cannot hold more than 2 GB, so the quantized model must use external data.",
                 "use_external_data_format=true");
    else
      s.risk("onnx.external_data.over_2gb", "low", "External data chosen for a model under 2 GB: an extra .onnx_data file to ship.", "Keep it false unless your runtime needs it.");
    spec(s)["use_external_data_format"] = c->get<bool>();
    s.reason("onnx_specific.use_external_data_format", "onnx.external_data.over_2gb", "Your choice");
    return;
  }
  spec(s)["use_external_data_format"] = want;
  s.reason("onnx_specific.use_external_data_format", "onnx.external_data.over_2gb",
           want ? "Model is over 2 GB: the output needs external data" : "Model is under 2 GB");
}

void node_names(PlanState& s) {
  std::vector<std::string> names = string_list(onnx_facts(s).value("node_names", Json::array()));
  std::set<std::string> known(names.begin(), names.end());
  auto check = [&](const std::string& key, const Json& list) {
    for (const auto& n : list) {
      if (!n.is_string()) {
        s.error(key + " must list node names (strings)");
        continue;
      }
      if (!known.count(n)) s.error(key + ": no node named '" + n.get<std::string>() + "' in the graph" + did_you_mean(n, names));
    }
  };
  for (const char* key : {"onnx_specific.nodes_to_exclude", "onnx_specific.nodes_to_quantize"}) {
    std::string k = key;
    const Json* c = s.choice(k);
    std::string field = k.substr(k.find('.') + 1);
    if (!c || c->is_null()) {
      spec(s)[field] = nullptr;
      continue;
    }
    Json list = c->is_string() ? Json::array({*c}) : *c;
    check(k, list);
    spec(s)[field] = list;
    s.reason(k, "onnx.nodes.check", "Your choice; every name found in the graph");
  }
  spec(s)["subgraphs_to_exclude"] = Json::array();
  if (const Json* c = s.choice("onnx_specific.subgraphs_to_exclude")) {
    if (!c->is_array()) {
      s.error("onnx_specific.subgraphs_to_exclude must be a list of [start_nodes, end_nodes] pairs");
      return;
    }
    for (const auto& pair : *c) {
      if (!pair.is_array() || pair.size() != 2 || !pair[0].is_array() || !pair[1].is_array()) {
        s.error("onnx_specific.subgraphs_to_exclude: each entry is [[start nodes], [end nodes]]");
        continue;
      }
      check("onnx_specific.subgraphs_to_exclude", pair[0]);
      check("onnx_specific.subgraphs_to_exclude", pair[1]);
    }
    spec(s)["subgraphs_to_exclude"] = *c;
    s.reason("onnx_specific.subgraphs_to_exclude", "onnx.nodes.check", "Your choice; every boundary node found in the graph");
  }
  // exclude never contains a node the plan also quantizes.
  if (spec(s)["nodes_to_exclude"].is_array() && spec(s)["nodes_to_quantize"].is_array())
    for (const auto& n : spec(s)["nodes_to_exclude"])
      if (std::count(spec(s)["nodes_to_quantize"].begin(), spec(s)["nodes_to_quantize"].end(), n))
        s.error("node '" + n.get<std::string>() + "' is both in nodes_to_exclude and nodes_to_quantize");
}

void op_types(PlanState& s) {
  const Json* c = s.choice("onnx_specific.op_types_to_quantize");
  if (!c || c->is_null()) {
    spec(s)["op_types_to_quantize"] = nullptr;
    s.reason("onnx_specific.op_types_to_quantize", "onnx.op_types.check", "null: every op type the preset supports");
    return;
  }
  Json list = c->is_string() ? Json::array({*c}) : *c;
  std::vector<std::string> present;
  for (auto& [k, v] : s.analysis["quantization_targets"]["onnx_specific"]["op_counts"].items()) present.push_back(k);
  for (const auto& op : list)
    if (!op.is_string() || !std::count(present.begin(), present.end(), op.get<std::string>()))
      s.error("onnx_specific.op_types_to_quantize: the graph has no '" + (op.is_string() ? op.get<std::string>() : op.dump()) +
              "' op" + (op.is_string() ? did_you_mean(op, present) : ""));
  spec(s)["op_types_to_quantize"] = list;
  s.reason("onnx_specific.op_types_to_quantize", "onnx.op_types.check", "Your choice; every op type is in the graph");
}

namespace {

// Presets that calibrate integer activations: the ones whose method step 4 tunes.
bool calibrated_integer(const std::string& family) {
  return family == "int8" || family == "int16" || family == "int8_cnn" || family == "int16_cnn" || family == "npu_transformer";
}

const Json* weight_stats_of(const PlanState& s) {
  return s.analysis.contains("weight_stats") && s.analysis["weight_stats"].is_object() ? &s.analysis["weight_stats"] : nullptr;
}

}  // namespace

// Planning guide step 4: Percentile for outlier-heavy transformers.
void outlier_percentile(PlanState& s) {
  if (s.choice("calibration.method") || target(s) == "npu_cnn" || plan_arch(s) != "transformer" || !calibrated_integer(family(s))) return;
  const Json* ws = weight_stats_of(s);
  if (!ws || (*ws)["outlier_modules"].empty() || (*ws)["top_modules"].empty() || !(*ws).value("outlier_max_over_std", Json()).is_number()) return;
  const Json& top = (*ws)["top_modules"][0];
  s.plan["calibration"]["method"] = "Percentile";
  s.reason("calibration.method", "onnx.calibration.outlier_percentile",
           "Quark's planning guide, step 4: Percentile for outlier-heavy transformers (--weight-stats: " +
               std::to_string((*ws)["outlier_modules"].size()) + ((*ws)["outlier_modules"].size() == 1 ? " layer" : " layers") + " beyond " +
               std::to_string(std::llround(std::min((*ws)["outlier_max_over_std"].get<double>(), 1e9))) + " sigma, e.g. " +
               top["module"].get<std::string>() + " at " + top["max_over_std"].dump() + " sigma)");
}

// Planning guide step 4: LayerWisePercentile when accuracy is critical.
void layerwise_percentile(PlanState& s) {
  if (s.choice("calibration.method") || s.req.goal != "accuracy" || target(s) == "npu_cnn" || plan_arch(s) != "transformer" ||
      !calibrated_integer(family(s)))
    return;
  s.plan["calibration"]["method"] = "LayerWisePercentile";
  const Json* ws = weight_stats_of(s);
  s.reason("calibration.method", "onnx.calibration.layerwise_percentile",
           "Quark's planning guide, step 4: LayerWisePercentile when accuracy is critical (--goal accuracy): a percentile per tensor" +
               std::string(ws && !(*ws)["outlier_modules"].empty() ? ", for a transformer whose weights carry outliers" : "") +
               "; calibration takes longer and more memory");
}

// Layers whose weights make INT8 risky stay in float: every one beyond the
// threshold is proposed (the user confirms the list with the plan), and a plan
// that quantizes them anyway keeps the risk.
void exclude_outlier_layers(PlanState& s) {
  const Json* ws = weight_stats_of(s);
  const Json* p = preset(s);
  if (!ws || !p) return;
  const Json& pol = s.cat.onnx()["weight_stats_policy"];
  const Json& int8 = pol["int8_weight_types"];
  if (!std::count(int8.begin(), int8.end(), (*p)["weight_type"])) return;
  std::vector<std::string> names = string_list(onnx_facts(s).value("node_names", Json::array()));
  std::set<std::string> known(names.begin(), names.end());
  PresetWeights w = preset_weights(s.analysis, s.cat, *p);
  double limit = pol["exclude_max_over_std"].get<double>();
  std::vector<std::string> picked, shown;
  for (const auto& m : (*ws)["top_modules"]) {
    // null: the weights hold inf or NaN (JSON has no number for them) — always risky.
    bool non_finite = !m["max_over_std"].is_number();
    if ((!non_finite && m["max_over_std"].get<double>() <= limit) || !m.contains("op_type") || !known.count(m["module"])) continue;
    picked.push_back(m["module"]);
    shown.push_back(m["module"].get<std::string>() + " (" + (non_finite ? std::string("inf/NaN") : m["max_over_std"].dump() + " sigma") + ")");
  }
  if (picked.empty()) return;
  std::string lim = std::to_string(static_cast<int>(limit));
  std::string why = "--weight-stats: max |w| beyond " + lim + " standard deviations in " + join(shown) +
                    "; one INT8 scale per tensor would leave most weights on a few levels";
  if (const Json* c = s.choice("onnx_specific.nodes_to_exclude")) {
    // The user's list: the outlier layers it leaves quantized keep their risk.
    Json list = c->is_string() ? Json::array({*c}) : c->is_array() ? *c : Json::array();
    std::vector<std::string> left;
    for (size_t i = 0; i < picked.size(); ++i)
      if (!std::count(list.begin(), list.end(), Json(picked[i]))) left.push_back(shown[i]);
    if (!left.empty())
      s.risk("onnx.weight_stats.exclude_outliers", "medium",
             "Quantized although their weights reach beyond " + lim + " standard deviations: " + join(left) +
                 "; one INT8 scale per tensor leaves most of their weights on a few levels.",
             "Keep them in float (add them to nodes_to_exclude), or validate accuracy after quantization.");
    return;
  }
  if (target(s) == "npu_cnn") {
    // Excluded nodes split the NPU graph into CPU islands: name them instead.
    s.risk("onnx.weight_stats.exclude_outliers", "medium", "Weights that make INT8 risky: " + join(shown) + ".",
           "If accuracy drops, exclude them (--exclude NODE) at the cost of CPU fallbacks, or try XINT8_ADAROUND.");
    return;
  }
  spec(s)["nodes_to_exclude"] = picked;
  s.reason("onnx_specific.nodes_to_exclude", "onnx.weight_stats.exclude_outliers",
           why + ": " + std::to_string(picked.size()) + (picked.size() == 1 ? " layer" : " layers") +
               " kept in float (edit the list, or set it to [] to quantize them)");
  // Many layers in float (more than the policy's share, and more than one):
  // the model keeps much of its float cost.
  uint64_t nodes = w.main_nodes + w.sub_nodes;
  size_t cap = std::max<size_t>(1, static_cast<size_t>(static_cast<double>(nodes) * pol["max_excluded_share"].get<double>()));
  if (picked.size() > cap)
    s.risk("onnx.weight_stats.exclude_outliers", "medium",
           std::to_string(picked.size()) + " of the " + std::to_string(nodes) + " layers " + (*p)["name"].get<std::string>() +
               " quantizes stay in float for their outliers: the quantized model keeps much of the float model's size and speed.",
           [&] {
             // Only what the plan does not do already.
             std::vector<std::string> tries;
             if ((*p)["name"] != "A16W8") tries.push_back("a preset with 16-bit activations or per-channel weights (A16W8)");
             std::string m = s.plan["calibration"].value("method", "");
             if (m != "Percentile" && m != "LayerWisePercentile") tries.push_back("Percentile calibration");
             return tries.empty() ? std::string("Quantize some of them (remove them from nodes_to_exclude) and check accuracy after quantization.")
                                  : "Try " + join(tries, ", or ") + ", and quantize them.";
           }());
  else
    s.risk("onnx.weight_stats.exclude_outliers", "low",
           "Kept in float for their outliers: " + join(shown) + "; they run at float speed and size.",
           "Quantize them (set nodes_to_exclude=[]) only if accuracy holds.");
}

void opset_upgrade(PlanState& s) {
  for (const auto& o : onnx_facts(s)["opsets"])
    if (o["domain"] == "ai.onnx" && o["version"].get<int64_t>() < 13 && !s.choice("onnx_specific.extra_options.ConvertOpsetVersion")) {
      spec(s)["extra_options"]["ConvertOpsetVersion"] = 13;
      s.reason("onnx_specific.extra_options.ConvertOpsetVersion", "onnx.opset.upgrade",
               "ai.onnx opset " + o["version"].dump() + " is below 13, which QDQ needs: Quark converts to 13 first");
    }
}

// onnxruntime's tool that writes fixed dims into the model file, for models
// FixShapes cannot describe (a scalar or shapeless input or output).
std::string make_fixed_command(const Json& facts, const std::string& model) {
  std::set<std::string> params;
  std::vector<std::pair<std::string, std::string>> unnamed;  // input, its shape with <?> where unnamed
  for (const auto& in : facts.value("inputs", Json::array())) {
    if (!in["shape"].is_array()) continue;
    bool anonymous = false;
    std::string dims;
    for (const auto& d : in["shape"]) {
      bool known = d.is_number_integer() && d.get<int64_t>() > 0;
      if (d.is_string() && d != "?") params.insert(d.get<std::string>());
      else if (!known) anonymous = true;
      dims += (dims.empty() ? "" : ",") + (known ? std::to_string(d.get<int64_t>()) : d.is_string() && d != "?" ? "<" + d.get<std::string>() + ">" : "<?>");
    }
    if (anonymous) unnamed.emplace_back(in["name"].get<std::string>(), dims);
  }
  std::string stem = model;
  if (size_t slash = stem.find_last_of('/'); slash != std::string::npos) stem = stem.substr(slash + 1);
  std::string base = stem.size() > 5 && stem.ends_with(".onnx") ? stem.substr(0, stem.size() - 5) : stem;
  // One command per dim_param or unnamed input, each after the one before
  // (the first reads the model, the others the fixed copy).
  std::string cmd, fixed = base + "_fixed.onnx";
  auto add = [&](const std::string& args) {
    cmd += std::string(cmd.empty() ? "" : "; ") + "python -m onnxruntime.tools.make_dynamic_shape_fixed " + args + " " + (cmd.empty() ? stem : fixed) + " " + fixed;
  };
  for (const auto& p : params) add("--dim_param " + p + " --dim_value <size>");
  for (const auto& [n, dims] : unnamed) add("--input_name " + n + " --input_shape " + dims);
  return cmd;
}

void dynamic_dims_npu(PlanState& s) {
  std::string t = target(s);
  const Json& facts = onnx_facts(s);
  // The inputs and outputs as Quark's FixShapes step sees them: its
  // pre-process converts NCHW to NHWC first when the plan asks for it.
  const Json& extra = spec(s)["extra_options"];
  bool nhwc = extra.is_object() && extra.contains("ConvertNCHWToNHWC") && extra["ConvertNCHWToNHWC"].is_boolean() &&
              extra["ConvertNCHWToNHWC"].get<bool>();
  std::vector<ShapeSlot> slots = fix_shapes_slots(facts, nhwc);
  std::vector<std::string> unusable;  // scalar or shapeless: no FixShapes form
  for (const auto& sl : slots)
    if (!sl.expressible()) unusable.push_back(std::string(sl.output ? "output" : "input") + " '" + sl.name + "' (" + (sl.shaped ? "a scalar" : "no declared shape") + ")");
  std::string model = s.analysis["model"].value("model_path", "model.onnx");
  std::string fixed_in_file = "fix the shapes in the model file with onnxruntime's tool (" + make_fixed_command(facts, model) + ") and re-run intake";
  auto all_text = [&] {
    std::vector<std::string> v;
    for (const auto& sl : slots) v.push_back(sl.text());
    return join(v, ";");
  };
  std::string after = nhwc ? " (as Quark sees them after ConvertNCHWToNHWC)" : "";
  // A FixShapes answer must name every input and output, each with its rank.
  if (const Json* c = s.choice("onnx_specific.extra_options.FixShapes")) {
    if (!c->is_string()) {
      s.error("extra option FixShapes takes a string like 'x:[1,3,224,224];y:[1,1000]', not " + c->dump());
      return;
    }
    std::vector<FixedShape> shapes;
    try {
      shapes = parse_fix_shapes(*c);
    } catch (const std::invalid_argument& e) {
      s.error(e.what());
      return;
    }
    if (!unusable.empty()) {
      s.error("FixShapes cannot fix this model: Quark's fix_input_and_output_shapes needs every input and output, and " + join(unusable, ", ") +
              " has no FixShapes form; " + fixed_in_file);
      return;
    }
    std::map<std::string, const ShapeSlot*> known;
    for (const auto& sl : slots) known.emplace(sl.name, &sl);
    std::vector<std::string> names;
    for (auto& [n, j] : known) names.push_back(n);
    std::set<std::string> fixed;
    for (const auto& fs : shapes) {
      auto it = known.find(fs.name);
      if (it == known.end()) {
        s.error("FixShapes names '" + fs.name + "', which is not an input or output of the model" + after + did_you_mean(fs.name, names) + "; expected " +
                all_text());
        continue;
      }
      const ShapeSlot& sl = *it->second;
      if (sl.dims.size() != fs.dims.size()) {
        s.error("FixShapes gives '" + fs.name + "' " + std::to_string(fs.dims.size()) + " dimensions, but it has " + std::to_string(sl.dims.size()) + " (" +
                sl.text() + ")" + after);
        continue;
      }
      for (size_t i = 0; i < fs.dims.size(); ++i)
        if (sl.dims[i] > 0 && sl.dims[i] != fs.dims[i])
          s.error("FixShapes sets dimension " + std::to_string(i) + " of '" + fs.name + "' to " + std::to_string(fs.dims[i]) + ", but the model fixes it at " +
                  std::to_string(sl.dims[i]) + after);
      fixed.insert(fs.name);
    }
    // Quark looks every input and output up by name: one left out is a
    // KeyError, which its pre-process logs and skips, leaving every shape dynamic.
    std::vector<std::string> missing;
    for (const auto& sl : slots)
      if (!fixed.count(sl.name)) missing.push_back(std::string(sl.output ? "output " : "input ") + sl.text());
    if (!missing.empty()) {
      s.error("FixShapes leaves out " + join(missing, ", ") + after +
              ": Quark's fix_input_and_output_shapes needs every input and output (it stops at the first one missing and the shapes stay dynamic); give " +
              all_text() + " with each ? replaced");
      return;
    }
    spec(s)["extra_options"]["FixShapes"] = format_fix_shapes(shapes);
    s.reason("onnx_specific.extra_options.FixShapes", "onnx.npu.static_shapes", "Your deployment shapes for every input and output, checked against the model");
    return;
  }
  if ((t != "npu_cnn" && t != "npu_transformer") || !facts["has_dynamic_dims"].get<bool>()) return;
  // Name the real inputs with their known dims; ask for every input and output.
  std::vector<std::string> dyn, fixed;
  for (const auto& sl : slots)
    if (!sl.output) (sl.dynamic() ? dyn : fixed).push_back(sl.text());
  std::string head = "The NPU needs static shapes. Dynamic inputs: " + join(dyn, "; ") + (fixed.empty() ? "" : " (already static: " + join(fixed, "; ") + ")") + ". ";
  if (!unusable.empty()) {
    s.question(head + "Quark's FixShapes cannot describe " + join(unusable, ", ") + ", so " + fixed_in_file + ".");
    return;
  }
  s.question(head + "Quark's FixShapes needs every input and output" + after + ": give each ? its deployment size with --set onnx_specific.extra_options.FixShapes='" +
             all_text() + "' (the ? replaced), or run quark.onnx.tools.fix_shapes and re-run intake.");
}

void fp16_model(PlanState& s) {
  const Json& by = onnx_facts(s)["weights"]["by_dtype"];
  if (by.contains("float16") && !by.contains("float32") && !s.choice("onnx_specific.extra_options.ConvertFP16ToFP32")) {
    spec(s)["extra_options"]["ConvertFP16ToFP32"] = true;
    s.reason("onnx_specific.extra_options.ConvertFP16ToFP32", "onnx.fp16.convert", "FP16 model: calibrate in FP32 (Quark converts first)");
  }
}

void subgraphs(PlanState& s) {
  if (onnx_facts(s)["subgraph_count"].get<uint64_t>() == 0) return;
  const Json* p = preset(s);
  PresetWeights w = p ? preset_weights(s.analysis, s.cat, *p) : PresetWeights{};
  const Json* c = s.choice("onnx_specific.extra_options.EnableSubgraph");
  bool declined = c && c->is_boolean() && !c->get<bool>();
  if (w.recurses_into_subgraphs) return;  // MatMulNBits walks If/Loop bodies by itself
  std::string name = p ? (*p)["name"].get<std::string>() : "";
  if (w.only_in_subgraphs()) {
    std::string where = std::to_string(w.sub_params) + " weights (" + std::to_string(w.sub_nodes) + " nodes) that " + name +
                        " quantizes all sit inside If/Loop/Scan bodies";
    if (declined) {
      s.risk("onnx.subgraphs", "high", "The " + where + ", and EnableSubgraph is off: the plan quantizes nothing.",
             "Set EnableSubgraph=true, or quantize a model exported without control flow.");
      return;
    }
    if (!c) {
      spec(s)["extra_options"]["EnableSubgraph"] = true;
      s.reason("onnx_specific.extra_options.EnableSubgraph", "onnx.subgraphs",
               "The " + where + ": Quark quantizes them only with EnableSubgraph");
    }
    if (p && !(*p)["dynamic"].get<bool>())
      s.risk("onnx.subgraphs", "medium",
             "Quark (after ONNX Runtime) documents EnableSubgraph as supported in dynamic mode; static QDQ inside If bodies is not documented.",
             "Check the quantized model holds QDQ nodes inside its If bodies; if not, use UINT8_DYNAMIC_QUANT (cpu) or a model exported without If.");
    return;
  }
  if (c) return;
  if (w.known && w.sub_params == 0) return;  // nothing the preset quantizes lives in a subgraph
  std::string what = w.known ? std::to_string(w.sub_params) + " of the preset's weights (" + std::to_string(w.sub_nodes) + " nodes) sit"
                             : "Ops sit";
  s.risk("onnx.subgraphs", "low", what + " inside If/Loop/Scan subgraphs and stay in float unless EnableSubgraph is set.",
         "--set onnx_specific.extra_options.EnableSubgraph=true to quantize them too.");
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
                                subgraphs_on || w.only_in_subgraphs());
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

void extra_options(PlanState& s) {
  Json& extra = spec(s)["extra_options"];
  const Json& known = s.cat.onnx()["extra_options"];
  std::vector<std::string> names;
  for (auto& [k, v] : known.items()) names.push_back(k);
  auto type_ok = [](const Json& v, const std::string& t) {
    return (t == "boolean" && v.is_boolean()) || (t == "string" && v.is_string()) || (t == "integer" && v.is_number_integer()) ||
           (t == "number" && v.is_number()) || (t == "array" && v.is_array()) || (t == "object" && v.is_object());
  };
  // Keys Quark would overwrite or ignore for this plan are refused, not kept.
  const Json& ru = s.cat.onnx()["extra_option_rules"];
  const Json* p = preset(s);
  bool qconfig_route = p && (*p)["quark_api"]["route"] == "qconfig" && !spec(s)["enable_npu_transformer"].get<bool>();
  auto set = [&](const std::string& key, const Json& value) {
    if (ru["overwritten_on_qconfig"].contains(key) && (qconfig_route || !known.contains(key))) {
      const Json hints = ru.value("overwritten_hint", Json::object());
      s.error("extra option " + key + " would be ignored: " + ru["overwritten_on_qconfig"][key].get<std::string>() +
              (hints.contains(key) ? "; " + hints[key].get<std::string>() : std::string()));
      return;
    }
    // Options Quark reads only with a route or data type of its own: on
    // another preset they change the route or are ignored.
    if (const Json np = ru.value("needs_preset_option", Json::object()); np.contains(key) && np[key].is_object()) {
      const Json& rule = np[key];
      std::string opt = rule["preset_option"];
      bool preset_has = p && (*p)["extra_options"].contains(opt);
      if (!preset_has && value != Json(false)) {
        s.conflict("onnx.extra_options.check", "onnx_specific.extra_options." + key,
                   "Extra option " + key + " on " + (p ? (*p)["name"].get<std::string>() : std::string("this preset")) + ": " +
                       rule["why"].get<std::string>() + ".",
                   rule["instead"].get<std::string>(), true);
        return;
      }
    }
    // A dict the preset already sets: Quark uses the given dict as-is, so the
    // user's keys go over the preset's (nothing dropped), and the keys that
    // define the preset's data type stay the preset's.
    if (const Json fk = ru.value("format_keys", Json::object()); p && value.is_object() && fk.contains(key) && (*p)["extra_options"].contains(key)) {
      const Json& base = (*p)["extra_options"][key];
      for (const auto& kj : fk[key]) {
        const std::string k = kj.get<std::string>();
        if (value.contains(k) && base.value(k, Json()) != value[k]) {
          s.conflict("onnx.extra_options.check", "onnx_specific.extra_options." + key,
                     "Extra option " + key + "." + k + "=" + value[k].dump() + " changes the data type " + (*p)["name"].get<std::string>() +
                         " is named for (" + k + "=" + base.value(k, Json()).dump() +
                         "): the table and the estimate would no longer say what Quark does.",
                     "the preset with the data type you want (quarkplan catalog onnx)", true);
          return;
        }
      }
      Json merged = base;
      for (auto& [k, v] : value.items()) merged[k] = v;
      extra[key] = merged;
      s.reason("onnx_specific.extra_options." + key, "onnx.extra_options.check",
               "Your keys over " + (*p)["name"].get<std::string>() + "'s own (the whole dict is printed: Quark uses a given dict as-is)");
      return;
    }
    // Calibration settings Quark reads only for their calibration method.
    if (const Json nc = ru.value("needs_calibration", Json::object()); nc.contains(key) && nc[key].is_array()) {
      const Json& m = s.plan["calibration"]["method"];
      if (!m.is_string() || !std::count(nc[key].begin(), nc[key].end(), m)) {
        std::vector<std::string> need = string_list(nc[key]);
        s.conflict("onnx.extra_options.check", "onnx_specific.extra_options." + key,
                   "Extra option " + key + " does nothing here: calibration is " + (m.is_string() ? m.get<std::string>() : std::string("not decided")) +
                       ", and Quark reads " + key + " only for " + join(need, " or ") + " calibration.",
                   "--set calibration.method=" + need[0] + " with it, or drop " + key, true);
        return;
      }
    }
    if (ru["needs_algorithm"].contains(key)) {
      std::vector<std::string> need = string_list(ru["needs_algorithm"][key]);
      bool have = false;
      for (const auto& a : need) {
        have = have || std::count(s.plan["algorithms"].begin(), s.plan["algorithms"].end(), a) > 0;
        if (p && (*p)["fast_finetune"] == a) have = true;
        if (p && a == "AutoMixprecision" && (*p)["auto_mixprecision"].get<bool>()) have = true;
      }
      if (!have) {
        s.error("extra option " + key + " does nothing without " + join(need, " or ") + " in the algorithms (Quark reads it only for them); add --algorithm " +
                need[0] + " instead");
        return;
      }
    }
    if (key == "EnableNPUCnn") {
      s.error("extra option EnableNPUCnn follows onnx_specific.enable_npu_cnn, which is tied to the deployment target; set the target instead");
      return;
    }
    // Keys Quark reads a plan row from (the plan writes the row into them):
    // a second value would contradict the row the table shows.
    if (const Json sbp = ru.value("set_by_plan", Json::object()); sbp.contains(key) && sbp[key].is_string()) {
      std::string row = sbp[key];
      s.error("extra option " + key + " is where Quark reads the plan's " + row + " row, which the plan fills in itself; choose it with --set " + row +
              "=... instead");
      return;
    }
    if (!known.contains(key)) {
      s.error("unknown extra option '" + key + "'" + did_you_mean(key, names));
      return;
    }
    if (!type_ok(value, known[key])) {
      s.error("extra option " + key + " takes a " + known[key].get<std::string>() + ", not " + value.dump());
      return;
    }
    extra[key] = value;
    s.reason("onnx_specific.extra_options." + key, "onnx.extra_options.check", "Your choice");
  };
  if (const Json* c = s.choice("onnx_specific.extra_options")) {
    if (!c->is_object()) s.error("onnx_specific.extra_options must be a JSON object");
    else
      for (auto& [k, v] : c->items()) set(k, v);
  }
  for (const auto& [k, v] : s.req.choices)
    if (k.rfind("onnx_specific.extra_options.", 0) == 0) set(k.substr(28), v);
  s.reason("onnx_specific.extra_options", "onnx.extra_options.check",
           extra.empty() ? "None needed: the preset's own options apply" : "Only what this model needs; each key explained below");
}

void execution_providers(PlanState& s) {
  std::string t = target(s);
  const Json* tj = t.empty() ? nullptr : s.cat.onnx_target(t);
  Json eps = tj ? (*tj)["execution_providers"] : Json::array({"CPUExecutionProvider"});
  bool chosen = false;
  if (const Json* c = s.choice("onnx_specific.execution_providers"); c && c->is_array()) {
    eps = *c;
    chosen = true;
    // onnxruntime rejects a provider name it does not know when the session
    // is created: a misspelt name is an input error, not a plan.
    const Json& known = s.cat.onnx().value("known_execution_providers", Json::object()).value("names", Json::array());
    for (const auto& ep : *c) {
      std::string name = ep.is_string() ? ep.get<std::string>() : ep.dump();
      if (!known.empty() && std::find(known.begin(), known.end(), Json(name)) == known.end())
        s.error("onnx_specific.execution_providers names '" + name + "', which is not an onnxruntime execution provider" +
                did_you_mean(name, known.get<std::vector<std::string>>()));
    }
    if (c->empty()) s.error("onnx_specific.execution_providers is empty: onnxruntime needs at least one provider (CPUExecutionProvider)");
  }
  // The install result says which providers this onnxruntime has: calibration
  // can only use those, and the target's own must be there to run the result.
  std::string why = chosen ? "Your choice" : t.empty() ? "CPU until the target is known" : "The calibration providers of " + t;
  // A failed install: nothing quantizes on this machine until it is fixed.
  if (s.req.install_status == "failed")
    s.risk("onnx.execution_providers", "high",
           "onnx_install_result.json says the install failed" +
               (s.req.install_failure_reason.empty() ? std::string() : " (" + s.req.install_failure_reason + ")") +
               ": Quark and onnxruntime are not known to work on this machine, so the plan cannot run here yet.",
           "Fix the install with quark-onnx-install, then re-run with the new install result.");
  if (s.req.available_providers && tj) {
    const auto& have = *s.req.available_providers;
    auto present = [&](const std::string& ep) { return std::count(have.begin(), have.end(), ep) > 0; };
    Json usable = Json::array();
    std::vector<std::string> missing;
    for (const auto& ep : eps) {
      if (present(ep)) usable.push_back(ep);
      else missing.push_back(ep.get<std::string>());
    }
    if (!missing.empty() && !chosen) {
      eps = usable.empty() ? Json::array({"CPUExecutionProvider"}) : usable;
      why += "; " + join(missing) + " missing from this onnxruntime (onnx_install_result.json), so calibration runs on " + join(string_list(eps));
    }
    std::vector<std::string> deploy = string_list(tj->value("deployment_execution_providers", Json::array()));
    bool any = deploy.empty();
    for (const auto& d : deploy) any = any || present(d);
    // The provider the install result's accelerator tag is expected to give
    // for this target (catalog install_expected_providers): on ROCm 7.x,
    // target rocm means CPU onnxruntime by design, not a missing ROCm provider.
    std::string expected, expected_tag;
    size_t best = 0;
    for (const auto& e : s.cat.onnx().value("install_expected_providers", Json::object()).value("by_accelerator_tag", Json::array())) {
      std::string prefix = e.value("tag_prefix", "");
      const Json targets = e.value("targets", Json::array());
      if (!prefix.empty() && prefix.size() > best && s.req.install_accelerator_tag.rfind(prefix, 0) == 0 &&
          std::count(targets.begin(), targets.end(), t) > 0) {
        best = prefix.size();
        expected = e.value("provider", "");
        expected_tag = s.req.install_accelerator_tag;
      }
    }
    if (!any && !expected.empty() && present(expected)) {
      any = true;
      if (std::find(deploy.begin(), deploy.end(), expected) == deploy.end())
        why += "; the install is for " + expected_tag + ", where " + t + " runs on " + expected + " (the onnxruntime quark-onnx-install installs there)";
    }
    if (!any) {
      bool npu = t == "npu_cnn" || t == "npu_transformer";
      std::string has = have.empty() ? "lists no execution providers" : "has " + join(have);
      s.risk("onnx.execution_providers", npu ? "medium" : "high",
             "The onnxruntime in onnx_install_result.json " + has + ", but target " + t + " runs on " + join(deploy, " or ") +
                 (npu ? ": this machine can quantize, not run the NPU model." : ": the quantized model cannot run on " + t + " here, and calibration falls back to the CPU."),
             npu ? "Check the quantized model on the Ryzen AI machine (VitisAIExecutionProvider)."
                 : "Install the onnxruntime build with " + deploy[0] + " (quark-onnx-install), then re-run with the new install result.");
    }
    if (chosen)
      for (const auto& m : missing)
        s.risk("onnx.execution_providers", "high", "You chose " + m + ", which this onnxruntime does not have (onnx_install_result.json).",
               have.empty() ? "Install an onnxruntime build that has it (quark-onnx-install)." : "Pick from " + join(have) + ", or install a build that has it.");
  }
  spec(s)["execution_providers"] = eps;
  s.reason("onnx_specific.execution_providers", "onnx.execution_providers", why);
}

void evaluation_intent(PlanState& s) {
  const Json& intents = s.cat.onnx()["evaluation_intents"];
  s.plan["evaluation_intent"] = s.cat.onnx()["default_evaluation_intent"];
  if (const Json* c = s.choice("evaluation_intent")) {
    if (!c->is_string() || !std::count(intents.begin(), intents.end(), *c)) {
      s.error("evaluation_intent must be one of smoke, mlperf, mAP" + (c->is_string() ? did_you_mean(*c, string_list(intents)) : std::string()));
      return;
    }
    s.plan["evaluation_intent"] = *c;
    s.reason("evaluation_intent", "onnx.evaluation_intent", "Your choice");
    return;
  }
  s.reason("evaluation_intent", "onnx.evaluation_intent", "smoke: a quick check against the float model");
}

void estimates(PlanState& s) { add_onnx_estimates(s); }

}  // namespace quarkplan::onnx_rules
