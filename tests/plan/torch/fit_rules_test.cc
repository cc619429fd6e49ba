// Whether the model fits: one scenario per rule of src/plan/torch/fit_rules.cc,
// showing it fires (tests/plan/rules_test.cc runs them as All/RuleScenario.Fires/<rule>).
// Rules: torch.fit.accelerators.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plan/rule_scenarios.h"
#include "ui/estimates_view.h"

using quarkplan::Json;
using quarkplan::PlanRequest;

namespace qp_test::rule_scenarios {

std::vector<Scenario> torch_fit_scenarios() {
  return {
      {"torch.fit.accelerators", [] {
         auto o = plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) { r.hardware = "mi300x"; r.goal = "size"; });
         const Json& fit = o.plan["estimates"]["fit"];
         EXPECT_FALSE(fit["fits"].get<bool>());
         EXPECT_GT(fit["calibration_accelerators"].get<int64_t>(), 1);
         EXPECT_EQ(o.plan["accelerators_needed"], fit["calibration_accelerators"]);
         EXPECT_TRUE(cites(o, "torch.fit.accelerators"));
         // DeepSeek's MTP layer (model.layers.61) is in the checkpoint, but serving loads it only for speculative decoding.
         const Json& w = o.plan["estimates"]["weights"][1];
         uint64_t kv_bytes = o.plan["estimates"]["kv_cache"]["bytes"];
         EXPECT_LT(fit["deployment_bytes"].get<uint64_t>(), w["bytes"].get<uint64_t>() + kv_bytes);
         EXPECT_GT(fit["deployment_bytes"].get<uint64_t>() + (10ull << 30), w["bytes"].get<uint64_t>() + kv_bytes);  // one layer, not more
         EXPECT_NE(fit["method"].get<std::string>().find("of MTP layers, loaded only for speculative decoding"), std::string::npos) << fit["method"];
         auto llama = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; });
         EXPECT_EQ(llama.plan["estimates"]["fit"]["method"].get<std::string>().find("MTP"), std::string::npos);
         // An MI250X module is two 64 GiB GPUs to ROCm (two GCDs): the fit counts GCDs.
         auto gcd = plan(hf_analysis("llama-3.1-70b"), [](PlanRequest& r) { r.hardware = "mi250x"; });
         EXPECT_NE(gcd.plan["risks"].dump().find("mi250x (64.0 GiB each)"), std::string::npos) << gcd.plan["risks"].dump();
         // Fewer accelerators than calibration needs: the default AWQ is left out and the shards are streamed.
         auto few = plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) { r.hardware = "mi300x"; r.gpus = 2; r.goal = "size"; });
         EXPECT_EQ(few.plan["device_strategy"], "file2file");
         EXPECT_TRUE(few.plan["algorithm"].is_null());
         // Streamed, the calibration holds no whole model: only serving decides the fit, and the view says so.
         EXPECT_EQ(few.plan["estimates"]["fit"]["calibration_streamed"], "file2file");
         EXPECT_EQ(few.plan["estimates"]["fit"]["fits"].get<bool>(), few.plan["estimates"]["fit"]["deployment_accelerators"].get<int64_t>() <= 2);
         std::string view = quarkplan::ui::render_estimates(few.plan["estimates"], quarkplan::ui::Style{false}, 200);
         EXPECT_NE(view.find("calibration streamed (file2file"), std::string::npos) << view;
         // No count given: the count needed, never DOES NOT FIT.
         std::string uncounted = quarkplan::ui::render_estimates(o.plan["estimates"], quarkplan::ui::Style{false}, 200);
         EXPECT_EQ(uncounted.find("DOES NOT FIT"), std::string::npos) << uncounted;
         EXPECT_NE(uncounted.find("(give --gpus N to check)"), std::string::npos) << uncounted;
         // When the KV cache is most of what serving holds, an FP8 KV cache is the first lever named.
         auto kv = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "h100"; r.context = 32768; r.batch = 64; });
         bool lever = false;
         for (const auto& r : kv.plan["risks"])
           lever = lever || r["recovery_hint"].get<std::string>().rfind("The KV cache is", 0) == 0 && r["recovery_hint"].get<std::string>().find("--kv-cache fp8") != std::string::npos;
         EXPECT_TRUE(lever) << kv.plan["risks"];
         // No count given: --multi_gpu is one process on one host, so a calibration beyond a node (8 GPUs)
         // is planned for one node, never CUDA_VISIBLE_DEVICES=0..20.
         auto node = plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) { r.hardware = "h100"; r.goal = "size"; });
         EXPECT_NE(node.plan["device_strategy"], "multi_gpu");
         EXPECT_NE(node.plan["reasons"]["device_strategy"].get<std::string>().find("one node holds 8"), std::string::npos) << node.plan["reasons"]["device_strategy"];
         // The user's own AWQ cannot be streamed: a high risk naming both counts.
         auto own = plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) { r.hardware = "mi300x"; r.gpus = 2; r.goal = "size"; r.choices["algorithm"] = "awq"; });
         EXPECT_EQ(own.plan["device_strategy"], "multi_gpu");
         bool said = false;
         for (const auto& r : own.plan["risks"])
           said = said || (r["severity"] == "high" && r["message"].get<std::string>().find("only 2 are available") != std::string::npos);
         EXPECT_TRUE(said);
         // Static scales cannot be streamed either: Quark 0.13 calibrates block by block; 0.12 offloads to CPU.
         auto fp8 = plan(hf_analysis("llama-3.1-70b"), [](PlanRequest& r) { r.hardware = "h100"; r.gpus = 2; });
         EXPECT_EQ(fp8.plan["device_strategy"], "per_block");
         auto fp8_12 = plan(hf_analysis("llama-3.1-70b", "0.12.post1"), [](PlanRequest& r) { r.hardware = "h100"; r.gpus = 2; r.quark_release = "0.12.post1"; });
         EXPECT_EQ(fp8_12.plan["device_strategy"], "multi_device");
         // Memory is stated in one unit everywhere: GiB.
         auto dense = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; });
         EXPECT_TRUE(dense.plan["estimates"]["fit"]["fits"].get<bool>());
       }},
  };
}

}  // namespace qp_test::rule_scenarios
