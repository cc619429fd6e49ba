// Analyses written by Quark's own intake skills (only the contract's fields)
// validate and plan.
#include <gtest/gtest.h>

#include "common/strings.h"
#include "support/test_support.h"

using namespace qp_test;
using quarkplan::Json;

TEST(QuarkInterop, SkillAnalysesValidateAndPlan) {
  TempDir d;
  fs::copy_file(testdata("quark_examples/qwen3-8b.model_analysis.json"), d / "qwen.json");
  fs::copy_file(testdata("quark_examples/resnet50.model_analysis.json"), d / "resnet.json");
  RunResult v = run_quarkplan({"validate", "qwen.json", "resnet.json"}, d.path());
  EXPECT_EQ(v.exit_code, 0) << v.out;
  RunResult t = run_quarkplan({"plan", "--analysis", "qwen.json", "--hardware", "h100", "--yes", "-o", "qwen_plan.json"}, d.path());
  ASSERT_EQ(t.exit_code, 0) << t.err;
  Json tp = Json::parse(read_file(d / "qwen_plan.json"));
  EXPECT_EQ(tp["global_scheme"], "fp8");
  EXPECT_EQ(tp["exclude_layers"], Json::array({"lm_head"}));
  EXPECT_EQ(tp["model"]["analysis_ref"], "./qwen.json");
  write_calibration_set(d / "calib", d / "resnet.json");
  RunResult o = run_quarkplan({"plan", "--analysis", "resnet.json", "--target", "npu_cnn", "--calib-data", "calib", "--yes", "-o", "resnet_plan.json"},
                              d.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  Json op = Json::parse(read_file(d / "resnet_plan.json"));
  EXPECT_EQ(op["preset"], "XINT8");
  EXPECT_EQ(op["calibration"]["method"], "PowerOfTwo_MinMSE");
  EXPECT_EQ(op["algorithms"], Json::array({"CLE"}));
  EXPECT_TRUE(op["onnx_specific"]["enable_npu_cnn"].get<bool>());
  EXPECT_EQ(run_quarkplan({"explain", "resnet_plan.json"}, d.path()).exit_code, 0);
}

#include "catalog/catalog.h"
#include "plan/plan_test_support.h"

namespace {
void paths(const Json& j, const std::string& prefix, int depth, std::vector<std::vector<std::string>>& out, std::vector<std::string>& cur) {
  if (!j.is_object() || depth > 3) return;
  for (auto& [k, v] : j.items()) {
    cur.push_back(k);
    out.push_back(cur);
    paths(v, prefix + "/" + k, depth + 1, out, cur);
    cur.pop_back();
  }
}
}  // namespace

TEST(QuarkInterop, AnySchemaValidAnalysisPlansWithoutInternalErrors) {
  // Drop each field of real analyses in turn: whenever the result still
  // validates, planning must end in a plan, a draft, a refusal or a clear
  // input error — never an exception.
  for (const Json* base : {&cnn_analysis(), &hf_analysis("qwen3-30b-a3b"), &hf_analysis("gpt-oss-20b")}) {
    std::vector<std::vector<std::string>> all;
    std::vector<std::string> cur;
    paths(*base, "", 0, all, cur);
    int tried = 0;
    for (const auto& path : all) {
      Json a = *base;
      Json* node = &a;
      for (size_t i = 0; i + 1 < path.size(); ++i) node = &(*node)[path[i]];
      node->erase(path.back());
      if (!quarkplan::validate_against_schema(a, "schemas/model_analysis.schema.json").empty()) continue;
      ++tried;
      quarkplan::PlanRequest r;
      r.confirmed = true;
      r.target = "cpu";
      r.hardware = "h100";
      EXPECT_NO_THROW(quarkplan::make_plan(a, r)) << "without " << quarkplan::join(path, ".");
    }
    EXPECT_GT(tried, 5);
  }
}
