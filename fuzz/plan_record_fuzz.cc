// libFuzzer target for what explain/validate read back from a plan (plan
// integrity digest, the recorded request, the decision table) and for the
// session merge a plan feeds: hostile plan files must never crash them.
#include <cstddef>
#include <cstdint>
#include <string>

#include "catalog/catalog.h"
#include "common/error.h"
#include "common/json.h"
#include "plan/integrity.h"
#include "plan/planner.h"
#include "plan/session.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace quarkplan;
  Json plan;
  try {
    plan = parse_json(std::string(reinterpret_cast<const char*>(data), size), "quant_plan.json");
  } catch (const InputError&) {
    return 0;
  }
  if (!validate_against_schema(plan, "schemas/quant_plan.schema.json").empty()) return 0;
  plan_digest(plan);
  decision_table(plan);
  try {
    if (plan.contains("request")) request_from_json(plan["request"]);
  } catch (const InputError&) {
  }
  static const Json session = new_session("", "fuzz");
  PlanUpdate u{plan, "./quant_plan.json", "./model_analysis.json", "./quant_plan.draft.json"};
  Json merged = merged_session(session, u, Catalog::load().hardware());
  if (!validate_against_schema(merged, "schemas/session_context.schema.json").empty()) __builtin_trap();
  return 0;
}
