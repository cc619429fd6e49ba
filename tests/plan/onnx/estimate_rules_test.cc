// Estimates: one scenario per rule of src/plan/onnx/estimate_rules.cc,
// showing it fires (tests/plan/rules_test.cc runs them as All/RuleScenario.Fires/<rule>).
// Rules: onnx.estimates.weights.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plan/rule_scenarios.h"

using quarkplan::Json;
using quarkplan::PlanRequest;
using quarkplan::PlanStatus;

namespace qp_test::rule_scenarios {

std::vector<Scenario> onnx_estimate_scenarios() {
  return {
      {"onnx.estimates.weights", [] {
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; });
         const Json& w = o.plan["estimates"]["weights"];
         ASSERT_GE(w.size(), 2u);
         EXPECT_EQ(w[0]["scheme"], "original");
         EXPECT_LT(w[1]["bytes"].get<uint64_t>(), w[0]["bytes"].get<uint64_t>());  // INT8 weights are smaller than FP32
         EXPECT_TRUE(cites(o, "onnx.estimates.weights"));
       }},
  };
}

}  // namespace qp_test::rule_scenarios
