// `quarkplan verify PLAN OUTPUT [--source DIR] [--json]`: whether the model
// Quark exported keeps the plan. Exit 0 when every promise is kept, 2 with
// each broken one named; it reads the export, never writes.
#include <algorithm>
#include <cstdio>

#include "catalog/catalog.h"
#include "cli/commands.h"
#include "cli/guarded.h"
#include "common/error.h"
#include "plan/plan_file.h"
#include "ui/terminal.h"
#include "ui/verify_view.h"
#include "verify/verify.h"

namespace quarkplan {

verify::Result verify_plan_output(const std::string& plan_path, const std::string& output, const std::string& source,
                                  const std::string& catalog_dir) {
  LoadedPlan lp = load_plan_file(plan_path);
  // Only a plan that still follows from its analysis and rules is a promise
  // worth checking (the same integrity check explain and report make).
  IntegrityReport check = verified_plan(plan_path, lp.plan, catalog_dir);
  const Json& analysis = !check.analysis.is_null() ? check.analysis : lp.analysis;
  verify::Options o;
  o.source_dir = source;
  o.keep_until_exit = true;
  std::string dir = catalog_dir.empty() ? lp.plan.value("request", Json::object()).value("catalog_dir", "") : catalog_dir;
  return verify::verify_export(lp.plan, analysis, plan_path, output, o, Catalog::for_plan(lp.plan, dir));
}

int run_verify_command(const VerifyArgs& a) {
  return guarded(a.json, [&] {
    verify::Result r = verify_plan_output(a.plan, a.output, a.source, a.catalog_dir);
    if (r.ok()) {
      if (a.json) std::fputs(dump_json(verify::to_json(r)).c_str(), stdout);
      else std::fputs(ui::render_verify(r, ui::Style{ui::use_color(stdout)}, ui::terminal_width(stdout)).c_str(), stdout);
      return kExitOk;
    }
    CommandFailure f;
    f.code = kExitBadInput;
    const verify::Check* first = nullptr;
    for (const auto& c : r.checks)
      if (c.failed()) {
        first = &c;
        break;
      }
    const uint64_t broken = r.broken_count();
    std::string subject = first->failures.front().subject;
    if (subject.size() > 100) subject = subject.substr(0, 97) + "...";
    f.message = a.output + ": " + std::to_string(broken) + " broken promise" + (broken == 1 ? "" : "s") + " of plan " + a.plan + " (first: " + first->id + ", " +
                subject + ")";
    f.rule = first->id;
    f.hint = "Re-run Quark with the plan's command (quarkplan explain " + a.plan + "), or re-plan if the export is what you want.";
    f.extra["verification"] = verify::to_json(r);
    // The whole result on stderr for people; under --json the JSON carries it
    // (stderr keeps only the one-line summary).
    if (!a.json) print_stderr(ui::render_verify(r, ui::Style{ui::use_color(stderr)}, ui::terminal_width(stderr)));
    f.lines = {f.message};
    throw f;
  });
}

}  // namespace quarkplan
