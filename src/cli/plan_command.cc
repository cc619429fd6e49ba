// `quarkplan plan`: intake (or --analysis), the planner, the decision table,
// confirmation, and the atomic write of quant_plan.json with its analysis
// (SPEC §1). Every input is checked before anything is written.
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <filesystem>

#include "catalog/artifacts.h"
#include "catalog/catalog.h"
#include "cli/commands.h"
#include "intake/calibration_data.h"
#include "plan/fix_shapes.h"
#include "cli/guarded.h"
#include "common/error.h"
#include "common/files.h"
#include "common/sha256.h"
#include "common/json.h"
#include "common/strings.h"
#include "intake/intake.h"
#include "plan/integrity.h"
#include "plan/planner.h"
#include "plan/session.h"
#include "ui/confirm.h"
#include "ui/decision_table.h"
#include "ui/progress.h"
#include "ui/terminal.h"

namespace fs = std::filesystem;

namespace quarkplan {

namespace {

// A whole number as typed (no sign games, no overflow, no trailing text).
int64_t whole_number(const std::string& flag, const std::string& text) {
  if (text.empty()) throw UsageError(flag + " needs a value");
  size_t i = text[0] == '-' ? 1 : 0;
  bool digits = text.size() > i && text.find_first_not_of("0123456789", i) == std::string::npos;
  if (!digits) throw UsageError(flag + " takes a whole number (got '" + text + "')");
  int64_t v = 0;
  for (size_t k = i; k < text.size(); ++k) {
    int d = text[k] - '0';
    if (v > (INT64_MAX - d) / 10) throw UsageError(flag + " is out of range (got " + text + ")");
    v = v * 10 + d;
  }
  return i ? -v : v;
}

// A given option with an empty value is a mistake, never "not given".
void require_values(const PlanArgs& a) {
  const std::pair<const char*, const std::string*> single[] = {
      {"--analysis", &a.analysis}, {"--target", &a.intake.target}, {"--hardware", &a.hardware}, {"--goal", &a.goal},
      {"--export", &a.export_format}, {"--preset", &a.preset}, {"--scheme", &a.scheme}, {"--serve", &a.serve}, {"--algorithm", &a.algorithm},
      {"--calib-method", &a.calib_method}, {"--kv-cache", &a.kv_cache}, {"--calib-dataset", &a.calib_dataset},
      {"--calib-data", &a.calib_data}, {"--eval", &a.eval}, {"--session", &a.intake.session}, {"--env", &a.intake.env},
      {"--install-result", &a.intake.install_result}, {"--catalog", &a.intake.catalog_dir}, {"--num-calib", &a.num_calib},
      {"--seq-len", &a.seq_len}, {"--data-size", &a.data_size}, {"--batch-size", &a.batch_size}, {"--context", &a.context},
      {"--batch", &a.batch}, {"--gpus", &a.gpus}, {"--report", &a.report}, {"--quark-version", &a.intake.quark_version}};
  for (const auto& [flag, value] : single)
    if (a.given.count(flag) && value->empty()) throw UsageError(std::string(flag) + " needs a value");
  const std::pair<const char*, const std::vector<std::string>*> lists[] = {
      {"--exclude", &a.excludes}, {"--layer-scheme", &a.layer_schemes}, {"--set", &a.sets}};
  for (const auto& [flag, values] : lists)
    for (const auto& v : *values)
      if (v.empty()) throw UsageError(std::string(flag) + " needs a value");
}

// Options of one flow given for a model of the other flow are mistakes: the
// user believes they changed something.
void check_flags_apply(const PlanArgs& a, const std::string& flow, const std::string& model) {
  static const std::vector<std::string> onnx_only = {"--preset", "--target", "--calib-method", "--data-size", "--install-result"};
  static const std::vector<std::string> torch_only = {"--scheme", "--serve", "--kv-cache", "--gpus", "--export", "--num-calib",
                                                      "--seq-len", "--calib-dataset", "--context", "--batch", "--trust-remote-code"};
  std::vector<std::string> wrong;
  for (const auto& f : flow == "onnx" ? torch_only : onnx_only)
    if (a.given.count(f)) wrong.push_back(f);
  if (flow == "torch" && !a.calib_data.empty() && a.calib_data != "none") wrong.push_back("--calib-data PATH");
  if (wrong.empty()) return;
  std::string kind = flow == "onnx" ? "an ONNX model" : "a Hugging Face (Torch) model";
  std::string other = flow == "onnx" ? "Hugging Face models" : "ONNX models";
  std::string extra = flow == "torch" && wrong.back() == "--calib-data PATH"
                          ? " (quantize_quark.py loads its calibration dataset itself: choose it with --calib-dataset, or --calib-data none)"
                          : "";
  throw UsageError(join(wrong) + (wrong.size() == 1 ? " does" : " do") + " not apply to " + model + ", which is " + kind + ": " +
                   (wrong.size() == 1 ? "it is an option" : "they are options") + " for " + other + extra);
}

// The Quark release of the plan: the one the intake just used, or, planning
// from an analysis, the analysis's own release unless one was asked for; an
// analysis read with another release's facts is not re-targeted silently.
void choose_release(PlanRequest& req, const IntakeContext& ctx, const Json* analysis, const std::string& analysis_path) {
  req.quark_release = ctx.quark_release;
  req.quark_release_source = ctx.quark_release_source;
  req.installed_quark_version = ctx.installed_quark_version;
  req.installed_quark_source = ctx.installed_quark_source;
  if (!analysis) return;
  const Json intake = analysis->value("intake", Json::object());
  std::string theirs = intake.is_object() ? intake.value("quark_release", "") : "";
  if (theirs.empty() && intake.is_object() && intake.contains("catalog_quark_version") && intake["catalog_quark_version"].is_string()) {
    std::string stamp = intake["catalog_quark_version"];
    theirs = stamp.substr(0, stamp.find(' '));
  }
  std::string canonical = theirs.empty() ? "" : Catalog::canonical_release(theirs, req.catalog_dir);
  if (canonical.empty()) return;  // another tool's analysis, or a release no longer described: the request's
  if (ctx.quark_release_source.empty()) {
    req.quark_release = canonical;
    req.quark_release_source = "--analysis";
  } else if (canonical != ctx.quark_release) {
    throw UsageError("--analysis " + analysis_path + " was read with Quark " + canonical + "'s facts, but the plan is for Quark " +
                     ctx.quark_release + " (" + ctx.quark_release_source + "): re-run `quarkplan intake MODEL --quark-version " +
                     ctx.quark_release + "`, or plan from the model");
  }
}

// Flags are sugar for decision-table choices (so edits and flags are one thing).
void add_choices(PlanRequest& req, const PlanArgs& a, const std::string& flow) {
  auto set = [&](const std::string& key, const Json& v, const char* flag) {
    req.choices[key] = v;
    req.choice_flags[key] = flag;
  };
  if (!a.preset.empty()) set("preset", a.preset, "--preset");
  if (!a.scheme.empty()) set("global_scheme", a.scheme, "--scheme");
  if (!a.serve.empty()) set("serve_runtime", a.serve, "--serve");
  if (!a.algorithm.empty()) set(flow == "onnx" ? "algorithms" : "algorithm", a.algorithm, "--algorithm");
  if (!a.calib_method.empty()) set("calibration.method", a.calib_method, "--calib-method");
  if (!a.kv_cache.empty()) {
    if (a.kv_cache != "fp8" && a.kv_cache != "none") throw UsageError("--kv-cache takes fp8 or none (Quark supports only fp8; got '" + a.kv_cache + "')");
    set("kv_cache_scheme", a.kv_cache == "none" ? Json(nullptr) : Json("fp8"), "--kv-cache");
  }
  if (!a.excludes.empty()) {
    // ONNX: "op:TYPE" keeps every node of an op type in float (QConfig's layer_type_config).
    Json list = Json::array(), op_types = Json::array();
    for (const auto& e : a.excludes) {
      if (e == "none") continue;
      if (flow == "onnx" && e.rfind("op:", 0) == 0) op_types.push_back(e.substr(3));
      else list.push_back(e);
    }
    if (!list.empty() || op_types.empty()) set(flow == "onnx" ? "onnx_specific.nodes_to_exclude" : "exclude_layers", list, "--exclude");
    if (!op_types.empty()) set("onnx_specific.op_types_to_exclude", op_types, "--exclude op:");
  }
  Json onnx_layers = Json::object();
  for (const auto& ls : a.layer_schemes) {
    auto eq = ls.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == ls.size()) throw UsageError("--layer-scheme takes PATTERN=SCHEME (got '" + ls + "')");
    // ONNX: NODE, '^regex.*' or op:TYPE = a preset whose data types the layers take.
    if (flow == "onnx") onnx_layers[ls.substr(0, eq)] = ls.substr(eq + 1);
    else set("layer_quant_config." + ls.substr(0, eq), ls.substr(eq + 1), "--layer-scheme");
  }
  if (!onnx_layers.empty()) set("onnx_specific.layer_presets", onnx_layers, "--layer-scheme");
  if (!a.calib_dataset.empty()) set("calibration.dataset", a.calib_dataset, "--calib-dataset");
  if (!a.num_calib.empty()) set("calibration.num_calib_data", whole_number("--num-calib", a.num_calib), "--num-calib");
  if (!a.seq_len.empty()) set("calibration.seq_len", whole_number("--seq-len", a.seq_len), "--seq-len");
  if (!a.data_size.empty()) set("calibration.data_size", whole_number("--data-size", a.data_size), "--data-size");
  if (!a.batch_size.empty()) set("calibration.batch_size", whole_number("--batch-size", a.batch_size), "--batch-size");
  if (!a.eval.empty()) set("evaluation_intent", a.eval, "--eval");
  for (const auto& s : a.sets) apply_set(req, flow, s);
}

fs::path folder_of(const fs::path& p) { return p.has_parent_path() ? p.parent_path() : fs::path("."); }

// Each plan names its own analysis: quant_plan.json <-> model_analysis.json
// (SPEC), PLAN.json <-> PLAN.analysis.json otherwise.
fs::path analysis_path_for(const fs::path& plan) {
  std::string name = plan.filename().string();
  if (name == "quant_plan.json") return folder_of(plan) / "model_analysis.json";
  if (name == "quant_plan.draft.json") return folder_of(plan) / "model_analysis.draft.json";
  std::string stem = plan.extension() == ".json" ? plan.stem().string() : name;
  return folder_of(plan) / (stem + ".analysis.json");
}

fs::path draft_path_for(const fs::path& plan) {
  return folder_of(plan) / (plan.stem().string() + ".draft" + plan.extension().string());
}

bool is_confirmed_plan(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;
  try {
    Json j = read_json_file(path.string(), 64ull << 20);
    return j.is_object() && j.contains("requires_confirmation") && j["requires_confirmation"] == false;
  } catch (...) {
    return false;
  }
}

std::string file_text_or_empty(const fs::path& p) {
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return "";
  try {
    return read_small_file(p.string(), 256ull << 20);
  } catch (const InputError&) {
    return "";
  }
}

}  // namespace

