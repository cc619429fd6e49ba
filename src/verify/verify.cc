// verify's entry point: the checks every plan shares, then the flow's own.
#include "verify/verify.h"

#include <algorithm>
#include <cstdio>

#include "common/error.h"
#include "common/units.h"

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

  // Size: the exported bytes against the plan's estimate for its scheme or preset.
  Check size = make_check("verify.size");
  r.size_tolerance = options.size_tolerance;
  if (r.estimated_bytes) {
    size.checked = 1;
    // Below the estimate, the lower bound a mixed preset may reach counts (estimated_min_bytes).
    const uint64_t low = r.estimated_min_bytes && r.exported_bytes < r.estimated_bytes ? r.estimated_min_bytes : r.estimated_bytes;
    double ratio = r.exported_bytes >= r.estimated_bytes ? static_cast<double>(r.exported_bytes) / static_cast<double>(r.estimated_bytes)
                   : r.exported_bytes >= low                ? 1.0
                                                            : static_cast<double>(r.exported_bytes) / static_cast<double>(low);
    // An absolute allowance too: a small model's graph records (node names,
    // scale and zero-point entries) outweigh any fraction of its weights.
    const uint64_t slack = 64 * 1024;
    uint64_t diff = r.exported_bytes > r.estimated_bytes ? r.exported_bytes - r.estimated_bytes : r.exported_bytes >= low ? 0 : low - r.exported_bytes;
    if ((ratio < 1 - options.size_tolerance || ratio > 1 + options.size_tolerance) && diff > slack) {
      char pct[32], tol[32];
      std::snprintf(pct, sizeof pct, "%+.1f %%", (ratio - 1) * 100);
      std::snprintf(tol, sizeof tol, "%.0f %%", options.size_tolerance * 100);
      size.failures.push_back({r.flow == "onnx" ? "the quantized model" : "the exported weights",
                               (low != r.estimated_bytes ? format_bytes(low) + " to " : std::string()) + format_bytes(r.estimated_bytes) + " +- " + tol + " (or 64 KiB)",
                               format_bytes(r.exported_bytes) + ", " + pct + " from the estimate"});
    }
  } else {
    size.skipped = "the plan has no size estimate for its " + std::string(r.flow == "onnx" ? "preset" : "scheme");
  }
  r.checks.push_back(size);
  // Failures added one by one (not through a FailureSink) are one subject each.
  for (auto& c : r.checks)
    if (c.broken_subjects < c.failures.size()) c.broken_subjects = std::max<uint64_t>(c.broken_subjects, c.failures.size());
  // A check that found nothing to look at says so rather than "kept".
  for (auto& c : r.checks)
    if (c.checked == 0 && c.skipped.empty() && c.failures.empty()) c.skipped = "nothing of this kind in the plan";
  return r;
}

}  // namespace quarkplan::verify
