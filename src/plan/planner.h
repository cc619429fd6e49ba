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
  std::string refusal_rule;      // the rule that refused
};

PlanOutcome make_plan(const Json& analysis, const PlanRequest& req);

// "onnx" when the analysis is of an ONNX model, else "torch".
std::string plan_flow(const Json& analysis);

// The decision-table rows of a plan (also used by `explain`).
Json decision_table(const Json& plan);

// Parses "KEY=VALUE" (value as JSON when it parses, else a string) into the
// request's choices; throws UsageError for unknown keys (with did-you-mean),
// for rows that are not editable (saying why) and for values out of range.
// A few rows set the request itself: export_format, trust_remote_code,
// calibration.data_path, hardware.
void apply_set(PlanRequest& req, const std::string& flow, const std::string& assignment);

// Range checks of every numeric choice and of the estimate's context/batch,
// against the model where it bounds them (max_position_embeddings). Returns
// one sentence per problem, naming the flag when the value came from one.
std::vector<std::string> check_request(const Json& analysis, const PlanRequest& req);

// The largest context the model supports (config.json max_position_embeddings),
// or 0 when the analysis does not say.
int64_t max_context(const Json& analysis);

}  // namespace quarkplan
