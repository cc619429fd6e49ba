// The Quark release a plan is for (catalog/releases.json): the decision-table
// row that says which and why, and the risk of a plan for another release than
// the one the machine has installed. Shared by both flows.
#include "catalog/catalog.h"
#include "plan/plan_state.h"
#include "plan/rules.h"

namespace quarkplan {

void quark_release(PlanState& s) {
  const std::string rule = s.plan.value("backend", "") == "onnx" ? "onnx.quark_release" : "torch.quark_release";
  const std::string& release = s.cat.release();
  s.plan["quark_release"] = release;
  const std::string& from = s.req.quark_release_source;
  std::string why = from.empty()                 ? "The newest release quarkplan describes (another with --quark-version)"
                    : from == "--quark-version"  ? "Your choice (--quark-version)"
                    : from == "--analysis"       ? "The release the analysis was read with"
                                                 : "The amd-quark " + s.req.installed_quark_version + " that " + from + " reports installed";
  s.reason("quark_release", rule, why + "; the command and every fact are this release's (quarkplan catalog lists what differs)");
  // The plan is for one release, the machine has another: its command may not run there as printed.
  const std::string& installed = s.req.installed_quark_version;
  if (!installed.empty() && Catalog::canonical_release(installed, s.req.catalog_dir) != release)
    s.risk(rule, "medium",
           "The plan is for Quark " + release + ", but " + s.req.installed_quark_source + " reports amd-quark " + installed +
               " installed: the printed command and the facts behind it are " + release + "'s.",
           "Run it with amd-quark " + release + " (pip install amd-quark==" + release + "), or plan for the installed Quark with --quark-version " +
               installed + " if quarkplan describes it.");
}

}  // namespace quarkplan
