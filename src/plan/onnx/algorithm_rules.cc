// ONNX algorithms: which algorithms run and the combinations Quark rejects or that are risky —
// onnx.algorithms.* (defaults, compatibility, exclusive, at_most_two, cle_transformer), onnx.combination.mx_without_amp.
#include <algorithm>
#include <string>
#include <vector>

#include "common/strings.h"
#include "plan/onnx/rule_helpers.h"
#include "plan/rules.h"

namespace quarkplan::onnx_rules {

using detail::target;
using detail::arch;
using detail::preset;
using detail::family;
using detail::spec;

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
        // Quark names that are no algorithm of a plan (AutoSearch) say what they are.
        const Json& elsewhere = s.cat.onnx().value("algorithms_elsewhere", Json::object());
        bool said = false;
        for (auto& [name, why] : elsewhere.items())
          if (lower(name) == lower(n) && why.is_string()) {
            s.error("--algorithm " + n + ": " + why.get<std::string>());
            said = true;
          }
        if (!said) s.error("unknown ONNX algorithm '" + n + "'" + did_you_mean(n, known) + "; Quark's ONNX algorithms: " + join(known));
        continue;
      }
      // An algorithm Quark cannot run without an extra option the plan must be given (QuaRot's RConfigPath).
      if (a->contains("requires_extra_options"))
        for (auto& [key, what] : (*a)["requires_extra_options"].items()) {
          const Json* one = s.choice("onnx_specific.extra_options." + key);
          const Json* all = s.choice("onnx_specific.extra_options");
          if (!one && !(all && all->is_object() && all->contains(key)))
            s.error("--algorithm " + (*a)["name"].get<std::string>() + " needs onnx_specific.extra_options." + key + ": " + what["why"].get<std::string>() +
                    " (--set 'onnx_specific.extra_options." + key + "=\"PATH\"')");
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
    // An algorithm for integer weights on a float or block format contradicts the preset (GPTQ on BF16).
    if (aj->contains("requires_integer_weights")) {
      const Json& types = s.cat.onnx()["qdq_layout"]["types"];
      const Json* p = preset(s);
      const std::string w = p && (*p)["weight_type"].is_string() ? (*p)["weight_type"].get<std::string>() : "";
      if (types.contains(w) && types[w].value("custom_domain", false))
        s.conflict("onnx.algorithms.compatibility", "algorithms",
                   a.get<std::string>() + " with " + (*p)["name"].get<std::string>() + ": " + (*aj)["requires_integer_weights"].get<std::string>() + ", not " + w + " weights.",
                   "--algorithm none, or an INT8 preset (A8W8) for GPTQ");
    }
    // An algorithm Quark itself crashes on for these op types (catalog quark_fails_on): never kept.
    if (aj->contains("quark_fails_on")) {
      const Json& f = (*aj)["quark_fails_on"];
      const Json& counts = s.analysis["quantization_targets"]["onnx_specific"]["quantizable_op_counts"];
      std::vector<std::string> present;
      for (const auto& op : f["op_types"])
        if (counts.contains(op.get<std::string>()) && counts[op.get<std::string>()].is_number() && counts[op.get<std::string>()].get<double>() > 0) present.push_back(op);
      if (!present.empty())
        s.conflict("onnx.algorithms.compatibility", "algorithms",
                   a.get<std::string>() + " on this model (" + join(present, ", ") + " nodes): " + f["message"].get<std::string>() + ".",
                   "--algorithm none (or AdaRound/AdaQuant, which also correct the rounding error)", true);
    }
    // What the algorithm does to the plan that its name does not say (catalog plan_note: GPTQ makes the run weights-only).
    if (aj->contains("plan_note")) {
      const Json& n = (*aj)["plan_note"];
      s.risk("onnx.algorithms.compatibility", n["severity"], n["message"].get<std::string>() + ".", n["hint"]);
    }
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
  if (const Json* q = s.cat.onnx_preset(named); q && (*q)["fast_finetune"] == other && (t.empty() || s.cat.preset_allowed_on(*q, t, detail::generation(s)))) twin = named;
  for (const auto& q : s.cat.onnx()["presets"]) {
    if (!twin.empty()) break;
    if (q["fast_finetune"] == other && q["family"] == (*p)["family"] && q["activation_type"] == (*p)["activation_type"] &&
        q["weight_type"] == (*p)["weight_type"] && (t.empty() || s.cat.preset_allowed_on(q, t, detail::generation(s))))
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

}  // namespace quarkplan::onnx_rules
