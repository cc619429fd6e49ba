// Error types that map onto the exit codes of SPEC §1.
#pragma once
#include <stdexcept>
#include <vector>
#include <string>

namespace quarkplan {

// Bad usage or bad input: a one-line message naming the file and the problem; exit 2.
class InputError : public std::runtime_error {
 public:
  InputError(const std::string& file, const std::string& problem)
      : std::runtime_error(file.empty() ? problem : file + ": " + problem) {}
  // Every problem found when there are several (a schema's errors): --json
  // lists them as `errors`.
  InputError(const std::string& file, const std::string& problem, std::vector<std::string> all)
      : std::runtime_error(file.empty() ? problem : file + ": " + problem), errors(std::move(all)) {}
  std::vector<std::string> errors;
};

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,
  kExitBadInput = 2,
  kExitDraft = 3,
  kExitRefused = 4,
  kExitDeclined = 5,
};

}  // namespace quarkplan
