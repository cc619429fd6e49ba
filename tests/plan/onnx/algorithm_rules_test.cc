// Algorithms: one scenario per rule of src/plan/onnx/algorithm_rules.cc,
// showing it fires (tests/plan/rules_test.cc runs them as All/RuleScenario.Fires/<rule>).
// Rules: onnx.algorithms.defaults, onnx.algorithms.compatibility, onnx.algorithms.exclusive,
// onnx.algorithms.at_most_two, onnx.algorithms.cle_transformer, onnx.combination.mx_without_amp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plan/rule_scenarios.h"

using quarkplan::Json;
using quarkplan::PlanRequest;
using quarkplan::PlanStatus;

namespace qp_test::rule_scenarios {

std::vector<Scenario> onnx_algorithm_scenarios() {
  return {
      {"onnx.algorithms.defaults", [] {
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; });
         EXPECT_EQ(o.plan["algorithms"], Json::array({"CLE"}));
         EXPECT_TRUE(o.plan["onnx_specific"]["include_cle"].get<bool>());
         auto acc = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; r.goal = "accuracy"; });
         EXPECT_EQ(acc.plan["preset"], "XINT8_ADAROUND");
         EXPECT_EQ(acc.plan["algorithms"], Json::array({"CLE", "AdaRound"}));  // the preset runs AdaRound itself: listed once
         EXPECT_TRUE(acc.plan["onnx_specific"]["include_fast_ft"].get<bool>());
       }},
      {"onnx.algorithms.compatibility", [] {
         auto o = plan(transformer_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["algorithms"] = "AutoMixprecision"; });
         EXPECT_TRUE(cites(o, "onnx.algorithms.compatibility"));
         // BiasCorrection: Quark raises KeyError on any quantized Conv/Gemm (catalog quark_fails_on,
         // seen in tests/quark_real): a conflict even with --insist; a MatMul-only model runs it.
         for (bool insist : {false, true}) {
           auto bc = plan(cnn_analysis(), [&](PlanRequest& r) { r.target = "cpu"; r.choices["algorithms"] = "BiasCorrection"; r.insist = insist; });
           ASSERT_EQ(bc.status, PlanStatus::kConflict);
           EXPECT_NE(bc.conflicts[0].message.find("KeyError"), std::string::npos) << bc.conflicts[0].message;
         }
         auto mm = plan(transformer_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["algorithms"] = "BiasCorrection"; });
         EXPECT_NE(mm.status, PlanStatus::kConflict);
       }},
      {"onnx.algorithms.exclusive", [] {
         // Quark keeps only one of AdaRound/AdaQuant: both in the plan is a conflict --insist cannot keep.
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["algorithms"] = "AdaRound,AdaQuant"; });
         ASSERT_EQ(o.status, PlanStatus::kConflict);
         EXPECT_EQ(o.conflicts[0].rule, "onnx.algorithms.exclusive");
         auto i = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["algorithms"] = "AdaRound,AdaQuant"; r.insist = true; });
         EXPECT_EQ(i.status, PlanStatus::kConflict);
         // A preset that runs AdaRound itself plus --algorithm AdaQuant: the twin preset is the way out, and it passes.
         auto x = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; r.choices["preset"] = "XINT8_ADAROUND"; r.choices["algorithms"] = "AdaQuant"; });
         ASSERT_EQ(x.status, PlanStatus::kConflict);
         EXPECT_EQ(x.conflicts[0].alternative, "--preset XINT8_ADAQUANT (AdaQuant built in)");
         auto a = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["preset"] = "A8W8_ADAROUND"; r.choices["algorithms"] = "AdaQuant"; });
         ASSERT_EQ(a.status, PlanStatus::kConflict);
         EXPECT_EQ(a.conflicts[0].alternative, "--preset A8W8_ADAQUANT (AdaQuant built in)");
         auto twin = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; r.choices["preset"] = "XINT8_ADAQUANT"; });
         EXPECT_EQ(twin.status, PlanStatus::kConfirmed);
       }},
      {"onnx.algorithms.at_most_two", [] {
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["algorithms"] = Json::parse(R"(["CLE","SmoothQuant","AdaRound"])"); });
         EXPECT_TRUE(cites(o, "onnx.algorithms.at_most_two"));
         EXPECT_EQ(o.status, PlanStatus::kConfirmed);  // recorded, kept
       }},
      {"onnx.algorithms.cle_transformer", [] {
         auto o = plan(transformer_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["algorithms"] = "CLE"; });
         EXPECT_TRUE(cites(o, "onnx.algorithms.cle_transformer"));
       }},
      {"onnx.combination.mx_without_amp", [] {
         auto o = plan(transformer_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["preset"] = "MXFP4E2M1"; r.custom_ops_compile_ok = true; });
         EXPECT_TRUE(cites(o, "onnx.combination.mx_without_amp"));
       }},
  };
}

}  // namespace qp_test::rule_scenarios
