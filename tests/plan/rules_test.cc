// Every rule alone: one scenario per registered rule, showing it fires; a
// meta-test checks that no registered rule lacks a scenario. The scenarios live
// beside their rule families (tests/plan/onnx/*_rules_test.cc,
// tests/plan/torch/*_rules_test.cc, declared in plan/rule_scenarios.h).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "plan/plan_test_support.h"
#include "plan/rule_scenarios.h"
#include "plan/rules.h"

using namespace qp_test;
using namespace qp_test::rule_scenarios;
using quarkplan::PlanOutcome;
using quarkplan::PlanRequest;

namespace {

// Every family's scenarios in one list.
std::vector<Scenario> scenarios() {
  std::vector<Scenario> all;
  for (auto family : {onnx_target_preset_scenarios, onnx_calibration_scenarios, onnx_algorithm_scenarios, onnx_npu_scenarios, onnx_npu_generation_scenarios, onnx_target_kind_scenarios, onnx_interface_scenarios, onnx_per_channel_scenarios, onnx_layer_preset_scenarios,
                      onnx_option_scenarios, onnx_estimate_scenarios, torch_source_scenarios, torch_hardware_scheme_scenarios, torch_exclusion_scenarios,
                      torch_algorithm_calibration_scenarios, torch_export_device_scenarios, torch_fit_scenarios, torch_serve_scenarios, release_scenarios}) {
    std::vector<Scenario> f = family();
    all.insert(all.end(), f.begin(), f.end());
  }
  return all;
}

}  // namespace

TEST(Rules, EveryRegisteredRuleHasAScenario) {
  std::set<std::string> covered;
  for (const auto& s : scenarios()) covered.insert(s.rule);
  for (const auto& r : quarkplan::rule_registry()) EXPECT_TRUE(covered.count(r.id)) << "no scenario for rule " << r.id;
  for (const auto& id : covered) EXPECT_NE(quarkplan::find_rule(id), nullptr) << id << " is not registered";
}

TEST(Rules, IdsArePurposefulAndUnique) {
  std::set<std::string> ids;
  for (const auto& r : quarkplan::rule_registry()) {
    EXPECT_TRUE(ids.insert(r.id).second) << r.id;
    EXPECT_GT(std::string(r.purpose).size(), 10u) << r.id;
    EXPECT_EQ(std::string(r.id).rfind(std::string(r.flow) + ".", 0), 0u) << r.id;
  }
}

class RuleScenario : public ::testing::TestWithParam<Scenario> {};
TEST_P(RuleScenario, Fires) { GetParam().check(); }
INSTANTIATE_TEST_SUITE_P(All, RuleScenario, ::testing::ValuesIn(scenarios()), [](const auto& info) {
  std::string n = info.param.rule;
  for (auto& c : n)
    if (c == '.') c = '_';
  return n;
});

TEST(Rules, EveryCitedRuleIsRegistered) {
  // Across a spread of plans, every rule a reason or risk names exists.
  std::vector<PlanOutcome> outs = {
      plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; }),
      plan(transformer_analysis(), [](PlanRequest& r) { r.target = "cuda"; r.goal = "accuracy"; }),
      plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) { r.hardware = "mi355x"; r.choices["kv_cache_scheme"] = "fp8"; }),
      plan(hf_analysis("gpt-oss-20b"), [](PlanRequest& r) { r.hardware = "h100"; r.goal = "size"; })};
  for (const auto& o : outs) {
    ASSERT_FALSE(o.plan.is_null());
    for (const auto& r : o.plan["risks"]) EXPECT_NE(quarkplan::find_rule(r["rule"]), nullptr) << r["rule"];
    for (auto& [k, v] : o.plan["reasons"].items()) {
      std::string t = v;
      auto l = t.rfind('['), rb = t.rfind(']');
      ASSERT_NE(l, std::string::npos) << k << ": " << t;
      EXPECT_NE(quarkplan::find_rule(t.substr(l + 1, rb - l - 1)), nullptr) << k << ": " << t;
    }
  }
}
