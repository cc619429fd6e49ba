// `quarkplan catalog [onnx|torch] [--json]`: the Quark facts quarkplan plans
// with, and what works with what.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include <fmt/format.h>

#include "catalog/catalog.h"
#include "cli/commands.h"
#include "cli/guarded.h"
#include "common/error.h"
#include "common/strings.h"
#include "ui/terminal.h"

namespace quarkplan {

namespace {

std::string list(const Json& a) {
  std::vector<std::string> v;
  for (const auto& x : a) v.push_back(x.is_string() ? x.get<std::string>() : x.dump());
  return join(v);
}

void print_onnx(const Catalog& c, const ui::Style& st) {
  const Json& o = c.onnx();
  std::printf("%s  (Quark %s)\n", st.bold("ONNX presets").c_str(), o["quark_version"].get<std::string>().c_str());
  std::printf("  %-28s %-16s %-10s %-10s %-22s %s\n", "preset", "family", "act", "weight", "calibration", "targets / notes");
  for (const auto& p : o["presets"]) {
    std::vector<std::string> targets;
    for (const auto& t : o["deployment_targets"])
      if (c.preset_allowed_on(p, t["name"])) targets.push_back(t["name"]);
    std::string notes = join(targets);
    if (p["needs_custom_ops"].get<bool>()) notes += "; needs custom ops";
    if (p["fast_finetune"].is_string()) notes += "; " + p["fast_finetune"].get<std::string>();
    std::printf("  %-28s %-16s %-10s %-10s %-22s %s\n", p["name"].get<std::string>().c_str(), p["family"].get<std::string>().c_str(),
                p["activation_type"].is_string() ? p["activation_type"].get<std::string>().c_str() : "-",
                p["weight_type"].get<std::string>().c_str(), p["calibration"].get<std::string>().c_str(), notes.c_str());
  }
  std::printf("\n%s\n", st.bold("Deployment targets (hard gates)").c_str());
  for (const auto& t : o["deployment_targets"])
    std::printf("  %-16s families: %s; calibration: %s\n      %s\n", t["name"].get<std::string>().c_str(), list(t["allowed_families"]).c_str(),
                t["required_calibration"].is_null() ? "any" : list(t["required_calibration"]).c_str(), t["why"].get<std::string>().c_str());
  std::printf("\n%s\n", st.bold("Calibration methods").c_str());
  for (const auto& m : o["calibration_methods"])
    std::printf("  %-24s %s%s\n", m["name"].get<std::string>().c_str(), m["when"].get<std::string>().c_str(), m["power_of_two"].get<bool>() ? " (power of two)" : "");
  std::printf("\n%s\n", st.bold("Algorithms").c_str());
  for (const auto& a : o["algorithms"])
    std::printf("  %-18s %-14s with: %s\n      %s\n", a["name"].get<std::string>().c_str(), a["kind"].get<std::string>().c_str(),
                list(a["compatible_families"]).c_str(), a["description"].get<std::string>().c_str());
}

// The runtimes that serve Torch plans (plan --serve), what each loader takes per layer kind, and
// the default per platform (catalog/runtimes.json).
void print_runtimes(const Catalog& c, const ui::Style& st) {
  const Json& r = c.runtimes();
  std::printf("\n%s\n", st.bold("Serving runtimes (plan --serve; loads = the loader takes it, recent = only its newest code)").c_str());
  for (const auto& rt : r["runtimes"]) {
    std::printf("  %-13s %s; exports: %s; platforms: %s\n", rt["name"].get<std::string>().c_str(), rt["label"].get<std::string>().c_str(),
                list(rt.value("exports", Json::array())).c_str(), list(rt.value("platforms", Json::array())).c_str());
    const Json loads = rt.value("loads", Json::object());  // a named copy: items() of a temporary dangles
    for (auto& [kind, entries] : loads.items()) {
      std::map<std::string, std::vector<std::string>> by_level;
      for (const auto& e : entries) {
        std::string where = e.contains("platforms") ? " on " + list(e["platforms"]) : "";
        by_level[e.value("level", "loads")].push_back(list(e["schemes"]) + where);
      }
      for (const char* level : {"loads", "recent", "emulated", "refused"})
        if (by_level.count(level)) std::printf("      %-9s %-8s %s\n", kind.c_str(), level, join(by_level[level], "; ").c_str());
    }
  }
  std::vector<std::string> defaults;
  for (const auto& d : r.value("defaults", Json::array())) {
    std::string when = d.contains("export") ? d["export"].get<std::string>() + " export" : d.contains("platforms") ? list(d["platforms"]) : "otherwise";
    defaults.push_back(when + " -> " + (d["runtime"].is_string() ? d["runtime"].get<std::string>() : std::string("none")));
  }
  std::printf("  default: %s\n", join(defaults).c_str());
}

void print_torch(const Catalog& c, const ui::Style& st) {
  const Json& t = c.torch();
  std::printf("%s  (Quark %s)\n", st.bold("Torch schemes (--quant_scheme)").c_str(), t["quark_version"].get<std::string>().c_str());
  std::printf("  %-22s %-10s %-11s %-12s %-7s %s\n", "scheme", "weights", "granularity", "activations", "bits/w", "use");
  for (const auto& s : t["schemes"])
    std::printf("  %-22s %-10s %-11s %-12s %-7.3f %s\n", s["name"].get<std::string>().c_str(), s["weight_dtype"].get<std::string>().c_str(),
                (s["weight_granularity"].get<std::string>() + (s["group_size"].is_number() ? " " + s["group_size"].dump() : "")).c_str(),
                s["activation_dtype"].is_string() ? (s["activation_dtype"].get<std::string>() + (s["activation_static"].is_boolean() ? (s["activation_static"].get<bool>() ? " st" : " dyn") : "")).c_str() : "-",
                s["bits_per_weight"].get<double>(), s["use_case"].get<std::string>().c_str());
  for (auto& [alias, target] : t["scheme_aliases"].items())
    std::printf("  %-22s alias of %s\n", alias.c_str(), target.get<std::string>().c_str());
  std::printf("\n%s\n", st.bold("Algorithms (--quant_algo)").c_str());
  for (const auto& a : t["algorithms"])
    std::printf("  %-16s with: %s\n      %s\n", a["name"].get<std::string>().c_str(), list(a["compatible_families"]).c_str(), a["description"].get<std::string>().c_str());
  std::printf("\n%s: %s\n", st.bold("KV cache").c_str(), list(t["kv_cache"]["schemes"]).c_str());
  std::printf("%s\n", st.bold("Model templates (exclude defaults; built-in algorithms)").c_str());
  for (const auto& m : t["templates"])
    std::printf("  %-16s %s; %s\n", m["model_type"].get<std::string>().c_str(), list(m["exclude_defaults"]).c_str(),
                m["builtin_algorithms"].empty() ? "no algorithms" : list(m["builtin_algorithms"]).c_str());
  std::printf("\n%s\n", st.bold("Hardware support (native / weight_only / emulated)").c_str());
  for (const auto& a : c.hardware()["accelerators"]) {
    std::vector<std::string> native;
    for (auto& [fam, lvl] : a["support"].items())
      if (lvl == "native") native.push_back(fam);
    std::printf("  %-14s %-8s %s GiB, native: %s\n", a["name"].get<std::string>().c_str(), a["arch"].get<std::string>().c_str(),
                a["memory_gib"].is_number() ? a["memory_gib"].dump().c_str() : "-", join(native).c_str());
  }
  print_runtimes(c, st);
}

// What one part of the catalog changed from release `before` to `after`: the
// entries of its named lists added, removed or changed, and its other
// top-level facts that changed. Computed from the resolved catalogs, so it is
// whatever the per-release marks say, never a hand-kept list.
std::vector<std::string> release_differences(const Json& before, const Json& after) {
  static const std::vector<std::pair<const char*, const char*>> lists = {
      {"schemes", "name"}, {"algorithms", "name"}, {"templates", "model_type"}, {"presets", "name"}, {"extra_options", "name"}};
  static const std::set<std::string> stamps = {"quark_version", "sources", "differences_from_newer_quark"};
  std::vector<std::string> out;
  for (auto& [key, value] : after.items()) {
    if (stamps.count(key)) continue;
    const Json* old = before.contains(key) ? &before[key] : nullptr;
    const char* id = nullptr;
    for (const auto& [k, i] : lists)
      if (key == k) id = i;
    if (id && value.is_array() && old && old->is_array()) {
      std::map<std::string, const Json*> a, b;
      for (const auto& e : *old)
        if (e.is_object() && e.contains(id)) a[e[id].get<std::string>()] = &e;
      for (const auto& e : value)
        if (e.is_object() && e.contains(id)) b[e[id].get<std::string>()] = &e;
      std::vector<std::string> added, removed, changed;
      for (const auto& [n, e] : b)
        if (!a.count(n)) added.push_back(n);
        else if (*a[n] != *e) {
          std::vector<std::string> fields;
          for (auto& [f, v] : e->items())
            if (!a[n]->contains(f) || (*a[n])[f] != v) fields.push_back(f);
          changed.push_back(n + " (" + join(fields) + ")");
        }
      for (const auto& [n, e] : a)
        if (!b.count(n)) removed.push_back(n);
      if (!added.empty()) out.push_back(key + " added: " + join(added));
      if (!removed.empty()) out.push_back(key + " removed: " + join(removed));
      if (!changed.empty()) out.push_back(key + " changed: " + join(changed));
    } else if (!old) {
      out.push_back(key + " added");
    } else if (*old != value) {
      out.push_back(key + " changed");
    }
  }
  for (auto& [key, value] : before.items())
    if (!stamps.count(key) && !after.contains(key)) out.push_back(key + " removed");
  return out;
}

void print_releases(const Catalog& c, const std::string& dir, const std::string& flow, const ui::Style& st) {
  std::vector<std::string> versions = Catalog::release_versions(dir);
  std::printf("%s\n", st.bold("Quark releases (choose with plan --quark-version; the default is the newest)").c_str());
  for (const auto& r : c.releases()["releases"]) {
    std::string v = r["version"];
    std::printf("  %-11s %-11s %s\n", v.c_str(), r.value("released", "").c_str(), v == c.release() ? "(shown below)" : "");
  }
  auto at = std::find(versions.begin(), versions.end(), c.release());
  if (at == versions.begin()) return;
  const Catalog& prev = Catalog::load(dir, *(at - 1));
  std::printf("  What Quark %s changed from %s:\n", c.release().c_str(), (at - 1)->c_str());
  for (const char* part : {"torch", "onnx"}) {
    if (!flow.empty() && flow != part) continue;
    const Json& before = std::string(part) == "torch" ? prev.torch() : prev.onnx();
    const Json& after = std::string(part) == "torch" ? c.torch() : c.onnx();
    for (const auto& line : release_differences(before, after)) std::printf("    %s: %s\n", part, line.c_str());
  }
  std::printf("\n");
}

}  // namespace

int run_catalog_command(const CatalogArgs& a) {
  return guarded(a.json, [&] {
    if (!a.flow.empty() && a.flow != "onnx" && a.flow != "torch") throw UsageError("catalog takes onnx or torch (got '" + a.flow + "')");
    const Catalog& c = Catalog::load(a.catalog_dir, a.quark_version);
    if (a.json) {
      Json j;
      j["quark_release"] = c.release();
      j["releases"] = c.releases()["releases"];
      if (a.flow.empty() || a.flow == "onnx") j["onnx"] = c.onnx();
      if (a.flow.empty() || a.flow == "torch") {
        j["torch"] = c.torch();
        j["hardware"] = c.hardware();
        j["runtimes"] = c.runtimes();
      }
      std::fputs(dump_json(j).c_str(), stdout);
      return kExitOk;
    }
    ui::Style st{ui::use_color(stdout)};
    print_releases(c, a.catalog_dir, a.flow, st);
    if (a.flow.empty() || a.flow == "onnx") print_onnx(c, st);
    if (a.flow.empty()) std::printf("\n");
    if (a.flow.empty() || a.flow == "torch") print_torch(c, st);
    return kExitOk;
  });
}

}  // namespace quarkplan