int run_plan_command(const PlanArgs& a) {
  return guarded(a.json, [&]() -> int {
    // 1. Usage that needs no file.
    if (a.intake.model.empty() == a.analysis.empty()) throw UsageError("plan takes a MODEL or --analysis FILE (exactly one)");
    require_values(a);
    if (!a.goal.empty() && a.goal != "accuracy" && a.goal != "balanced" && a.goal != "size" && a.goal != "experiment" && a.goal != "mixed")
      throw UsageError("--goal must be one of accuracy, balanced, size, experiment, mixed (got '" + a.goal + "')");
    if (!a.export_format.empty() && a.export_format != "hf" && a.export_format != "gguf" && a.export_format != "onnx")
      throw UsageError("--export must be one of hf, gguf, onnx (got '" + a.export_format + "')");
    if (!a.intake.target.empty() && !is_known_target(a.intake.target))
      throw UsageError("--target must be one of cpu, cuda, rocm, npu_cnn, npu_transformer (got '" + a.intake.target + "')");
    if (!a.analysis.empty() && a.intake.weight_stats) throw UsageError("--weight-stats needs a MODEL: intake does not run with --analysis");
    PlanRequest req;
    if (!a.context.empty()) {
      req.context = whole_number("--context", a.context);
      if (req.context < 1) throw UsageError("--context must be a whole number of at least 1 (got " + a.context + ")");
    }
    if (!a.batch.empty()) req.batch = whole_number("--batch", a.batch);
    if (!a.gpus.empty()) {
      req.gpus = whole_number("--gpus", a.gpus);
      if (req.gpus < 1 || req.gpus > 4096) throw UsageError("--gpus must be a count from 1 to 4096 (got " + a.gpus + ")");
    }

    // 2. Everything that will be written must be writable, before anything is.
    fs::path plan_path(a.output);
    const std::string own_analysis = a.intake.model.empty() ? "" : analysis_path_for(plan_path).string();
    check_distinct_outputs({{"-o", a.output}, {"its analysis", own_analysis}, {"--report", a.report}, {"--session", a.intake.session}},
                           {{"the model", a.intake.model}, {"--analysis", a.analysis}, {"--install-result", a.intake.install_result},
                            {"--env", a.intake.env}, {"--calib-data", a.calib_data}});
    check_output_path(a.output);
    if (std::string name = plan_path.filename().string(); name == "model_analysis.json" || (name.size() > 14 && name.ends_with(".analysis.json")))
      throw UsageError("-o " + a.output + " is a name quarkplan gives analyses (a plan PLAN.json keeps its analysis in PLAN.analysis.json): choose another name for the plan");
    check_artifact_kind("-o", a.output, "plan");
    if (!own_analysis.empty()) {
      check_output_path(own_analysis);
      check_artifact_kind("its analysis", own_analysis, "analysis");
    }
    if (!a.report.empty()) check_artifact_kind("--report", a.report, "report");
    if (!a.intake.session.empty()) check_output_path(a.intake.session);
    if (!a.calib_data.empty() && a.calib_data != "none" && !fs::exists(a.calib_data))
      throw InputError(a.calib_data, "calibration data path does not exist");

    FILE* human = a.json ? stderr : stdout;
    ui::Style st{ui::use_color(human)};
    int width = ui::terminal_width(human);
    if (!a.report.empty()) check_output_path(a.report);

    req.target = a.intake.target;
    req.hardware = a.hardware;
    req.goal = a.goal;
    req.export_format = a.export_format;
    req.calib_data = a.calib_data;
    req.insist = a.insist;
    req.trust_remote_code = a.intake.trust_remote_code;
    req.confirmed = a.yes;
    req.catalog_dir = a.intake.catalog_dir.empty() ? "" : fs::absolute(a.intake.catalog_dir).string();
    if (!a.intake.env.empty()) req.env_context = read_validated(a.intake.env, "env_context");
    if (!a.intake.target.empty()) req.target_source = "--target";

    // 3. The analysis: intake now, or a given file (its exact bytes are hashed).
    Json analysis;
    std::string analysis_text;
    IntakeRequest ir = a.intake;
    IntakeContext ctx = resolve_intake_context(ir);
    ctx.keep_until_exit = true;  // a one-shot command (see common/keep_until_exit.h)
    req.custom_ops_compile_ok = ctx.custom_ops_compile_ok;
    req.available_providers = ctx.available_providers;
    req.install_status = ctx.install_status;
    req.install_failure_reason = ctx.install_failure_reason;
    req.install_accelerator_tag = ctx.install_accelerator_tag;
    req.install_onnxruntime_version = ctx.install_onnxruntime_version;
    if (req.target.empty() && !ctx.deployment_target.empty()) {
      req.target = ctx.deployment_target;
      req.target_source = ctx.target_source;
    }
    bool ran_intake = !ir.model.empty();
    if (ran_intake) {
      ui::ProgressBar bar(stderr, ui::progress_enabled(stderr, a.json));
      ctx.progress = bar.callback();
      analysis = run_intake(ir, ctx);
      bar.finish();
      ctx.progress = nullptr;
      analysis_text = dump_json(analysis);
    } else {
      analysis = read_validated(a.analysis, "model_analysis", analysis_text);
      if (analysis.contains("analysis_sha256") && analysis["analysis_sha256"] != json_sha256(analysis, "analysis_sha256"))
        throw InputError(a.analysis, "was edited outside quarkplan: its content no longer matches the digest intake recorded (analysis_sha256). "
                                     "Re-run `quarkplan intake` on the model, or remove analysis_sha256 to plan from it as another tool's analysis");
    }
    choose_release(req, ctx, ran_intake ? nullptr : &analysis, a.analysis);
    std::string flow = plan_flow(analysis);
    check_flags_apply(a, flow, ran_intake ? a.intake.model : analysis["model"].value("model_path", a.analysis));
    add_choices(req, a, flow);
    // The calibration set, read as Quark's PathDataReader will read it: a
    // layout Quark would fail on is refused now, not after the model loads.
    if (flow == "onnx" && !a.calib_data.empty() && a.calib_data != "none") {
      // Recorded absolute, so the printed Quark call works from any folder.
      req.calib_data = fs::absolute(a.calib_data).lexically_normal().string();
      req.calib_data_check = inspect_calibration_data(req.calib_data, analysis, fix_shapes_choice(req));
    }

    // 4. Decide (and confirm at the prompt when there is one).
    bool interactive = !a.yes && !a.json && ui::is_terminal(stdin) && ui::is_terminal(stdout);
    PlanOutcome out;
    if (interactive) {
      ui::ConfirmResult cr = ui::confirm_loop(analysis, req, st, width);
      if (cr.declined) {
        CommandFailure f;
        f.code = kExitDeclined;
        f.message = "declined at the prompt: nothing written";
        throw f;
      }
      out = cr.outcome;
    } else {
      out = make_plan(analysis, req);
    }

    if (out.status == PlanStatus::kRefused) {
      CommandFailure f;
      f.code = kExitRefused;
      auto cut = out.refusal.find(" Recovery: ");
      f.message = cut == std::string::npos ? out.refusal : out.refusal.substr(0, cut);
      f.hint = cut == std::string::npos ? "" : out.refusal.substr(cut + 11);
      f.rule = out.refusal_rule;
      f.lines = {"refused [" + out.refusal_rule + "]: " + out.refusal};
      throw f;
    }
    if (out.status == PlanStatus::kInvalid) {
      CommandFailure f;
      f.message = out.errors.empty() ? "the plan is invalid" : out.errors.front();
      for (const auto& e : out.errors) f.lines.push_back("error: " + e);
      f.extra["errors"] = out.errors;
      throw f;
    }
    if (!interactive) {
      std::fputs(ui::render_decision_table(out.decision_table, st, width).c_str(), human);
      // A refused plan ends with its conflicts, not with "Risks: none".
      if (!out.plan["risks"].empty() || out.status != PlanStatus::kConflict)
        std::fputs(ui::render_risks(out.plan["risks"], st, width).c_str(), human);
      std::fputs(ui::render_questions(out.plan["open_questions"], st, width).c_str(), human);
    }
    if (out.status == PlanStatus::kConflict) {
      CommandFailure f;
      const Conflict& first = out.conflicts.front();
      f.message = first.message;
      f.rule = first.rule;
      auto keep = [](const Conflict& c) {
        return std::string(c.insistable ? "Pass --insist to keep your choice (recorded as a high risk)."
                                         : "--insist cannot keep it: Quark would not do what the plan says.");
      };
      f.hint = "Closest viable alternative: " + first.alternative + ". " + keep(first);
      Json all = Json::array();
      for (const auto& c : out.conflicts) {
        f.lines.push_back("conflict [" + c.rule + "]: " + c.message + " Closest viable alternative: " + c.alternative + ". " + keep(c));
        all.push_back({{"rule", c.rule}, {"decision", c.decision}, {"message", c.message}, {"alternative", c.alternative},
                       {"insistable", c.insistable}});
      }
      f.extra["conflicts"] = all;
      throw f;
    }

    // 5. Where it goes: a draft never replaces a confirmed plan, and each plan
    // names its own analysis.
    bool draft = out.plan["requires_confirmation"].get<bool>();
    // Plans written to one folder at once (CI jobs, agents) are serialised on
    // the folder, so a plan and its analysis are never from two runs.
    std::optional<FileLock> folder_lock;
    try {
      folder_lock.emplace(folder_of(plan_path).string());
    } catch (const InputError&) {  // a file system without flock: write unlocked, as before
    }
    fs::path target = plan_path;
    std::string note;
    if (draft && is_confirmed_plan(plan_path)) {
      target = draft_path_for(plan_path);
      check_output_path(target.string());
      check_artifact_kind("the draft", target.string(), "plan");
      note = a.output + " holds a confirmed plan: the draft goes to " + target.string() + " instead.\n";
    }
    fs::path analysis_path = ran_intake ? analysis_path_for(target) : fs::path(a.analysis);
    if (ran_intake) {
      check_output_path(analysis_path.string());
      check_artifact_kind("its analysis", analysis_path.string(), "analysis");
    }
    Json& plan = out.plan;
    plan["model"]["analysis_ref"] = relative_ref(analysis_path.string(), folder_of(target).string());
    Json fingerprint = analysis["model"].value("source_fingerprint", Json(nullptr));
    if (fingerprint.is_null()) {
      try {
        std::string mp = analysis["model"].value("model_path", "");
        if (!mp.empty() && fs::exists(mp)) fingerprint = model_fingerprint(mp);
      } catch (const InputError&) {
      }
    }
    seal_plan(plan, analysis_text, fingerprint);

    // 6. Write the analysis (unless the same bytes are already there) and the
    // plan as one step; then drop a stale draft and update the session.
    std::vector<std::pair<std::string, std::string>> files;
    if (ran_intake && file_text_or_empty(analysis_path) != analysis_text) files.push_back({analysis_path.string(), analysis_text});
    files.push_back({target.string(), dump_json(plan)});
    write_files_atomic(files);
    if (!note.empty()) print_stderr(note);
    std::string removed;
    if (!draft) {
      fs::path stale = draft_path_for(target);
      if (remove_if_exists(stale.string())) {
        removed = stale.string();
        if (ran_intake) remove_if_exists(analysis_path_for(stale).string());
      }
    }
    if (!a.intake.session.empty()) {
      std::string dir = folder_of(a.intake.session).string();
      PlanUpdate u{plan, relative_ref(target.string(), dir), relative_ref(analysis_path.string(), dir),
                   removed.empty() ? "" : relative_ref(removed, dir)};
      update_session(a.intake.session, u, Catalog::load(req.catalog_dir, req.quark_release).hardware());
    }
    if (!a.report.empty()) {
      write_plan_report(a.report, target.string(), plan, analysis, a.intake.catalog_dir);
      std::fprintf(human, "Wrote the report to %s\n", a.report.c_str());
    }

    if (a.json) {
      Json j = {{"status", draft ? "draft" : "confirmed"},
                {"exit_code", draft ? kExitDraft : kExitOk},
                {"plan_path", target.string()},
                {"analysis_path", analysis_path.string()},
                {"plan", plan},
                {"decision_table", out.decision_table},
                {"risks", plan["risks"]},
                {"open_questions", plan["open_questions"]}};
      std::fputs(dump_json(j).c_str(), stdout);
    }
    if (draft) {
      std::fputs(ui::paragraph("Wrote a DRAFT plan to " + target.string() + " (requires_confirmation: true); " +
                                   (!plan["open_questions"].empty() ? "answer the open questions above."
                                    : a.json ? "confirm it with --yes (--json never prompts)."
                                                      : "confirm it with --yes or at the prompt."),
                               ui::terminal_width(human))
                     .c_str(),
                 human);
      return kExitDraft;
    }
    std::fputs(ui::paragraph("Wrote the confirmed plan to " + target.string() + " (analysis: " + analysis_path.string() + ").", ui::terminal_width(human)).c_str(),
               human);
    if (!removed.empty()) std::fprintf(human, "Removed the stale draft %s\n", removed.c_str());
    return kExitOk;
  });
}

}  // namespace quarkplan
