// verify's entry point: the checks every plan shares, then the flow's own.
#include "verify/verify.h"

#include "common/error.h"

namespace quarkplan::verify {

Result verify_export(const Json& plan, const Json& analysis, const std::string& plan_path, const std::string& output,
                     const Options& options, const Catalog& catalog) {
  const std::string backend = plan.value("backend", "");
  Result r = backend == "onnx" ? detail::verify_onnx(plan, analysis, output, options, catalog)
                               : detail::verify_torch(plan, analysis, output, options, catalog);
  r.plan_path = plan_path;
  Check confirmed = make_check("verify.plan.confirmed");
  confirmed.checked = 1;
  if (plan.value("requires_confirmation", true))
    confirmed.failures.push_back({plan_path, "a confirmed plan", "a draft (requires_confirmation: true): confirm it with quarkplan plan ... --yes or at the prompt"});
  r.checks.insert(r.checks.begin(), confirmed);
  return r;
}

}  // namespace quarkplan::verify
