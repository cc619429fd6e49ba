// `quarkplan report PLAN [-o FILE]` (and `plan --report FILE`): one
// self-contained HTML page of a plan, written atomically.
#include <cstdio>

#include "cli/commands.h"
#include "cli/guarded.h"
#include "common/error.h"
#include "common/files.h"
#include "plan/plan_file.h"
#include "ui/report.h"
#include "verify/verify.h"

namespace quarkplan {

namespace {
std::string version() { return std::string("quarkplan ") + QUARKPLAN_VERSION; }
}  // namespace

void write_plan_report(const std::string& output, const std::string& plan_path, const Json& plan, const Json& analysis,
                       const std::string& catalog_dir, const std::string& integrity, bool verified) {
  ui::ReportInput in;
  in.integrity = integrity;
  in.verified = verified;
  in.plan = plan;
  in.plan_path = plan_path;
  in.analysis = analysis;
  if (analysis.is_null()) in.analysis_note = "The analysis is not available, so the model facts are not shown.";
  in.catalog_dir = catalog_dir;
  in.tool_version = version();
  write_file_atomic(output, ui::render_report(in));
}

int run_report_command(const ReportArgs& a) {
  return guarded(a.json, [&] {
    LoadedPlan lp = load_plan_file(a.plan);
    check_distinct_outputs({{"-o", a.output}}, {{"the plan", a.plan}, {"its analysis", lp.analysis_path}});
    check_output_path(a.output);
    check_artifact_kind("-o", a.output, "report");
    // The page shows only a plan that still follows from its analysis and
    // rules, as explain does.
    IntegrityReport check = verified_plan(a.plan, lp.plan, a.catalog_dir);
    ui::ReportInput in;
    Json verification;
    if (!a.verify_output.empty()) in.verification = verification = verify::to_json(verify_plan_output(a.plan, a.verify_output, a.source, a.catalog_dir));
    in.integrity = check.summary();
    in.verified = check.rules_rechecked;
    in.plan = std::move(lp.plan);
    in.plan_path = a.plan;
    in.analysis = std::move(lp.analysis);
    in.analysis_note = lp.analysis_note;
    in.catalog_dir = a.catalog_dir;
    in.tool_version = version();
    std::string html = ui::render_report(in);
    write_file_atomic(a.output, html);
    if (!lp.analysis_note.empty()) print_stderr("Note: " + lp.analysis_note + "\n");
    if (a.json) {
      std::fputs(dump_json(Json{{"report", a.output},
                                {"plan", a.plan},
                                {"integrity", {{"verified", check.rules_rechecked}, {"summary", check.summary()}}},
                                {"verification", verification},
                                {"analysis_note", lp.analysis_note.empty() ? Json(nullptr) : Json(lp.analysis_note)}})
                     .c_str(),
                 stdout);
      return kExitOk;
    }
    std::printf("Wrote the report of %s to %s\n", a.plan.c_str(), a.output.c_str());
    if (!verification.is_null())
      std::printf("%s\n", verification["verified"].get<bool>()
                             ? ("Every promise of the plan is kept by " + a.verify_output + ".").c_str()
                             : (std::to_string(verification["broken_promises"].get<uint64_t>()) +
                                (verification["broken_promises"].get<uint64_t>() == 1 ? " broken promise in " : " broken promises in ") + a.verify_output +
                                ": see the report's verification section, or run quarkplan verify.").c_str());
    return kExitOk;
  });
}

}  // namespace quarkplan
