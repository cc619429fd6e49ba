// Export format, device strategy: one scenario per rule of src/plan/torch/export_device_rules.cc,
// showing it fires (tests/plan/rules_test.cc runs them as All/RuleScenario.Fires/<rule>).
// Rules: torch.export.format, torch.device.strategy.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "plan/invocation.h"
#include "plan/rule_scenarios.h"

namespace fs = std::filesystem;
using quarkplan::PlanRequest;
using quarkplan::PlanStatus;

namespace qp_test::rule_scenarios {

std::vector<Scenario> torch_export_device_scenarios() {
  return {
      {"torch.export.format", [] {
         // GGUF needs a SentencePiece tokenizer.model (Quark raises after calibration otherwise): a Llama 3
         // config is known to have none; a folder with tokenizer.json only has none; one with it passes.
         auto l3 = plan(hf_analysis("llama-3.1-8b-instruct"), [](PlanRequest& r) { r.hardware = "cpu"; r.export_format = "gguf"; r.insist = true; });
         ASSERT_EQ(l3.status, PlanStatus::kConflict);
         EXPECT_NE(l3.conflicts[0].message.find("Llama 3"), std::string::npos) << l3.conflicts[0].message;
         EXPECT_FALSE(l3.conflicts[0].insistable);
         for (const char* tok : {"tokenizer.json", "tokenizer.model"}) {
           TempDir d;
           fs::copy_file(testdata("hf/llama-2-7b-chat-hf/config.json"), d / "config.json");
           std::ofstream(d / tok) << "{}";
           std::ofstream(d / "tokenizer_config.json") << "{}";
           auto o = plan(analysis_of(d.path()), [](PlanRequest& r) { r.hardware = "cpu"; r.export_format = "gguf"; });
           if (std::string(tok) == "tokenizer.json") {
             ASSERT_EQ(o.status, PlanStatus::kConflict) << tok;
             EXPECT_NE(o.conflicts[0].message.find("tokenizer.model"), std::string::npos);
           } else {
             EXPECT_TRUE(o.conflicts.empty()) << o.conflicts[0].message;
             for (const auto& k : o.plan["risks"]) EXPECT_EQ(k["message"].get<std::string>().find("tokenizer.model"), std::string::npos) << k["message"];
           }
         }
         auto o = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "cpu"; r.export_format = "gguf"; });
         EXPECT_EQ(o.plan["global_scheme"], "uint4_wo_32");
         EXPECT_EQ(o.plan["algorithm"], "awq");
         auto c = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "cpu"; r.export_format = "gguf"; r.choices["global_scheme"] = "fp8"; });
         EXPECT_EQ(c.status, PlanStatus::kConflict);
         // ONNX export of a dynamic-activation scheme: one closest alternative (same family, native), not a list.
         auto onnx = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.export_format = "onnx"; r.choices["global_scheme"] = "ptpc_fp8"; });
         ASSERT_EQ(onnx.status, PlanStatus::kConflict);
         EXPECT_EQ(onnx.conflicts[0].alternative, "fp8");
         // Real Quark (tests/quark_real/run_torch.py) rewrites a qwen2 model's eos_token in the
         // tokenizer it saves: the plan says so and puts the source's file back after Quark; on
         // Ryzen AI that comes before model_generate. Other model types keep theirs.
         for (const char* hw : {"mi300x", "ryzen-ai"}) {
           auto q = plan(hf_analysis("qwen2.5-7b-instruct"), [&](PlanRequest& r) { r.hardware = hw; });
           ASSERT_TRUE(q.plan["post_quark_steps"].is_array()) << hw;
           EXPECT_EQ(q.plan["post_quark_steps"][1], "cp <MODEL_DIR>/tokenizer_config.json <OUTPUT_DIR>/tokenizer_config.json") << hw;
           bool said = false;
           for (const auto& k : q.plan["risks"]) said = said || k["message"].get<std::string>().find("eos_token") != std::string::npos;
           EXPECT_TRUE(said) << q.plan["risks"];
         }
         auto llama = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; });
         EXPECT_FALSE(llama.plan.contains("post_quark_steps")) << llama.plan["post_quark_steps"];
       }},
      {"torch.device.strategy", [] {
         auto o = plan(hf_analysis("llama-3.1-70b"), [](PlanRequest& r) { r.hardware = "rtx4090"; r.choices["global_scheme"] = "int4_wo_128"; });
         EXPECT_TRUE(cites(o, "torch.device.strategy"));
         EXPECT_EQ(o.plan["device_strategy"], "multi_gpu");
         // Static scales on too few GPUs: Quark 0.13 calibrates block by block from CPU memory; 0.12 offloads (--multi_device).
         auto pb = plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) {
           r.hardware = "mi300x";
           r.gpus = 1;
           r.choices["global_scheme"] = "fp8";
           r.choices["kv_cache_scheme"] = nullptr;
         });
         EXPECT_EQ(pb.plan["device_strategy"], "per_block");
         EXPECT_EQ(pb.plan["accelerators_needed"], 1);
         EXPECT_EQ(pb.plan["evaluation_intent"], "none");  // Quark would skip it: the model does not fit
         auto inv = quarkplan::plan_invocation(pb.plan, hf_analysis("deepseek-v3"));
         EXPECT_NE(inv.text.find("--quant_flow per_block"), std::string::npos) << inv.text;
         EXPECT_EQ(inv.text.find("--multi_"), std::string::npos) << inv.text;
         auto md = plan(hf_analysis("deepseek-v3", "0.12.post1"), [](PlanRequest& r) {
           r.hardware = "mi300x";
           r.gpus = 1;
           r.quark_release = "0.12.post1";
           r.choices["global_scheme"] = "fp8";
           r.choices["kv_cache_scheme"] = nullptr;
         });
         EXPECT_EQ(md.plan["device_strategy"], "multi_device");
         auto pb12 = plan(hf_analysis("llama-3.1-8b", "0.12.post1"), [](PlanRequest& r) {
           r.hardware = "mi300x";
           r.quark_release = "0.12.post1";
           r.choices["device_strategy"] = "per_block";
         });
         ASSERT_EQ(pb12.status, PlanStatus::kInvalid);
         EXPECT_NE(pb12.errors[0].find("--quark-version 0.13"), std::string::npos) << pb12.errors[0];
         // The user's choice wins when the plan can run that way, keeping the risk.
         auto single = plan(hf_analysis("llama-3.1-70b"), [](PlanRequest& r) {
           r.hardware = "rtx4090";
           r.choices["global_scheme"] = "int4_wo_128";
           r.choices["device_strategy"] = "single";
         });
         EXPECT_EQ(single.plan["device_strategy"], "single");
         // --multi_gpu over a single visible GPU spreads nothing: said as a risk.
         auto one = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) {
           r.hardware = "mi300x";
           r.choices["device_strategy"] = "multi_gpu";
         });
         bool said = false;
         for (const auto& k : one.plan["risks"]) said = said || k["message"].get<std::string>().find("spreads nothing") != std::string::npos;
         EXPECT_TRUE(said) << one.plan["risks"];
         EXPECT_TRUE(cites(single, "torch.device.strategy"));
         EXPECT_EQ(single.status, PlanStatus::kConfirmed);
       }},
  };
}

}  // namespace qp_test::rule_scenarios
