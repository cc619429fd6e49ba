// Every row of the decision table is editable or says why not (issue #11,
// item 3), and prompt edits are range-checked like the flags.
#include <gtest/gtest.h>

#include "common/error.h"
#include "plan/plan_test_support.h"
#include "ui/confirm.h"

using namespace qp_test;
using quarkplan::Json;
using quarkplan::PlanRequest;
using quarkplan::PlanStatus;

namespace {

// Sets every row of `o`'s table to its own value: each is accepted, or
// refused with a sentence that says why it is not editable.
void every_row_editable_or_explained(const quarkplan::PlanOutcome& o) {
  for (const auto& row : o.decision_table) {
    std::string key = row["key"];
    PlanRequest r;
    std::string value = row["value"].dump();
    if (key == "calibration.data_path" && row["value"].is_null()) value = "none";
    try {
      quarkplan::apply_set(r, o.flow, key + "=" + value);
    } catch (const quarkplan::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("is not editable"), std::string::npos) << key << ": " << e.what();
    }
  }
}

}  // namespace

TEST(Editing, EveryTorchRowIsEditableOrSaysWhyNot) {
  PlanRequest r;
  r.hardware = "mi300x";
  auto o = quarkplan::make_plan(hf_analysis("qwen3-8b"), r);
  ASSERT_GE(o.decision_table.size(), 12u);
  every_row_editable_or_explained(o);
  PlanRequest t;
  EXPECT_THROW(quarkplan::apply_set(t, "torch", "estimated_size=5"), quarkplan::UsageError);
  quarkplan::apply_set(t, "torch", "export_format=gguf");
  EXPECT_EQ(t.export_format, "gguf");
  quarkplan::apply_set(t, "torch", "device_strategy=multi_gpu");
  EXPECT_EQ(t.choices["device_strategy"], "multi_gpu");
  quarkplan::apply_set(t, "torch", "device_strategy=file-to-file");
  EXPECT_EQ(t.choices["device_strategy"], "file2file");
  quarkplan::apply_set(t, "torch", "trust_remote_code=true");
  EXPECT_TRUE(t.trust_remote_code);
  EXPECT_THROW(quarkplan::apply_set(t, "torch", "device_strategy=somewhere"), quarkplan::UsageError);
  EXPECT_THROW(quarkplan::apply_set(t, "torch", "export_format=tflite"), quarkplan::UsageError);
}

TEST(Editing, EveryOnnxRowIsEditableOrSaysWhyNot) {
  PlanRequest r;
  r.target = "npu_cnn";
  auto o = quarkplan::make_plan(cnn_analysis(), r);
  every_row_editable_or_explained(o);
  PlanRequest t;
  try {
    quarkplan::apply_set(t, "onnx", "backend=torch");
    ADD_FAILURE() << "backend accepted";
  } catch (const quarkplan::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("it follows the model"), std::string::npos) << e.what();
  }
  TempDir d;
  quarkplan::apply_set(t, "onnx", "calibration.data_path=" + d.path().string());
  EXPECT_EQ(t.calib_data, d.path().string());
  EXPECT_THROW(quarkplan::apply_set(t, "onnx", "calibration.data_path=/no/such/calibration/set"), quarkplan::InputError);
}

TEST(Editing, ExportFormatAndDeviceStrategyAtThePromptChangeThePlan) {
  PlanRequest r;
  r.hardware = "rtx4090";
  std::vector<std::string> answers = {"export_format=gguf", "algorithm=none", "device_strategy=multi_device", "num_calib_data=0", "yes"};
  size_t next = 0;
  std::string screen;
  FILE* out = std::tmpfile();
  // Mixtral: a model type Quark's GGUF writer takes, with a SentencePiece tokenizer (a Llama 3 has none).
  auto res = quarkplan::ui::confirm_loop_with(hf_analysis("mixtral-8x7b-v0.1"), r, quarkplan::ui::Style{false}, [] { return 100; }, out,
                                              [&](const std::string&, std::string& line) {
                                                using quarkplan::ui::LineStatus;
                                                if (next == answers.size()) return LineStatus::kEnd;
                                                line = answers[next++];
                                                return LineStatus::kLine;
                                              });
  std::rewind(out);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, out)) > 0) screen.append(buf, n);
  std::fclose(out);
  ASSERT_FALSE(res.declined);
  const Json& plan = res.outcome.plan;
  EXPECT_EQ(plan["export_format"], "gguf");
  EXPECT_EQ(plan["global_scheme"].get<std::string>().rfind("uint4_wo", 0), 0u);  // GGUF needs uint4 weight-only
  EXPECT_EQ(plan["device_strategy"], "multi_device");
  EXPECT_NE(screen.find("Cannot apply that: calibration.num_calib_data must be a whole number from 1 to 1000000 (got 0)"), std::string::npos) << screen;
  EXPECT_EQ(plan["calibration"]["num_calib_data"], 128);  // the bad edit was dropped
  EXPECT_EQ(plan["request"]["export_format"], "gguf");
}

