// `quarkplan verify PLAN OUTPUT`: does the model Quark exported keep the plan?
// Each promise a plan makes is one named check (the table in checks.cc): it
// counts the modules, nodes or files it looked at and names every one that
// breaks the promise (what the plan said, what the file holds). The Torch side
// reads a Hugging Face export (torch_verify.cc), the ONNX side a quantized
// .onnx (onnx_verify.cc); both read headers and scale initializers only.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"

namespace quarkplan {
class Catalog;
}

namespace quarkplan::verify {

struct Failure {
  std::string subject;   // a module, node, tensor or file
  std::string expected;  // what the plan said
  std::string found;     // what the export holds
};

struct Check {
  std::string id;       // "verify.torch.quantized_tensors", ... (checks.cc)
  std::string purpose;  // the promise, in one line
  uint64_t checked = 0;  // subjects looked at
  std::vector<Failure> failures;  // grouped: one per way a promise broke
  uint64_t broken_subjects = 0;   // subjects that broke it (a failure may group many)
  std::string skipped;  // why the check could not run; empty when it ran
  bool ok() const { return skipped.empty() && failures.empty(); }
  bool failed() const { return !failures.empty(); }
};

// Modules (or nodes) grouped by the promise the plan made about them, names
// collapsed ("model.layers.{0..31}.mlp.down_proj").
struct PromiseGroup {
  std::string promise;  // "fp8", "excluded (bfloat16)", "QDQ (int8)", ...
  uint64_t kept = 0, broken = 0;
  std::vector<std::string> kept_names, broken_names;  // collapsed
};

// Where the exported bytes went, against the plan's estimate.
struct ByteShare {
  std::string label;  // "quantized weights", "scales and zero points", "excluded modules", "other tensors"
  uint64_t bytes = 0;
};

struct Result {
  std::string flow;  // "torch" | "onnx"
  std::string plan_path, output_path;
  std::vector<Check> checks;
  std::vector<PromiseGroup> groups;
  std::vector<ByteShare> bytes;
  uint64_t exported_bytes = 0;
  uint64_t estimated_bytes = 0;  // 0 when the plan has no estimate
  uint64_t estimated_min_bytes = 0;  // a lower bound below it, when the preset may go smaller (mixed precision); 0: none
  double size_tolerance = 0;     // the fraction the size check allowed
  std::vector<std::string> notes;  // facts the checks could not use, and why
  bool ok() const;
  // Broken subjects over every check (a grouped failure counts its subjects).
  uint64_t broken_count() const;
};

struct Options {
  std::string source_dir;       // --source: the model the plan was made from
  double size_tolerance = 0.10;  // exported size within +-10 % of the estimate
  bool keep_until_exit = false;  // a one-shot command: leave the export's records to the process exit
};

// Runs every check of the plan's flow. `analysis` is the plan's analysis
// (null when unavailable: the checks that need it say so). Throws InputError
// when OUTPUT cannot be read at all (missing, not a model, corrupt).
Result verify_export(const Json& plan, const Json& analysis, const std::string& plan_path, const std::string& output,
                     const Options& options, const Catalog& catalog);

// Every check and its result, for --json and the report.
Json to_json(const Result& result);

// The registered checks: ID and purpose, in the order they run.
struct CheckInfo {
  const char* id;
  const char* flow;
  const char* purpose;
};
const std::vector<CheckInfo>& check_table();
// A fresh check by ID (its purpose from the table). Throws std::logic_error for an unregistered ID.
Check make_check(const std::string& id);

struct TorchExport;

namespace detail {
// The flows' checks on what was read (the fuzz targets call these on bytes).
Result verify_torch_export(const Json& plan, const Json& analysis, const TorchExport& ex, const Options& options, const Catalog& catalog);
Result verify_onnx_bytes(const Json& plan, const Json& analysis, std::string_view model_bytes, const std::string& path, const Options& options,
                         const Catalog& catalog);
Result verify_torch(const Json& plan, const Json& analysis, const std::string& output, const Options& options, const Catalog& catalog);
Result verify_onnx(const Json& plan, const Json& analysis, const std::string& output, const Options& options, const Catalog& catalog);
}  // namespace detail

}  // namespace quarkplan::verify
