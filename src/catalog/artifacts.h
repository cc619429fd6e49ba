// The artifacts quarkplan reads and writes, each checked against its schema.
#pragma once
#include <string>
#include <vector>

#include "common/json.h"

namespace quarkplan {

// "model_analysis", "quant_plan", "session_context", "env_context",
// "onnx_install_result", or "" when the content matches none.
std::string detect_artifact_kind(const Json& doc);
std::vector<std::string> artifact_kinds();

struct ValidationOutcome {
  std::string file;
  std::string kind;
  std::vector<std::string> errors;  // empty when valid
};

// Reads a JSON artifact and checks it against schemas/<kind>.schema.json;
// throws InputError naming the file and the first schema error.
Json read_validated(const std::string& path, const std::string& kind);

// Reads and validates one file; `kind` empty means detect it from content.
// Unreadable or non-JSON files become an outcome with one error.
ValidationOutcome validate_artifact_file(const std::string& path, const std::string& kind = "");

// Like read_validated, also handing back the file's exact bytes (their SHA-256
// ties a plan to the analysis it points to).
Json read_validated(const std::string& path, const std::string& kind, std::string& text);

// A cheap fingerprint of the model at `model_path` (an analysis'
// model.model_path): for a Hugging Face folder the SHA-256 of its config.json;
// for an ONNX file the SHA-256 of its first MiB plus its size (the graph of an
// external-data model sits there; a 2 GB model costs one MiB of reading).
// {"method", "file", "sha256", "hashed_bytes", "size"}. Throws InputError.
Json model_fingerprint(const std::string& model_path);

}  // namespace quarkplan
