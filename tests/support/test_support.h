// Helpers shared by the tests: temporary folders, running the built binary,
// the real-model cache, and an ONNX model builder on the official protobuf types.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "common/json.h"

namespace qp_test {

namespace fs = std::filesystem;

// A fresh folder removed at destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& s) const { return path_ / s; }

 private:
  fs::path path_;
};

struct RunResult {
  int exit_code = -1;
  std::string out, err;
};

// Runs the quarkplan binary with `args` in `cwd`, stdin from /dev/null (or `input`).
RunResult run_quarkplan(const std::vector<std::string>& args, const fs::path& cwd = fs::current_path(),
                        const std::string& input = "");

void write_file(const fs::path& p, const std::string& content);
std::string read_file(const fs::path& p);

// Real models fetched by scripts/fetch_models.sh (npm packages). Returns an
// empty path when the cache is missing: tests then fail with a clear message.
fs::path model_cache();
fs::path real_model(const std::string& relative);

// A calibration set Quark's PathDataReader reads for `model` (an .onnx file or
// a folder with one, or a model_analysis.json): `samples` sparse .npy arrays of
// each input's shape and dtype (symbolic dimensions 1), flat for one input,
// one folder per input otherwise. Writes into `folder`, returns it as a string.
// `fix_shapes`: the plan's FixShapes value, whose dimensions the arrays then take.
std::string write_calibration_set(const fs::path& folder, const fs::path& model, int samples = 200, const std::string& fix_shapes = "");

fs::path source_dir();
fs::path testdata(const std::string& relative);

}  // namespace qp_test
