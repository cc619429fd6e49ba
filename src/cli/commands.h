// Command entry points: each takes parsed arguments, runs the library and
// returns the process exit code of SPEC §1. Errors never escape as exceptions.
#pragma once
#include "plan/integrity.h"
#include <set>
#include <string>
#include <vector>

#include "common/json.h"
#include "intake/intake.h"

namespace quarkplan {

// The model and context-file options intake and plan share are bound straight
// into the library's IntakeRequest.
struct IntakeArgs {
  IntakeRequest intake;
  std::string output = "model_analysis.json";
  bool json = false;
  std::set<std::string> given;  // the options on the command line ("--target", ...)
};
int run_intake_command(const IntakeArgs& args);

struct PlanArgs {
  IntakeRequest intake;  // MODEL, --target, --session, --env, --install-result, --catalog, ...
  std::string analysis, output = "quant_plan.json", report, hardware, goal, export_format, preset, scheme, serve, algorithm, calib_method,
      kv_cache, calib_dataset, calib_data, eval;
  std::vector<std::string> excludes, layer_schemes, sets;
  // Numbers stay text until checked, so every value (0, -1, 1e9, "abc") gets
  // a one-line error naming its flag and range.
  std::string num_calib, seq_len, data_size, batch_size, context, batch, gpus;
  bool json = false, yes = false, insist = false;
  std::set<std::string> given;  // the options on the command line ("--preset", ...)
};
int run_plan_command(const PlanArgs& args);

struct CatalogArgs {
  std::string flow;
  bool json = false;
  std::string catalog_dir;
  std::string quark_version;  // the release to show ("" for the newest)
};
int run_catalog_command(const CatalogArgs& args);

struct ExplainArgs {
  std::string plan, catalog_dir;
  std::string python;  // --python FILE: write an ONNX plan's whole runnable script
  bool json = false;
};
int run_explain_command(const ExplainArgs& args);

struct RulesArgs {
  std::string id;  // a rule ID or a prefix of IDs; empty for every rule
  bool json = false;
};
int run_rules_command(const RulesArgs& args);

// A plan that still follows from its analysis, model and rules
// (plan/integrity.h), or exit 2 naming every problem: what explain and
// report show is never a plan that was edited outside quarkplan.
IntegrityReport verified_plan(const std::string& path, const Json& plan, const std::string& catalog_dir);

// Refuses an output path that would overwrite one of this command's inputs or
// other outputs, or an artifact of another kind (exit 2): e.g. a report
// written over its plan, an analysis over a plan.
void check_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& outputs,
                            const std::vector<std::pair<std::string, std::string>>& inputs);

void check_artifact_kind(const std::string& flag, const std::string& path, const std::string& kind);

struct ReportArgs {
  std::string plan, output = "report.html", catalog_dir, verify_output, source;
  bool json = false;
};
int run_report_command(const ReportArgs& args);
// The report of a plan held in memory (plan --report): `plan_path` is where
// the plan was written.
void write_plan_report(const std::string& output, const std::string& plan_path, const Json& plan, const Json& analysis,
                       const std::string& catalog_dir, const std::string& integrity = "", bool verified = true);

struct VerifyArgs {
  std::string plan, output, source, catalog_dir;
  bool json = false;
};
int run_verify_command(const VerifyArgs& args);
// The verification of `output` against the plan at `plan_path` (report --verify uses it too).
namespace verify {
struct Result;
}
verify::Result verify_plan_output(const std::string& plan_path, const std::string& output, const std::string& source,
                                  const std::string& catalog_dir);

struct EnvArgs {
  std::string output = "env_context.json";
  bool json = false;
};
int run_env_command(const EnvArgs& args);

struct SessionInitArgs {
  std::string output = "session_context.json", workflow, goal;
  bool json = false;
};
int run_session_init_command(const SessionInitArgs& args);

struct ValidateArgs {
  std::vector<std::string> files;
  std::string kind;
  bool json = false;
};
int run_validate_command(const ValidateArgs& args);

}  // namespace quarkplan
