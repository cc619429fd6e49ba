#include "intake/model_reader.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "common/error.h"

namespace fs = std::filesystem;

namespace quarkplan {

Json make_risk(const std::string& rule, const std::string& severity, const std::string& message,
               const std::string& recovery_hint) {
  Json r;
  r["severity"] = severity;
  r["message"] = message;
  r["recovery_hint"] = recovery_hint;
  r["rule"] = rule;
  return r;
}

Json sorted_risks(const Json& risks) {
  auto rank = [](const Json& r) { return r["severity"] == "high" ? 0 : r["severity"] == "medium" ? 1 : 2; };
  std::vector<Json> v(risks.begin(), risks.end());
  std::stable_sort(v.begin(), v.end(), [&](const Json& a, const Json& b) { return rank(a) < rank(b); });
  return Json(v);
}

std::unique_ptr<ModelReader> open_model(const std::string& path) {
  std::error_code ec;
  auto st = fs::status(path, ec);
  if (ec || !fs::exists(st)) throw InputError(path, "no such file or directory");
  if (fs::is_directory(st)) {
    fs::path dir(path);
    if (fs::exists(dir / "model.onnx")) return make_onnx_reader((dir / "model.onnx").string());
    std::vector<fs::path> onnx_files;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".onnx") onnx_files.push_back(e.path());
    if (fs::exists(dir / "config.json")) return make_hf_reader(path);
    if (onnx_files.size() == 1) return make_onnx_reader(onnx_files[0].string());
    if (onnx_files.size() > 1)
      throw InputError(path, "directory holds " + std::to_string(onnx_files.size()) +
                                 " .onnx files and no model.onnx; name the file to analyse");
    throw InputError(path, "directory holds no model (no model.onnx, no .onnx file, no config.json)");
  }
  if (!fs::is_regular_file(st)) throw InputError(path, "not a regular file");
  fs::path p(path);
  if (p.filename() == "config.json") return make_hf_reader(p.parent_path().empty() ? "." : p.parent_path().string());
  if (p.extension() == ".safetensors" || p.extension() == ".json")
    throw InputError(path, "pass the model directory (holding config.json), not one of its files");
  return make_onnx_reader(path);
}

}  // namespace quarkplan
