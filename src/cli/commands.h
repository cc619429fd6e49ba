// Command entry points: each takes parsed arguments, runs the library and
// returns the process exit code of SPEC §1. Errors never escape as exceptions.
#pragma once
#include <string>
#include <vector>

namespace quarkplan {

struct IntakeArgs {
  std::string model, output = "model_analysis.json", target, install_result, session, env, catalog_dir;
  bool json = false, weight_stats = false, trust_remote_code = false;
};
int run_intake_command(const IntakeArgs& args);

struct ValidateArgs {
  std::vector<std::string> files;
  std::string kind;
};
int run_validate_command(const ValidateArgs& args);

}  // namespace quarkplan
