// The Quark release of a plan, in both flows: one scenario per rule of
// src/plan/release_rules.cc (tests/plan/rules_test.cc runs them as All/RuleScenario.Fires/<rule>).
// Rules: onnx.quark_release, torch.quark_release.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plan/rule_scenarios.h"

using quarkplan::Json;
using quarkplan::PlanRequest;

namespace qp_test::rule_scenarios {

namespace {
const Json* risk_of(const quarkplan::PlanOutcome& o, const std::string& rule) {
  for (const auto& r : o.plan["risks"])
    if (r["rule"] == rule) return &r;
  return nullptr;
}
}  // namespace

std::vector<Scenario> release_scenarios() {
  return {
      {"torch.quark_release", [] {
         // The newest by default, named in the table with why.
         auto o = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; });
         EXPECT_EQ(o.plan["quark_release"], "0.13");
         EXPECT_TRUE(cites(o, "torch.quark_release"));
         EXPECT_NE(o.plan["reasons"]["quark_release"].get<std::string>().find("newest"), std::string::npos);
         // Asked for 0.13 on a machine that reports 0.12.post1 installed: a medium risk.
         auto other = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) {
           r.hardware = "mi300x";
           r.quark_release = "0.13";
           r.quark_release_source = "--quark-version";
           r.installed_quark_version = "0.12.post1";
           r.installed_quark_source = "env_context.json";
         });
         const Json* risk = risk_of(other, "torch.quark_release");
         ASSERT_NE(risk, nullptr);
         EXPECT_EQ((*risk)["severity"], "medium");
         EXPECT_NE((*risk)["message"].get<std::string>().find("reports amd-quark 0.12.post1 installed"), std::string::npos);
         // The installed one itself: no risk ("0.12" names 0.12.post1).
         auto same = plan(hf_analysis("llama-3.1-8b", "0.12.post1"), [](PlanRequest& r) {
           r.hardware = "mi300x";
           r.quark_release = "0.12.post1";
           r.quark_release_source = "env_context.json";
           r.installed_quark_version = "0.12";
           r.installed_quark_source = "env_context.json";
         });
         EXPECT_EQ(risk_of(same, "torch.quark_release"), nullptr);
         EXPECT_EQ(same.plan["quark_release"], "0.12.post1");
       }},
      {"onnx.quark_release", [] {
         Json a = cnn_analysis();
         a["intake"]["quark_release"] = "0.12.post1";
         auto o = plan(a, [](PlanRequest& r) {
           r.target = "cpu";
           r.quark_release = "0.12.post1";
           r.quark_release_source = "onnx_install_result.json";
           r.installed_quark_version = "0.12.post1";
           r.installed_quark_source = "onnx_install_result.json";
         });
         EXPECT_EQ(o.plan["quark_release"], "0.12.post1");
         EXPECT_NE(o.plan["reasons"]["quark_release"].get<std::string>().find("onnx_install_result.json reports installed"), std::string::npos);
         auto other = plan(cnn_analysis(), [](PlanRequest& r) {
           r.target = "cpu";
           r.quark_release_source = "--quark-version";
           r.installed_quark_version = "0.12.post1";
           r.installed_quark_source = "onnx_install_result.json";
         });
         EXPECT_NE(risk_of(other, "onnx.quark_release"), nullptr);
       }},
  };
}

}  // namespace qp_test::rule_scenarios
