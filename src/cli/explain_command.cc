// `quarkplan explain PLAN [--json]`: the decision table of an existing plan,
// its risks and open questions, and the Quark invocation it implies. Shows; it
// never writes or runs anything.
#include <cstdio>
#include <filesystem>

#include "catalog/catalog.h"
#include "cli/commands.h"
#include "cli/guarded.h"
#include "common/error.h"
#include "plan/integrity.h"
#include "common/files.h"
#include "plan/invocation.h"
#include "plan/onnx_script.h"
#include "plan/planner.h"
#include "ui/decision_table.h"
#include "ui/estimates_view.h"
#include "ui/terminal.h"

namespace fs = std::filesystem;

namespace quarkplan {

IntegrityReport verified_plan(const std::string& path, const Json& plan, const std::string& catalog_dir) {
  IntegrityReport check = verify_plan(path, plan, catalog_dir);
  if (!check.ok()) {
    CommandFailure f;
    f.message = path + ": " + check.problems.front();
    for (const auto& p : check.problems) f.lines.push_back("error: " + path + ": " + p);
    f.hint = "This plan cannot be trusted as written: re-run `quarkplan plan` to make one whose decisions follow from its rules.";
    f.extra["problems"] = check.problems;
    throw f;
  }
  return check;
}

int run_explain_command(const ExplainArgs& a) {
  return guarded(a.json, [&] {
    Json plan = read_json_file(a.plan, 64ull << 20);
    auto errors = validate_against_schema(plan, "schemas/quant_plan.schema.json");
    if (!errors.empty()) throw InputError(a.plan, "is not a valid quant_plan: " + errors.front(), errors);
    // A plan is shown only when it still follows from its analysis, its model
    // and its rules (plan/integrity.h).
    IntegrityReport check = verified_plan(a.plan, plan, a.catalog_dir);
    Json analysis = check.analysis;
    std::string analysis_note = analysis.is_null() ? "(analysis " + check.analysis_path + " not found: template defaults from the catalog)" : "";
    if (!a.python.empty()) {
      // The whole script, written atomically; the table is not printed again.
      if (plan.value("backend", "") != "onnx")
        throw InputError(a.plan, "is a Torch plan: --python writes the script of an ONNX plan (a Torch plan's invocation is the shell command `quarkplan explain` prints)");
      // A draft that has no preset yet has no Quark config to write.
      if (!plan["preset"].is_string())
        throw InputError(a.plan, "is a draft with no preset yet (" + std::string(plan["deployment_target"].is_string() ? "" : "no deployment target; ") +
                                     "see its open questions): answer them, then write the script");
      check_output_path(a.python);
      const Catalog& cat = Catalog::for_plan(plan, a.catalog_dir);
      write_file_atomic(a.python, onnx_python_script(plan, analysis, cat, a.plan, a.python));
      if (a.json) {
        std::fputs(dump_json(Json{{"plan", a.plan}, {"python", a.python}, {"requires_confirmation", plan["requires_confirmation"]}}).c_str(), stdout);
      } else {
        std::printf("wrote %s (%s): python3 %s\n", a.python.c_str(), plan["requires_confirmation"].get<bool>() ? "a DRAFT plan: answer its open questions first" : "confirmed plan", a.python.c_str());
      }
      return kExitOk;
    }
    Invocation inv = plan_invocation(plan, analysis, a.catalog_dir);
    Json env = Json::object();
    for (const auto& [k, v] : inv.env) env[k] = v;
    Json table = decision_table(plan);
    if (a.json) {
      Json j = {{"plan", a.plan},
                {"quark_release", plan.value("quark_release", Json(nullptr))},
                {"requires_confirmation", plan["requires_confirmation"]},
                {"integrity", {{"verified", check.rules_rechecked}, {"summary", check.summary()}, {"notes", check.notes}}},
                {"decision_table", table},
                {"risks", plan["risks"]},
                {"open_questions", plan["open_questions"]},
                {"estimates", plan.value("estimates", Json::object())},
                {"invocation", {{"tool", inv.tool}, {"env", env}, {"args", inv.args}, {"text", inv.text}, {"qconfig", inv.fields}}},
                {"follow_up", inv.follow_up},
                {"serve", inv.serve},
                {"files", inv.files}};
      std::fputs(dump_json(j).c_str(), stdout);
      return kExitOk;
    }
    ui::Style st{ui::use_color(stdout)};
    int width = ui::terminal_width(stdout);
    std::string status = plan["requires_confirmation"].get<bool>() ? "DRAFT: requires confirmation"
                         : check.rules_rechecked                   ? "confirmed"
                                                                   : "confirmed by its author, not verified";
    {
      std::string release = plan.contains("quark_release") && plan["quark_release"].is_string() ? "; for Quark " + plan["quark_release"].get<std::string>() : "";
      auto head = ui::wrap_indented("Plan " + a.plan + "  (" + status + "; " + check.summary() + release + ")", static_cast<size_t>(std::max(20, width)), 2);
      for (size_t i = 0; i < head.size(); ++i) {
        std::string l = i == 0 ? head[i].substr(2) : head[i];
        if (i == 0 && l.rfind("Plan ", 0) == 0) l = st.bold("Plan") + l.substr(4);
        std::printf("%s\n", l.c_str());
      }
    }
    std::fputs(ui::render_decision_table(table, st, width).c_str(), stdout);
    std::fputs(ui::render_risks(plan["risks"], st, width).c_str(), stdout);
    std::fputs(ui::render_questions(plan["open_questions"], st, width).c_str(), stdout);
    std::fputs(ui::render_estimates(plan.value("estimates", Json::object()), st, width).c_str(), stdout);
    std::string note = analysis_note.empty() ? "" : " " + analysis_note;
    // Headings are shell (and Python) comments: the commands below them paste into a shell as a block.
    auto heading = [&](const std::string& text) {
      std::string out, line;
      std::string wrapped = ui::paragraph(text, std::max(20, width - 2));
      for (size_t at = 0; at < wrapped.size();) {
        size_t nl = wrapped.find('\n', at);
        line = wrapped.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
        out += "# " + line + "\n";
        at = nl == std::string::npos ? wrapped.size() : nl + 1;
      }
      std::fputs(st.bold(out).c_str(), stdout);
    };
    for (const auto& f : inv.files) {
      // A heredoc with a quoted delimiter: the shell writes the JSON as it is.
      heading("First write " + f["path"].get<std::string>() + ":");
      std::printf("# %s\n", f["why"].get<std::string>().c_str());  // a shell comment: the block pastes as it is
      std::printf("cat > %s <<'JSON'\n%sJSON\n", f["path"].get<std::string>().c_str(), f["content"].get<std::string>().c_str());
    }
    heading("Quark invocation this plan implies:" + note);
    std::fputs(ui::fit_command(inv.text, width).c_str(), stdout);
    if (inv.follow_up.is_object()) {
      heading("Then, optionally: " + inv.follow_up["why"].get<std::string>() + ".");
      std::fputs(ui::fit_command(inv.follow_up["text"].get<std::string>(), width).c_str(), stdout);
    }
    if (inv.serve.is_object()) {
      heading("Serve the result with " + inv.serve["label"].get<std::string>() + ":");
      std::fputs(ui::fit_command(inv.serve["text"].get<std::string>(), width).c_str(), stdout);
    }
    return kExitOk;
  });
}

}  // namespace quarkplan
