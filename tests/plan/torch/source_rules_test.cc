// What the model source decides: one scenario per rule of src/plan/torch/source_rules.cc,
// showing it fires (tests/plan/rules_test.cc runs them as All/RuleScenario.Fires/<rule>).
// Rules: torch.analysis.complete, torch.refuse.pre_quantized, torch.pre_quantized.dequantized,
// torch.template.required, torch.remote_code.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plan/rule_scenarios.h"

using quarkplan::Json;
using quarkplan::PlanRequest;
using quarkplan::PlanStatus;

namespace qp_test::rule_scenarios {

std::vector<Scenario> torch_source_scenarios() {
  return {
      {"torch.transformers.required", [] {
         // Transformers 5 model types: a medium risk naming Quark's and the runtime's environment.
         auto mm = plan(hf_analysis("minimax-m2.7"), [](PlanRequest& r) { r.hardware = "mi300x"; r.gpus = 8; r.goal = "size"; });
         bool named = false;
         for (const auto& k : mm.plan["risks"])
           named = named || (k["rule"] == "torch.transformers.required" && k["severity"] == "medium" &&
                             k["message"].get<std::string>().find("minimax_m2 needs transformers >= 5.0.0 in the Quark environment") != std::string::npos &&
                             k["message"].get<std::string>().find("and vLLM's") != std::string::npos &&
                             k["recovery_hint"].get<std::string>().find("--trust-remote-code") != std::string::npos);
         EXPECT_TRUE(named) << mm.plan["risks"];
         // Its serve-the-source alternative says so too.
         auto bal = plan(hf_analysis("minimax-m2.7"), [](PlanRequest& r) { r.hardware = "mi300x"; r.gpus = 8; });
         ASSERT_FALSE(bal.conflicts.empty());
         EXPECT_NE(bal.conflicts[0].alternative.find("with a vLLM built on transformers >= 5.0.0, which knows minimax_m2"), std::string::npos) << bal.conflicts[0].alternative;
         // Within the usual major release (Qwen3's 4.51): nothing said; Qwen3.5 (transformers 5.2): said, without remote code.
         auto q3 = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; });
         for (const auto& k : q3.plan["risks"]) EXPECT_NE(k["rule"], "torch.transformers.required");
         auto q35 = plan(hf_analysis("qwen3.5-9b-transformers-default"), [](PlanRequest& r) { r.hardware = "mi300x"; });
         bool q35_named = false;
         for (const auto& k : q35.plan["risks"])
           q35_named = q35_named || (k["rule"] == "torch.transformers.required" && k["recovery_hint"].get<std::string>().find("--trust-remote-code") == std::string::npos);
         EXPECT_TRUE(q35_named) << q35.plan["risks"];
         // Model types transformers added after the template's minimum (catalog transformers_model_types): GLM-5 (5.2),
         // DeepSeek-V3.2 (5.11), which Quark 0.12.post1 (transformers < 5.3) cannot load at all: a conflict --insist cannot keep.
         auto glm = plan(hf_analysis("glm-5"), [](PlanRequest& r) { r.hardware = "mi300x"; r.gpus = 8; r.choices["global_scheme"] = "fp8"; });
         bool glm_named = false;
         for (const auto& k : glm.plan["risks"])
           glm_named = glm_named || (k["rule"] == "torch.transformers.required" && k["message"].get<std::string>().find("glm_moe_dsa needs transformers >= 5.2.0") != std::string::npos);
         EXPECT_TRUE(glm_named) << glm.plan["risks"];
         auto d32 = plan(hf_analysis("deepseek-v3.2", "0.12.post1"), [](PlanRequest& r) {
           r.hardware = "mi300x";
           r.gpus = 8;
           r.goal = "size";
           r.quark_release = "0.12.post1";
           r.insist = true;
         });
         ASSERT_FALSE(d32.conflicts.empty());
         EXPECT_EQ(d32.conflicts[0].rule, "torch.transformers.required");
         EXPECT_NE(d32.conflicts[0].message.find("deepseek_v32 needs transformers >= 5.11.0, and Quark 0.12.post1 supports transformers <5.3"), std::string::npos)
             << d32.conflicts[0].message;
         EXPECT_EQ(d32.conflicts[0].alternative.rfind("--quark-version 0.13", 0), 0u) << d32.conflicts[0].alternative;
       }},
      {"torch.analysis.complete", [] {
         Json a = with(hf_analysis("qwen3-8b"), "analysis_status", "partial");
         a["partial_reasons"] = Json::array({"2 weight shard(s) named by the index are missing"});
         auto o = plan(a, [](PlanRequest& r) { r.hardware = "mi300x"; });
         EXPECT_EQ(o.status, PlanStatus::kDraft);
         EXPECT_TRUE(has_question(o, "weight shard"));
       }},
      {"torch.refuse.pre_quantized", [] {
         auto o = plan(with(hf_analysis("qwen3-8b"), "model.pre_quantized", "awq"), [](PlanRequest& r) { r.hardware = "mi300x"; });
         EXPECT_EQ(o.status, PlanStatus::kRefused);
         auto fp8 = plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) { r.hardware = "mi355x"; });
         EXPECT_NE(fp8.status, PlanStatus::kRefused);  // dequantizable on load: planned, with a risk
         EXPECT_TRUE(cites(fp8, "torch.pre_quantized.dequantized"));
       }},
      {"torch.pre_quantized.dequantized", [] {
         // gpt-oss-20b ships MXFP4 experts: Quark loads it dequantized to BF16, so
         // calibration needs the BF16 size. Balanced would keep 8 bits, larger than the
         // source: the outcome is serving the source as it is (exit 2, said so). The size
         // goal's default is a native scheme smaller than the source; an FP8 plan the user
         // insists on is larger, and says so.
         auto bal = plan(hf_analysis("gpt-oss-20b"), [](PlanRequest& r) { r.hardware = "mi300x"; });
         ASSERT_EQ(bal.status, PlanStatus::kConflict);
         EXPECT_EQ(bal.conflicts[0].rule, "torch.pre_quantized.serve_source");
         EXPECT_EQ(bal.conflicts[0].alternative.rfind("serve the source as it is (vllm serve ", 0), 0u) << bal.conflicts[0].alternative;
         // (On MI300X the size goal for MoE is AMD's W4A8, PTPC-FP8 layers with int4_fp8 experts: vLLM's released
         // MoE loader takes those, not INT4 weight-only experts.)
         auto dflt = plan(hf_analysis("gpt-oss-20b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.goal = "size"; });
         EXPECT_EQ(dflt.plan["global_scheme"], "ptpc_fp8");
         EXPECT_EQ(dflt.plan["layer_quant_config"], Json({{"*.experts*", "int4_fp8"}}));
         // Per-layer schemes the user gives are the user's alone: the goal adds none beside them.
         auto own = plan(hf_analysis("qwen3-30b-a3b"), [](PlanRequest& r) {
           r.hardware = "mi300x";
           r.goal = "size";
           r.choices["layer_quant_config.*.experts*"] = "int4_fp8";
           r.choices["layer_quant_config.*down_proj"] = "int4_fp8";
         });
         EXPECT_EQ(own.plan["layer_quant_config"], Json({{"*.experts*", "int4_fp8"}, {"*down_proj", "int4_fp8"}})) << own.plan["layer_quant_config"];
         EXPECT_LT(dflt.plan["estimates"]["weights"][1]["bytes"].get<uint64_t>(), dflt.plan["estimates"]["weights"][0]["bytes"].get<uint64_t>());
         ASSERT_EQ(dflt.plan["estimates"]["weights"][1]["scheme"], "ptpc_fp8");  // [0] is the original
         EXPECT_LT(dflt.plan["estimates"]["weights"][1]["bytes"].get<uint64_t>(), dflt.plan["estimates"]["weights"][0]["bytes"].get<uint64_t>());
         auto o = plan(hf_analysis("gpt-oss-20b"), [](PlanRequest& r) {
           r.hardware = "mi300x";
           r.insist = true;
           r.choices["global_scheme"] = "fp8";
         });
         ASSERT_NE(o.status, PlanStatus::kRefused);
         bool load = false, larger = false;
         for (const auto& r : o.plan["risks"]) {
           if (r["rule"] != "torch.pre_quantized.dequantized" && r["rule"] != "torch.pre_quantized.serve_source") continue;
           EXPECT_EQ(r["severity"], "high");
           load = load || r["message"].get<std::string>().find("dequantizes it to BF16 on load") != std::string::npos;
           larger = larger || (r["rule"] == "torch.pre_quantized.serve_source" &&
                               r["message"].get<std::string>().find("is not half a bit per weight smaller than its already-quantized source") != std::string::npos);
         }
         EXPECT_TRUE(load);
         EXPECT_TRUE(larger);
         EXPECT_GT(o.plan["estimates"]["fit"]["calibration_load_bytes"].get<uint64_t>(), 2 * o.plan["estimates"]["weights"][0]["bytes"].get<uint64_t>());
       }},
      {"torch.template.required", [] {
         auto o = plan(hf_analysis("olmo-3.1-32b-instruct"), [](PlanRequest& r) { r.hardware = "mi300x"; });
         EXPECT_EQ(o.status, PlanStatus::kDraft);
         EXPECT_TRUE(has_question(o, "register_template"));
       }},
      {"torch.remote_code", [] {
         auto o = plan(hf_analysis("chatglm2-6b"), [](PlanRequest& r) { r.hardware = "mi300x"; });
         EXPECT_EQ(o.status, PlanStatus::kDraft);
         EXPECT_FALSE(o.plan["trust_remote_code"].get<bool>());
         auto ok = plan(hf_analysis("chatglm2-6b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.trust_remote_code = true; });
         EXPECT_EQ(ok.status, PlanStatus::kConfirmed);
         EXPECT_TRUE(ok.plan["trust_remote_code"].get<bool>());
         // An approval a model does not need is said to be unused, not silently dropped.
         auto unneeded = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.trust_remote_code = true; });
         EXPECT_FALSE(unneeded.plan["trust_remote_code"].get<bool>());
         EXPECT_NE(unneeded.plan["reasons"]["trust_remote_code"].dump().find("your approval is not used"), std::string::npos)
             << unneeded.plan["reasons"]["trust_remote_code"];
       }},
  };
}

}  // namespace qp_test::rule_scenarios
