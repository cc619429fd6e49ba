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
#include "common/strings.h"

namespace fs = std::filesystem;

namespace quarkplan {

namespace {

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// A catalog file as written: the embedded one, or the user's of the same name.
Json read_part(const std::string& dir, const std::string& file) {
  if (!dir.empty()) {
    fs::path p = fs::path(dir) / file;
    if (fs::exists(p)) return read_json_file(p.string(), 16ull << 20);
  }
  std::string_view text = embedded_resource("catalog/" + file);
  if (text.empty()) throw std::runtime_error("embedded catalog file missing: " + file);
  return Json::parse(text);
}

std::string schema_of(const std::string& file) { return "schemas/catalog_" + file.substr(0, file.find('.')) + ".schema.json"; }

std::string user_file(const std::string& dir, const std::string& file) {
  if (dir.empty()) return "";
  fs::path p = fs::path(dir) / file;
  return fs::exists(p) ? p.string() : "";
}

std::vector<std::string> versions_in(const Json& releases) {
  std::vector<std::string> out;
  for (const auto& r : releases["releases"]) out.push_back(r["version"].get<std::string>());
  return out;
}

// Keeps the facts of release `at` (an index into `order`) and drops the
// markers: an object outside its since_release..until_release span is removed
// from the array or object holding it, and every by_release patch up to `at`
// is merged into its object, oldest first. `where` names the file for errors.
class ReleaseResolver {
 public:
  ReleaseResolver(const std::vector<std::string>& order, size_t at, std::string where)
      : order_(order), at_(at), where_(std::move(where)) {}

  void resolve(Json& j) const {
    if (j.is_object()) {
      if (j.contains("by_release")) {
        const Json patches = j["by_release"];
        j.erase("by_release");
        if (!patches.is_object()) fail("by_release must be an object of release -> patch");
        for (size_t i = 0; i <= at_; ++i)
          if (patches.contains(order_[i])) j.merge_patch(patches[order_[i]]);
        for (const auto& [rel, patch] : patches.items()) index_of(rel);  // every key must be a release
      }
      for (auto it = j.begin(); it != j.end();) {
        if (!present(it.value())) {
          it = j.erase(it);
          continue;
        }
        strip(it.value());
        resolve(it.value());
        ++it;
      }
    } else if (j.is_array()) {
      Json kept = Json::array();
      for (auto& e : j)
        if (present(e)) {
          strip(e);
          resolve(e);
          kept.push_back(std::move(e));
        }
      j = std::move(kept);
    }
  }

 private:
  size_t index_of(const std::string& rel) const {
    for (size_t i = 0; i < order_.size(); ++i)
      if (order_[i] == rel) return i;
    fail("names Quark release '" + rel + "', which releases.json does not list");
    return 0;
  }
  bool present(const Json& e) const {
    if (!e.is_object()) return true;
    if (e.contains("since_release") && index_of(e["since_release"].get<std::string>()) > at_) return false;
    if (e.contains("until_release") && index_of(e["until_release"].get<std::string>()) < at_) return false;
    return true;
  }
  static void strip(Json& e) {
    if (!e.is_object()) return;
    e.erase("since_release");
    e.erase("until_release");
  }
  [[noreturn]] void fail(const std::string& what) const { throw InputError(where_, "catalog " + what); }

