// Accelerator, AMD recipe, schemes, KV cache: one scenario per rule of src/plan/torch/hardware_scheme_rules.cc,
// showing it fires (tests/plan/rules_test.cc runs them as All/RuleScenario.Fires/<rule>).
// Rules: torch.recipe.amd, torch.hardware.resolve, torch.scheme.choose, torch.scheme.hardware_gate,
// torch.scheme.risky, torch.kv_cache.fp8_only.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plan/rule_scenarios.h"

using quarkplan::Json;
using quarkplan::PlanRequest;
using quarkplan::PlanStatus;

namespace qp_test::rule_scenarios {

std::vector<Scenario> torch_hardware_scheme_scenarios() {
  return {
      {"torch.recipe.amd", [] {
         // Llama on MI300X: AMD's FP8-KV releases (FP8 weights, activations and KV cache).
         auto o = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; });
         EXPECT_EQ(o.plan["global_scheme"], "fp8");
         EXPECT_EQ(o.plan["kv_cache_scheme"], "fp8");
         EXPECT_TRUE(cites(o, "torch.recipe.amd") || o.plan["global_scheme"] == "fp8");
         bool named = false;
         for (const auto& row : o.decision_table)
           if (row["key"] == "global_scheme") named = row["reason"].get<std::string>().find("AMD's recipe (amd/Llama-3.1-") != std::string::npos;
         EXPECT_TRUE(named);
         // DeepSeek on MI355X: AMD's MXFP4 release, attention, routers and the MTP layer excluded.
         auto ds = plan(hf_analysis("deepseek-r1"), [](PlanRequest& r) { r.hardware = "mi355x"; });
         EXPECT_EQ(ds.plan["global_scheme"], "mxfp4");
         // The card's '*mlp.gate.*' named Quark 0.12's router child (mlp.gate.linear); in 0.13 the router is the Linear.
         EXPECT_EQ(ds.plan["exclude_layers"], Json::parse(R"(["*self_attn*","*mlp.gate","*lm_head","model.layers.61.*"])"));
         EXPECT_FALSE(cites(ds, "torch.moe.routers"));
         auto ds12 = plan(hf_analysis("deepseek-r1", "0.12.post1"), [](PlanRequest& r) { r.hardware = "mi355x"; r.quark_release = "0.12.post1"; });
         // Quark 0.12 too: it runs file to file from the FP8 release, where the router is the Linear itself.
         EXPECT_EQ(ds12.plan["exclude_layers"], Json::parse(R"(["*self_attn*","*mlp.gate","*lm_head","model.layers.61.*"])"));
         std::string dw;
         for (const auto& row : ds12.decision_table)
           if (row["key"] == "global_scheme") dw = row["reason"];
         EXPECT_NE(dw.find("AMD's card: --exclude_layers '*mlp.gate.*'; this plan: '*mlp.gate', because"), std::string::npos) << dw;
         EXPECT_EQ(dw.find("'*mlp.gate.*'; this plan: the same patterns"), std::string::npos) << dw;
         EXPECT_FALSE(cites(ds12, "torch.moe.routers"));
         // Without the router pattern, Quark 0.13 would quantize the routers: said.
         auto bare = plan(hf_analysis("deepseek-r1"), [](PlanRequest& r) {
           r.hardware = "mi355x";
           r.choices["exclude_layers"] = Json::array({"*self_attn*", "*lm_head"});
         });
         EXPECT_TRUE(cites(bare, "torch.moe.routers"));
         // AMD's Llama MXFP4 recipe (autosmoothquant with mxfp4) is not flagged as an unusual pairing.
         auto mx = plan(hf_analysis("llama-3.1-70b"), [](PlanRequest& r) { r.hardware = "mi355x"; });
         EXPECT_EQ(mx.plan["algorithm"], "autosmoothquant");
         // Released for 70B and larger: an 8B Llama does not take it.
         auto small = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi355x"; });
         EXPECT_EQ(small.plan["global_scheme"], "fp8");
         EXPECT_FALSE(cites(small, "torch.recipe.amd"));
         EXPECT_FALSE(cites(mx, "torch.algorithm.smoothquant_needs_activations"));
         // A recipe never overrides the user's scheme.
         auto own = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["global_scheme"] = "int8"; });
         EXPECT_EQ(own.plan["global_scheme"], "int8");
         EXPECT_TRUE(own.plan["kv_cache_scheme"].is_null());
       }},
      {"torch.recipe.differences", [] {
         // AMD's DeepSeek-R1 MXFP4 card quantized a BF16 conversion with --multi_gpu and --skip_evaluation. Given the FP8
         // release, the plan skips evaluation as the card does, streams the FP8 shards file to file, and says both differences.
         auto ds = plan(hf_analysis("deepseek-r1"), [](PlanRequest& r) { r.hardware = "mi355x"; r.gpus = 8; r.trust_remote_code = true; });
         ASSERT_TRUE(ds.conflicts.empty()) << ds.conflicts[0].message;
         EXPECT_EQ(ds.plan["evaluation_intent"], "none");
         EXPECT_EQ(ds.plan["device_strategy"], "file2file");
         std::string why;
         for (const auto& row : ds.decision_table)
           if (row["key"] == "global_scheme") why = row["reason"];
         EXPECT_NE(why.find("AMD's card: quantized from a BF16 conversion of the FP8 release"), std::string::npos) << why;
         EXPECT_NE(why.find("AMD's card: --multi_gpu; this plan: --quant_flow file2file, because"), std::string::npos) << why;
         EXPECT_NE(why.find("[torch.recipe.differences]"), std::string::npos);
         // The user's evaluation against the card's --skip_evaluation is named with its reason.
         auto ev = plan(hf_analysis("deepseek-r1"), [](PlanRequest& r) {
           r.hardware = "mi355x";
           r.gpus = 8;
           r.trust_remote_code = true;
           r.choices["evaluation_intent"] = "smoke";
           r.choices["device_strategy"] = "multi_gpu";
         });
         std::string evw;
         for (const auto& row : ev.decision_table)
           if (row["key"] == "global_scheme") evw = row["reason"];
         EXPECT_NE(evw.find("AMD's card: --skip_evaluation; this plan: smoke evaluation, because your choice"), std::string::npos) << evw;
         EXPECT_EQ(evw.find("AMD's card: --multi_gpu;"), std::string::npos) << evw;  // the same strategy: nothing to say
         // A recipe followed whole says nothing more.
         auto llama = plan(hf_analysis("llama-3.1-8b-instruct"), [](PlanRequest& r) { r.hardware = "mi300x"; });
         EXPECT_FALSE(cites(llama, "torch.recipe.differences"));
         // Another checkpoint of the family follows the card untested, and says so (the base model under the
         // Instruct card; Llama-3.1-70B under the Llama-3.3-70B-Instruct MXFP4 card).
         auto base = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; });
         EXPECT_NE(base.plan["reasons"].value("amd_recipe.differences", std::string()).find("AMD's card: made for Llama-3.1-8B-Instruct, Llama-3.1-70B-Instruct"),
                   std::string::npos);
         auto l70 = plan(hf_analysis("llama-3.1-70b"), [](PlanRequest& r) { r.hardware = "mi355x"; r.gpus = 8; });
         EXPECT_NE(l70.plan["reasons"].value("amd_recipe.differences", std::string())
                       .find("AMD's card: made for Llama-3.3-70B-Instruct, Llama-3.1-405B-Instruct; this plan: quantizes llama-3.1-70b, because AMD applies the recipe to its family (llama), "
                             "but published no checkpoint of this model"),
                   std::string::npos)
             << l70.plan["reasons"];
         // Kimi-K2 follows the Kimi-K2.5 card: made for another model type, with exclusions for towers K2 lacks.
         auto kimi = plan(hf_analysis("kimi-k2-instruct"), [](PlanRequest& r) { r.hardware = "mi355x"; r.gpus = 8; r.trust_remote_code = true; });
         std::string kw;
         for (const auto& row : kimi.decision_table)
           if (row["key"] == "global_scheme") kw = row["reason"];
         EXPECT_NE(kw.find("AMD's card: made for Kimi-K2.5; this plan: quantizes kimi-k2-instruct, because AMD applies the recipe to its family (kimi_k2, kimi_k25)"), std::string::npos) << kw;
         EXPECT_NE(kw.find("'*mm_projector*' '*vision_tower*'; this plan: the same patterns, which match nothing here"), std::string::npos) << kw;
         EXPECT_EQ(kw.find("AMD's card: evaluation after quantizing"), std::string::npos) << kw;  // a file-to-file card evaluated nothing
         // GLM-5's card ran file to file on one GPU; Quark 0.13 spreads it over the GPUs given.
         auto glm = plan(hf_analysis("glm-5"), [](PlanRequest& r) { r.hardware = "mi355x"; r.gpus = 8; });
         std::string gw;
         for (const auto& row : glm.decision_table)
           if (row["key"] == "global_scheme") gw = row["reason"];
         EXPECT_NE(gw.find("this plan: --multi_gpu over 8 GPUs, because Quark 0.13 runs file-to-file with one worker per visible GPU"), std::string::npos) << gw;
         // MiniMax's card runs the repository's code; a plan without that approval says why it differs.
         auto mm = plan(hf_analysis("minimax-m2.7"), [](PlanRequest& r) { r.hardware = "mi355x"; r.gpus = 8; });
         if (cites(mm, "torch.recipe.amd") && !mm.plan["trust_remote_code"].get<bool>()) EXPECT_TRUE(cites(mm, "torch.recipe.differences"));
       }},
      {"torch.hardware.resolve", [] {
         auto o = plan(hf_analysis("qwen3-8b"));
         EXPECT_EQ(o.status, PlanStatus::kDraft);
         EXPECT_TRUE(has_question(o, "accelerator"));
         auto env = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) {
           r.env_context = Json::parse(R"({"environment":{"os":"linux","python":"3.12","containerized":false},
             "hardware":{"accelerator":"amd-rocm","gpu_model":"AMD Instinct MI300X","gpu_count":8,"memory_gb":192}})");
         });
         EXPECT_EQ(env.plan["hardware"], "mi300x");
         auto bad = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "mi301x"; });
         EXPECT_EQ(bad.status, PlanStatus::kInvalid);
       }},
      {"torch.scheme.choose", [] {
         // A group-quantized default whose groups do not divide some Linear's input features takes the largest
         // group of its family that does (Nemotron-H's 1856 and gemma-4's 704 with groups of 128: 64).
         for (const auto& [model_name, hw_name] : std::vector<std::pair<std::string, std::string>>{{"nemotron-3-nano-30b-a3b-bf16", "mi300x"}, {"gemma-4-26b-a4b", "h100"}}) {
           const std::string m = model_name, hw = hw_name;  // named copies: clang's C++20 lets no lambda capture a structured binding
           auto g = plan(hf_analysis(m), [&](PlanRequest& r) { r.hardware = hw; r.gpus = 8; r.goal = "size"; });
           EXPECT_EQ(g.plan["global_scheme"], "int4_wo_64") << m;
           EXPECT_NE(g.plan["reasons"]["global_scheme"].get<std::string>().find("groups of 128 do not divide"), std::string::npos) << g.plan["reasons"]["global_scheme"];
         }
         auto o = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["global_scheme"] = "fp8"; });
         EXPECT_EQ(o.plan["global_scheme"], "fp8");
         auto bad = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["global_scheme"] = "int4_wo_256"; });
         EXPECT_EQ(bad.status, PlanStatus::kInvalid);
         EXPECT_NE(bad.errors[0].find("did you mean"), std::string::npos);
       }},
      {"torch.scheme.hardware_gate", [] {
         auto emu = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["global_scheme"] = "mxfp4"; });
         EXPECT_TRUE(cites(emu, "torch.scheme.hardware_gate"));
         EXPECT_EQ(emu.plan["hardware_support"], "emulated");
         auto nat = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "mi355x"; r.choices["global_scheme"] = "mxfp4"; });
         EXPECT_EQ(nat.plan["hardware_support"], "native");
         auto nv = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["global_scheme"] = "nvfp4"; });
         EXPECT_EQ(nv.plan["hardware_support"], "weight_only");
         auto bw = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "b200"; r.choices["global_scheme"] = "nvfp4"; });
         EXPECT_EQ(bw.plan["hardware_support"], "native");
         auto amp = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "a100"; r.choices["global_scheme"] = "fp8"; });
         EXPECT_EQ(amp.plan["hardware_support"], "weight_only");  // no FP8 compute before Ada/Hopper
         auto unsup = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "a100"; r.choices["global_scheme"] = "int4_fp8"; });
         EXPECT_EQ(unsup.status, PlanStatus::kConflict);
       }},
      {"torch.scheme.risky", [] {
         auto o = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "mi355x"; r.choices["global_scheme"] = "mxfp4"; });
         EXPECT_TRUE(cites(o, "torch.scheme.risky"));
         EXPECT_EQ(o.status, PlanStatus::kConfirmed);  // kept, recorded
       }},
      {"torch.kv_cache.fp8_only", [] {
         auto o = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "h100"; });
         EXPECT_TRUE(o.plan["kv_cache_scheme"].is_null());
         auto f = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["kv_cache_scheme"] = "fp8"; });
         EXPECT_EQ(f.plan["kv_cache_scheme"], "fp8");
         auto bad = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["kv_cache_scheme"] = "int8_per_token"; });
         EXPECT_EQ(bad.status, PlanStatus::kInvalid);
         // Declining the FP8 KV cache of AMD's *-FP8-KV recipe names it as the alternative, never
         // says the recipe leaves the cache in 16-bit.
         auto declined = plan(hf_analysis("llama-3.1-8b-instruct"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["kv_cache_scheme"] = "none"; });
         EXPECT_TRUE(declined.plan["kv_cache_scheme"].is_null());
         const std::string why = declined.plan["reasons"]["kv_cache_scheme"].get<std::string>();
         EXPECT_EQ(why.find("16-bit too"), std::string::npos) << why;
         EXPECT_NE(why.find("quantizes it to fp8 (--kv_cache_dtype fp8"), std::string::npos) << why;
       }},
  };
}

}  // namespace qp_test::rule_scenarios

