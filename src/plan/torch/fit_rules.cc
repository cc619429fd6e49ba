// Whether the model fits the accelerators: weight size per scheme, KV cache, and how many
// accelerators calibration and deployment need (estimates.cc). Rule torch.fit.accelerators.
#include "plan/estimates.h"
#include "plan/rules.h"

namespace quarkplan {

namespace torch_rules {

void fit_accelerators(PlanState& s) { add_estimates(s); }

}  // namespace torch_rules
}  // namespace quarkplan
