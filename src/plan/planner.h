// The planner: analysis + request -> quant_plan.json, by running the flow's
// rules (plan/rules.h) over a skeleton plan.
#pragma once
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "common/json.h"
#include "plan/plan_request.h"
#include "plan/plan_state.h"

namespace quarkplan {

enum class PlanStatus { kConfirmed, kDraft, kRefused, kConflict, kInvalid };

struct PlanOutcome {
  PlanStatus status = PlanStatus::kDraft;
  std::string flow;              // "onnx" | "torch"
  Json plan;                     // the quant_plan.json document (null when refused/invalid)
  Json decision_table;           // [{decision, value, reason}]
  std::vector<Conflict> conflicts;
  std::vector<std::string> errors;
  std::string refusal;
};

PlanOutcome make_plan(const Json& analysis, const PlanRequest& req);

// "onnx" when the analysis is of an ONNX model, else "torch".
std::string plan_flow(const Json& analysis);

// The decision-table rows of a plan (also used by `explain`).
Json decision_table(const Json& plan);

// Parses "KEY=VALUE" (value as JSON when it parses, else a string) into the
// request's choices; throws UsageError for unknown keys (with did-you-mean).
void apply_set(PlanRequest& req, const std::string& flow, const std::string& assignment);

}  // namespace quarkplan
