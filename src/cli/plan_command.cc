// `quarkplan plan`: intake (or --analysis), the planner, the decision table,
// confirmation, and the atomic write of quant_plan.json (SPEC §1).
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "catalog/artifacts.h"
#include "catalog/catalog.h"
#include "cli/commands.h"
#include "cli/guarded.h"
#include "common/error.h"
#include "common/files.h"
#include "common/json.h"
#include "intake/intake.h"
#include "plan/planner.h"
#include "plan/session.h"
#include "ui/confirm.h"
#include "ui/decision_table.h"
#include "ui/progress.h"
#include "ui/terminal.h"

namespace fs = std::filesystem;

namespace quarkplan {

namespace {


std::string relative_ref(const fs::path& target, const fs::path& from_dir) {
  std::error_code ec;
  fs::path rel = fs::relative(fs::absolute(target), fs::absolute(from_dir), ec);
  if (ec || rel.empty()) return fs::absolute(target).string();
  std::string r = rel.string();
  return r.rfind("..", 0) == 0 ? r : "./" + r;
}

// Flags are sugar for decision-table choices (so edits and flags are one thing).
void add_choices(PlanRequest& req, const PlanArgs& a, const std::string& flow) {
  auto set = [&](const std::string& key, const Json& v) { req.choices[key] = v; };
  if (!a.preset.empty()) set("preset", a.preset);
  if (!a.scheme.empty()) set("global_scheme", a.scheme);
  if (!a.algorithm.empty()) set(flow == "onnx" ? "algorithms" : "algorithm", a.algorithm);
  if (!a.calib_method.empty()) set("calibration.method", a.calib_method);
  if (!a.kv_cache.empty()) {
    if (a.kv_cache != "fp8" && a.kv_cache != "none") throw UsageError("--kv-cache takes fp8 or none (Quark supports only fp8)");
    set("kv_cache_scheme", a.kv_cache == "none" ? Json(nullptr) : Json("fp8"));
  }
  if (!a.excludes.empty()) {
    Json list = Json::array();
    for (const auto& e : a.excludes)
      if (e != "none") list.push_back(e);
    set(flow == "onnx" ? "onnx_specific.nodes_to_exclude" : "exclude_layers", list);
  }
  for (const auto& ls : a.layer_schemes) {
    auto eq = ls.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == ls.size()) throw UsageError("--layer-scheme takes PATTERN=SCHEME (got '" + ls + "')");
    if (flow == "onnx") throw UsageError("--layer-scheme is for Hugging Face models; ONNX plans use --exclude and --set");
    set("layer_quant_config." + ls.substr(0, eq), ls.substr(eq + 1));
  }
  if (!a.calib_dataset.empty()) set("calibration.dataset", a.calib_dataset);
  if (a.num_calib > 0) set("calibration.num_calib_data", a.num_calib);
  if (a.seq_len > 0) set("calibration.seq_len", a.seq_len);
  if (a.data_size > 0) set("calibration.data_size", a.data_size);
  if (a.batch_size > 0) set("calibration.batch_size", a.batch_size);
  if (!a.eval.empty()) set("evaluation_intent", a.eval);
  for (const auto& s : a.sets) apply_set(req, flow, s);
}

bool is_confirmed_plan(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return false;
  try {
    Json j = read_json_file(path, 64ull << 20);
    return j.is_object() && j.contains("requires_confirmation") && j["requires_confirmation"] == false;
  } catch (...) {
    return false;
  }
}

}  // namespace

