// Implementation of the confirmation loop, shared by the terminal front end
// and the tests (header so the line source can be any callable).
#pragma once
#include <algorithm>
#include <set>

#include "common/error.h"
#include "intake/calibration_data.h"
#include "plan/fix_shapes.h"

#include <filesystem>
#include "common/strings.h"
#include "ui/decision_table.h"

namespace quarkplan::ui {

namespace detail {

inline std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

inline std::set<std::string> changed_rows(const Json& before, const Json& after) {
  std::set<std::string> out;
  for (const auto& r : after) {
    bool same = false;
    for (const auto& b : before)
      if (b["key"] == r["key"]) same = b["value"] == r["value"];
    if (!same) out.insert(r["key"]);
  }
  return out;
}

// The answers, with KEY=VALUE examples taken from the plan's own rows (their
// current values, so each example is an edit this plan accepts) and the
// shorthands of its flow.
inline std::string help_text(const Json& rows, const std::string& flow) {
  static const char* const kOnnx[] = {"calibration.method", "calibration.data_size", "algorithms", "preset"};
  static const char* const kTorch[] = {"global_scheme", "algorithm", "exclude_layers", "calibration.num_calib_data"};
  std::string examples;
  int n = 0;
  for (const char* key : flow == "onnx" ? std::vector<const char*>(std::begin(kOnnx), std::end(kOnnx))
                                        : std::vector<const char*>(std::begin(kTorch), std::end(kTorch))) {
    for (const auto& r : rows) {
      if (n >= 3 || r.value("key", "") != key || !r.contains("value") || r["value"].is_null()) continue;
      std::string v = r["value"].is_string() ? r["value"].get<std::string>() : r["value"].dump();
      if (v.size() > 40) continue;
      examples += (n++ ? "  " : "") + std::string(key) + "=" + v;
    }
  }
  std::string out =
      "Answers:\n"
      "  yes | y                confirm and write the plan\n"
      "  no | n | q | Ctrl-D    decline: nothing is written\n"
      "  KEY=VALUE              change a decision (any row of the table; values are JSON when they parse)";
  out += examples.empty() ? ".\n" : ", e.g.\n                         " + examples + "\n";
  out += flow == "onnx" ? "  preset NAME | target T shorthands for preset=NAME and deployment_target=T\n"
                        : "  scheme NAME | hardware H    shorthands for global_scheme=NAME and hardware=H\n";
  out +=
      "  insist                 keep a choice that breaks a hard gate (recorded as a high risk)\n"
      "  show                   show the table again;  help   this text\n";
  return out;
}

}  // namespace detail

template <typename Width, typename ReadLine>
ConfirmResult confirm_loop_with(const Json& analysis, PlanRequest req, const Style& st, Width&& width, FILE* out, ReadLine&& read_line) {
  ConfirmResult result;
  const std::string flow = plan_flow(analysis);
  Json previous_rows = Json::array();
  std::set<std::string> last_changed;
  bool show = true;
  // The table, risks, questions and conflicts of `o`, laid out for the
  // terminal's width now (it is asked again after every resize).
  auto render = [&](const PlanOutcome& o, const std::set<std::string>& changed) {
    int w = width();
    std::fputs(render_decision_table(o.decision_table, st, w, changed).c_str(), out);
    std::fputs(render_risks(o.plan["risks"], st, w).c_str(), out);
    std::fputs(render_questions(o.plan["open_questions"], st, w).c_str(), out);
    std::fputs(render_conflicts(o.conflicts, st, w, /*interactive=*/true).c_str(), out);
  };
  while (true) {
    PlanOutcome o = make_plan(analysis, req);
    if (o.status == PlanStatus::kRefused) {
      result.outcome = o;
      return result;
    }
    if (o.status == PlanStatus::kInvalid) {  // only the flags can be invalid: edits are checked before they land
      result.outcome = o;
      return result;
    } else {
      result.outcome = o;
      if (show) {
        last_changed = previous_rows.empty() ? std::set<std::string>{} : detail::changed_rows(previous_rows, o.decision_table);
        render(o, last_changed);
        previous_rows = o.decision_table;
      }
    }
    show = true;
    // Missing facts first: a numbered menu of valid values.
    std::string menu_key;
    std::vector<std::string> menu;
    const Json& plan = result.outcome.plan;
    if (flow == "onnx" && plan.is_object() && plan["deployment_target"].is_null()) {
      menu_key = "deployment_target";
      menu = {"cpu", "cuda", "rocm", "npu_cnn", "npu_transformer"};
    } else if (flow == "torch" && plan.is_object() && plan.contains("hardware") && plan["hardware"].is_null()) {
      menu_key = "hardware";
      menu = {"mi300x", "mi325x", "mi355x", "h100", "h200", "b200", "a100", "l40s", "rtx4090", "cpu"};
    }
    auto show_menu = [&] {
      std::fprintf(out, "%s is not known. Choose one:\n", menu_key.c_str());
      for (size_t i = 0; i < menu.size(); ++i) std::fprintf(out, "  %zu) %s\n", i + 1, menu[i].c_str());
    };
    // Reads one answer; a terminal resized meanwhile gets the table again at
    // its new width, and the words typed so far are kept.
    auto ask = [&](const std::string& prompt, std::string& line) {
      line.clear();
      LineStatus ls;
      while ((ls = read_line(prompt, line)) == LineStatus::kResized) {
        std::fputs("\n", out);
        render(result.outcome, last_changed);
        if (!menu_key.empty()) show_menu();
      }
      return ls == LineStatus::kLine;
    };
    std::string line;
    if (!menu_key.empty()) {
      show_menu();
      if (!ask(menu_key + " [1-" + std::to_string(menu.size()) + "]> ", line)) {
        result.declined = true;
        return result;
      }
      line = detail::trim(line);
      size_t pick = 0;
      try {
        pick = std::stoul(line);
      } catch (...) {
        pick = 0;
      }
      if (pick >= 1 && pick <= menu.size()) {
        req.choices[menu_key] = menu[pick - 1];
        if (menu_key == "hardware") req.hardware = menu[pick - 1];
        continue;
      }
      if (std::count(menu.begin(), menu.end(), line)) {
        req.choices[menu_key] = line;
        continue;
      }
      // Anything else is handled as a normal answer below.
    } else {
      if (!ask("Confirm this plan? Any changes? ", line)) {
        result.declined = true;
        return result;
      }
      line = detail::trim(line);
    }
    std::string l = lower(line);
    if (l.empty()) {
      show = false;
      continue;
    }
    if (l == "no" || l == "n" || l == "q" || l == "quit") {
      result.declined = true;
      return result;
    }
    if (l == "help" || l == "?") {
      std::fputs(detail::help_text(result.outcome.decision_table, flow).c_str(), out);
      show = false;
      continue;
    }
    if (l == "show") continue;
    if (l == "insist") {
      bool keepable = false;
      for (const auto& c : result.outcome.conflicts) keepable = keepable || c.insistable;
      if (!result.outcome.conflicts.empty() && !keepable) {
        std::fprintf(out, "insist cannot keep this choice: Quark would not do what the plan says. Change it.\n");
        show = false;
        continue;
      }
      req.insist = true;
      continue;
    }
    if (l == "yes" || l == "y") {
      if (!result.outcome.conflicts.empty()) {
        bool keepable = true;
        for (const auto& c : result.outcome.conflicts) keepable = keepable && c.insistable;
        std::fprintf(out, keepable ? "There is a conflict to resolve first: change the choice or type 'insist'.\n"
                                   : "There is a conflict to resolve first: change the choice (insist cannot keep it).\n");
        show = false;
        continue;
      }
      req.confirmed = true;
      PlanOutcome fin = make_plan(analysis, req);
      result.outcome = fin;
      if (fin.plan["requires_confirmation"].get<bool>())
        std::fprintf(out, "The plan still has open questions: it is written as a draft (requires_confirmation: true).\n");
      return result;
    }
    // Shorthands and KEY=VALUE edits.
    std::string edit = line;
    for (const auto& [word, key] : std::vector<std::pair<std::string, std::string>>{
             {"preset ", "preset"}, {"scheme ", "global_scheme"}, {"target ", "deployment_target"}, {"hardware ", "hardware"}})
      if (l.rfind(word, 0) == 0) edit = key + "=" + detail::trim(line.substr(word.size()));
    if (edit.find('=') == std::string::npos) {
      std::fprintf(out, "Not understood: '%s'. Type help for the answers.\n", line.c_str());
      show = false;
      continue;
    }
    PlanRequest before = req;
    try {
      apply_set(req, flow, edit);
      if (edit.rfind("hardware=", 0) == 0) req.hardware = req.choices["hardware"].is_string() ? req.choices["hardware"].get<std::string>() : "";
      // A new calibration set is read as Quark will read it, as on the command line.
      if (flow == "onnx" && req.calib_data != "none" && !req.calib_data.empty() &&
          (req.calib_data != before.calib_data || fix_shapes_choice(req) != fix_shapes_choice(before))) {
        if (req.calib_data != before.calib_data) req.calib_data = std::filesystem::absolute(req.calib_data).lexically_normal().string();
        req.calib_data_check = inspect_calibration_data(req.calib_data, analysis, fix_shapes_choice(req));
      } else if (req.calib_data == "none") {
        req.calib_data_check = Json();
      }
    } catch (const UsageError& e) {
      std::fprintf(out, "%s\n", e.what());
      req = before;
      show = false;
      continue;
    } catch (const InputError& e) {
      std::fprintf(out, "Cannot apply that: %s\n", e.what());
      req = before;
      show = false;
      continue;
    }
    PlanOutcome trial = make_plan(analysis, req);
    if (trial.status == PlanStatus::kInvalid) {
      for (const auto& e : trial.errors) std::fprintf(out, "Cannot apply that: %s\n", e.c_str());
      req = before;  // the edit is dropped; the plan stays as it was
      show = false;
    }
  }
}

}  // namespace quarkplan::ui
