#include "intake/intake.h"

#include "common/sha256.h"

#include <cstdlib>

#include "catalog/artifacts.h"
#include "catalog/catalog.h"
#include "common/error.h"
#include "common/json.h"
#include "common/strings.h"

namespace quarkplan {

bool is_known_target(const std::string& t) {
  return t == "cpu" || t == "cuda" || t == "rocm" || t == "npu_cnn" || t == "npu_transformer";
}

namespace {

// The amd-quark version a context file reports, "" when it names none: the
// install result's quark_version, or the env file's environment.quark_version.
// A value that is not a version is the file's error.
std::string reported_quark_version(const Json& doc, bool env, const std::string& file) {
  const Json* holder = env ? (doc.contains("environment") && doc["environment"].is_object() ? &doc["environment"] : nullptr) : &doc;
  if (!holder) return "";
  for (const char* key : {"quark_version", "amd_quark_version"}) {
    if (!holder->contains(key) || (*holder)[key].is_null()) continue;
    const Json& v = (*holder)[key];
    if (!v.is_string() || v.get<std::string>().empty())
      throw InputError(file, std::string(env ? "environment." : "") + key + " must be an amd-quark version such as \"0.13\" (got " + v.dump() + ")");
    return v.get<std::string>();
  }
  return "";
}

// --quark-version, else what the machine has installed, else the newest.
void choose_quark_release(const IntakeRequest& req, IntakeContext& ctx) {
  if (!req.install_result.empty()) {
    Json r = read_validated(req.install_result, "onnx_install_result");
    std::string v = reported_quark_version(r, false, req.install_result);
    if (r["status"] == "ok" && !v.empty()) ctx.installed_quark_version = v, ctx.installed_quark_source = req.install_result;
  }
  if (ctx.installed_quark_version.empty() && !req.env.empty()) {
    Json e = read_validated(req.env, "env_context");
    std::string v = reported_quark_version(e, true, req.env);
    if (!v.empty()) ctx.installed_quark_version = v, ctx.installed_quark_source = req.env;
  }
  std::string asked = req.quark_version, from = asked.empty() ? "" : "--quark-version";
  if (asked.empty() && !ctx.installed_quark_version.empty()) asked = ctx.installed_quark_version, from = ctx.installed_quark_source;
  if (asked.empty()) {
    ctx.catalog = &Catalog::load(req.catalog_dir);
    ctx.quark_release = ctx.catalog->release();
    return;
  }
  std::string canonical = Catalog::canonical_release(asked, req.catalog_dir);
  if (canonical.empty()) {
    std::string known = join(Catalog::release_versions(req.catalog_dir));
    if (from == "--quark-version")
      throw UsageError("--quark-version " + asked + " is not a Quark release quarkplan describes (it knows " + known + ")");
    throw InputError(from, "reports amd-quark " + asked + ", a release quarkplan does not describe (it knows " + known +
                               "): install one of those, or plan for one with --quark-version");
  }
  ctx.catalog = &Catalog::load(req.catalog_dir, canonical);
  ctx.quark_release = canonical;
  ctx.quark_release_source = from;
}

}  // namespace

IntakeContext resolve_intake_context(const IntakeRequest& req) {
  IntakeContext ctx;
  choose_quark_release(req, ctx);
  ctx.trust_remote_code = req.trust_remote_code;
  ctx.weight_stats = req.weight_stats;
  // The benchmark pins the scan's thread count (bench/run_intake_bench.sh); 0 or unset: every core.
  if (const char* t = std::getenv("QUARKPLAN_SCAN_THREADS")) ctx.weight_stats_threads = static_cast<unsigned>(std::strtoul(t, nullptr, 10) % 1024);
  if (!req.target.empty()) {
    if (!is_known_target(req.target))
      throw UsageError("--target must be one of cpu, cuda, rocm, npu_cnn, npu_transformer (got '" + req.target + "')");
    ctx.deployment_target = req.target;
    ctx.target_source = "--target";
  }
  if (!req.session.empty()) {
    Json s = read_validated(req.session, "session_context");
    const Json& c = s["constraints"];
    if (ctx.deployment_target.empty() && c.contains("deployment_target") && c["deployment_target"].is_string()) {
      ctx.deployment_target = c["deployment_target"];
      ctx.target_source = "session_context";
    }
  }
  if (!req.install_result.empty()) {
    Json r = read_validated(req.install_result, "onnx_install_result");
    ctx.install_status = r["status"].get<std::string>();
    if (r.contains("failure_reason") && r["failure_reason"].is_string()) ctx.install_failure_reason = r["failure_reason"];
    if (r.contains("accelerator_tag") && r["accelerator_tag"].is_string()) ctx.install_accelerator_tag = r["accelerator_tag"];
    if (r.contains("onnxruntime_version") && r["onnxruntime_version"].is_string()) ctx.install_onnxruntime_version = r["onnxruntime_version"];
    if (r.contains("verification") && r["verification"].contains("custom_ops_compile_ok") &&
        r["verification"]["custom_ops_compile_ok"].is_boolean())
      ctx.custom_ops_compile_ok = r["verification"]["custom_ops_compile_ok"].get<bool>();
    else if (r["status"] == "failed")
      ctx.custom_ops_compile_ok = false;
    if (r.contains("verification") && r["verification"].contains("available_providers") && r["verification"]["available_providers"].is_array())
      ctx.available_providers = string_list(r["verification"]["available_providers"]);
  }
  return ctx;
}

Json run_intake(const IntakeRequest& req) { return run_intake(req, resolve_intake_context(req)); }

Json run_intake(const IntakeRequest& req, const IntakeContext& ctx) {
  auto reader = open_model(req.model);
  Json analysis = reader->analyze(ctx);
  // What the analysis was made from: plans record it, and explain/validate
  // compare it with the model to catch a model that changed since.
  if (analysis["model"].contains("model_path") && analysis["model"]["model_path"].is_string())
    analysis["model"]["source_fingerprint"] = model_fingerprint(analysis["model"]["model_path"].get<std::string>());
  auto errors = validate_against_schema(analysis, "schemas/model_analysis.schema.json");
  if (!errors.empty())
    throw std::runtime_error("internal error: the analysis does not match its schema: " + errors.front());
  // Its own digest: `plan --analysis` tells a hand-edited analysis (a changed
  // model_type, parameter count) from one quarkplan wrote. Analyses from
  // other tools have none and are read as they are.
  analysis["analysis_sha256"] = json_sha256(analysis, "analysis_sha256");
  return analysis;
}

}  // namespace quarkplan