int run_plan_command(const PlanArgs& a) {
  return guarded([&]() -> int {
    if (a.intake.model.empty() == a.analysis.empty()) throw UsageError("plan takes a MODEL or --analysis FILE (exactly one)");
    if (!a.goal.empty() && a.goal != "accuracy" && a.goal != "balanced" && a.goal != "size" && a.goal != "experiment" && a.goal != "mixed")
      throw UsageError("--goal must be one of accuracy, balanced, size, experiment, mixed");
    if (!a.export_format.empty() && a.export_format != "hf" && a.export_format != "gguf" && a.export_format != "onnx")
      throw UsageError("--export must be one of hf, gguf, onnx");
    if (!a.intake.target.empty() && !is_known_target(a.intake.target))
      throw UsageError("--target must be one of cpu, cuda, rocm, npu_cnn, npu_transformer (got '" + a.intake.target + "')");
    FILE* human = a.json ? stderr : stdout;
    ui::Style st{ui::use_color(human)};
    int width = ui::terminal_width(human);
    fs::path plan_path(a.output);
    fs::path plan_dir = plan_path.has_parent_path() ? plan_path.parent_path() : fs::path(".");
    if (!fs::is_directory(plan_dir)) throw InputError(a.output, "its folder does not exist");
    if (!a.report.empty() && !fs::is_directory(fs::path(a.report).has_parent_path() ? fs::path(a.report).parent_path() : fs::path(".")))
      throw InputError(a.report, "its folder does not exist");

    PlanRequest req;
    req.target = a.intake.target;
    req.hardware = a.hardware;
    req.goal = a.goal;
    req.export_format = a.export_format;
    req.calib_data = a.calib_data;
    req.insist = a.insist;
    req.trust_remote_code = a.intake.trust_remote_code;
    req.confirmed = a.yes;
    req.context = a.context;
    req.batch = a.batch;
    req.catalog_dir = a.intake.catalog_dir;
    if (!a.calib_data.empty() && a.calib_data != "none" && !fs::exists(a.calib_data))
      throw InputError(a.calib_data, "calibration data path does not exist");
    if (!a.intake.env.empty()) req.env_context = read_validated(a.intake.env, "env_context");
    if (!a.intake.target.empty()) req.target_source = "--target";

    // The analysis: intake now, or a given file.
    Json analysis;
    std::string analysis_path;
    IntakeRequest ir = a.intake;
    IntakeContext ctx = resolve_intake_context(ir);
    req.custom_ops_compile_ok = ctx.custom_ops_compile_ok;
    req.available_providers = ctx.available_providers;
    if (req.target.empty() && !ctx.deployment_target.empty()) {
      req.target = ctx.deployment_target;
      req.target_source = ctx.target_source;
    }
    if (!ir.model.empty()) {
      ui::ProgressBar bar(stderr, ui::progress_enabled(stderr, a.json));
      ctx.progress = bar.callback();
      analysis = run_intake(ir, ctx);
      bar.finish();
      ctx.progress = nullptr;
      analysis_path = (plan_dir / "model_analysis.json").string();
    } else {
      analysis = read_validated(a.analysis, "model_analysis");
      analysis_path = a.analysis;
    }
    req.analysis_ref = relative_ref(analysis_path, plan_dir);
    std::string flow = plan_flow(analysis);
    add_choices(req, a, flow);

    bool interactive = !a.yes && !a.json && ui::is_terminal(stdin) && ui::is_terminal(stdout);
    PlanOutcome out;
    if (interactive) {
      ui::ConfirmResult cr = ui::confirm_loop(analysis, req, st, width);
      if (cr.declined) {
        std::fprintf(stderr, "Declined: nothing written.\n");
        return kExitDeclined;
      }
      out = cr.outcome;
    } else {
      out = make_plan(analysis, req);
    }

    if (out.status == PlanStatus::kRefused) {
      std::fprintf(stderr, "quarkplan: refused: %s\n", out.refusal.c_str());
      return kExitRefused;
    }
    if (out.status == PlanStatus::kInvalid) {
      for (const auto& e : out.errors) std::fprintf(stderr, "quarkplan: error: %s\n", e.c_str());
      return kExitBadInput;
    }
    if (!interactive) {
      std::fputs(ui::render_decision_table(out.decision_table, st, width).c_str(), human);
      std::fputs(ui::render_risks(out.plan["risks"], st, width).c_str(), human);
      std::fputs(ui::render_questions(out.plan["open_questions"], st, width).c_str(), human);
    }
    if (out.status == PlanStatus::kConflict) {
      for (const auto& c : out.conflicts)
        std::fprintf(stderr, "quarkplan: conflict [%s]: %s Closest viable alternative: %s. Pass --insist to keep your choice (recorded as a high risk).\n",
                     c.rule.c_str(), c.message.c_str(), c.alternative.c_str());
      return kExitBadInput;
    }

    // Write: the analysis beside the plan (when intake ran), then the plan.
    std::string target_path = a.output;
    bool draft = out.plan["requires_confirmation"].get<bool>();
    if (draft && is_confirmed_plan(a.output)) {
      fs::path p(a.output);
      target_path = (p.parent_path() / (p.stem().string() + ".draft" + p.extension().string())).string();
      std::fprintf(stderr, "%s holds a confirmed plan: the draft goes to %s instead.\n", a.output.c_str(), target_path.c_str());
    }
    if (!a.intake.model.empty()) write_file_atomic(analysis_path, dump_json(analysis));
    write_file_atomic(target_path, dump_json(out.plan));
    if (!a.intake.session.empty()) update_session(a.intake.session, out.plan, req.analysis_ref, relative_ref(target_path, fs::path(a.intake.session).parent_path().empty() ? "." : fs::path(a.intake.session).parent_path()), analysis_path);
    if (!a.report.empty()) {
      write_plan_report(a.report, target_path, out.plan, analysis, a.intake.catalog_dir);
      std::fprintf(human, "Wrote the report to %s\n", a.report.c_str());
    }
    if (a.json) {
      Json j = {{"plan", out.plan}, {"decision_table", out.decision_table}, {"risks", out.plan["risks"]}, {"open_questions", out.plan["open_questions"]}};
      std::fputs(dump_json(j).c_str(), stdout);
    }
    if (draft) {
      std::fprintf(human, "Wrote a DRAFT plan to %s (requires_confirmation: true)%s\n", target_path.c_str(),
                   out.plan["open_questions"].empty() ? "; confirm with --yes or at the prompt" : "; answer the open questions above");
      return kExitDraft;
    }
    std::fprintf(human, "Wrote the confirmed plan to %s\n", target_path.c_str());
    return kExitOk;
  });
}

}  // namespace quarkplan
