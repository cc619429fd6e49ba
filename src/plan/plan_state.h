// The working state the rules read and write while a plan is decided.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "common/json.h"
#include "intake/module_names.h"
#include "plan/plan_request.h"

namespace quarkplan {

// A user choice that breaks a hard gate: refused (exit 2) unless the user
// insists, which keeps it and records a high risk.
struct Conflict {
  std::string rule, decision, message, alternative;
  // What Quark rejects or ignores cannot be kept by --insist; the messages
  // must not offer it.
  bool insistable = true;
};

struct PlanState {
  const Json& analysis;
  const Catalog& cat;
  // How the plan's release matches exclude patterns (layer_quant_config
  // patterns are verbatim in every release).
  PatternMatch exclude_match() const { return cat.exclude_covers_children() ? PatternMatch::kWithChildren : PatternMatch::kVerbatim; }
  // Another Quark release the catalog describes where `has` holds, the newest first ("" when none):
  // what a message names when something is another release's (a scheme, a template).
  std::string other_release_where(const std::function<bool(const Catalog&)>& has) const;
  const PlanRequest& req;
  Json plan = Json::object();
  Json reasons = Json::object();      // decision -> "text [rule]"
  Json risks = Json::array();
  std::vector<std::string> open_questions;
  std::vector<Conflict> conflicts;
  bool draft = false;                 // facts are missing: a draft whatever the flags
  bool refused = false;               // already quantized: no plan (exit 4)
  std::string refusal;                // message + recovery when refused
  std::vector<std::string> errors;    // bad input found by a rule (exit 2)
  const Json* accelerator = nullptr;  // catalog entry of the resolved hardware (Torch)
  int64_t accelerator_count = 0;      // accelerators available (--gpus or env_context.json), 0 when unknown
  std::string accelerator_count_source;
  std::string goal;                   // the goal the plan is made for (the user's, or the default)
  std::string recipe_name;             // the recipe's published checkpoint closest to this model
  const Json* recipe = nullptr;       // AMD's published recipe that applies (catalog amd_recipes), if any
  const Json* runtime = nullptr;      // the serving runtime (catalog/runtimes.json), once resolved
  std::string platform;               // the runtimes catalog's platform of the accelerator ("" when unknown)
  std::vector<std::string> module_names;  // expanded lazily by modules()
  std::vector<std::pair<uint64_t, uint64_t>> module_shapes;  // (params, in_features), aligned with module_names
  std::vector<std::string> module_roles;  // attention, expert, router, lm_head, mtp, vision, ... ("" unknown), aligned
  bool modules_loaded = false;
  Json excluded_for;                  // the exclude_layers the cached mask was computed for
  std::vector<char> excluded_cache;   // module i matches an exclude pattern
  Json schemes_for;                   // the (global scheme, layer_quant_config, exclude_layers) the cached schemes were computed for
  std::vector<std::string> schemes_cache;  // module i's scheme ("" excluded): torch_rules::detail::module_schemes

  PlanState(const Json& a, const Catalog& c, const PlanRequest& r) : analysis(a), cat(c), req(r) {}

  void reason(const std::string& decision, const std::string& rule, const std::string& text) {
    reasons[decision] = text + " [" + rule + "]";
  }
  void risk(const std::string& rule, const std::string& severity, const std::string& message, const std::string& hint) {
    for (const auto& r : risks)
      if (r["rule"] == rule && r["message"] == message) return;
    risks.push_back({{"severity", severity}, {"message", message}, {"recovery_hint", hint}, {"rule", rule}});
  }
  void question(const std::string& q, bool makes_draft = true) {
    for (const auto& x : open_questions)
      if (x == q) return;
    open_questions.push_back(q);
    if (makes_draft) draft = true;
  }
  // A hard-gate violation by a user choice. With --insist the choice stays and
  // a high risk is recorded; otherwise the plan is refused with the alternative.
  // What Quark itself rejects or silently ignores (`quark_rejects`) is never
  // kept: a plan Quark does not run as printed is no plan.
  void conflict(const std::string& rule, const std::string& decision, const std::string& message,
                const std::string& alternative, bool quark_rejects = false) {
    if (quark_rejects) {
      conflicts.push_back({rule, decision, message, alternative, false});
      return;
    }
    if (req.insist) {
      risk(rule, "high", message + " Kept because the user insisted.", "Closest viable alternative: " + alternative + ".");
      return;
    }
    conflicts.push_back({rule, decision, message, alternative});
  }
  void error(const std::string& message) { errors.push_back(message); }

  const Json* choice(const std::string& key) const { return req.choice(key); }
  const std::vector<std::string>& modules();
  bool is_router(size_t i);  // module i routes tokens to experts (its role, else its name)
  // Which modules plan["exclude_layers"] leaves in full precision (computed
  // once per exclusion list: matching 45,000 module names is the costly part).
  const std::vector<char>& excluded();
};

}  // namespace quarkplan
