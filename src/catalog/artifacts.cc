#include "catalog/artifacts.h"

#include <algorithm>
#include <filesystem>

#include "catalog/catalog.h"
#include "common/error.h"
#include "common/files.h"
#include "common/sha256.h"

namespace fs = std::filesystem;

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
  std::string text;
  return read_validated(path, kind, text);
}

Json read_validated(const std::string& path, const std::string& kind, std::string& text) {
  // Analyses of huge models list tens of thousands of module names.
  text = read_small_file(path, kind == "model_analysis" ? 256ull << 20 : 16ull << 20);
  Json j = parse_json(text, path);
  auto errors = validate_against_schema(j, "schemas/" + kind + ".schema.json");
  if (!errors.empty()) throw InputError(path, "does not match the " + kind + " schema: " + errors.front(), errors);
  return j;
}

Json model_fingerprint(const std::string& model_path) {
  std::error_code ec;
  fs::path p(model_path);
  bool dir = fs::is_directory(p, ec);
  fs::path file = dir ? p / "config.json" : p;
  uint64_t hashed = 0, size = 0;
  std::string sha = sha256_file_prefix(file.string(), dir ? (16ull << 20) : (1ull << 20), hashed, size);
  return {{"method", dir ? "sha256 of config.json" : "sha256 of the first MiB of the .onnx file, and its size"},
          {"file", file.string()},
          {"sha256", sha},
          {"hashed_bytes", hashed},
          {"size", size}};
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
