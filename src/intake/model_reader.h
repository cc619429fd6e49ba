// One reader per model format behind one interface (in the manner of bloaty's
// ObjectFile): onnx (OnnxModelReader), Hugging Face directories (HfModelReader).
// A reader turns what it finds into the model_analysis.json document.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"

namespace quarkplan {

class Catalog;

// Facts from outside the model that shape an analysis (SPEC §2).
struct IntakeContext {
  std::string deployment_target;  // --target or session constraints; "" when unknown
  std::string target_source;      // "--target", "session_context", or ""
  std::optional<bool> custom_ops_compile_ok;  // from onnx_install_result.json
  std::optional<std::vector<std::string>> available_providers;  // onnx_install_result.json verification.available_providers
  std::string install_status;          // onnx_install_result.json status, "" when not given
  std::string install_failure_reason;  // its failure_reason
  std::string install_accelerator_tag;  // its accelerator_tag (cpu, cuda-12, rocm-7.0, ...)
  std::string install_onnxruntime_version;  // its onnxruntime_version, "" when not given
  bool trust_remote_code = false;             // user approved running repository code
  bool weight_stats = false;
  unsigned weight_stats_threads = 0;  // 0: every core
  // Progress of long steps (the --weight-stats scan), called on the calling thread.
  std::function<void(const std::string& stage, uint64_t done, uint64_t total)> progress;
  const Catalog* catalog = nullptr;  // holds the facts of quark_release
  std::string quark_release;         // the Quark release the analysis is for (catalog/releases.json)
  std::string quark_release_source;  // "--quark-version", the file that named it, or "" (the newest)
  std::string installed_quark_version, installed_quark_source;  // what an --install-result / --env file reports, and which file
  // A one-shot command: the reader's large working set (mapped headers, tensor
  // records, the model structure) is left to the process exit instead of being
  // freed piece by piece (see common/keep_until_exit.h).
  bool keep_until_exit = false;
};

class ModelReader {
 public:
  virtual ~ModelReader() = default;
  virtual std::string format() const = 0;  // "onnx" | "hf"
  // Builds the analysis; throws InputError for input that cannot be analysed.
  virtual Json analyze(const IntakeContext& ctx) = 0;
};

// Picks the reader for MODEL: an .onnx file, a folder holding model.onnx (or
// exactly one .onnx), or a Hugging Face folder with config.json.
std::unique_ptr<ModelReader> open_model(const std::string& path);

std::unique_ptr<ModelReader> make_onnx_reader(const std::string& onnx_file);
std::unique_ptr<ModelReader> make_hf_reader(const std::string& directory);

// A risk entry of SPEC §2, naming the rule that raised it.
Json make_risk(const std::string& rule, const std::string& severity, const std::string& message,
               const std::string& recovery_hint);

// Orders risks high, medium, low (stable within a severity).
Json sorted_risks(const Json& risks);

}  // namespace quarkplan
