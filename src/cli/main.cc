// quarkplan's command line: parses arguments and calls the library. All the
// work (and every decision) lives in the library; all terminal output goes
// through the UI layer.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <set>
#include <string>

#include "cli/commands.h"
#include "cli/guarded.h"
#include "common/error.h"

namespace {

// The options given on the command line, by every name they have.
// A release name given empty is a mistake, never "the default" (plan checks its own values too).
const CLI::Validator kReleaseName(
    [](std::string& v) { return v.empty() ? std::string("is empty: name a Quark release (quarkplan catalog lists them)") : std::string(); }, "RELEASE");

std::set<std::string> given_options(const CLI::App* app) {
  std::set<std::string> out;
  for (const CLI::Option* o : app->get_options()) {
    if (o->count() == 0) continue;
    for (const auto& l : o->get_lnames()) out.insert("--" + l);
    for (const auto& sn : o->get_snames()) out.insert("-" + sn);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace quarkplan;
  CLI::App app{"quarkplan: validated, explicitly confirmed AMD Quark quantization plans"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("quarkplan ") + QUARKPLAN_VERSION);

  IntakeArgs intake;
  auto* ci = app.add_subcommand("intake", "Read a model (.onnx or Hugging Face folder) into model_analysis.json");
  ci->add_option("MODEL", intake.intake.model, "an .onnx file, a folder holding model.onnx, or a Hugging Face model folder")->required();
  ci->add_option("-o", intake.output, "where to write the analysis")->default_val("model_analysis.json");
  ci->add_flag("--json", intake.json, "print the analysis as JSON on stdout (the summary goes to stderr)");
  ci->add_option("--target", intake.intake.target, "ONNX deployment target: cpu|cuda|rocm|npu_cnn|npu_transformer");
  ci->add_option("--install-result", intake.intake.install_result, "onnx_install_result.json (custom-ops availability)");
  ci->add_option("--session", intake.intake.session, "session_context.json (deployment target; updated with open questions)");
  ci->add_option("--env", intake.intake.env, "env_context.json");
  ci->add_option("--catalog", intake.intake.catalog_dir, "a folder of catalog files that replace the embedded ones");
  ci->add_option("--quark-version", intake.intake.quark_version, "the Quark release to read the model for (default: the amd-quark an --install-result/--env file reports, else the newest; quarkplan catalog lists them)")->check(kReleaseName);
  ci->add_flag("--weight-stats", intake.intake.weight_stats, "scan the weights for per-layer outlier statistics");
  ci->add_flag("--trust-remote-code", intake.intake.trust_remote_code, "approve running the repository's own code (auto_map)");

  PlanArgs plan;
  auto* cp = app.add_subcommand("plan", "Decide a Quark quantization plan and write quant_plan.json");
  cp->add_option("MODEL", plan.intake.model, "an .onnx file, a folder holding model.onnx, or a Hugging Face model folder");
  cp->add_option("--analysis", plan.analysis, "plan from an existing model_analysis.json instead of a model");
  cp->add_option("-o", plan.output, "where to write the plan")->default_val("quant_plan.json");
  cp->add_option("--report", plan.report, "also write the plan's HTML report (quarkplan report) to this file");
  cp->add_flag("--json", plan.json, "print {plan, decision_table, risks, open_questions} as JSON on stdout");
  cp->add_flag("--yes", plan.yes, "confirm up front (automation): the plan is written confirmed unless facts are missing");
  cp->add_flag("--insist", plan.insist, "keep choices that break a hard gate, recording a high risk");
  cp->add_option("--target", plan.intake.target, "ONNX deployment target: cpu|cuda|rocm|npu_cnn|npu_transformer");
  cp->add_option("--hardware", plan.hardware, "Torch: the accelerator (mi300x mi325x mi355x h100 h200 b200 a100 rtx4090 cpu ryzen-ai ...); ONNX: the Ryzen AI NPU (phoenix hawk-point strix krackan strix-halo, or ryzen-ai)");
  cp->add_option("--gpus", plan.gpus, "accelerators available (else env_context.json's gpu_count)");
  cp->add_option("--goal", plan.goal, "accuracy|balanced|size|experiment|mixed");
  cp->add_option("--export", plan.export_format, "torch export format: hf|gguf|onnx");
  cp->add_option("--preset", plan.preset, "ONNX preset (quarkplan catalog onnx)");
  cp->add_option("--scheme", plan.scheme, "Torch scheme (quarkplan catalog torch)");
  cp->add_option("--serve", plan.serve, "Torch: the runtime that serves the result: vllm|sglang|llama.cpp|ort-genai|transformers (default from the hardware and export)");
  cp->add_option("--algorithm", plan.algorithm, "algorithm(s), comma-separated");
  cp->add_option("--calib-method", plan.calib_method, "ONNX calibration method");
  cp->add_option("--kv-cache", plan.kv_cache, "fp8|none");
  cp->add_option("--exclude", plan.excludes, "Torch: layer pattern (replaces the template defaults); ONNX: node name; repeat the flag for more")->allow_extra_args(false);
  cp->add_option("--layer-scheme", plan.layer_schemes, "PATTERN=SCHEME per-pattern override; repeat the flag for more")->allow_extra_args(false);
  cp->add_option("--calib-dataset", plan.calib_dataset, "Torch calibration dataset");
  cp->add_option("--num-calib", plan.num_calib, "Torch calibration samples");
  cp->add_option("--seq-len", plan.seq_len, "Torch calibration sequence length");
  cp->add_option("--data-size", plan.data_size, "ONNX calibration samples");
  cp->add_option("--batch-size", plan.batch_size, "calibration batch size");
  cp->add_option("--calib-data", plan.calib_data, "calibration data PATH, or none");
  cp->add_option("--eval", plan.eval, "evaluation intent (torch: none|smoke|full; onnx: smoke|mlperf|mAP)");
  cp->add_option("--set", plan.sets, "KEY=VALUE for any decision-table row; repeat the flag for more")->allow_extra_args(false);
  cp->add_flag("--trust-remote-code", plan.intake.trust_remote_code, "approve running the model repository's own code");
  cp->add_option("--context", plan.context, "context length for the KV-cache estimate (default 8192, or the model's maximum when smaller)");
  cp->add_option("--batch", plan.batch, "batch for the KV-cache estimate (default 1)");
  cp->add_flag("--weight-stats", plan.intake.weight_stats, "scan the weights for outlier statistics");
  cp->add_option("--session", plan.intake.session, "session_context.json to read (target) and update");
  cp->add_option("--env", plan.intake.env, "env_context.json (accelerator)");
  cp->add_option("--install-result", plan.intake.install_result, "onnx_install_result.json (custom-ops availability)");
  cp->add_option("--catalog", plan.intake.catalog_dir, "a folder of catalog files that replace the embedded ones");
  cp->add_option("--quark-version", plan.intake.quark_version, "the Quark release the plan is for (default: the amd-quark an --install-result/--env file reports, else the newest; quarkplan catalog lists them)");

  CatalogArgs catalog;
  auto* cc = app.add_subcommand("catalog", "List presets / schemes / algorithms / methods with compatibility");
  cc->add_option("FLOW", catalog.flow, "onnx or torch (both when omitted)");
  cc->add_flag("--json", catalog.json, "print the catalog as JSON");
  cc->add_option("--catalog", catalog.catalog_dir, "a folder of catalog files that replace the embedded ones");
  cc->add_option("--quark-version", catalog.quark_version, "the Quark release whose facts to show (default: the newest)")->check(kReleaseName);

  ExplainArgs explain;
  auto* ce = app.add_subcommand("explain", "Show a plan's decision table, risks and the Quark invocation it implies");
  ce->add_option("PLAN", explain.plan, "a quant_plan.json")->required();
  ce->add_flag("--json", explain.json, "print it as JSON");
  ce->add_option("--python", explain.python, "ONNX plans: write the whole runnable Quark script (config, quantize call, a check of the result) to FILE");
  ce->add_option("--catalog", explain.catalog_dir, "a folder of catalog files that replace the embedded ones");

  ReportArgs report;
  auto* cr = app.add_subcommand("report", "Write one self-contained HTML page of a plan: decisions, risks, charts, the Quark invocation");
  cr->add_option("PLAN", report.plan, "a quant_plan.json")->required();
  cr->add_option("-o", report.output, "where to write the page")->default_val("report.html");
  cr->add_option("--catalog", report.catalog_dir, "a folder of catalog files that replace the embedded ones");
  cr->add_flag("--json", report.json, "print the result (or the error) as one JSON object on stdout");
  cr->add_option("--verify", report.verify_output, "also verify this export (a Hugging Face folder or a quantized .onnx) and add the result");
  cr->add_option("--source", report.source, "with --verify: the model folder the plan was made from");

  VerifyArgs verify;
  auto* cy = app.add_subcommand("verify", "Check that the model Quark exported keeps the plan (exit 0 kept, 2 broken)");
  cy->add_option("PLAN", verify.plan, "the confirmed quant_plan.json")->required();
  cy->add_option("OUTPUT", verify.output, "what Quark wrote: the Hugging Face export folder, or the quantized .onnx")->required();
  cy->add_option("--source", verify.source, "the model folder the plan was made from (tokenizer and config compared byte for byte)");
  cy->add_option("--catalog", verify.catalog_dir, "a folder of catalog files that replace the embedded ones");
  cy->add_flag("--json", verify.json, "print every check and its result as JSON");

  RulesArgs rules;
  auto* cu = app.add_subcommand("rules", "Show the documentation of the rules a plan cites (all, one ID, or an ID prefix)");
  cu->add_option("ID", rules.id, "a rule ID such as onnx.npu_cnn.pof2_calibration, or a prefix such as torch.exclude");
  cu->add_flag("--json", rules.json, "print the documentation as JSON");

  EnvArgs env;
  auto* cn = app.add_subcommand("env", "Probe this machine into env_context.json");
  cn->add_option("-o", env.output, "where to write it")->default_val("env_context.json");
  cn->add_flag("--json", env.json, "print it as JSON on stdout");

  SessionInitArgs session_init;
  auto* cs = app.add_subcommand("session", "Create session_context.json files");
  cs->require_subcommand(1);
  auto* csi = cs->add_subcommand("init", "Write a new, schema-valid session_context.json");
  csi->add_option("-o", session_init.output, "where to write it (never replaces an existing file)")->default_val("session_context.json");
  csi->add_option("--workflow", session_init.workflow, "the Quark workflow (default quark-torch-ptq; quark-onnx-ptq-workflow for ONNX)");
  csi->add_option("--goal", session_init.goal, "the user's goal, in their words");
  csi->add_flag("--json", session_init.json, "print the new session (or the error) as one JSON object on stdout");

  ValidateArgs validate;
  auto* cv = app.add_subcommand("validate", "Check artifacts against quarkplan's JSON schemas");
  cv->add_option("FILE", validate.files, "artifacts to check")->required();
  cv->add_option("--kind", validate.kind, "model_analysis|quant_plan|session_context|env_context|onnx_install_result");
  cv->add_flag("--json", validate.json, "print each file's result as one JSON object on stdout");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    // One line, and with --json the error object automation expects.
    std::string msg = std::string(e.what()) + " (run 'quarkplan --help' for usage)";
    print_stderr("quarkplan: error: " + msg + "\n");
    for (int i = 1; i < argc; ++i)
      if (std::string(argv[i]) == "--json") {
        print_json_error(kExitBadInput, msg, "", "Run 'quarkplan --help' for usage.");
        break;
      }
    return kExitBadInput;
  }
  if (ci->parsed()) {
    intake.given = given_options(ci);
    return run_intake_command(intake);
  }
  if (cv->parsed()) return run_validate_command(validate);
  if (cp->parsed()) {
    plan.given = given_options(cp);
    return run_plan_command(plan);
  }
  if (cc->parsed()) return run_catalog_command(catalog);
  if (ce->parsed()) return run_explain_command(explain);
  if (cn->parsed()) return run_env_command(env);
  if (cr->parsed()) return run_report_command(report);
  if (cu->parsed()) return run_rules_command(rules);
  if (cy->parsed()) return run_verify_command(verify);
  if (csi->parsed()) return run_session_init_command(session_init);
  return kExitBadInput;
}