namespace {

using qp_test::hf_analysis;

quarkplan::PlanOutcome goal_plan(const std::string& model, const std::string& hw, const std::string& goal) {
  PlanRequest r;
  r.confirmed = true;
  r.hardware = hw;
  r.goal = goal;
  return quarkplan::make_plan(hf_analysis(model), r);
}

// Goals that agree (issue #19's list): accuracy never quantizes the KV cache of its own accord and
// takes PTPC-FP8 on Instinct; static INT8 comes with SmoothQuant where Quark has a config for the
// model type; every goal that asks for 4 bits on one accelerator gets the same FP4 format.
TEST(Goals, AgreeAcrossAcceleratorsAndFormats) {
  for (const char* hw : {"mi300x", "mi325x", "mi355x"})
    for (const char* m : {"llama-3.1-70b", "mixtral-8x7b-v0.1", "qwen3-8b"}) {
      auto o = goal_plan(m, hw, "accuracy");
      EXPECT_EQ(o.plan["global_scheme"], "ptpc_fp8") << m << " on " << hw;
      EXPECT_TRUE(o.plan["kv_cache_scheme"].is_null()) << m << " on " << hw;
    }
  // Balanced still follows AMD's FP8-KV recipe.
  EXPECT_EQ(goal_plan("llama-3.1-70b", "mi300x", "balanced").plan["kv_cache_scheme"], "fp8");
  for (const char* hw : {"a100", "cpu"})
    for (const char* m : {"llama-3.1-8b", "mistral-7b-v0.3"}) {
      auto o = goal_plan(m, hw, "accuracy");
      EXPECT_EQ(o.plan["global_scheme"], "int8") << m << " on " << hw;
      EXPECT_EQ(o.plan["algorithm"], "smoothquant") << m << " on " << hw;
    }
  // No SmoothQuant config for the model type: none is added (qwen3's is written from the catalog).
  EXPECT_EQ(goal_plan("qwen3-8b", "a100", "accuracy").plan["algorithm"], "smoothquant");
  EXPECT_TRUE(goal_plan("gemma-2b", "a100", "accuracy").plan["algorithm"].is_null());
  for (const auto& [hw, fp4] : std::vector<std::pair<std::string, std::string>>{{"b200", "nvfp4"}, {"mi355x", "mxfp4"}})
    for (const char* goal : {"experiment", "mixed"}) EXPECT_EQ(goal_plan("qwen3-8b", hw, goal).plan["global_scheme"], fp4) << hw << " " << goal;
}

}  // namespace
