#include "plan/session.h"

#include <algorithm>
#include <filesystem>

#include "catalog/artifacts.h"
#include "catalog/catalog.h"
#include "common/error.h"
#include "common/files.h"

namespace fs = std::filesystem;

namespace quarkplan {

Json updated_session(const Json& session, const Json& plan, const std::string& analysis_ref, const std::string& plan_ref) {
  Json s = session;
  Json& q = s["open_questions"];
  if (!q.is_array()) q = Json::array();
  auto add = [&](const std::string& text) {
    if (std::find(q.begin(), q.end(), text) == q.end()) q.push_back(text);
  };
  for (const auto& x : plan.value("open_questions", Json::array())) add(x.get<std::string>());
  // New environment constraints (opset upgrade, NHWC conversion, transformers
  // version, ...) reach the router through the session's open questions.
  for (const auto& r : plan.value("risks", Json::array()))
    if (r["severity"] == "high") add("Constraint [" + r.value("rule", "") + "]: " + r["message"].get<std::string>() + " " + r.value("recovery_hint", ""));
  s["model_analysis_ref"] = analysis_ref;
  s["quant_plan_ref"] = plan_ref;
  Json& c = s["constraints"];
  if (plan.value("backend", "") == "onnx") {
    c["backend"] = "onnx";
    if (plan["deployment_target"].is_string() && (!c.contains("deployment_target") || c["deployment_target"].is_null()))
      c["deployment_target"] = plan["deployment_target"];
  }
  return s;
}

namespace {
std::string ref_from(const std::string& session_path, const std::string& target) {
  fs::path dir = fs::path(session_path).parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  fs::path rel = fs::relative(fs::absolute(target), fs::absolute(dir), ec);
  std::string r = ec || rel.empty() ? fs::absolute(target).string() : rel.string();
  if (r.rfind("..", 0) != 0 && r.rfind("/", 0) != 0) r = "./" + r;
  return r;
}
}  // namespace

void update_session_after_intake(const std::string& path, const Json& analysis, const std::string& analysis_path) {
  Json s = read_validated(path, "session_context");
  Json& q = s["open_questions"];
  for (const auto& r : analysis.value("risks", Json::array()))
    if (r["severity"] == "high") {
      std::string text = "Constraint [" + r.value("rule", "") + "]: " + r["message"].get<std::string>() + " " + r.value("recovery_hint", "");
      if (std::find(q.begin(), q.end(), text) == q.end()) q.push_back(text);
    }
  s["model_analysis_ref"] = ref_from(path, analysis_path);
  write_file_atomic(path, dump_json(s));
}

void update_session(const std::string& path, const Json& plan, const std::string&, const std::string& plan_ref,
                    const std::string& analysis_path) {
  Json session = read_validated(path, "session_context");
  std::string aref = ref_from(path, analysis_path);
  Json updated = updated_session(session, plan, aref, plan_ref);
  write_file_atomic(path, dump_json(updated));
}

}  // namespace quarkplan
