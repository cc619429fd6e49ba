#include "plan/integrity.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "catalog/artifacts.h"
#include "catalog/catalog.h"
#include "common/strings.h"
#include "common/error.h"
#include "common/files.h"
#include "common/sha256.h"
#include "plan/planner.h"

namespace fs = std::filesystem;

namespace quarkplan {

namespace {

constexpr size_t kMaxDifferencesShown = 10;

using Plain = nlohmann::json;  // std::map objects: comparisons ignore member order

Plain plain(const Json& j) { return Plain::parse(j.dump(-1, ' ', false, Json::error_handler_t::replace)); }

std::string canonical(const Json& j) {
  // nlohmann::json (std::map) sorts keys: the digest does not depend on the
  // order a tool or an editor wrote them in.
  return plain(j).dump(-1, ' ', false, Plain::error_handler_t::replace);
}

std::string shown(const Plain& v) {
  std::string s = v.dump(-1, ' ', false, Plain::error_handler_t::replace);
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

// Two values that differ, each cut to the same window around their first
// difference: two long values cut at 77 characters would read the same.
std::pair<std::string, std::string> shown_pair(const Plain& x, const Plain& y) {
  std::string a = x.dump(-1, ' ', false, Plain::error_handler_t::replace);
  std::string b = y.dump(-1, ' ', false, Plain::error_handler_t::replace);
  if (a.size() <= 80 && b.size() <= 80) return {a, b};
  size_t d = 0;
  while (d < a.size() && d < b.size() && a[d] == b[d]) ++d;
  const size_t start = d > 30 ? d - 30 : 0, width = 70;
  auto cut = [&](const std::string& t) {
    if (start >= t.size()) return std::string("...");
    return (start ? "..." : "") + t.substr(start, width) + (start + width < t.size() ? "..." : "");
  };
  return {cut(a), cut(b)};
}

// Leaves of two plans that differ, as "path" -> (plan value, rules value);
// arrays are compared whole. `risks` and `open_questions` are compared as sets.
void diff(const Plain& a, const Plain& b, const std::string& path, std::vector<std::string>& decisions, std::vector<std::string>& others) {
  auto report = [&](const std::string& p, const Plain* x, const Plain* y) {
    std::string line;
    if (x && y) {
      auto [in_plan, by_rules] = shown_pair(*x, *y);
      line = p + " is " + in_plan + " in the plan, but its rules give " + by_rules;
    } else {
      line = x ? p + " is " + shown(*x) + " in the plan, but its rules give nothing" : p + " is absent from the plan, but its rules give " + shown(*y);
    }
    bool minor = p.rfind("reasons.", 0) == 0 || p.rfind("estimates", 0) == 0 || p == "catalog_quark_version";
    (minor ? others : decisions).push_back(line);
  };
  if (a.is_object() && b.is_object()) {
    std::set<std::string> keys;
    for (auto& [k, v] : a.items()) keys.insert(k);
    for (auto& [k, v] : b.items()) keys.insert(k);
    for (const auto& k : keys) {
      if (path.empty() && (k == "integrity" || k == "risks" || k == "open_questions")) continue;
      std::string p = path.empty() ? k : path + "." + k;
      bool ia = a.contains(k), ib = b.contains(k);
      if (ia && ib) diff(a[k], b[k], p, decisions, others);
      else report(p, ia ? &a[k] : nullptr, ib ? &b[k] : nullptr);
    }
    return;
  }
  // Lists of objects of the same length are compared entry by entry, so a
  // change deep in one is named by its own path (lists of names stay whole).
  if (a.is_array() && b.is_array() && a.size() == b.size() && !a.empty() && a[0].is_structured() && a != b) {
    for (size_t i = 0; i < a.size(); ++i) diff(a[i], b[i], path + "[" + std::to_string(i) + "]", decisions, others);
    return;
  }
  if (a != b) report(path, &a, &b);
}

void diff_list(const Plain& plan_list, const Plain& rules_list, const char* what, bool risks, std::vector<std::string>& out) {
  auto key = [&](const Plain& x) {
    if (!risks) return x.is_string() ? x.get<std::string>() : shown(x);
    return "[" + x.value("rule", std::string()) + "] " + x.value("severity", std::string()) + ": " + x.value("message", std::string());
  };
  std::set<std::string> in_plan, in_rules;
  for (const auto& x : plan_list) in_plan.insert(key(x));
  for (const auto& x : rules_list) in_rules.insert(key(x));
  for (const auto& k : in_rules)
    if (!in_plan.count(k)) out.push_back(std::string("the plan lacks ") + what + " its rules raise: " + k);
  for (const auto& k : in_plan)
    if (!in_rules.count(k)) out.push_back(std::string("the plan has ") + what + " its rules do not raise: " + k);
}

fs::path folder_of(const std::string& file) {
  fs::path d = fs::path(file).parent_path();
  return d.empty() ? fs::path(".") : d;
}

std::string fingerprint_what(const Json& fp) {
  std::string method = fp.is_object() ? fp.value("method", "") : "";
  return method.find("config.json") != std::string::npos ? "its config.json differs" : "its first MiB or its size differs";
}

bool same_fingerprint(const Json& a, const Json& b) {
  return a.is_object() && b.is_object() && a.value("sha256", "") == b.value("sha256", "") && a.value("size", Json(nullptr)) == b.value("size", Json(nullptr));
}

}  // namespace

std::string plan_digest(const Json& plan) {
  Json copy = plan;
  if (copy.is_object()) copy.erase("integrity");
  return sha256_hex(canonical(copy));
}

void seal_plan(Json& plan, const std::string& analysis_text, const Json& fingerprint) {
  plan.erase("integrity");
  // The bytes' digest, and the content's (sorted keys, no layout): an analysis
  // re-indented or re-ordered by an editor or jq is the same analysis.
  std::string content;
  try {
    content = json_sha256(Json::parse(analysis_text));
  } catch (const Json::exception&) {
  }
  Json integrity = {{"analysis_sha256", sha256_hex(analysis_text)},
                    {"model_fingerprint", fingerprint},
                    {"plan_sha256", plan_digest(plan)},
                    {"method", "SHA-256 (OpenSSL); plan_sha256 covers the plan without this record, as JSON with sorted keys"}};
  if (!content.empty()) integrity["analysis_content_sha256"] = content;
  plan["integrity"] = integrity;
}

std::string IntegrityReport::summary() const {
  if (!problems.empty()) return "integrity check failed: " + std::to_string(problems.size()) + " problem(s)";
  if (rules_rechecked && notes.empty()) return "integrity verified: the analysis, the model and every decision match its rules";
  if (rules_rechecked) {
    std::string why;
    for (const auto& n : notes) why += (why.empty() ? "" : "; ") + n;
    return "integrity partly verified: the analysis and every decision match its rules, but " + why;
  }
  std::string why;
  for (const auto& n : notes) why += (why.empty() ? "" : "; ") + n;
  return (sealed ? "integrity partly verified: " : "integrity not verified: ") + why;
}

// Re-runs the rules on the plan's own request and records every decision
// that no longer follows (as problems) or why they could not be re-run.
void recheck_rules(const Json& plan, const Json& analysis, const std::string& ref, const std::string& catalog_dir, bool edited,
                   IntegrityReport& r) {
  if (!plan.contains("request") || !plan["request"].is_object()) {
    r.problems.push_back("it has an integrity record but no request record, so its decisions cannot be re-checked");
    return;
  }
  try {
    PlanRequest req = request_from_json(plan["request"]);
    req.analysis_ref = ref;
    // A plan from before releases were recorded is replayed with the facts it was made with.
    if (req.quark_release.empty()) req.quark_release = Catalog::for_plan(plan, catalog_dir.empty() ? req.catalog_dir : catalog_dir).release();
    if (!catalog_dir.empty()) req.catalog_dir = catalog_dir;
    PlanOutcome out = make_plan(analysis, req);
    if (out.status == PlanStatus::kRefused) {
      r.problems.push_back("its rules now refuse the model: " + out.refusal);
    } else if (out.status == PlanStatus::kInvalid) {
      r.problems.push_back("its rules now reject its choices: " + (out.errors.empty() ? std::string("?") : out.errors.front()));
    } else {
      std::vector<std::string> decisions, others;
      Plain mine = plain(plan), theirs = plain(out.plan);
      diff(mine, theirs, "", decisions, others);
      diff_list(mine.value("risks", Plain::array()), theirs["risks"], "a risk", true, decisions);
      diff_list(mine.value("open_questions", Plain::array()), theirs["open_questions"], "an open question", false, decisions);
      decisions.insert(decisions.end(), others.begin(), others.end());
      for (size_t i = 0; i < decisions.size() && i < kMaxDifferencesShown; ++i) r.problems.push_back(decisions[i]);
      if (decisions.size() > kMaxDifferencesShown)
        r.problems.push_back("and " + std::to_string(decisions.size() - kMaxDifferencesShown) + " more differences from what its rules give");
      if (decisions.empty() && !edited) r.rules_rechecked = true;
      if (decisions.empty() && edited) r.notes.push_back("no decision differs from what its rules give");
    }
  } catch (const InputError& e) {
    r.notes.push_back(std::string("its rules could not be re-run: ") + e.what());
  } catch (const UsageError& e) {
    r.notes.push_back(std::string("its rules could not be re-run: ") + e.what());
  }
}

// What the catalog alone says of a plan whose rules cannot be re-run (no
// request record, or its analysis is gone): a Torch plan's schemes must run
// on its accelerator as the plan claims, or carry the HIGH risk an insisted
// choice records. A hand edit that also drops the records is caught here.
void check_catalog_facts(const Json& plan, const std::string& catalog_dir, IntegrityReport& r) {
  if (plan.value("backend", "") != "torch" || !plan.contains("hardware") || !plan["hardware"].is_string()) return;
  try {
    const Catalog& cat = Catalog::for_plan(plan, catalog_dir);
    const std::string hw = plan["hardware"].get<std::string>();
    const Json* acc = cat.accelerator(hw);
    if (!acc || !acc->contains("support")) return;
    bool insisted = false;
    for (const auto& risk : plan.value("risks", Json::array()))
      insisted = insisted || (risk.is_object() && risk.value("rule", "") == "torch.scheme.hardware_gate" && risk.value("severity", "") == "high");
    static const std::vector<std::string> order = {"native", "weight_only", "emulated", "unsupported"};
    auto level_of = [&](const std::string& name) -> std::string {
      const Json* sc = cat.torch_scheme(name);
      if (!sc) return "";
      const std::string fam = (*sc)["family"];
      return (*acc)["support"].contains(fam) ? (*acc)["support"][fam].get<std::string>() : "emulated";
    };
    std::vector<std::pair<std::string, std::string>> schemes;
    if (plan.contains("global_scheme") && plan["global_scheme"].is_string()) schemes.emplace_back("global_scheme", plan["global_scheme"]);
    if (plan.contains("layer_quant_config") && plan["layer_quant_config"].is_object())
      for (auto& [pat, v] : plan["layer_quant_config"].items())
        if (v.is_string()) schemes.emplace_back("layer_quant_config['" + pat + "']", v.get<std::string>());
    std::string worst = "native";
    for (const auto& [where, name] : schemes) {
      std::string level = level_of(name);
      if (level.empty()) {
        r.problems.push_back(where + " is '" + name + "', which is not a scheme Quark registers (quarkplan catalog torch)");
        continue;
      }
      if (std::find(order.begin(), order.end(), level) > std::find(order.begin(), order.end(), worst)) worst = level;
      if ((level == "emulated" || level == "unsupported") && !insisted)
        r.problems.push_back(where + " is " + name + ", which is " + level + " on " + hw +
                             ", but the plan records no insisted HIGH risk [torch.scheme.hardware_gate]: its rules would refuse it");
    }
    if (plan.contains("hardware_support") && plan["hardware_support"].is_string() && !schemes.empty() && plan["hardware_support"] != worst)
      r.problems.push_back("hardware_support is '" + plan["hardware_support"].get<std::string>() + "' in the plan, but its schemes are " + worst +
                           " on " + hw + " (catalog/hardware.json)");
  } catch (const InputError& e) {
    r.notes.push_back(std::string("the catalog could not be read: ") + e.what());
  }
}

IntegrityReport verify_plan(const std::string& plan_path, const Json& plan, const std::string& catalog_dir) {
  IntegrityReport r;
  const Json& model = plan["model"];
  std::string ref = model.value("analysis_ref", "");
  fs::path full = fs::path(ref).is_absolute() ? fs::path(ref) : folder_of(plan_path) / ref;
  r.analysis_path = full.lexically_normal().string();
  std::string plan_model = model.contains("model_path") && model["model_path"].is_string() ? model["model_path"].get<std::string>() : "";

  // The Quark release it is for: one this catalog describes, and the one its request asked for.
  if (plan.contains("quark_release")) {
    std::string rel = plan["quark_release"].is_string() ? plan["quark_release"].get<std::string>() : "";
    std::string dir = catalog_dir.empty() && plan.contains("request") && plan["request"].is_object() ? plan["request"].value("catalog_dir", "") : catalog_dir;
    if (Catalog::canonical_release(rel, dir).empty())
      r.problems.push_back("its quark_release " + plan["quark_release"].dump() + " is not a Quark release this catalog describes (" +
                           join(Catalog::release_versions(dir)) + "): its command and facts would be another release's");
    else if (plan.contains("request") && plan["request"].is_object() && plan["request"].value("quark_release", "") != "" &&
             Catalog::canonical_release(plan["request"].value("quark_release", ""), dir) != Catalog::canonical_release(rel, dir))
      r.problems.push_back("its quark_release " + rel + " is not the release its request asked for (" + plan["request"].value("quark_release", "") + ")");
  }

  // The analysis, read as bytes (its digest) and as JSON.
  std::string text;
  Json analysis;
  bool have_analysis = false;
  std::error_code ec;
  if (!ref.empty() && fs::exists(full, ec)) {
    try {
      analysis = read_validated(full.string(), "model_analysis", text);
      have_analysis = true;
    } catch (const InputError& e) {
      r.problems.push_back(std::string("its analysis is not usable: ") + e.what());
    }
  } else {
    r.notes.push_back("its analysis " + (ref.empty() ? std::string("(no analysis_ref)") : r.analysis_path) + " is not here, so its decisions were not re-checked");
  }

  if (!plan.contains("integrity") || !plan["integrity"].is_object()) {
    if (have_analysis) r.analysis = analysis;
    // A plan quarkplan wrote keeps its request: removing the integrity record
    // must not hide a hand edit, so its rules are re-run all the same (and a
    // plan whose decisions do not follow is never shown as confirmed).
    if (have_analysis && plan.contains("request") && plan["request"].is_object()) {
      r.notes.push_back("it has no integrity record (removed, or written by an older quarkplan), so only its decisions were re-checked");
      recheck_rules(plan, analysis, ref, catalog_dir, /*edited=*/false, r);
      r.rules_rechecked = false;  // the analysis and the model were not compared
    } else {
      r.notes.insert(r.notes.begin(), "it has no integrity record (written by another tool or an older quarkplan)");
      check_catalog_facts(plan, catalog_dir, r);
    }
    return r;
  }
  r.sealed = true;
  const Json& integ = plan["integrity"];
  bool edited = plan_digest(plan) != integ.value("plan_sha256", "");
  if (edited)
    r.problems.push_back("the plan was edited outside quarkplan: its content no longer matches the SHA-256 quarkplan recorded when it wrote it");

  bool analysis_ok = false;
  if (have_analysis) {
    const std::string content = integ.value("analysis_content_sha256", "");
    if (sha256_hex(text) == integ.value("analysis_sha256", "") || (!content.empty() && json_sha256(analysis) == content)) {
      analysis_ok = true;
      r.analysis = analysis;
    } else {
      std::string other = analysis["model"].value("model_path", "");
      std::string redo = " Re-run `quarkplan plan " + (plan_model.empty() ? std::string("MODEL") : plan_model) + " -o " + plan_path + "`.";
      if (!plan_model.empty() && other != plan_model)
        r.problems.push_back("its analysis " + r.analysis_path + " is now the analysis of " + other + ", not of " + plan_model +
                             " that the plan was made for (another intake or plan replaced it)." + redo);
      else if (!same_fingerprint(analysis["model"].value("source_fingerprint", Json(nullptr)), integ.value("model_fingerprint", Json(nullptr))))
        r.problems.push_back("its analysis " + r.analysis_path + " was re-made from a changed model since the plan was written." + redo);
      else
        r.problems.push_back("its analysis " + r.analysis_path + " changed since the plan was written (its content, not only its layout: " +
                             (analysis.contains("analysis_sha256") && analysis["analysis_sha256"] != json_sha256(analysis, "analysis_sha256")
                                  ? "it was edited outside quarkplan"
                                  : "another quarkplan run re-made it") +
                             ")." + redo);
    }
  }

  // The model itself, when it is here.
  const Json& recorded = integ.value("model_fingerprint", Json(nullptr));
  if (!plan_model.empty() && recorded.is_object()) {
    if (fs::exists(plan_model, ec)) {
      try {
        Json now = model_fingerprint(plan_model);
        if (!same_fingerprint(now, recorded))
          r.problems.push_back("the model " + plan_model + " changed since the plan was made (" + fingerprint_what(recorded) +
                               "). Re-run `quarkplan plan " + plan_model + " -o " + plan_path + "`.");
      } catch (const InputError& e) {
        r.notes.push_back(std::string("the model could not be read: ") + e.what());
      }
    } else {
      r.notes.push_back("the model " + plan_model + " is not here, so it was not compared");
    }
  }

  // The rules, re-run on the plan's own request; without the analysis, what
  // the catalog alone can check.
  if (analysis_ok) recheck_rules(plan, analysis, ref, catalog_dir, edited, r);
  else check_catalog_facts(plan, catalog_dir, r);
  // The ONNX calibration set the plan was confirmed on (recorded, not re-read):
  // say when it is no longer where the plan points.
  if (plan.contains("calibration") && plan["calibration"].is_object() && plan["calibration"].contains("data_path") && plan["calibration"]["data_path"].is_string()) {
    std::string cal = plan["calibration"]["data_path"].get<std::string>();
    std::error_code ec;
    if (!cal.empty() && cal != "none" && !std::filesystem::exists(cal, ec))
      r.notes.push_back("its calibration set " + cal + " is no longer there: Quark's call would fail until it is back");
  }
  return r;
}

std::vector<std::string> verify_analysis(const std::string& analysis_path, const Json& analysis) {
  std::vector<std::string> out;
  if (!analysis.is_object() || !analysis.contains("model")) return out;
  if (analysis.contains("analysis_sha256") && analysis["analysis_sha256"] != json_sha256(analysis, "analysis_sha256"))
    out.push_back(analysis_path + ": the analysis was edited outside quarkplan (its content no longer matches the digest intake recorded). Re-run `quarkplan intake " +
                  analysis["model"].value("model_path", std::string("MODEL")) + "`.");
  const Json& m = analysis["model"];
  const Json& recorded = m.value("source_fingerprint", Json(nullptr));
  std::string path = m.value("model_path", "");
  std::error_code ec;
  if (!recorded.is_object() || path.empty() || !fs::exists(path, ec)) return out;
  try {
    Json now = model_fingerprint(path);
    if (!same_fingerprint(now, recorded))
      out.push_back(analysis_path + ": the model " + path + " changed since this analysis was made (" + fingerprint_what(recorded) +
                    "). Re-run `quarkplan intake " + path + "`.");
  } catch (const InputError&) {
  }
  return out;
}

}  // namespace quarkplan
