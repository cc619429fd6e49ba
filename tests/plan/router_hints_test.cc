// MoE models without a Quark template (issue #9 item 3): the router names are
// data of each family, so the template suggestion and the plan's router risk
// name the pattern that keeps them in float, and the hybrid-layer risk counts
// only the mixers that replace attention.
#include <gtest/gtest.h>

#include "plan/plan_test_support.h"

using namespace qp_test;
using quarkplan::Json;

namespace {

const Json* risk_of(const Json& risks, const std::string& rule) {
  for (const auto& r : risks)
    if (r.value("rule", "") == rule) return &r;
  return nullptr;
}

}  // namespace

TEST(RouterHints, TemplateSuggestionAndRouterRiskNameTheFamilysRouterPattern) {
  struct Case {
    const char* dir;
    const char* pattern;
  };
  for (const Case& c : std::vector<Case>{{"phi-mini-moe-instruct", "*block_sparse_moe.gate"},
                                         {"granite-3.1-1b-a400m-instruct", "*block_sparse_moe.router.layer"},
                                         {"nemotron-3-nano-30b-a3b-bf16", "*mixer.gate"}}) {
    const Json& a = hf_analysis(c.dir);
    const Json* nt = risk_of(a["risks"], "torch.intake.no_template");
    ASSERT_NE(nt, nullptr) << c.dir;
    EXPECT_NE((*nt)["recovery_hint"].get<std::string>().find("exclude_layers_name=['lm_head', '" + std::string(c.pattern) + "'"), std::string::npos)
        << c.dir << ": " << (*nt)["recovery_hint"];
    auto o = quarkplan::make_plan(a, [] {
      quarkplan::PlanRequest r;
      r.hardware = "mi355x";
      r.gpus = 8;
      return r;
    }());
    ASSERT_FALSE(o.plan.is_null()) << c.dir;
    const Json* rr = risk_of(o.plan["risks"], "torch.moe.routers");
    ASSERT_NE(rr, nullptr) << c.dir;
    EXPECT_NE((*rr)["recovery_hint"].get<std::string>().find("--exclude '" + std::string(c.pattern) + "'"), std::string::npos)
        << c.dir << ": " << (*rr)["recovery_hint"];
  }
}

TEST(RouterHints, HybridLayerRiskCountsOnlyTheMixersThatReplaceAttention) {
  const Json* n = risk_of(hf_analysis("nemotron-3-nano-30b-a3b-bf16")["risks"], "torch.intake.hybrid_layers");
  ASSERT_NE(n, nullptr);
  EXPECT_NE((*n)["message"].get<std::string>().find("23 Mamba (state-space) layers of 52"), std::string::npos) << (*n)["message"];
  const Json* q = risk_of(hf_analysis("qwen3-next-80b-a3b-thinking")["risks"], "torch.intake.hybrid_layers");
  ASSERT_NE(q, nullptr);
  EXPECT_NE((*q)["message"].get<std::string>().find("36 linear-attention layers of 48"), std::string::npos) << (*q)["message"];
  EXPECT_EQ(risk_of(hf_analysis("llama-3.1-8b")["risks"], "torch.intake.hybrid_layers"), nullptr);
}
