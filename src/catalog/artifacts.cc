#include "catalog/artifacts.h"

#include <algorithm>

#include "catalog/catalog.h"
#include "common/error.h"

namespace quarkplan {

std::vector<std::string> artifact_kinds() {
  return {"model_analysis", "quant_plan", "session_context", "env_context", "onnx_install_result"};
}

std::string detect_artifact_kind(const Json& d) {
  if (!d.is_object()) return "";
  if (d.contains("quantization_targets") || d.contains("analysis_status")) return "model_analysis";
  if (d.contains("requires_confirmation") || d.contains("global_scheme") || d.contains("preset") ||
      d.contains("backend"))
    return "quant_plan";
  if (d.contains("user_goal") || d.contains("workflow")) return "session_context";
  if (d.contains("environment") && d.contains("hardware")) return "env_context";
  if (d.contains("verification") || d.contains("onnxruntime_package") ||
      (d.contains("status") && d.contains("onnxruntime_version")))
    return "onnx_install_result";
  return "";
}

Json read_validated(const std::string& path, const std::string& kind) {
  Json j = read_json_file(path, 16ull << 20);
  auto errors = validate_against_schema(j, "schemas/" + kind + ".schema.json");
  if (!errors.empty()) throw InputError(path, "does not match the " + kind + " schema: " + errors.front());
  return j;
}

ValidationOutcome validate_artifact_file(const std::string& path, const std::string& kind) {
  ValidationOutcome out;
  out.file = path;
  Json doc;
  try {
    doc = read_json_file(path);
  } catch (const InputError& e) {
    out.errors.push_back(e.what());
    return out;
  }
  out.kind = kind.empty() ? detect_artifact_kind(doc) : kind;
  if (out.kind.empty()) {
    out.errors.push_back("cannot tell which artifact this is; pass --kind (one of model_analysis, quant_plan, "
                         "session_context, env_context, onnx_install_result)");
    return out;
  }
  auto kinds = artifact_kinds();
  if (std::find(kinds.begin(), kinds.end(), out.kind) == kinds.end()) {
    out.errors.push_back("unknown kind '" + out.kind + "'");
    return out;
  }
  out.errors = validate_against_schema(doc, "schemas/" + out.kind + ".schema.json");
  return out;
}

}  // namespace quarkplan
