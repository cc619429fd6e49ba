#include "cli/commands.h"

#include <cstdio>
#include <exception>
#include <filesystem>

#include "catalog/artifacts.h"
#include "cli/guarded.h"
#include "common/error.h"
#include "common/files.h"
#include "common/json.h"
#include "intake/intake.h"
#include "plan/integrity.h"
#include "plan/session.h"
#include "ui/intake_summary.h"
#include "ui/progress.h"
#include "ui/terminal.h"

namespace fs = std::filesystem;

namespace quarkplan {

void check_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& outputs,
                            const std::vector<std::pair<std::string, std::string>>& inputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto& [flag, path] = outputs[i];
    if (path.empty()) continue;
    for (size_t j = i + 1; j < outputs.size(); ++j)
      if (!outputs[j].second.empty() && same_file(path, outputs[j].second))
        throw UsageError(flag + " and " + outputs[j].first + " name the same file (" + path + "): one would overwrite the other");
    for (const auto& [what, in] : inputs)
      if (!in.empty() && same_file(path, in))
        throw UsageError(flag + " " + path + " is " + what + ": writing there would destroy it");
  }
}

// An output path that holds anything but what the command writes is refused
// rather than overwritten: another kind of quarkplan artifact (an intake over a
// confirmed plan, a report over an analysis) or a file quarkplan did not write
// (`-o MODEL_DIR/config.json` would destroy the model). `kind` is what the
// command writes there ("plan", "analysis", "report").
void check_artifact_kind(const std::string& flag, const std::string& path, const std::string& kind) {
  auto a = [](const std::string& k) { return (k[0] == 'a' || k[0] == 'e' || k[0] == 'i' ? "an " : "a ") + k; };
  std::string found = artifact_kind(path);
  if (found == "other")
    throw InputError(path, "is not a file quarkplan wrote (" + flag + " would replace it with " + a(kind) + "): choose another file, or remove it first");
  if (!found.empty() && found != kind)
    throw InputError(path, "holds " + a(found) + " (" + flag + " would replace it with " + a(kind) + "): choose another file");
}

int run_intake_command(const IntakeArgs& args) {
  return guarded(args.json, [&] {
    const std::pair<const char*, const std::string*> values[] = {{"--target", &args.intake.target},
                                                                 {"--install-result", &args.intake.install_result},
                                                                 {"--session", &args.intake.session},
                                                                 {"--env", &args.intake.env},
                                                                 {"--catalog", &args.intake.catalog_dir}};
    for (const auto& [flag, value] : values)
      if (args.given.count(flag) && value->empty()) throw UsageError(std::string(flag) + " needs a value");
    check_distinct_outputs({{"-o", args.output}, {"--session", args.intake.session}},
                           {{"the model", args.intake.model}, {"--install-result", args.intake.install_result}, {"--env", args.intake.env}});
    check_output_path(args.output);
    check_artifact_kind("-o", args.output, "analysis");
    if (!args.intake.session.empty()) check_output_path(args.intake.session);
    IntakeContext ctx = resolve_intake_context(args.intake);
    ctx.keep_until_exit = true;
    ui::ProgressBar bar(stderr, ui::progress_enabled(stderr, args.json));
    ctx.progress = bar.callback();
    Json analysis = run_intake(args.intake, ctx);
    bar.finish();
    // Options of the other flow are mistakes, as in `plan`.
    bool onnx = analysis["model"].value("model_type", "") == "onnx";
    std::vector<std::string> wrong;
    if (!onnx)
      for (const char* f : {"--target", "--install-result"})
        if (args.given.count(f)) wrong.push_back(f);
    if (onnx && args.given.count("--trust-remote-code")) wrong.push_back("--trust-remote-code");
    if (!wrong.empty())
      throw UsageError(wrong.front() + std::string(" does not apply to ") + args.intake.model + ", which is " +
                       (onnx ? "an ONNX model: it is an option for Hugging Face models" : "a Hugging Face (Torch) model: it is an option for ONNX models"));
    std::string text = dump_json(analysis);
    write_file_atomic(args.output, text);
    if (!args.intake.session.empty()) update_session_after_intake(args.intake.session, analysis, args.output);
    FILE* human = args.json ? stderr : stdout;
    ui::Style st{ui::use_color(human)};
    std::fputs(ui::render_intake_summary(analysis, st).c_str(), human);
    std::fprintf(human, "Wrote %s\n", args.output.c_str());
    if (args.json) std::fputs(text.c_str(), stdout);
    return kExitOk;
  });
}

int run_validate_command(const ValidateArgs& args) {
  return guarded(args.json, [&] {
    int bad = 0;
    Json results = Json::array();
    for (const auto& f : args.files) {
      ValidationOutcome o = validate_artifact_file(f, args.kind);
      std::string summary;
      // Past the schema: a plan must still follow from its analysis, model and
      // rules; an analysis from its model.
      if (o.errors.empty() && (o.kind == "quant_plan" || o.kind == "model_analysis")) {
        Json doc = read_json_file(f, 256ull << 20);
        if (o.kind == "quant_plan") {
          IntegrityReport r = verify_plan(f, doc);
          o.errors = r.problems;
          summary = r.summary();
        } else {
          o.errors = verify_analysis(f, doc);
        }
      }
      results.push_back({{"file", f},
                         {"kind", o.kind.empty() ? Json(nullptr) : Json(o.kind)},
                         {"valid", o.errors.empty()},
                         {"summary", summary.empty() ? Json(nullptr) : Json(summary)},
                         {"errors", o.errors}});
      if (!o.errors.empty()) ++bad;
      if (args.json) continue;  // one object at the end
      if (o.errors.empty()) {
        std::printf("%s: valid %s%s\n", f.c_str(), o.kind.c_str(), summary.empty() ? "" : (" (" + summary + ")").c_str());
      } else {
        std::printf("%s: INVALID%s\n", f.c_str(), o.kind.empty() ? "" : (" " + o.kind).c_str());
        for (const auto& e : o.errors) std::printf("  %s\n", e.c_str());
      }
    }
    if (args.json) {
      // Every file's result; an invalid one also gives the error object
      // automation looks for, in the same single JSON document.
      Json out = {{"valid", bad == 0}, {"files", results}};
      if (bad)
        out["error"] = {{"code", kExitBadInput},
                        {"message", std::to_string(bad) + " of " + std::to_string(results.size()) + (results.size() == 1 ? " file is" : " files are") + " invalid"},
                        {"rule", nullptr},
                        {"hint", "Each file's errors are under files[].errors."}};
      std::fputs(dump_json(out).c_str(), stdout);
    }
    return bad ? kExitBadInput : kExitOk;
  });
}

int run_session_init_command(const SessionInitArgs& args) {
  return guarded(args.json, [&] {
    Json s = new_session(args.workflow, args.goal);
    check_output_path(args.output);
    std::error_code ec;
    if (fs::exists(args.output, ec))
      throw InputError(args.output, "already exists: a session is never replaced (remove it, or choose another -o)");
    write_file_atomic(args.output, dump_json(s));
    if (args.json) {
      std::fputs(dump_json(Json{{"session", args.output}, {"content", s}}).c_str(), stdout);
      return kExitOk;
    }
    std::printf("Wrote %s (workflow %s)\n", args.output.c_str(), s["workflow"].get<std::string>().c_str());
    return kExitOk;
  });
}

}  // namespace quarkplan
