// Calibration: one scenario per rule of src/plan/onnx/calibration_rules.cc,
// showing it fires (tests/plan/rules_test.cc runs them as All/RuleScenario.Fires/<rule>).
// Rules: onnx.calibration.method, onnx.calibration.sizes, onnx.calibration.data,
// onnx.calibration.outlier_percentile, onnx.calibration.layerwise_percentile,
// onnx.weight_stats.exclude_outliers, onnx.evaluation_intent.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plan/rule_scenarios.h"

using quarkplan::Json;
using quarkplan::PlanRequest;
using quarkplan::PlanStatus;

namespace qp_test::rule_scenarios {

std::vector<Scenario> onnx_calibration_scenarios() {
  return {
      {"onnx.calibration.moving_average", [] {
         // Yours, with PowerOfTwo_NonOverflow (the power-of-two method that reads it): refused with the switch-off as the alternative.
         auto o = plan(cnn_analysis(), [](PlanRequest& r) {
           r.target = "npu_cnn";
           r.choices["calibration.method"] = "PowerOfTwo_NonOverflow";
           r.choices["onnx_specific.extra_options.CalibMovingAverage"] = true;
         });
         ASSERT_EQ(o.status, PlanStatus::kConflict);
         EXPECT_EQ(o.conflicts[0].rule, "onnx.calibration.moving_average");
         EXPECT_EQ(o.conflicts[0].alternative, "onnx_specific.extra_options.CalibMovingAverage=false");
         // The preset's own (INT8_TRANSFORMER_DEFAULT) with a calibration that ignores it: a low risk.
         auto t = plan(transformer_analysis(), [](PlanRequest& r) {
           r.target = "npu_transformer";
           r.choices["preset"] = "INT8_TRANSFORMER_DEFAULT";
           r.choices["calibration.method"] = "Percentile";
         });
         bool low = false;
         for (const auto& k : t.plan["risks"]) low = low || (k["rule"] == "onnx.calibration.moving_average" && k["severity"] == "low");
         EXPECT_TRUE(low) << t.plan["risks"].dump();
         // PowerOfTwo_MinMSE never reads it: a low "no effect".
         auto mse = plan(cnn_analysis(), [](PlanRequest& r) {
           r.target = "npu_cnn";
           r.choices["onnx_specific.extra_options.CalibMovingAverage"] = true;
         });
         EXPECT_EQ(mse.status, PlanStatus::kConfirmed);
         bool mse_low = false;
         for (const auto& k : mse.plan["risks"]) mse_low = mse_low || (k["rule"] == "onnx.calibration.moving_average" && k["severity"] == "low");
         EXPECT_TRUE(mse_low) << mse.plan["risks"].dump();
         // MinMax reads it: nothing to say.
         auto m = plan(transformer_analysis(), [](PlanRequest& r) {
           r.target = "npu_transformer";
           r.choices["preset"] = "INT8_TRANSFORMER_DEFAULT";
         });
         EXPECT_FALSE(cites(m, "onnx.calibration.moving_average"));
       }},
      {"onnx.calibration.method", [] {
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; });
         EXPECT_EQ(o.plan["calibration"]["method"], "PowerOfTwo_MinMSE");
         auto u = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; r.choices["calibration.method"] = "NonOverflow"; });
         EXPECT_EQ(u.plan["calibration"]["method"], "PowerOfTwo_NonOverflow");  // alias resolved
         auto bad = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["calibration.method"] = "MinMix"; });
         EXPECT_EQ(bad.status, PlanStatus::kInvalid);
       }},
      {"onnx.calibration.sizes", [] {
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; });
         EXPECT_EQ(o.plan["calibration"]["data_size"], 200);
         EXPECT_EQ(o.plan["calibration"]["batch_size"], 1);
         auto b = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["calibration.batch_size"] = 8; });
         EXPECT_EQ(b.status, PlanStatus::kInvalid);
         auto s = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["calibration.data_size"] = 10; });
         EXPECT_TRUE(cites(s, "onnx.calibration.sizes"));
       }},
      {"onnx.calibration.data", [] {
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.calib_data = "none"; });
         EXPECT_EQ(o.status, PlanStatus::kDraft);
         EXPECT_TRUE(has_question(o, "calibration set"));
         auto unsaid = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.calib_data = ""; });
         EXPECT_EQ(unsaid.status, PlanStatus::kDraft);  // Quark's planning guide: asked before the plan is final
         EXPECT_TRUE(has_question(unsaid, "--calib-data PATH"));
         auto given = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; });
         EXPECT_EQ(given.status, PlanStatus::kConfirmed);
         EXPECT_EQ(given.plan["calibration"]["data_path"], "calibration_set/");
       }},
      {"onnx.calibration.outlier_percentile", [] {
         auto o = plan(outlier_transformer_analysis(), [](PlanRequest& r) { r.target = "cpu"; });
         EXPECT_EQ(o.plan["calibration"]["method"], "Percentile");
         EXPECT_NE(o.plan["reasons"]["calibration.method"].get<std::string>().find("onnx.calibration.outlier_percentile"), std::string::npos);
         // Without --weight-stats, the preset's own method stays.
         auto n = plan(transformer_analysis(), [](PlanRequest& r) { r.target = "cpu"; });
         EXPECT_EQ(n.plan["calibration"]["method"], "MinMax");
       }},
      {"onnx.calibration.layerwise_percentile", [] {
         auto o = plan(outlier_transformer_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.goal = "accuracy"; });
         EXPECT_EQ(o.plan["calibration"]["method"], "LayerWisePercentile");
         EXPECT_NE(o.plan["reasons"]["calibration.method"].get<std::string>().find("onnx.calibration.layerwise_percentile"), std::string::npos);
         // Your own method wins.
         auto mine = plan(outlier_transformer_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.goal = "accuracy"; r.choices["calibration.method"] = "MinMax"; });
         EXPECT_EQ(mine.plan["calibration"]["method"], "MinMax");
       }},
      {"onnx.weight_stats.exclude_outliers", [] {
         auto o = plan(outlier_transformer_analysis(), [](PlanRequest& r) { r.target = "cpu"; });
         EXPECT_EQ(o.plan["onnx_specific"]["nodes_to_exclude"], Json::array({"/layers.3/q_proj/MatMul"}));
         EXPECT_NE(o.plan["reasons"]["onnx_specific.nodes_to_exclude"].get<std::string>().find("onnx.weight_stats.exclude_outliers"), std::string::npos);
         // 16-bit weights need no exclusion; your own list wins.
         auto bf = plan(outlier_transformer_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["preset"] = "BF16"; });
         EXPECT_TRUE(bf.plan["onnx_specific"]["nodes_to_exclude"].is_null());
         auto mine = plan(outlier_transformer_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["onnx_specific.nodes_to_exclude"] = Json::array(); });
         EXPECT_EQ(mine.plan["onnx_specific"]["nodes_to_exclude"], Json::array());
       }},
      {"onnx.evaluation_intent", [] {
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["evaluation_intent"] = "mAP"; });
         EXPECT_EQ(o.plan["evaluation_intent"], "mAP");
         auto bad = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["evaluation_intent"] = "full"; });
         EXPECT_EQ(bad.status, PlanStatus::kInvalid);
       }},
  };
}

}  // namespace qp_test::rule_scenarios
