// The Quark invocation a plan implies — shown by `explain`, never run.
#pragma once
#include <string>
#include <vector>

#include "common/json.h"

namespace quarkplan {

struct Invocation {
  std::string tool;                 // "quantize_quark.py" | "quark.onnx QConfig" | "quark.onnx get_default_config"
  std::vector<std::string> args;    // Torch: argv after the script
  std::vector<std::pair<std::string, std::string>> env;  // Torch: variables the command must run with
  std::string text;                 // printable form (shell command or QConfig)
  Json fields;                      // ONNX: QConfig fields as data
  // ONNX: the pieces of `text`, for the whole script `explain --python` writes:
  // the import lines, the config statements, and the quantize_model arguments
  // after the two model paths (", calibration_data_path=..., algorithms=[...]").
  std::string py_imports, py_config, py_call_extra;
  // Torch: a next step with Quark's own tools (catalog follow_up_tools), or null:
  // {tool, why, args, text}. Printed after the command, never part of it.
  Json follow_up;
  // Torch: how to serve the result with the plan's runtime (plan serve, catalog/runtimes.json),
  // or null: {runtime, label, env, args, text}. Printed after the Quark command.
  Json serve;
  // Torch: files the command reads that quarkplan writes (algorithm configs Quark has no built-in
  // one for: plan algorithm_config_files): [{path, content, why}]. explain prints them first.
  Json files = Json::array();
};

// `analysis` may be null (analysis_ref not found): the template defaults then
// come from the catalog.
Invocation plan_invocation(const Json& plan, const Json& analysis, const std::string& catalog_dir = "");

class Catalog;
// A word as a POSIX shell reads it back: as it is when safe, else in single quotes.
std::string shell_quote(const std::string& s);
// How to serve `model_dir` with the plan's runtime (plan["serve"], catalog/runtimes.json's serve
// section): {runtime, label, program, env, args, text}, or null when the plan names no runtime.
Json serve_command(const Json& plan, const Catalog& cat, const std::string& model_dir, const std::string& model_type);

// The ONNX half (invocation_onnx.cc): the Python Quark runs, as text, and the
// same as fields (route, qconfig or legacy, and every Quark name it uses).
Invocation onnx_invocation(const Json& plan, const Json& analysis, const Catalog& cat);

}  // namespace quarkplan
