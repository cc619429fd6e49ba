// The intake step: MODEL (+ context files) -> model_analysis.json document.
#pragma once
#include <string>

#include "common/json.h"
#include "intake/model_reader.h"

namespace quarkplan {

struct IntakeRequest {
  std::string model;
  std::string target;          // --target
  std::string install_result;  // --install-result FILE
  std::string session;         // --session FILE
  std::string env;             // --env FILE
  std::string catalog_dir;     // --catalog DIR
  std::string quark_version;   // --quark-version V, "" when not given
  bool trust_remote_code = false;
  bool weight_stats = false;
};

// Reads the context files the request names (session_context.json,
// onnx_install_result.json), each validated against its schema, and picks the
// Quark release: --quark-version, else the amd-quark version the install
// result or env file reports, else the newest the catalog describes.
IntakeContext resolve_intake_context(const IntakeRequest& req);

// Runs the reader for the model and returns the analysis, validated against
// schemas/model_analysis.schema.json. Throws InputError for bad input.
Json run_intake(const IntakeRequest& req);
// The same with the context already resolved (plan reads the files once).
Json run_intake(const IntakeRequest& req, const IntakeContext& ctx);

// The deployment targets the ONNX flow knows.
bool is_known_target(const std::string& t);

}  // namespace quarkplan
