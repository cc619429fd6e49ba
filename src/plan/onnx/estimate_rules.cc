// What the plan weighs: the weight size per preset (onnx.estimates.weights),
// computed in plan/estimates.cc like the Torch fit (torch/fit_rules.cc).
#include "plan/estimates.h"
#include "plan/rules.h"

namespace quarkplan::onnx_rules {

void estimates(PlanState& s) { add_onnx_estimates(s); }

}  // namespace quarkplan::onnx_rules
