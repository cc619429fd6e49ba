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

}  // namespace quarkplan