  const std::vector<std::string>& order_;
  size_t at_;
  std::string where_;
};

Json releases_of(const std::string& dir) {
  Json j = read_part(dir, "releases.json");
  std::string file = user_file(dir, "releases.json");
  if (!file.empty()) {
    auto errors = validate_against_schema(j, schema_of("releases.json"));
    if (!errors.empty()) throw InputError(file, "catalog does not match its schema: " + errors.front());
  }
  return j;
}

}  // namespace

std::vector<std::string> Catalog::release_versions(const std::string& dir) { return versions_in(releases_of(dir)); }

std::string Catalog::canonical_release(const std::string& name, const std::string& dir) {
  Json rel = releases_of(dir);
  for (const auto& r : rel["releases"]) {
    if (r["version"] == name) return name;
    for (const auto& e : r.value("equivalent", Json::array()))
      if (e == name) return r["version"].get<std::string>();
  }
  return "";
}

const Catalog& Catalog::load(const std::string& dir, const std::string& release) {
  static std::mutex mu;
  // One catalog per folder and release; the names a release is asked by ("", "0.12") point to it.
  static std::map<std::pair<std::string, std::string>, std::unique_ptr<Catalog>> cache;
  static std::map<std::pair<std::string, std::string>, const Catalog*> asked;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = asked.find({dir, release}); it != asked.end()) return *it->second;
  if (!dir.empty() && !fs::is_directory(dir)) throw InputError(dir, "catalog directory does not exist");
  std::vector<std::string> versions = release_versions(dir);
  std::string canonical = release.empty() ? versions.back() : canonical_release(release, dir);
  if (canonical.empty())
    throw InputError("--quark-version", "Quark " + release + " is not a release this catalog describes (it knows " + join(versions) + ")");
  auto& slot = cache[{dir, canonical}];
  if (!slot) {
    auto c = std::make_unique<Catalog>();
    c->dir_ = dir;
    c->release_ = canonical;
    // A user's catalog is checked whole, now: its errors name the file before
    // any work starts. The embedded one was checked when it was built.
    if (!dir.empty())
      for (Part* p : {&c->onnx_, &c->torch_, &c->hardware_, &c->architectures_, &c->runtimes_}) c->get(*p);
    slot = std::move(c);
  }
  asked[{dir, release}] = slot.get();
  return *slot;
}

static std::string plan_release_name(const Json& plan) {
  if (plan.is_object() && plan.contains("quark_release") && plan["quark_release"].is_string()) return plan["quark_release"];
  const Json* stamp = nullptr;
  if (plan.is_object() && plan.contains("catalog_quark_version")) stamp = &plan["catalog_quark_version"];
  else if (plan.is_object() && plan.contains("intake") && plan["intake"].is_object() && plan["intake"].contains("catalog_quark_version"))
    stamp = &plan["intake"]["catalog_quark_version"];
  if (stamp && stamp->is_string()) {
    std::string s = *stamp;
    return s.substr(0, s.find(' '));
  }
  return "";
}

const Catalog& Catalog::for_plan(const Json& plan, const std::string& dir) {
  std::string name = plan_release_name(plan);
  std::string canonical = name.empty() ? "" : canonical_release(name, dir);
  return load(dir, canonical);  // a release this catalog no longer knows: the newest
}

const Json& Catalog::get(Part& p) const {
  std::call_once(p.once, [&] {
    Json j = read_part(dir_, p.file);
    std::string file = user_file(dir_, p.file);
    if (&p != &releases_) {
      std::vector<std::string> order = release_versions(dir_);
      size_t at = std::find(order.begin(), order.end(), release_) - order.begin();
      ReleaseResolver(order, at, file.empty() ? "catalog/" + std::string(p.file) : file).resolve(j);
    }
    if (!file.empty()) {
      auto errors = validate_against_schema(j, schema_of(p.file));
      if (!errors.empty()) throw InputError(file, "catalog does not match its schema: " + errors.front());
    }
    p.value = std::move(j);
  });
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

const Json* Catalog::runtime(const std::string& name) const {
  std::string u = upper(name);
  for (const auto& r : runtimes()["runtimes"]) {
    if (upper(r["name"].get<std::string>()) == u) return &r;
    for (const auto& al : r.value("aliases", Json::array()))
      if (upper(al.get<std::string>()) == u) return &r;
  }
  return nullptr;
}

std::string Catalog::runtime_platform(const Json& acc) const {
  for (const auto& p : runtimes()["platforms"]) {
    bool match = true;
    if (p.contains("arch")) match = acc.contains("arch") && std::count(p["arch"].begin(), p["arch"].end(), acc["arch"]) > 0;
    if (match && p.contains("vendor")) match = acc.value("vendor", "") == p["vendor"];
    if (match && p.contains("env_accelerator")) match = acc.value("env_accelerator", "") == p["env_accelerator"];
    if (match) return p["name"];
  }
  return "";
}

std::vector<std::string> Catalog::file2file_flag() const {
  const Json& f = torch()["device_facts"]["file2file"];
  if (f.contains("flag") && f["flag"].is_array()) return f["flag"].get<std::vector<std::string>>();
  return {"--file2file_quantization"};
}

std::string Catalog::file2file_flag_text() const {
  std::string out;
  for (const auto& w : file2file_flag()) out += (out.empty() ? "" : " ") + w;
  return out;
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
