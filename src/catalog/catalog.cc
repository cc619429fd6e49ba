#include "catalog/catalog.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validator.hpp>

#include "common/error.h"
#include "common/resources.h"

namespace fs = std::filesystem;

namespace quarkplan {

namespace {

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

Json load_part(const std::string& dir, const std::string& file) {
  if (!dir.empty()) {
    fs::path p = fs::path(dir) / file;
    if (fs::exists(p)) {
      Json j = read_json_file(p.string(), 16ull << 20);
      auto errors = validate_against_schema(j, "schemas/catalog_" + file.substr(0, file.find('.')) + ".schema.json");
      if (!errors.empty()) throw InputError(p.string(), "catalog does not match its schema: " + errors.front());
      return j;
    }
  }
  std::string_view text = embedded_resource("catalog/" + file);
  if (text.empty()) throw std::runtime_error("embedded catalog file missing: " + file);
  return Json::parse(text);
}

}  // namespace

const Catalog& Catalog::load(const std::string& dir) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<Catalog>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[dir];
  if (!slot) {
    if (!dir.empty() && !fs::is_directory(dir)) throw InputError(dir, "catalog directory does not exist");
    auto c = std::make_unique<Catalog>();
    c->dir_ = dir;
    // A user's catalog is checked whole, now: its errors name the file before
    // any work starts. The embedded one was checked when it was built.
    if (!dir.empty())
      for (Part* p : {&c->onnx_, &c->torch_, &c->hardware_, &c->architectures_}) c->get(*p);
    slot = std::move(c);
  }
  return *slot;
}

const Json& Catalog::get(Part& p) const {
  std::call_once(p.once, [&] { p.value = load_part(dir_, p.file); });
  return p.value;
}

std::string Catalog::version_stamp() const {
  return onnx().value("quark_version", std::string("?"));
}

const Json* Catalog::onnx_preset(const std::string& name) const {
  for (const auto& p : onnx()["presets"])
    if (p["name"] == name) return &p;
  return nullptr;
}

std::string Catalog::canonical_preset(const std::string& name) const {
  std::string u = upper(name);
  const auto& aliases = onnx()["preset_aliases"];
  if (aliases.contains(u)) return aliases[u].get<std::string>();
  if (onnx_preset(u)) return u;
  return name;
}

const Json* Catalog::onnx_target(const std::string& name) const {
  for (const auto& t : onnx()["deployment_targets"])
    if (t["name"] == name) return &t;
  return nullptr;
}

const Json* Catalog::onnx_calibration(const std::string& name) const {
  for (const auto& m : onnx()["calibration_methods"])
    if (m["name"] == name) return &m;
  return nullptr;
}

std::string Catalog::canonical_calibration(const std::string& name) const {
  if (onnx_calibration(name)) return name;
  const auto& aliases = onnx()["calibration_aliases"];
  if (aliases.contains(name)) return aliases[name].get<std::string>();
  for (const auto& m : onnx()["calibration_methods"]) {
    std::string n = m["name"];
    if (upper(n) == upper(name)) return n;
  }
  return "";
}

const Json* Catalog::onnx_algorithm(const std::string& name) const {
  for (const auto& a : onnx()["algorithms"])
    if (upper(a["name"].get<std::string>()) == upper(name)) return &a;
  return nullptr;
}

std::vector<std::string> Catalog::onnx_preset_names() const {
  std::vector<std::string> out;
  for (const auto& p : onnx()["presets"]) out.push_back(p["name"]);
  return out;
}

std::vector<std::string> Catalog::onnx_preset_candidates(const std::string& target,
                                                         const std::string& architecture) const {
  for (const auto& row : onnx()["preset_candidates"]) {
    if (row["target"] != target) continue;
    if (row["architecture"] != "*" && row["architecture"] != architecture) continue;
    return row["presets"].get<std::vector<std::string>>();
  }
  return {};
}

namespace {
// "Strix Halo", "strix_halo", "STRIX-HALO", "strixhalo" -> "strixhalo":
// case and separators do not count.
std::string npu_key(const std::string& name) {
  std::string k;
  for (char c : name)
    if (std::isalnum(static_cast<unsigned char>(c))) k += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return k;
}
}  // namespace

const Json* Catalog::npu_generation(const std::string& name) const {
  if (!onnx().contains("npu_generations")) return nullptr;
  const std::string k = npu_key(name);
  for (const auto& g : onnx()["npu_generations"]["generations"]) {
    if (npu_key(g["name"].get<std::string>()) == k) return &g;
    for (const auto& a : g["aliases"])
      if (npu_key(a.get<std::string>()) == k) return &g;
  }
  return nullptr;
}