TEST(Editing, FileToFileRefusedForAPlanThatCalibrates) {
  PlanRequest r;
  r.hardware = "rtx4090";
  r.confirmed = true;
  r.choices["global_scheme"] = "fp8";
  r.choices["device_strategy"] = "file2file";
  auto o = quarkplan::make_plan(hf_analysis("llama-3.1-70b"), r);
  EXPECT_EQ(o.status, PlanStatus::kConflict);
  ASSERT_EQ(o.conflicts.size(), 1u);
  EXPECT_EQ(o.conflicts[0].rule, "torch.device.strategy");
  EXPECT_EQ(o.conflicts[0].alternative, "multi_gpu");
}

// `help` at the prompt gives KEY=VALUE examples from the plan's own rows, so
// each is an edit this plan accepts, and the shorthands of its flow.
TEST(Editing, HelpExamplesComeFromThePlansOwnRows) {
  auto help_screen = [](const Json& analysis, PlanRequest r) {
    std::vector<std::string> answers = {"help", "no"};
    size_t next = 0;
    FILE* out = std::tmpfile();
    quarkplan::ui::confirm_loop_with(analysis, r, quarkplan::ui::Style{false}, [] { return 100; }, out, [&](const std::string&, std::string& line) {
      using quarkplan::ui::LineStatus;
      if (next == answers.size()) return LineStatus::kEnd;
      line = answers[next++];
      return LineStatus::kLine;
    });
    std::string screen;
    std::rewind(out);
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, out)) > 0) screen.append(buf, n);
    std::fclose(out);
    return screen.substr(screen.find("Answers:"));
  };
  auto examples_of = [](const std::string& help) {
    size_t eg = help.find("e.g.\n");
    std::string line = help.substr(eg + 5, help.find('\n', eg + 5) - eg - 5);
    std::vector<std::string> out;
    for (size_t s = line.find_first_not_of(' '); s != std::string::npos;) {
      size_t e = line.find("  ", s);
      out.push_back(line.substr(s, e == std::string::npos ? std::string::npos : e - s));
      s = e == std::string::npos ? e : line.find_first_not_of(' ', e);
    }
    return out;
  };
  PlanRequest onnx;
  onnx.target = "npu_cnn";
  std::string o = help_screen(cnn_analysis(), onnx);
  EXPECT_EQ(o.find("algorithm=awq"), std::string::npos) << o;
  EXPECT_EQ(o.find("exclude_layers"), std::string::npos) << o;
  EXPECT_EQ(o.find("scheme NAME"), std::string::npos) << o;
  EXPECT_NE(o.find("calibration.method=PowerOfTwo_MinMSE"), std::string::npos) << o;
  EXPECT_NE(o.find("preset NAME | target T"), std::string::npos) << o;
  PlanRequest torch;
  torch.hardware = "mi300x";
  std::string t = help_screen(hf_analysis("llama-3.1-8b"), torch);
  EXPECT_EQ(t.find("calibration.method"), std::string::npos) << t;
  EXPECT_NE(t.find("global_scheme=fp8"), std::string::npos) << t;
  EXPECT_NE(t.find("scheme NAME | hardware H"), std::string::npos) << t;
  // Every example is an edit the plan takes.
  for (const auto& [flow, help] : {std::pair<std::string, std::string>{"onnx", o}, {"torch", t}}) {
    auto ex = examples_of(help);
    EXPECT_GE(ex.size(), 2u) << help;
    for (const auto& e : ex) {
      PlanRequest r = flow == "onnx" ? onnx : torch;
      EXPECT_NO_THROW(quarkplan::apply_set(r, flow, e)) << e;
      auto res = quarkplan::make_plan(flow == "onnx" ? cnn_analysis() : hf_analysis("llama-3.1-8b"), r);
      EXPECT_TRUE(res.errors.empty()) << e;
    }
  }
}
