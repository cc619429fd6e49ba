// Exclusions, per-layer schemes: one scenario per rule of src/plan/torch/exclusion_rules.cc,
// showing it fires (tests/plan/rules_test.cc runs them as All/RuleScenario.Fires/<rule>).
// Rules: torch.exclude.nothing_quantized, torch.exclude.template_defaults, torch.layer_quant_config.patterns,
// torch.exclude.lm_head, torch.moe.routers, torch.weight_stats.outliers, torch.exclude.release_matching.
#include <gtest/gtest.h>

#include <algorithm>

#include <string>
#include <vector>

#include "common/resources.h"
#include "plan/rule_scenarios.h"

using quarkplan::Json;
using quarkplan::PlanRequest;
using quarkplan::PlanStatus;

namespace qp_test::rule_scenarios {

std::vector<Scenario> torch_exclusion_scenarios() {
  return {
      {"torch.exclude.nothing_quantized", [] {
         auto o = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["exclude_layers"] = Json::array({"*"}); });
         ASSERT_EQ(o.status, PlanStatus::kInvalid);
         EXPECT_NE(o.errors[0].find("would quantize nothing"), std::string::npos) << o.errors[0];
       }},
      {"torch.exclude.template_defaults", [] {
         // DeepSeek's template excludes lm_head, attention and the routers (without an AMD recipe: h100).
         // Quark 0.13's template dropped the router's '.linear' child (0.13 routers are Linear themselves).
         auto o = plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) { r.hardware = "h100"; });
         EXPECT_EQ(o.plan["exclude_layers"], Json::parse(R"(["lm_head","*self_attn*","*mlp.gate"])"));
         auto o12 = plan(hf_analysis("deepseek-v3", "0.12.post1"), [](PlanRequest& r) { r.hardware = "h100"; r.quark_release = "0.12.post1"; });
         EXPECT_EQ(o12.plan["exclude_layers"], Json::parse(R"(["lm_head","*self_attn*","*mlp.gate","*mlp.gate.linear"])"));
         // Llama 3.2 Vision: a text-only forward skips the 20 cross-attention decoder layers, so where the plan
         // calibrates (FP8's static scales) they join the exclusions; PTPC-FP8 (dynamic) needs no calibration and keeps them.
         {
           auto count_cross = [](const quarkplan::PlanOutcome& x) {
             int n = 0;
             for (const auto& p : x.plan["exclude_layers"]) n += p.get<std::string>().rfind("model.language_model.layers.", 0) == 0;
             return n;
           };
           auto fp8 = plan(hf_analysis("llama-3.2-90b-vision-instruct"), [](PlanRequest& r) { r.hardware = "mi300x"; r.gpus = 2; });
           ASSERT_EQ(fp8.plan["global_scheme"], "fp8");
           EXPECT_EQ(count_cross(fp8), 20);
           EXPECT_TRUE(std::count(fp8.plan["exclude_layers"].begin(), fp8.plan["exclude_layers"].end(), Json("model.language_model.layers.3.*")));
           EXPECT_NE(fp8.plan["reasons"]["exclude_layers"].get<std::string>().find("a text-only forward skips them"), std::string::npos);
           auto ptpc = plan(hf_analysis("llama-3.2-90b-vision-instruct"), [](PlanRequest& r) { r.hardware = "mi300x"; r.gpus = 2; r.choices["global_scheme"] = "ptpc_fp8"; });
           EXPECT_EQ(count_cross(ptpc), 0);
           // No template in the plan's release: the defaults are quarkplan's own, and the reason says so.
           auto g4 = plan(hf_analysis("gemma-4-26b-a4b", "0.12.post1"), [](PlanRequest& r) { r.hardware = "mi300x"; r.quark_release = "0.12.post1"; });
           EXPECT_EQ(g4.plan["reasons"]["exclude_layers"].get<std::string>().rfind("No gemma4 template in Quark 0.12.post1, so quarkplan's own default (lm_head)", 0), 0u)
               << g4.plan["reasons"]["exclude_layers"];
           // A text model has no such layers: nothing added.
           auto text = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; });
           EXPECT_EQ(text.plan["exclude_layers"], Json::parse(R"(["lm_head"])"));
         }
         // A recipe pattern written for Quark 0.12 naming a block ('model.layers.3.mlp': 0.12 also excluded the
         // modules under it) gets its '.*' form under 0.13, which matches verbatim; 0.12 plans keep it as written.
         {
           TempDir cat;
           Json torch = quarkplan::parse_json(std::string(quarkplan::embedded_resource("catalog/torch.json")), "torch");
           for (auto& rec : torch["amd_recipes"])
             if (rec["id"] == "amd/DeepSeek-R1-0528-MXFP4") rec["exclude_layers"] = Json::array({"*self_attn*", "*lm_head", "model.layers.3.mlp"});
           write_file(cat / "torch.json", torch.dump());
           const std::string dir = cat.path().string();
           auto now = plan(hf_analysis("deepseek-v3"), [&](PlanRequest& r) { r.hardware = "mi355x"; r.gpus = 8; r.catalog_dir = dir; });
           EXPECT_EQ(now.plan["exclude_layers"], Json::parse(R"(["*self_attn*","*lm_head","model.layers.3.mlp","model.layers.3.mlp.*","model.layers.61.*"])"));
           EXPECT_NE(now.plan["reasons"]["exclude_layers"].get<std::string>().find("'model.layers.3.mlp.*' added"), std::string::npos);
           auto old = plan(hf_analysis("deepseek-v3", "0.12.post1"), [&](PlanRequest& r) { r.hardware = "mi355x"; r.gpus = 8; r.catalog_dir = dir; r.quark_release = "0.12.post1"; });
           EXPECT_EQ(old.plan["exclude_layers"], Json::parse(R"(["*self_attn*","*lm_head","model.layers.3.mlp","model.layers.61.*"])"));
         }
         // A user's block pattern that names no Linear under verbatim matching says what 0.12 did and the '.*' form.
         auto block = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["exclude_layers"] = Json::array({"model.layers.0"}); });
         ASSERT_EQ(block.status, PlanStatus::kInvalid);
         EXPECT_NE(block.errors[0].find("'model.layers.0.*' excludes the 7 modules under it"), std::string::npos) << block.errors[0];
         auto block12 = plan(hf_analysis("llama-3.1-8b", "0.12.post1"), [](PlanRequest& r) {
           r.hardware = "mi300x";
           r.quark_release = "0.12.post1";
           r.choices["exclude_layers"] = Json::array({"model.layers.0"});
         });
         EXPECT_EQ(block12.status, PlanStatus::kConfirmed);
         auto rep = plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) { r.hardware = "mi355x"; r.choices["exclude_layers"] = Json::array({"lm_head"}); });
         EXPECT_EQ(rep.plan["exclude_layers"], Json::array({"lm_head"}));  // replaces, never appends
         EXPECT_TRUE(cites(rep, "torch.exclude.template_defaults"));
         auto typo = plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) { r.hardware = "mi355x"; r.choices["exclude_layers"] = Json::array({"*self_atn*"}); });
         EXPECT_EQ(typo.status, PlanStatus::kInvalid);
         // What is dropped is what the patterns no longer match: AMD's DeepSeek MXFP4 list
         // ('*lm_head', '*mlp.gate.*') still covers lm_head and the routers.
         auto recipe = plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) { r.hardware = "mi355x"; });
         EXPECT_EQ(recipe.plan["reasons"]["exclude_layers"].get<std::string>().find("no longer excluded"), std::string::npos)
             << recipe.plan["reasons"]["exclude_layers"];
         auto text_differs = plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) {
           r.hardware = "h100";
           r.choices["exclude_layers"] = Json::parse(R"(["*lm_head","*self_attn*","*.gate"])");
         });
         EXPECT_EQ(text_differs.plan["reasons"]["exclude_layers"].get<std::string>().find("no longer excluded"), std::string::npos)
             << text_differs.plan["reasons"]["exclude_layers"];
       }},
      {"torch.layer_quant_config.patterns", [] {
         auto o = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "mi355x"; r.choices["global_scheme"] = "mxfp4"; r.choices["layer_quant_config.*self_attn*"] = "fp8"; });
         EXPECT_EQ(o.plan["layer_quant_config"], Json::parse(R"({"*self_attn*":"fp8"})"));
         auto none = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "mi355x"; r.choices["layer_quant_config.*attention*"] = "fp8"; });
         EXPECT_EQ(none.status, PlanStatus::kInvalid);  // matches nothing: an error, not a silent no-op
         EXPECT_NE(none.errors[0].find("matches none"), std::string::npos);
         auto scheme = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "mi355x"; r.choices["layer_quant_config.*self_attn*"] = "fp9"; });
         EXPECT_EQ(scheme.status, PlanStatus::kInvalid);
       }},
      {"torch.exclude.lm_head", [] {
         auto o = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["exclude_layers"] = Json::array(); });
         EXPECT_TRUE(cites(o, "torch.exclude.lm_head"));
       }},
      {"torch.moe.routers", [] {
         auto o = plan(hf_analysis("qwen3-30b-a3b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["exclude_layers"] = Json::array({"lm_head"}); });
         EXPECT_TRUE(cites(o, "torch.moe.routers"));
         auto ok = plan(hf_analysis("qwen3-30b-a3b"), [](PlanRequest& r) { r.hardware = "h100"; });
         EXPECT_FALSE(cites(ok, "torch.moe.routers"));
       }},
      {"torch.kv_cache.layers_kept", [] {
         // DeepSeek's MLA caches through kv_b_proj: excluding all attention leaves the FP8 KV cache uncalibrated.
         auto o = plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) {
           r.hardware = "mi355x";
           r.choices["kv_cache_scheme"] = "fp8";
           r.choices["exclude_layers"] = Json::array({"*self_attn*", "lm_head"});
         });
         ASSERT_EQ(o.status, PlanStatus::kConflict);
         EXPECT_EQ(o.conflicts[0].rule, "torch.kv_cache.layers_kept");
         // AMD's MXFP4 recipe on MI355X excludes the attention too: asked for an FP8 KV cache, the same finding.
         auto recipe = plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) { r.hardware = "mi355x"; r.choices["kv_cache_scheme"] = "fp8"; });
         EXPECT_TRUE(cites(recipe, "torch.kv_cache.layers_kept"));
         // So does the deepseek_v3 template itself (it excludes *self_attn*); a Llama keeps its k/v projections: no finding.
         EXPECT_TRUE(cites(plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["kv_cache_scheme"] = "fp8"; }), "torch.kv_cache.layers_kept"));
         auto ok = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["kv_cache_scheme"] = "fp8"; });
         EXPECT_FALSE(cites(ok, "torch.kv_cache.layers_kept"));
       }},
      {"torch.exclude.release_matching", [] {
         // A block name is all of layer 0 under 0.12 and nothing under 0.13: the 0.12 plan says so.
         auto o = plan(hf_analysis("llama-3.1-8b", "0.12.post1"), [](PlanRequest& r) {
           r.hardware = "mi300x";
           r.quark_release = "0.12.post1";
           r.choices["exclude_layers"] = Json::array({"lm_head", "model.layers.0"});
         });
         ASSERT_TRUE(cites(o, "torch.exclude.release_matching"));
         for (const auto& r : o.plan["risks"])
           if (r["rule"] == "torch.exclude.release_matching") {
             EXPECT_NE(r["message"].get<std::string>().find("'model.layers.0' (7 here, 0 under 0.13)"), std::string::npos) << r["message"];
             EXPECT_EQ(r["message"].get<std::string>().find("lm_head"), std::string::npos) << r["message"];  // the same in both
           }
         // Patterns that mean the same in both releases say nothing.
         auto same = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["exclude_layers"] = Json::array({"lm_head", "*o_proj"}); });
         EXPECT_FALSE(cites(same, "torch.exclude.release_matching"));
       }},
      {"torch.weight_stats.outliers", [] {
         Json a = hf_analysis("qwen3-8b");
         a["weight_stats"] = {{"outlier_modules", Json::array({"model.layers.3.mlp.down_proj", "lm_head"})}};
         auto o = plan(a, [](PlanRequest& r) { r.hardware = "h100"; });
         EXPECT_TRUE(cites(o, "torch.weight_stats.outliers"));
         bool names_it = false;
         for (const auto& r : o.plan["risks"])
           if (r["rule"] == "torch.weight_stats.outliers") {
             names_it = r["message"].get<std::string>().find("layers.3.mlp.down_proj") != std::string::npos;
             EXPECT_EQ(r["message"].get<std::string>().find("lm_head"), std::string::npos);  // lm_head is excluded already
           }
         EXPECT_TRUE(names_it);
       }},
  };
}

}  // namespace qp_test::rule_scenarios