bool Catalog::npu_generic_name(const std::string& name) const {
  if (!onnx().contains("npu_generations")) return false;
  const std::string k = npu_key(name);
  for (const auto& a : onnx()["npu_generations"]["generic_names"])
    if (npu_key(a.get<std::string>()) == k) return true;
  return false;
}

const Json* Catalog::npu_group(const Json& generation, const std::string& target, const std::string& preset) const {
  if (!generation.contains("targets") || !generation["targets"].contains(target)) return nullptr;
  for (const auto& g : generation["targets"][target]["groups"])
    for (const auto& p : g["presets"])
      if (p == preset) return &g;
  return nullptr;
}

bool Catalog::preset_allowed_on(const Json& preset, const std::string& target, const Json* generation) const {
  if (generation && generation->contains("targets") && (*generation)["targets"].contains(target))
    return npu_group(*generation, target, preset["name"].get<std::string>()) != nullptr;
  return preset_allowed_on(preset, target);
}

bool Catalog::preset_allowed_on(const Json& preset, const std::string& target) const {
  const Json* t = onnx_target(target);
  if (!t) return true;
  const auto& fams = (*t)["allowed_families"];
  return std::find(fams.begin(), fams.end(), preset["family"]) != fams.end();
}

const Json* Catalog::torch_scheme(const std::string& name) const {
  if (!torch().contains("schemes")) return nullptr;
  std::string target = name;
  if (torch().contains("scheme_aliases") && torch()["scheme_aliases"].contains(name))
    target = torch()["scheme_aliases"][name].get<std::string>();
  for (const auto& s : torch()["schemes"])
    if (s["name"] == target) return &s;
  return nullptr;
}

const Json* Catalog::torch_template(const std::string& model_type) const {
  if (!torch().contains("templates")) return nullptr;
  for (const auto& t : torch()["templates"])
    if (t["model_type"] == model_type) return &t;
  return nullptr;
}

const Json* Catalog::torch_algorithm(const std::string& name) const {
  if (!torch().contains("algorithms")) return nullptr;
  for (const auto& a : torch()["algorithms"])
    if (a["name"] == name) return &a;
  return nullptr;
}

const Json* Catalog::accelerator(const std::string& name) const {
  if (!hardware().contains("accelerators")) return nullptr;
  std::string u = upper(name);
  for (const auto& a : hardware()["accelerators"]) {
    if (upper(a["name"].get<std::string>()) == u) return &a;
    if (a.contains("aliases"))
      for (const auto& al : a["aliases"])
        if (upper(al.get<std::string>()) == u) return &a;
  }
  return nullptr;
}

std::vector<std::string> validate_against_schema(const Json& doc, const std::string& schema_path) {
  std::string_view text = embedded_resource(schema_path);
  if (text.empty()) throw std::runtime_error("embedded schema missing: " + schema_path);
  // valijson's adapter takes nlohmann::json; the schema is parsed once.
  static std::mutex mu;
  static std::map<std::string, std::pair<nlohmann::json, std::unique_ptr<valijson::Schema>>> schemas;
  std::lock_guard<std::mutex> lock(mu);
  auto& entry = schemas[schema_path];
  if (!entry.second) {
    entry.first = nlohmann::json::parse(text);
    entry.second = std::make_unique<valijson::Schema>();
    valijson::SchemaParser parser;
    valijson::adapters::NlohmannJsonAdapter schema_adapter(entry.first);
    parser.populateSchema(schema_adapter, *entry.second);
  }
  nlohmann::json plain(doc);  // ordered_json -> json for the adapter
  valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter target(plain);
  std::vector<std::string> errors;
  if (!validator.validate(*entry.second, target, &results)) {
    valijson::ValidationResults::Error err;
    while (results.popError(err)) {
      std::string path;
      for (const auto& c : err.context) {
        if (c == "<root>") continue;
        path += c;
      }
      if (path.empty()) path = "/";
      // Skip the generic "failed to validate against schema" wrappers when a
      // specific cause exists.
      errors.push_back(path + ": " + err.description);
    }
  }
  // Most specific (deepest) errors first.
  std::stable_sort(errors.begin(), errors.end(), [](const std::string& a, const std::string& b) {
    return a.find(':') > b.find(':');
  });
  return errors;
}

}  // namespace quarkplan
