// Algorithms, calibration, evaluation: one scenario per rule of src/plan/torch/algorithm_calibration_rules.cc,
// showing it fires (tests/plan/rules_test.cc runs them as All/RuleScenario.Fires/<rule>).
// Rules: torch.algorithm.int4_needs_optimizer, torch.algorithm.choose, torch.algorithm.model_support,
// torch.algorithm.awq_needs_int4, torch.algorithm.smoothquant_needs_activations, torch.algorithm.at_most_two,
// torch.calibration.defaults, torch.calibration.data, torch.evaluation_intent.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plan/invocation.h"
#include "plan/rule_scenarios.h"

using quarkplan::Json;
using quarkplan::PlanRequest;
using quarkplan::PlanStatus;

namespace qp_test::rule_scenarios {

std::vector<Scenario> torch_algorithm_calibration_scenarios() {
  return {
      {"torch.algorithm.int4_needs_optimizer", [] {
         auto o = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["global_scheme"] = "int4_wo_64"; r.choices["algorithm"] = nullptr; });
         EXPECT_TRUE(o.plan["algorithm"].is_null());
         bool said = false;
         for (const auto& r : o.plan["risks"])
           if (r["rule"] == "torch.algorithm.int4_needs_optimizer")
             said = r["message"].get<std::string>().find("without AWQ or GPTQ") != std::string::npos && r["recovery_hint"].get<std::string>().find("--algorithm awq") != std::string::npos;
         EXPECT_TRUE(said);
         auto awq = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["global_scheme"] = "int4_wo_64"; });
         EXPECT_EQ(awq.plan["algorithm"], "awq");  // the rule's choice when the user names none
       }},
      {"torch.algorithm.choose", [] {
         auto o = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.goal = "size"; });
         EXPECT_EQ(o.plan["global_scheme"], "int4_wo_128");  // the smallest grouped INT4 (the guide's int4_wo_32 is the alternative)
         EXPECT_EQ(o.plan["algorithm"], "awq");
         auto two = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["global_scheme"] = "int4_wo_128"; r.choices["algorithm"] = "rotation,gptq"; });
         EXPECT_EQ(two.plan["algorithm"], "rotation,gptq");
         auto bad = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["algorithm"] = "quarot"; });
         EXPECT_EQ(bad.status, PlanStatus::kInvalid);
       }},
      {"torch.algorithm.model_support", [] {
         // qwen3_moe: no built-in AWQ or GPTQ, and no catalog config: the user's AWQ is a conflict, the guide's dropped.
         auto o = plan(hf_analysis("qwen3-30b-a3b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["global_scheme"] = "int4_wo_128"; r.choices["algorithm"] = "awq"; });
         EXPECT_EQ(o.status, PlanStatus::kConflict);
         auto g = plan(hf_analysis("qwen3-30b-a3b"), [](PlanRequest& r) { r.hardware = "h100"; r.goal = "size"; });  // (on MI300X the size goal is W4A8, no AWQ)
         EXPECT_TRUE(g.plan["algorithm"].is_null());  // the guide's AWQ is dropped, with the reason
         EXPECT_TRUE(cites(g, "torch.algorithm.model_support"));
         // Dense qwen3: Quark has none built in, the catalog has one; the plan writes it and the command reads it.
         for (const auto& [hw_name, algo] : std::vector<std::pair<std::string, std::string>>{{"ryzen-ai", "awq"}, {"a100", "smoothquant"}}) {
           const std::string hw = hw_name;  // a named copy: clang's C++20 lets no lambda capture a structured binding
           auto q = plan(hf_analysis("qwen3-8b"), [&](PlanRequest& r) { r.hardware = hw; });
           ASSERT_EQ(q.plan["algorithm"], algo) << hw;
           const Json& f = q.plan["algorithm_config_files"][algo];
           EXPECT_EQ(f["path"], "./" + algo + "_config_qwen3.json");
           EXPECT_EQ(f["config"]["name"], algo == "awq" ? "awq" : "smooth");
           EXPECT_EQ(f["config"]["model_decoder_layers"], "model.layers");
           quarkplan::Invocation inv = quarkplan::plan_invocation(q.plan, hf_analysis("qwen3-8b"));
           EXPECT_NE(inv.text.find("--quant_algo_config_file " + algo + " ./" + algo + "_config_qwen3.json"), std::string::npos) << inv.text;
           ASSERT_EQ(inv.files.size(), 1u);
           EXPECT_EQ(Json::parse(inv.files[0]["content"].get<std::string>()), f["config"]);
         }
         // A model type with a built-in config writes nothing.
         auto llama = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "a100"; });
         EXPECT_EQ(llama.plan["algorithm"], "smoothquant");
         EXPECT_FALSE(llama.plan.contains("algorithm_config_files"));
       }},
      {"torch.algorithm.awq_needs_int4", [] {
         auto o = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["global_scheme"] = "fp8"; r.choices["algorithm"] = "awq"; });
         EXPECT_TRUE(cites(o, "torch.algorithm.awq_needs_int4"));
         EXPECT_EQ(o.status, PlanStatus::kConfirmed);  // unusual, explained, kept
         // Quark 0.13's twobitscalar writes 2-bit weights no scheme describes: a conflict --insist cannot keep,
         // and never an alternative (qwen3's only built-in algorithm is twobitscalar: "no algorithm").
         auto two = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.insist = true; r.choices["algorithm"] = "twobitscalar"; });
         ASSERT_EQ(two.status, PlanStatus::kConflict);
         EXPECT_EQ(two.conflicts[0].alternative.find("twobitscalar"), std::string::npos);
         auto q3 = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["global_scheme"] = "int4_wo_128"; r.choices["algorithm"] = "gptq"; });
         ASSERT_FALSE(q3.conflicts.empty());
         EXPECT_EQ(q3.conflicts[0].alternative, "no algorithm");
       }},
      {"torch.algorithm.smoothquant_needs_activations", [] {
         auto o = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["global_scheme"] = "int4_wo_128"; r.choices["algorithm"] = "smoothquant"; });
         EXPECT_TRUE(cites(o, "torch.algorithm.smoothquant_needs_activations"));
       }},
      {"torch.algorithm.at_most_two", [] {
         auto o = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["global_scheme"] = "int4_wo_128"; r.choices["algorithm"] = "rotation,awq,gptq"; });
         EXPECT_TRUE(cites(o, "torch.algorithm.at_most_two"));
       }},
      {"torch.calibration.defaults", [] {
         auto o = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "h100"; });
         EXPECT_EQ(o.plan["calibration"], Json::parse(R"({"dataset":"pileval","num_calib_data":128,"seq_len":512})"));
         auto sq = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["calibration.dataset"] = "ScienceQA"; });
         EXPECT_EQ(sq.status, PlanStatus::kInvalid);  // NotImplementedError in Quark
       }},
      {"torch.calibration.data", [] {
         auto o = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["global_scheme"] = "fp8"; r.calib_data = "none"; });
         EXPECT_EQ(o.status, PlanStatus::kDraft);
         // quantize_quark.py loads its dataset even for weight-only schemes: only file-to-file reads none.
         auto wo = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["global_scheme"] = "int4_wo_128"; r.calib_data = "none"; });
         EXPECT_EQ(wo.status, PlanStatus::kDraft);
         auto f2f = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) {
           r.hardware = "h100";
           r.choices["global_scheme"] = "int4_wo_128";
           r.choices["algorithm"] = nullptr;
           r.choices["device_strategy"] = "file2file";
           r.calib_data = "none";
         });
         EXPECT_EQ(f2f.status, PlanStatus::kConfirmed) << f2f.plan["open_questions"];
       }},
      {"torch.evaluation_intent", [] {
         auto o = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["evaluation_intent"] = "none"; });
         EXPECT_EQ(o.plan["evaluation_intent"], "none");
         // Quark's evaluation loads the tokenizer with trust_remote_code=True: a repository with its own
         // code (auto_map), not approved, is not evaluated by default, and asking for it is a conflict.
         // Approved, it evaluates. Class: a model type transformers implements (phi3) with an auto_map too.
         for (const char* m : {"phi-3-mini-128k-instruct", "kimi-k2-instruct"}) {
           auto def = plan(hf_analysis(m), [](PlanRequest& r) { r.hardware = "mi355x"; });
           EXPECT_EQ(def.plan["evaluation_intent"], "none") << m;
           EXPECT_NE(def.plan["reasons"]["evaluation_intent"].get<std::string>().find("trust_remote_code=True"), std::string::npos) << m;
           auto asked = plan(hf_analysis(m), [](PlanRequest& r) { r.hardware = "mi355x"; r.choices["evaluation_intent"] = "smoke"; });
           ASSERT_EQ(asked.status, quarkplan::PlanStatus::kConflict) << m;
           EXPECT_EQ(asked.conflicts[0].rule, "torch.evaluation_intent");
           auto ok = plan(hf_analysis(m), [](PlanRequest& r) { r.hardware = "mi355x"; r.trust_remote_code = true; });
           // (Kimi K2 follows AMD's file-to-file recipe, which never evaluates.)
           EXPECT_EQ(ok.plan["evaluation_intent"], ok.plan["device_strategy"] == "file2file" ? "none" : "smoke") << m;
         }
         EXPECT_EQ(plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi355x"; }).plan["evaluation_intent"], "smoke");
         // File-to-file never evaluates: the table says none, as the command does.
         auto f2f = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["global_scheme"] = "ptpc_fp8"; r.choices["device_strategy"] = "file2file"; });
         EXPECT_EQ(f2f.plan["evaluation_intent"], "none");
       }},
  };
}

}  // namespace qp_test::rule_scenarios