namespace {
// Multimodal models (issue #19 item 5): the non-text towers the template's defaults leave in are
// excluded; a tower the template excludes already adds nothing; a user's own list is taken as given.
TEST(Multimodal, TowersTheTemplateLeavesInAreExcluded) {
  auto mllama = qp_test::rule_scenarios::plan(qp_test::hf_analysis("llama-3.2-90b-vision-instruct"), [](PlanRequest& r) { r.hardware = "mi300x"; r.gpus = 8; });
  const Json& ex = mllama.plan["exclude_layers"];
  EXPECT_TRUE(std::count(ex.begin(), ex.end(), Json("model.vision_model.*"))) << ex;
  EXPECT_TRUE(std::count(ex.begin(), ex.end(), Json("model.multi_modal_projector"))) << ex;
  for (const char* d : {"*lm_head", "*patch_embedding", "multi_modal_projector"}) EXPECT_TRUE(std::count(ex.begin(), ex.end(), Json(d))) << d;
  for (const char* m : {"gemma-3-27b-it-resaved", "qwen3-vl-30b-a3b-instruct"}) {
    auto o = qp_test::rule_scenarios::plan(qp_test::hf_analysis(m), [](PlanRequest& r) { r.hardware = "mi300x"; r.gpus = 8; });
    EXPECT_EQ(o.plan["exclude_layers"], qp_test::hf_analysis(m)["quantization_targets"]["exclude_defaults"]) << m;
  }
  auto own = qp_test::rule_scenarios::plan(qp_test::hf_analysis("llama-3.2-90b-vision-instruct"), [](PlanRequest& r) {
    r.hardware = "mi300x";
    r.gpus = 8;
    r.choices["exclude_layers"] = Json::array({"*lm_head"});
  });
  EXPECT_EQ(own.plan["exclude_layers"], Json::array({"*lm_head"}));
}
}  // namespace
