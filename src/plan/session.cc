#include "plan/session.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "catalog/artifacts.h"
#include "catalog/catalog.h"
#include "common/error.h"
#include "common/files.h"
#include "common/resources.h"

namespace fs = std::filesystem;

namespace quarkplan {

namespace {

constexpr size_t kMaxClosedKept = 200;  // the audit trail stays bounded

bool has(const Json& arr, const std::string& v) { return std::find(arr.begin(), arr.end(), v) != arr.end(); }

std::string constraint_line(const Json& risk) {
  return "Constraint [" + risk.value("rule", "") + "]: " + risk["message"].get<std::string>() + " " + risk.value("recovery_hint", "");
}

// Records what artifact `ref` now asks (`entry.open_questions`), closes the
// questions it (or the artifact `removed_ref`) asked before and no tracked
// artifact asks any more, and appends the new ones.
void record_artifact(Json& s, const std::string& ref, Json entry, const std::string& removed_ref) {
  // ordered_json keeps members in a vector: create every member first, then
  // take references (an insertion would move the ones taken before).
  if (!s["open_questions"].is_array()) s["open_questions"] = Json::array();
  if (!s["quarkplan"].is_object()) s["quarkplan"] = Json::object();
  Json& qp = s["quarkplan"];
  if (!qp["artifacts"].is_object()) qp["artifacts"] = Json::object();
  if (!qp["closed_questions"].is_array()) qp["closed_questions"] = Json::array();
  Json& q = s["open_questions"];
  Json& arts = qp["artifacts"];
  Json& closed = qp["closed_questions"];

  std::vector<std::string> before;
  for (const std::string& r : {ref, removed_ref})
    if (!r.empty() && arts.contains(r) && arts[r].is_object())
      for (const auto& x : arts[r].value("open_questions", Json::array()))
        if (x.is_string()) before.push_back(x);
  if (!removed_ref.empty() && removed_ref != ref) arts.erase(removed_ref);
  arts[ref] = std::move(entry);

  std::set<std::string> still;
  for (auto& [k, a] : arts.items())
    if (a.is_object())
      for (const auto& x : a.value("open_questions", Json::array()))
        if (x.is_string()) still.insert(x);
  for (const auto& old : before) {
    if (still.count(old)) continue;
    auto it = std::find(q.begin(), q.end(), old);
    if (it == q.end()) continue;
    q.erase(it);
    if (!has(closed, old)) closed.push_back(old);
  }
  while (closed.size() > kMaxClosedKept) closed.erase(closed.begin());
  for (const auto& x : arts[ref]["open_questions"])
    if (!has(q, x.get<std::string>())) q.push_back(x);
}

// The deployment target a Torch plan's accelerator implies (catalog vendor).
Json target_of_hardware(const std::string& hw, const Json& hardware) {
  for (const auto& a : hardware.value("accelerators", Json::array()))
    if (a.value("name", "") == hw) {
      std::string v = a.value("vendor", "");
      if (v == "amd") return "rocm";
      if (v == "nvidia") return "cuda";
      if (v == "cpu") return "cpu";
    }
  return nullptr;
}

}  // namespace

std::string relative_ref(const std::string& target, const std::string& from_dir) {
  std::error_code ec;
  fs::path dir = from_dir.empty() ? fs::path(".") : fs::path(from_dir);
  fs::path rel = fs::relative(fs::absolute(target), fs::absolute(dir), ec);
  if (ec || rel.empty()) return fs::absolute(target).lexically_normal().string();
  std::string r = rel.string();
  return r.rfind("..", 0) == 0 ? r : "./" + r;
}

Json new_session(const std::string& workflow, const std::string& goal) {
  std::string w = workflow.empty() ? "quark-torch-ptq" : workflow;
  Json s;
  s["user_goal"] = goal;
  s["workflow"] = w;
  s["constraints"] = {{"offline", true}, {"execution_mode", "plan_only"}};
  if (w.find("onnx") != std::string::npos) s["constraints"]["backend"] = "onnx";
  s["env_context_ref"] = nullptr;
  s["open_questions"] = Json::array();
  s["model_analysis_ref"] = nullptr;
  s["quant_plan_ref"] = nullptr;
  // The workflows allowed are the schema's own list (one source of truth).
  Json schema = Json::parse(embedded_resource("schemas/session_context.schema.json"));
  std::vector<std::string> allowed = string_list(schema["properties"]["workflow"]["enum"]);
  if (std::find(allowed.begin(), allowed.end(), w) == allowed.end()) {
    std::string all;
    for (const auto& n : allowed) all += (all.empty() ? "" : ", ") + n;
    throw UsageError("--workflow must be one of " + all + " (got '" + w + "')");
  }
  return s;
}

Json merged_session(const Json& session, const PlanUpdate& u, const Json& hardware) {
  Json s = session;
  const Json& plan = u.plan;
  bool confirmed = plan.value("requires_confirmation", true) == false;
  Json asks = Json::array();
  for (const auto& x : plan.value("open_questions", Json::array()))
    if (x.is_string() && !has(asks, x)) asks.push_back(x);
  // New environment constraints (opset upgrade, NHWC conversion, transformers
  // version, ...) reach the router through the session's open questions.
  for (const auto& r : plan.value("risks", Json::array()))
    if (r.value("severity", "") == "high" && r["message"].is_string()) {
      std::string line = constraint_line(r);
      if (!has(asks, line)) asks.push_back(line);
    }
  Json entry = {{"kind", "quant_plan"},
                {"status", confirmed ? "confirmed" : "draft"},
                {"model_path", plan["model"].value("model_path", "")},
                {"analysis_ref", u.analysis_ref},
                {"open_questions", asks}};
  record_artifact(s, u.plan_ref, entry, u.removed_ref);
  s["model_analysis_ref"] = u.analysis_ref;
  s["quant_plan_ref"] = u.plan_ref;

  if (!s["constraints"].is_object()) s["constraints"] = Json::object();
  if (confirmed) s["quarkplan"]["confirmed_plan_ref"] = u.plan_ref;
  Json& c = s["constraints"];
  bool onnx = plan.value("backend", "") == "onnx";
  Json target = onnx ? plan.value("deployment_target", Json(nullptr))
                     : (plan.contains("hardware") && plan["hardware"].is_string() ? target_of_hardware(plan["hardware"], hardware) : Json(nullptr));
  if (confirmed) {
    // The latest confirmed plan is what the session is now about.
    c["backend"] = onnx ? "onnx" : "torch";
    if (target.is_string()) c["deployment_target"] = target;
    // The hardware constraint belongs to a Torch plan: an ONNX plan deploys to
    // a target, so the previous LLM's accelerator no longer applies.
    if (!onnx && plan.contains("hardware") && plan["hardware"].is_string()) c["hardware"] = plan["hardware"];
    else c.erase("hardware");
  } else {
    // A draft only fills what is still unknown.
    if (!c.contains("backend")) c["backend"] = onnx ? "onnx" : "torch";
    if (target.is_string() && (!c.contains("deployment_target") || c["deployment_target"].is_null())) c["deployment_target"] = target;
  }
  return s;
}

Json merged_session_after_intake(const Json& session, const Json& analysis, const std::string& analysis_ref) {
  Json s = session;
  Json asks = Json::array();
  for (const auto& r : analysis.value("risks", Json::array()))
    if (r.value("severity", "") == "high" && r["message"].is_string()) {
      std::string line = constraint_line(r);
      if (!has(asks, line)) asks.push_back(line);
    }
  Json entry = {{"kind", "model_analysis"}, {"model_path", analysis["model"].value("model_path", "")}, {"open_questions", asks}};
  record_artifact(s, analysis_ref, entry, "");
  s["model_analysis_ref"] = analysis_ref;
  return s;
}

namespace {

// The locked read-merge-replace cycle every session update goes through.
template <typename Merge>
void locked_update(const std::string& path, Merge&& merge) {
  FileLock lock(path + ".lock");
  Json s = read_validated(path, "session_context");
  Json m = merge(s);
  auto errors = validate_against_schema(m, "schemas/session_context.schema.json");
  if (!errors.empty()) throw std::runtime_error("the updated session does not match its schema: " + errors.front());
  write_file_atomic(path, dump_json(m));
}

std::string session_dir(const std::string& path) {
  fs::path d = fs::path(path).parent_path();
  return d.empty() ? "." : d.string();
}

}  // namespace

void update_session(const std::string& path, const PlanUpdate& u, const Json& hardware) {
  locked_update(path, [&](const Json& s) { return merged_session(s, u, hardware); });
}

void update_session_after_intake(const std::string& path, const Json& analysis, const std::string& analysis_path) {
  std::string ref = relative_ref(analysis_path, session_dir(path));
  locked_update(path, [&](const Json& s) { return merged_session_after_intake(s, analysis, ref); });
}

}  // namespace quarkplan
