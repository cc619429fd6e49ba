// quarkplan's command line: parses arguments and calls the library. All the
// work (and every decision) lives in the library; all terminal output goes
// through the UI layer.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "common/error.h"

int main(int argc, char** argv) {
  using namespace quarkplan;
  CLI::App app{"quarkplan: validated, explicitly confirmed AMD Quark quantization plans"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("quarkplan ") + QUARKPLAN_VERSION);

  IntakeArgs intake;
  auto* ci = app.add_subcommand("intake", "Read a model (.onnx or Hugging Face folder) into model_analysis.json");
  ci->add_option("MODEL", intake.model, "an .onnx file, a folder holding model.onnx, or a Hugging Face model folder")->required();
  ci->add_option("-o", intake.output, "where to write the analysis")->default_val("model_analysis.json");
  ci->add_flag("--json", intake.json, "print the analysis as JSON on stdout (the summary goes to stderr)");
  ci->add_option("--target", intake.target, "ONNX deployment target: cpu|cuda|rocm|npu_cnn|npu_transformer");
  ci->add_option("--install-result", intake.install_result, "onnx_install_result.json (custom-ops availability)");
  ci->add_option("--session", intake.session, "session_context.json (deployment target; updated with open questions)");
  ci->add_option("--env", intake.env, "env_context.json");
  ci->add_option("--catalog", intake.catalog_dir, "a folder of catalog files that replace the embedded ones");
  ci->add_flag("--weight-stats", intake.weight_stats, "scan the weights for per-layer outlier statistics");
  ci->add_flag("--trust-remote-code", intake.trust_remote_code, "approve running the repository's own code (auto_map)");

  ValidateArgs validate;
  auto* cv = app.add_subcommand("validate", "Check artifacts against quarkplan's JSON schemas");
  cv->add_option("FILE", validate.files, "artifacts to check")->required();
  cv->add_option("--kind", validate.kind, "model_analysis|quant_plan|session_context|env_context|onnx_install_result");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "quarkplan: %s\n", e.what());
    std::fprintf(stderr, "Run 'quarkplan --help' for usage.\n");
    return kExitBadInput;
  }
  if (ci->parsed()) return run_intake_command(intake);
  if (cv->parsed()) return run_validate_command(validate);
  return kExitBadInput;
}
