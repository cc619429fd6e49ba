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
         // What is another release's is named with that release.
         auto mx9 = plan(hf_analysis("llama-3.1-8b", "0.12.post1"), [](PlanRequest& r) {
           r.hardware = "mi355x";
           r.quark_release = "0.12.post1";
           r.choices["global_scheme"] = "mx9";
         });
         ASSERT_FALSE(mx9.errors.empty());
         EXPECT_NE(mx9.errors[0].find("is Quark 0.13's"), std::string::npos) << mx9.errors[0];
         auto ar = plan(hf_analysis("llama-3.1-8b", "0.12.post1"), [](PlanRequest& r) {
           r.hardware = "mi300x";
           r.quark_release = "0.12.post1";
           r.choices["global_scheme"] = "int4_wo_128";
           r.choices["algorithm"] = "autoround";
         });
         ASSERT_FALSE(ar.errors.empty());
         EXPECT_NE(ar.errors[0].find("--quark-version 0.13"), std::string::npos) << ar.errors[0];
         auto g4 = plan(hf_analysis("gemma-4-26b-a4b", "0.12.post1"), [](PlanRequest& r) { r.hardware = "mi355x"; r.quark_release = "0.12.post1"; });
         EXPECT_NE(g4.plan["open_questions"].dump().find("Quark 0.13 has one: plan with --quark-version 0.13"), std::string::npos) << g4.plan["open_questions"];
         // The mixed goal's attention override on a model whose template keeps attention in BF16 is left out.
         auto mixed = plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) { r.hardware = "mi355x"; r.gpus = 8; r.goal = "mixed"; });
         EXPECT_TRUE(mixed.plan["layer_quant_config"].empty()) << mixed.plan["layer_quant_config"];
         EXPECT_NE(mixed.plan["reasons"]["layer_quant_config"].get<std::string>().find("left out '*self_attn*'"), std::string::npos);
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
