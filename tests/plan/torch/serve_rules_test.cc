// The serving runtime: one scenario per rule of src/plan/torch/serve_rules.cc (run by
// tests/plan/rules_test.cc as All/RuleScenario.Fires/<rule>), and the class checks over the
// corpus: every default plan is one its runtime loads, and its serve command's parallel size is
// one the model can be split into.
// Rules: torch.serve.runtime, torch.serve.loads, torch.serve.parallel, torch.serve.fused_shards, torch.pre_quantized.serve_source.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "plan/invocation.h"
#include "plan/rule_scenarios.h"
#include "plan/serve_memory.h"
#include "plan/torch/rule_helpers.h"

namespace fs = std::filesystem;
using quarkplan::Json;
using quarkplan::PlanRequest;
using quarkplan::PlanStatus;

namespace qp_test::rule_scenarios {

namespace {
bool has_risk(const quarkplan::PlanOutcome& o, const std::string& rule, const std::string& words) {
  for (const auto& r : o.plan["risks"])
    if (r["rule"] == rule && r["message"].get<std::string>().find(words) != std::string::npos) return true;
  return false;
}
}  // namespace

std::vector<Scenario> torch_serve_scenarios() {
  return {
      {"torch.serve.runtime", [] {
         // The default follows the export, then the platform.
         for (const auto& [hw_name, exp_name, runtime] : std::vector<std::tuple<std::string, std::string, std::string>>{
                  {"mi300x", "", "vllm"}, {"mi355x", "", "vllm"}, {"h100", "", "vllm"}, {"a100", "", "vllm"}, {"mi250x", "", "vllm"},
                  {"cpu", "", "transformers"}, {"ryzen-ai", "", "ort-genai"}, {"cpu", "gguf", "llama.cpp"}, {"mi300x", "onnx", ""}}) {
           const std::string hw = hw_name, exp = exp_name;  // named copies: clang's C++20 lets no lambda capture a structured binding
           auto o = plan(hf_analysis("mistral-7b-v0.3"), [&](PlanRequest& r) { r.hardware = hw; r.export_format = exp; });
           EXPECT_EQ(o.plan["serve_runtime"], runtime.empty() ? Json(nullptr) : Json(runtime)) << hw << " " << exp;
         }
         // Named by the user, by an alias.
         auto sg = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi355x"; r.choices["serve_runtime"] = "SGLang"; });
         EXPECT_EQ(sg.plan["serve_runtime"], "sglang");
         // Unknown: an input error with the list; a runtime that does not take the export: a conflict --insist cannot keep.
         auto bad = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["serve_runtime"] = "vlm"; });
         EXPECT_EQ(bad.status, PlanStatus::kInvalid);
         ASSERT_FALSE(bad.errors.empty());
         EXPECT_NE(bad.errors[0].find("did you mean 'vllm'"), std::string::npos) << bad.errors[0];
         auto gguf = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.insist = true; r.choices["serve_runtime"] = "llama.cpp"; });
         ASSERT_EQ(gguf.status, PlanStatus::kConflict);
         EXPECT_EQ(gguf.conflicts[0].rule, "torch.serve.runtime");
         EXPECT_FALSE(gguf.conflicts[0].insistable);
       }},
      {"torch.serve.loads", [] {
         // int4_fp8 is a MoE-expert format in vLLM: its two-entry weight spec is refused for dense layers.
         auto w4a8 = plan(hf_analysis("mixtral-8x7b-v0.1"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["global_scheme"] = "int4_fp8"; });
         ASSERT_EQ(w4a8.status, PlanStatus::kConflict);
         EXPECT_EQ(w4a8.conflicts[0].rule, "torch.serve.loads");
         EXPECT_NE(w4a8.conflicts[0].message.find("only supported for NVFP4"), std::string::npos) << w4a8.conflicts[0].message;
         EXPECT_EQ(w4a8.conflicts[0].alternative.rfind("fp8 ", 0), 0u) << w4a8.conflicts[0].alternative;
         // Nemotron-H's experts are ungated (relu2, up_proj and down_proj): vLLM's W4A8 MoE kernel allocates gated
         // experts, so the size goal keeps its INT4 experts there instead of W4A8, and W4A8 asked for is refused.
         auto nh = plan(hf_analysis("nemotron-3-nano-30b-a3b-bf16"), [](PlanRequest& r) { r.hardware = "mi300x"; r.gpus = 8; r.goal = "size"; });
         EXPECT_TRUE(nh.plan["layer_quant_config"].empty()) << nh.plan["layer_quant_config"];
         auto nh48 = plan(hf_analysis("nemotron-3-nano-30b-a3b-bf16"), [](PlanRequest& r) {
           r.hardware = "mi300x";
           r.gpus = 8;
           r.choices["global_scheme"] = "ptpc_fp8";
           r.choices["layer_quant_config"] = Json({{"*.experts*", "int4_fp8"}});
         });
         bool refused = false;
         for (const auto& c : nh48.conflicts) refused = refused || (c.rule == "torch.serve.loads" && c.message.find("relu2 experts") != std::string::npos);
         EXPECT_TRUE(refused);
         // --insist keeps it as a high risk.
         auto kept = plan(hf_analysis("mixtral-8x7b-v0.1"), [](PlanRequest& r) { r.hardware = "mi300x"; r.insist = true; r.choices["global_scheme"] = "int4_fp8"; });
         EXPECT_TRUE(kept.conflicts.empty());
         EXPECT_TRUE(has_risk(kept, "torch.serve.loads", "Kept because the user insisted"));
         // SGLang loads no INT4 at all: the closest it loads is named.
         auto sg = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["serve_runtime"] = "sglang"; r.choices["global_scheme"] = "int4_wo_128"; });
         ASSERT_EQ(sg.status, PlanStatus::kConflict);
         EXPECT_NE(sg.conflicts[0].message.find("SGLang cannot load int4_wo_128"), std::string::npos) << sg.conflicts[0].message;
         EXPECT_NE(sg.conflicts[0].alternative.find("vllm (its newest code)"), std::string::npos) << sg.conflicts[0].alternative;
         // A scheme the runtime emulates where the accelerator has the kernel: vLLM's MXFP6 on MI355X.
         auto mx6 = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi355x"; r.choices["global_scheme"] = "mxfp6_e2m3"; });
         ASSERT_EQ(mx6.status, PlanStatus::kConflict);
         EXPECT_EQ(mx6.conflicts[0].rule, "torch.serve.loads");
         EXPECT_NE(mx6.conflicts[0].message.find("emulated"), std::string::npos);
         // INT4 experts load only in vLLM's newest code: a medium risk naming it.
         auto int4 = plan(hf_analysis("qwen3-30b-a3b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["global_scheme"] = "int4_wo_128"; });
         EXPECT_TRUE(int4.conflicts.empty());
         EXPECT_TRUE(has_risk(int4, "torch.serve.loads", "#48606"));
         // MXFP4 MoE on MI355X reaches AITER's kernels only with its variables: the serve command sets them.
         auto mx = plan(hf_analysis("qwen3-30b-a3b"), [](PlanRequest& r) { r.hardware = "mi355x"; r.choices["global_scheme"] = "mxfp4"; });
         ASSERT_TRUE(mx.conflicts.empty());
         EXPECT_EQ(mx.plan["serve"]["env"]["VLLM_ROCM_USE_AITER_MOE"], "1");
         quarkplan::Invocation inv = quarkplan::plan_invocation(mx.plan, hf_analysis("qwen3-30b-a3b"));
         ASSERT_TRUE(inv.serve.is_object());
         EXPECT_EQ(inv.serve["text"].get<std::string>().rfind("VLLM_ROCM_USE_AITER=1 VLLM_ROCM_USE_AITER_MOE=1 vllm serve", 0), 0u) << inv.serve["text"];
         // An FP8 KV cache needs --kv-cache-dtype fp8 at serve time (vLLM ignores the scales otherwise).
         auto kv = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["kv_cache_scheme"] = "fp8"; });
         EXPECT_NE(quarkplan::plan_invocation(kv.plan, hf_analysis("llama-3.1-8b")).serve["text"].get<std::string>().find("--kv-cache-dtype fp8"), std::string::npos);
         // The runtime's layer overrides count: an override to a scheme vLLM refuses is named as such.
         auto lqc = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["layer_quant_config.*mlp*"] = "bfp16"; r.insist = true; });
         EXPECT_TRUE(has_risk(lqc, "torch.serve.loads", "bfp16"));
       }},
      {"torch.serve.fused_shards", [] {
         // Every fused group vLLM builds, split by an exclusion or by a per-layer scheme, across families.
         struct Case { const char* model; const char* hw; std::vector<std::string> exclude; std::string layer; const char* fused; };
         for (const Case& c : {Case{"llama-3.1-8b", "mi300x", {"*k_proj"}, "", "qkv_proj"},
                               Case{"qwen3-8b", "mi355x", {}, "*gate_proj", "gate_up_proj"},
                               Case{"mistral-7b-v0.3", "h100", {"lm_head", "*v_proj"}, "", "qkv_proj"},
                               Case{"deepseek-v3", "mi355x", {"*lm_head", "*mlp.gate", "*kv_a_proj_with_mqa"}, "", "fused_qkv_a_proj"}}) {
           auto o = plan(hf_analysis(c.model), [&](PlanRequest& r) {
             r.hardware = c.hw;
             r.gpus = 8;
             if (!c.exclude.empty()) r.choices["exclude_layers"] = c.exclude;
             if (!c.layer.empty()) r.choices["layer_quant_config." + c.layer] = "mxfp4";
           });
           ASSERT_EQ(o.status, PlanStatus::kConflict) << c.model;
           bool named = false;
           for (const auto& k : o.conflicts)
             named = named || (k.rule == "torch.serve.fused_shards" && k.message.find(std::string(" x ") + c.fused + " (") != std::string::npos);
           EXPECT_TRUE(named) << c.model << ": " << o.conflicts[0].message;
         }
         // A layer's routed experts are one fused MoE layer: excluding some experts, or one projection of them all,
         // or giving one projection its own scheme, is named per MoE layer with one pattern as the repair.
         for (const auto& variant : std::vector<std::pair<std::string, std::string>>{{"exclude", "*experts.*.down_proj"},
                                                                                     {"exclude", "model.layers.0.mlp.experts.5.*"},
                                                                                     {"layer", "*experts.*.down_proj"}}) {
           auto moe = plan(hf_analysis("qwen3-30b-a3b"), [&](PlanRequest& r) {
             r.hardware = "mi300x";
             if (variant.first == "exclude") r.choices["exclude_layers"] = Json::array({"lm_head", "*.gate", variant.second});
             else r.choices["layer_quant_config." + variant.second] = "ptpc_fp8";
           });
           ASSERT_EQ(moe.status, PlanStatus::kConflict) << variant.second;
           EXPECT_EQ(moe.conflicts[0].rule, "torch.serve.fused_shards");
           EXPECT_NE(moe.conflicts[0].message.find("one fused MoE layer with one quantization method"), std::string::npos) << moe.conflicts[0].message;
           EXPECT_NE(moe.conflicts[0].alternative.find("exclude all of them ('*experts.*')"), std::string::npos) << moe.conflicts[0].alternative;
           EXPECT_NE(moe.conflicts[0].alternative.find("give '*experts*' one --layer-scheme"), std::string::npos) << moe.conflicts[0].alternative;
           EXPECT_LT(moe.conflicts[0].message.size(), 2000u);  // grouped, not one entry per expert
         }
         // All experts excluded together, or one scheme for all of them: loadable.
         auto all = plan(hf_analysis("qwen3-30b-a3b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["layer_quant_config.*experts*"] = "ptpc_fp8"; });
         for (const auto& k : all.conflicts) EXPECT_NE(k.rule, "torch.serve.fused_shards") << k.message;
         // Granite MoE's experts stay 16-bit in Quark (GraniteMoeParallelExperts), but vLLM and SGLang build them as one
         // fused MoE layer with the global scheme: refused, with the source as the alternative, on every GPU and goal.
         for (const char* hw : {"mi300x", "mi355x", "h100", "a100"})
           for (const char* goal : {"balanced", "size", "accuracy"})
             for (const char* rt : {"vllm", "sglang"}) {
               auto g = plan(hf_analysis("granite-3.1-1b-a400m-instruct"), [&](PlanRequest& r) {
                 r.hardware = hw;
                 r.goal = goal;
                 r.choices["serve_runtime"] = rt;
               });
               bool said = false;
               for (const auto& k : g.conflicts)
                 said = said || (k.rule == "torch.serve.loads" && k.message.find("Quark leaves these experts 16-bit") != std::string::npos &&
                                 k.alternative.rfind("serve the 16-bit source as it is", 0) == 0);
               EXPECT_TRUE(said) << hw << " " << goal << " " << rt << ": " << (g.conflicts.empty() ? "no conflict" : g.conflicts[0].message);
             }
         // transformers on a CPU keeps the module as it is: nothing to refuse.
         auto gc = plan(hf_analysis("granite-3.1-1b-a400m-instruct"), [](PlanRequest& r) { r.hardware = "cpu"; });
         for (const auto& k : gc.conflicts) EXPECT_EQ(k.message.find("Quark leaves these experts 16-bit"), std::string::npos) << k.message;
         // vLLM and SGLang pick a fused MoE layer's scheme by matching the patterns against the layer's own name
         // (model.layers.N.mlp.experts): '*.experts.*' reaches Quark's per-expert Linear names only, so the
         // layer would be built for the global scheme and meet int4_fp8 weights. Every MoE family, both runtimes.
         for (const char* m : {"qwen3-30b-a3b", "deepseek-v3", "mixtral-8x7b-v0.1", "llama4-scout-17b-16e-instruct", "gpt-oss-20b", "kimi-k2-instruct", "dbrx-base"})
           for (const char* rt : {"vllm", "sglang"}) {
             for (const char* pattern : {"*.experts.*", "*experts.*"}) {
               auto missed = plan(hf_analysis(m), [&](PlanRequest& r) {
                 r.hardware = "mi300x";
                 r.gpus = 8;
                 r.choices["serve_runtime"] = rt;
                 r.choices["global_scheme"] = "ptpc_fp8";
                 r.choices["layer_quant_config"] = Json({{pattern, "fp8"}});
               });
               bool said = false;
               for (const auto& k : missed.conflicts)
                 said = said || (k.rule == "torch.serve.fused_shards" && k.message.find("does not match the layer's own name") != std::string::npos &&
                                 k.alternative.find("'*.experts*'") != std::string::npos);
               EXPECT_TRUE(said) << m << " " << rt << " " << pattern << ": " << (missed.conflicts.empty() ? "" : missed.conflicts[0].message);
             }
             auto matched = plan(hf_analysis(m), [&](PlanRequest& r) {
               r.hardware = "mi300x";
               r.gpus = 8;
               r.choices["serve_runtime"] = rt;
               r.choices["global_scheme"] = "ptpc_fp8";
               r.choices["layer_quant_config"] = Json({{"*.experts*", "fp8"}});
             });
             for (const auto& k : matched.conflicts) EXPECT_EQ(k.message.find("does not match the layer's own name"), std::string::npos) << m << " " << rt << ": " << k.message;
           }
         // The repair makes the group whole; applied, the plan is confirmed.
         auto whole = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) {
           r.hardware = "mi300x";
           r.choices["exclude_layers"] = Json::array({"lm_head", "*self_attn.q_proj", "*self_attn.k_proj", "*self_attn.v_proj"});
         });
         EXPECT_TRUE(whole.conflicts.empty()) << whole.conflicts[0].message;
         // A runtime that fuses nothing (transformers on a CPU) has nothing to say about it.
         auto cpu = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "cpu"; r.choices["exclude_layers"] = Json::array({"*k_proj"}); });
         for (const auto& k : cpu.conflicts) EXPECT_NE(k.rule, "torch.serve.fused_shards");
         EXPECT_FALSE(cites(cpu, "torch.serve.fused_shards"));
         // --insist keeps the split as a high risk.
         auto kept = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["exclude_layers"] = Json::array({"*k_proj"}); r.insist = true; });
         EXPECT_TRUE(has_risk(kept, "torch.serve.fused_shards", "q_proj fp8, k_proj in 16-bit, v_proj fp8"));
       }},
      {"torch.pre_quantized.serve_source", [] {
         // Every pre-quantized form, where the goal keeps its size: the outcome is serving the source, with its command.
         struct Case { const char* model; const char* hw; const char* goal; };
         for (const Case& c : {Case{"qwen3-30b-a3b-fp8", "mi300x", ""}, Case{"deepseek-v3", "h100", "balanced"}, Case{"gpt-oss-120b", "mi355x", "size"},
                               Case{"gpt-oss-20b", "h100", ""}}) {
           auto o = plan(hf_analysis(c.model), [&](PlanRequest& r) { r.hardware = c.hw; r.goal = c.goal; });
           ASSERT_EQ(o.status, PlanStatus::kConflict) << c.model << " " << c.hw;
           ASSERT_EQ(o.conflicts[0].rule, "torch.pre_quantized.serve_source") << o.conflicts[0].message;
           EXPECT_NE(o.conflicts[0].message.find("is not half a bit per weight smaller"), std::string::npos) << o.conflicts[0].message;
           EXPECT_EQ(o.conflicts[0].alternative.rfind("serve the source as it is (", 0), 0u) << o.conflicts[0].alternative;
           EXPECT_NE(o.conflicts[0].alternative.find(std::string("tests/data/hf/") + c.model), std::string::npos) << o.conflicts[0].alternative;
           // Only alternatives that pass: no size goal where no scheme gets half a bit below gpt-oss's MXFP4, no 16-bit original OpenAI never published.
           const bool oss = std::string(c.model).rfind("gpt-oss", 0) == 0;
           EXPECT_EQ(o.conflicts[0].alternative.find("--goal size") != std::string::npos, std::string(c.goal) != "size" && !oss) << o.conflicts[0].alternative;
           EXPECT_EQ(o.conflicts[0].alternative.find("no 16-bit original exists") != std::string::npos, oss) << o.conflicts[0].alternative;
         }
         // The source's command is the source's: the same whatever the goal (gpt-oss-120b fits one H100 at 61 GiB).
         auto acc = plan(hf_analysis("gpt-oss-120b"), [](PlanRequest& r) { r.hardware = "h100"; r.gpus = 8; r.goal = "accuracy"; });
         auto small = plan(hf_analysis("gpt-oss-120b"), [](PlanRequest& r) { r.hardware = "h100"; r.gpus = 8; r.goal = "size"; });
         ASSERT_FALSE(acc.conflicts.empty());
         ASSERT_FALSE(small.conflicts.empty());
         auto serve_of = [](const std::string& alt) { return alt.substr(0, alt.find(')')); };
         EXPECT_EQ(serve_of(acc.conflicts[0].alternative), serve_of(small.conflicts[0].alternative));
         // 61 GiB fit one H100, but its KV room holds fewer than a server's 32 sequences: with 8 available, 2.
         EXPECT_NE(acc.conflicts[0].alternative.find("--tensor-parallel-size 2 "), std::string::npos) << acc.conflicts[0].alternative;
         auto one = plan(hf_analysis("gpt-oss-120b"), [](PlanRequest& r) { r.hardware = "h100"; r.gpus = 1; r.goal = "accuracy"; });
         ASSERT_FALSE(one.conflicts.empty());
         EXPECT_EQ(one.conflicts[0].alternative.find("--tensor-parallel-size"), std::string::npos) << one.conflicts[0].alternative;
         // A repository whose code the runtime needs: the flag, with the warning.
         auto kimi = plan(hf_analysis("kimi-k2-instruct"), [](PlanRequest& r) { r.hardware = "mi355x"; r.gpus = 8; r.goal = "accuracy"; });
         ASSERT_FALSE(kimi.conflicts.empty());
         EXPECT_NE(kimi.conflicts[0].alternative.find("--trust-remote-code; --trust-remote-code runs the repository's own code: review it first"), std::string::npos)
             << kimi.conflicts[0].alternative;
         // Its command is the plan's: the parallel size a 640 GiB model needs (more than one MI300X), on the source folder.
         auto ds = plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) { r.hardware = "mi300x"; r.gpus = 8; });
         ASSERT_EQ(ds.status, PlanStatus::kConflict);
         EXPECT_NE(ds.conflicts[0].alternative.find("vllm serve "), std::string::npos) << ds.conflicts[0].alternative;
         // 4 x MI300X hold its 627 GiB but leave KV room for 16 sequences: 8, as AMD serves it.
         EXPECT_NE(ds.conflicts[0].alternative.find("tests/data/hf/deepseek-v3 --tensor-parallel-size 8 "), std::string::npos) << ds.conflicts[0].alternative;
         // AMD's own 8-bit release of the family is named, as made from the 16-bit original.
         auto r1 = plan(hf_analysis("deepseek-r1"), [](PlanRequest& r) { r.hardware = "mi355x"; r.gpus = 8; r.goal = "accuracy"; });
         ASSERT_EQ(r1.status, PlanStatus::kConflict);
         EXPECT_NE(r1.conflicts[0].alternative.find("amd/DeepSeek-R1-0528-ptpc"), std::string::npos) << r1.conflicts[0].alternative;
         // Half a bit smaller or more is a plan: DeepSeek-V3's FP8 at MXFP4 on MI355X.
         auto mx = plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) { r.hardware = "mi355x"; r.gpus = 8; });
         EXPECT_TRUE(mx.conflicts.empty()) << mx.conflicts[0].message;
         // Insisting keeps the plan with a high risk.
         auto keep = plan(hf_analysis("qwen3-30b-a3b-fp8"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["global_scheme"] = "fp8"; r.insist = true; });
         EXPECT_TRUE(has_risk(keep, "torch.pre_quantized.serve_source", "not half a bit"));
       }},
      {"torch.serve.architecture", [] {
         // DeepSeek Sparse Attention: vLLM and SGLang serve it on Hopper/Blackwell and MI300/MI350 only.
         for (const char* model : {"deepseek-v3.2", "glm-5"})
           for (const auto& [hw_name, served] : std::vector<std::pair<std::string, bool>>{{"a100", false}, {"l40s", false}, {"mi250x", false}, {"h100", true}, {"b200", true}, {"mi300x", true}, {"mi355x", true}}) {
             const std::string hw = hw_name;  // a named copy: clang's C++20 lets no lambda capture a structured binding
             const bool ok = served;
             auto o = plan(hf_analysis(model), [&](PlanRequest& r) { r.hardware = hw; r.gpus = 8; r.goal = "size"; });
             bool fired = false;
             for (const auto& c : o.conflicts) fired = fired || c.rule == "torch.serve.architecture";
             EXPECT_EQ(fired, !ok) << model << " on " << hw;
             // Serving the source is never offered where the architecture does not run.
             for (const auto& c : o.conflicts)
               if (c.rule == "torch.pre_quantized.serve_source") EXPECT_EQ(c.alternative.find("vllm serve") != std::string::npos, ok) << c.alternative;
           }
         // SGLang too; a model type no runtime restricts is served anywhere vLLM runs.
         auto sg = plan(hf_analysis("deepseek-v3.2"), [](PlanRequest& r) { r.hardware = "a100"; r.gpus = 8; r.choices["serve_runtime"] = "sglang"; });
         ASSERT_FALSE(sg.conflicts.empty());
         EXPECT_EQ(sg.conflicts[0].rule, "torch.serve.architecture");
         EXPECT_NE(sg.conflicts[0].message.find("SGLang serves deepseek_v32's"), std::string::npos) << sg.conflicts[0].message;
         auto v3 = plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) { r.hardware = "a100"; r.gpus = 8; r.goal = "size"; });
         for (const auto& c : v3.conflicts) EXPECT_NE(c.rule, "torch.serve.architecture");
         // An architecture vLLM has removed (its registry's _PREVIOUSLY_SUPPORTED_MODELS): refused on every accelerator,
         // with the last release that serves it; SGLang is not held to vLLM's list.
         for (const char* m : {"llama-3.2-90b-vision-instruct", "qwen-72b", "internlm-20b"}) {
           auto o = plan(hf_analysis(m), [](PlanRequest& r) { r.hardware = "mi300x"; r.gpus = 8; r.trust_remote_code = true; });
           ASSERT_FALSE(o.conflicts.empty()) << m;
           EXPECT_EQ(o.conflicts[0].rule, "torch.serve.architecture") << m;
           EXPECT_NE(o.conflicts[0].message.find("was supported in vLLM until v"), std::string::npos) << o.conflicts[0].message;
         }
         auto sg_ml = plan(hf_analysis("llama-3.2-90b-vision-instruct"), [](PlanRequest& r) { r.hardware = "mi300x"; r.gpus = 8; r.choices["serve_runtime"] = "sglang"; });
         for (const auto& c : sg_ml.conflicts) EXPECT_NE(c.rule, "torch.serve.architecture") << c.message;
         // Architectures a runtime never implemented: phi-2's legacy MixFormer under vLLM, InternLM 1 under SGLang.
         auto mix = plan(hf_analysis("phi-2-mixformer-legacy"), [](PlanRequest& r) { r.hardware = "mi300x"; });
         ASSERT_FALSE(mix.conflicts.empty());
         EXPECT_NE(mix.conflicts[0].message.find("vLLM has no implementation of MixFormerSequentialForCausalLM"), std::string::npos) << mix.conflicts[0].message;
         auto il = plan(hf_analysis("internlm-20b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.trust_remote_code = true; r.choices["serve_runtime"] = "sglang"; });
         ASSERT_FALSE(il.conflicts.empty());
         EXPECT_NE(il.conflicts[0].message.find("SGLang has no implementation of InternLMForCausalLM"), std::string::npos) << il.conflicts[0].message;
         // --insist keeps it as a high risk.
         auto kept = plan(hf_analysis("deepseek-v3.2"), [](PlanRequest& r) { r.hardware = "a100"; r.gpus = 8; r.goal = "size"; r.insist = true; });
         EXPECT_TRUE(has_risk(kept, "torch.serve.architecture", "Kept because the user insisted"));
       }},
      {"torch.serve.parallel", [] {
         // DeepSeek-V3 at INT4 on MI300X (its FP8 source served as it is would be the 8-bit answer) needs
         // more than one GPU to serve: 128 heads split evenly.
         auto ds = plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) { r.hardware = "mi300x"; r.gpus = 8; r.goal = "size"; });
         ASSERT_TRUE(ds.conflicts.empty()) << ds.conflicts[0].message;
         int64_t need = ds.plan["estimates"]["fit"]["deployment_accelerators"];
         int64_t tp = ds.plan["serve"]["tensor_parallel_size"];
         EXPECT_GE(tp * ds.plan["serve"]["pipeline_parallel_size"].get<int64_t>(), need);
         EXPECT_EQ(128 % tp, 0);
         EXPECT_GT(tp, 1);
         EXPECT_NE(quarkplan::plan_invocation(ds.plan, hf_analysis("deepseek-v3")).serve["text"].get<std::string>().find("--tensor-parallel-size " + std::to_string(tp)),
                   std::string::npos);
         // The runtime reserves the KV cache for the context the plan sized, not the model's maximum.
         EXPECT_NE(quarkplan::plan_invocation(ds.plan, hf_analysis("deepseek-v3")).serve["text"].get<std::string>().find("--max-model-len 8192"), std::string::npos);
         // Beyond a node: pipeline stages, in SGLang's words too, and how to start it over nodes.
         auto glm = plan(hf_analysis("glm-5"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["serve_runtime"] = "sglang"; });
         ASSERT_TRUE(glm.conflicts.empty()) << glm.conflicts[0].message;
         std::string gt = quarkplan::plan_invocation(glm.plan, hf_analysis("glm-5")).serve["text"];
         if (glm.plan["serve"]["pipeline_parallel_size"].get<int64_t>() > 1) {
           EXPECT_NE(gt.find("--pp-size"), std::string::npos) << gt;
           EXPECT_NE(gt.find("--nnodes"), std::string::npos) << gt;
         }
         // The size is the user's to raise (throughput), within what the model can be split into.
         auto eight = plan(hf_analysis("llama-3.1-70b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["serve.tensor_parallel_size"] = 8; });
         EXPECT_EQ(eight.plan["serve"]["tensor_parallel_size"], 8);
         auto three = plan(hf_analysis("llama-3.1-70b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["serve.tensor_parallel_size"] = 3; });
         ASSERT_EQ(three.status, PlanStatus::kConflict);
         EXPECT_NE(three.conflicts[0].message.find("64 attention heads are not divisible by 3"), std::string::npos);
         // No size within the GPUs given reaches the serving target: the size stays the fewest, and the most any holds is said.
         auto longctx = plan(hf_analysis("qwen3.5-35b-a3b"), [](PlanRequest& r) {
           r.hardware = "h100";
           r.gpus = 8;
           r.context = 262144;
         });
         const std::string lc = longctx.plan["reasons"].value("serve.tensor_parallel_size", std::string());
         EXPECT_EQ(longctx.plan["serve"]["tensor_parallel_size"], 1) << lc;
         EXPECT_NE(lc.find("tensor parallel 8 holds 25 (--set serve.tensor_parallel_size=8)"), std::string::npos) << lc;
         // A split that leaves part of a group on a rank says so with the arithmetic (768 / 4 = 192 = 1.5 groups of 128).
         auto part = plan(hf_analysis("qwen3-30b-a3b"), [](PlanRequest& r) {
           r.hardware = "h100";
           r.gpus = 8;
           r.goal = "size";
           r.choices["serve.tensor_parallel_size"] = 4;
         });
         ASSERT_EQ(part.status, PlanStatus::kConflict);
         EXPECT_NE(part.conflicts[0].message.find("768 input features) split 4 ways leave 192 features per rank, not a whole number of groups of 128"), std::string::npos)
             << part.conflicts[0].message;
         // Group-quantized layers whose input features no group divides (gpt-oss: 2880 = 22.5 x 128): named with the group that fits.
         auto oss = plan(hf_analysis("gpt-oss-20b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["global_scheme"] = "int4_wo_128"; });
         bool named = false;
         for (const auto& k : oss.plan["risks"])
           named = named || (k["rule"] == "torch.serve.parallel" && k["message"].get<std::string>().find("2880 input features") != std::string::npos &&
                             k["recovery_hint"].get<std::string>().find("int4_wo_64") != std::string::npos);
         EXPECT_TRUE(named) << oss.plan["risks"];
         // Fewer accelerators than serving needs: a high risk.
         auto few = plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) { r.hardware = "mi300x"; r.gpus = 1; r.goal = "size"; });
         EXPECT_TRUE(has_risk(few, "torch.serve.parallel", "is available"));
         // Memory an expert counts: 4 x MI300X hold DeepSeek-R1 at FP8 with vLLM's reserve, but MLA's latent
         // cache is whole on every rank, so the KV room holds 16 sequences of 8192 tokens; with 8 GPUs the
         // size grows to the serving target (AMD serves it at 8); with 4 the reason says what is short.
         auto reason_of = [](const quarkplan::PlanOutcome& o) { return o.plan["reasons"].value("serve.tensor_parallel_size", std::string()); };
         auto r1 = [](int64_t gpus) {
           return plan(hf_analysis("deepseek-r1"), [gpus](PlanRequest& r) { r.hardware = "mi300x"; r.gpus = gpus; r.choices["global_scheme"] = "ptpc_fp8"; r.insist = true; });
         };
         auto r1_8 = r1(8), r1_4 = r1(4);
         EXPECT_EQ(r1_8.plan["serve"]["tensor_parallel_size"], 8);
         EXPECT_EQ(r1_8.plan["estimates"]["fit"]["deployment_accelerators"], 8);  // the serve command's count; the memory minimum is in the reason
         EXPECT_NE(reason_of(r1_8).find("need 4 x mi300x"), std::string::npos) << reason_of(r1_8);
         EXPECT_NE(reason_of(r1_8).find("8 for the KV cache: 4 would hold 16 sequences of 8192 tokens, 8 hold "), std::string::npos) << reason_of(r1_8);
         EXPECT_EQ(r1_4.plan["serve"]["tensor_parallel_size"], 4);
         EXPECT_NE(reason_of(r1_4).find("a server's KV cache should hold 32"), std::string::npos) << reason_of(r1_4);
         EXPECT_NE(reason_of(r1_4).find("more accelerators, an FP8 KV cache or a shorter context"), std::string::npos) << reason_of(r1_4);
         // The AITER variables the ROCm MoE kernels need also select AITER's MLA attention, which takes 16 or 128
         // heads per rank: DeepSeek's 128 heads split 8 ways (never 2 or 4), and with 4 GPUs the lever is named.
         for (const char* hw : {"mi300x", "mi355x"}) {
           auto ds = plan(hf_analysis("deepseek-r1"), [&](PlanRequest& r) { r.hardware = hw; r.gpus = 8; r.goal = "size"; });
           ASSERT_TRUE(ds.conflicts.empty()) << hw;
           EXPECT_EQ(ds.plan["serve"]["env"].value("VLLM_ROCM_USE_AITER", std::string()), "1") << hw;
           EXPECT_EQ(ds.plan["serve"]["tensor_parallel_size"], 8) << hw;
           EXPECT_EQ(ds.plan["estimates"]["fit"]["deployment_accelerators"], 8) << hw;  // one count for serving
           EXPECT_NE(reason_of(ds).find("AITER's MLA attention (VLLM_ROCM_USE_AITER=1 selects it) takes 16 or 128 heads per rank"), std::string::npos) << reason_of(ds);
           EXPECT_NE(reason_of(ds).find("one MLA latent cache on every rank"), std::string::npos) << reason_of(ds);
         }
         auto ds4 = plan(hf_analysis("deepseek-r1"), [](PlanRequest& r) { r.hardware = "mi355x"; r.gpus = 4; r.goal = "size"; });
         EXPECT_TRUE(has_risk(ds4, "torch.serve.parallel", "but 4 are available"));
         bool lever = false;
         for (const auto& k : ds4.plan["risks"]) lever = lever || k["recovery_hint"].get<std::string>().find("VLLM_ROCM_USE_AITER_MLA=0") != std::string::npos;
         EXPECT_TRUE(lever) << ds4.plan["risks"];
         // DeepSeek Sparse Attention runs another AITER backend, without the 16-or-128 rule.
         auto v32 = plan(hf_analysis("deepseek-v3.2"), [](PlanRequest& r) { r.hardware = "mi355x"; r.gpus = 8; r.goal = "size"; });
         EXPECT_EQ(reason_of(v32).find("16 or 128 heads per rank"), std::string::npos) << reason_of(v32);
         // DBRX's KV heads sit in attn_config (kv_n_heads 8): 3 is no size vLLM splits it into.
         auto dbrx = plan(hf_analysis("dbrx-base"), [](PlanRequest& r) { r.hardware = "h100"; r.gpus = 8; });
         EXPECT_EQ(8 % dbrx.plan["serve"]["tensor_parallel_size"].get<int64_t>(), 0) << dbrx.plan["serve"];
         // One count: the fit's serving count is the serve command's, also where the KV cache grew it.
         auto grown = plan(hf_analysis("llama-3.1-70b"), [](PlanRequest& r) { r.hardware = "h100"; r.gpus = 8; });
         EXPECT_EQ(grown.plan["estimates"]["fit"]["deployment_accelerators"], grown.plan["serve"]["tensor_parallel_size"]);
         // The kernel lever only where the weights fit the GPUs given: Kimi-K2 on 2 x MI355X is short of memory.
         auto kimi2 = plan(hf_analysis("kimi-k2-instruct"), [](PlanRequest& r) { r.hardware = "mi355x"; r.gpus = 2; r.goal = "size"; r.trust_remote_code = true; });
         for (const auto& k : kimi2.plan["risks"]) EXPECT_EQ(k["recovery_hint"].get<std::string>().find("VLLM_ROCM_USE_AITER_MLA=0"), std::string::npos) << k;
         // Its KV room is well over the target at 8: nothing about holding too few.
         EXPECT_EQ(reason_of(ds4).find("should hold 32"), std::string::npos) << reason_of(ds4);
         // GQA: Llama-3.1-70B at FP8 on H100 needs 2; its 8 KV heads split 4 ways too, so 4 hold the target.
         auto l70 = plan(hf_analysis("llama-3.1-70b"), [](PlanRequest& r) { r.hardware = "h100"; r.gpus = 8; });
         EXPECT_EQ(l70.plan["serve"]["tensor_parallel_size"], 4);
         EXPECT_EQ(l70.plan["estimates"]["fit"]["deployment_accelerators"], 4);
         EXPECT_NE(reason_of(l70).find("need 2 x h100"), std::string::npos) << reason_of(l70);
         // The reserve follows the runtime's own defaults: vLLM's smaller batch budget on A100 (PR #17885),
         // SGLang's formula with its 10 GiB floor (here 16384 prefill tokens on MI300X: about 25.6 GiB).
         auto reserve = [](const char* hw, const char* runtime) {
           auto o = plan(hf_analysis("llama-3.1-8b"), [&](PlanRequest& r) {
             r.hardware = hw;
             if (*runtime) r.choices["serve_runtime"] = runtime;
           });
           return o.plan["estimates"]["fit"].value("deployment_reserve_bytes", uint64_t{0});
         };
         EXPECT_LT(reserve("a100", ""), reserve("h100", ""));
         EXPECT_GT(reserve("mi300x", "sglang"), 25ull << 30);
         EXPECT_LT(reserve("mi300x", "sglang"), 26ull << 30);
         // The arithmetic: MLA's cache never splits; KV heads split up to their count, replicated beyond.
         quarkplan::ServeMemory m;
         m.usable = 100;
         m.weights = 80;
         m.kv_sequence = 8;
         m.kv_split_max = 1;
         EXPECT_EQ(m.kv_per_accelerator(8, 1), 8);
         EXPECT_EQ(m.sequences_held(4, 1), 10);
         m.kv_split_max = 2;
         EXPECT_EQ(m.kv_per_accelerator(8, 1), 4);
         EXPECT_EQ(m.kv_per_accelerator(2, 2), 2);
         m.weights = 200;
         EXPECT_EQ(m.sequences_held(2, 1), 0);
         // A linear-attention/Mamba state splits over every tensor rank (its heads shard), unlike 2 KV heads.
         m.state_sequence = 8;
         EXPECT_EQ(m.kv_per_accelerator(8, 1), 4 + 1);
         EXPECT_EQ(m.kv_per_accelerator(2, 2), 2 + 2);
         // Qwen3-Next on MI300X: the serve reason counts the state in the sequences the KV room holds.
         auto qn = plan(hf_analysis("qwen3-next-80b-a3b-thinking"), [](PlanRequest& r) { r.hardware = "mi300x"; r.gpus = 8; });
         const Json& kv = qn.plan["estimates"]["kv_cache"];
         ASSERT_TRUE(kv.contains("state_bytes_per_sequence"));
         const double per_seq = kv["bytes"].get<double>() / kv["batch"].get<double>();
         const double room = qn.plan["estimates"]["fit"]["memory_bytes"].get<double>() * 0.9 -
                             (qn.plan["estimates"]["fit"]["deployment_bytes"].get<double>() - kv["bytes"].get<double>()) -
                             qn.plan["estimates"]["fit"]["deployment_reserve_bytes"].get<double>();
         const std::string why = qn.plan["reasons"].value("serve.tensor_parallel_size", std::string());
         const size_t at = why.find("the KV cache holds ");
         ASSERT_NE(at, std::string::npos) << why;
         EXPECT_NEAR(std::stod(why.substr(at + 19)), room / per_seq, 1.0) << why;
       }},
  };
}

}  // namespace qp_test::rule_scenarios

namespace {

using quarkplan::torch_rules::detail::runtime_load;

// The class: every corpus model, on every kind of accelerator, for every goal. A confirmed
// default plan uses only schemes its runtime loads (never refused, never emulated) for each layer
// kind it quantizes, and its tensor-parallel size divides the attention heads and fits the KV heads.
// Split by vendor so each part stays within a test's time under the sanitizers.
struct Checked {
  int plans = 0, moe = 0;
};
Checked every_default_plan_is_one_its_runtime_loads(const std::vector<const char*>& accelerators) {
  const quarkplan::Catalog& cat = quarkplan::Catalog::load();
  int checked = 0, moe = 0;
  for (const auto& e : fs::directory_iterator(qp_test::testdata("hf"))) {
    if (!e.is_directory()) continue;
    const std::string model = e.path().filename().string();
    const Json& a = qp_test::hf_analysis(model);
    const bool is_moe = a["model"].value("is_moe", false);
    bool has_expert_modules = false;
    for (const auto& r : a["quantization_targets"].value("module_roles", Json::array())) has_expert_modules = has_expert_modules || r == "expert";
    for (const char* hw : accelerators)
      for (const char* goal : {"balanced", "size", "accuracy", "experiment", "mixed"}) {
        PlanRequest r;
        r.confirmed = true;
        r.hardware = hw;
        r.goal = goal;
        r.gpus = 8;
        quarkplan::PlanOutcome o = quarkplan::make_plan(a, r);
        const std::string where = model + " on " + hw + " for " + goal;
        // Ryzen AI's LLM flow (ONNX Runtime GenAI) has no MoE: a conflict saying so is right there.
        // An architecture the runtime serves only on other accelerators (DeepSeek Sparse Attention off
        // Hopper/Blackwell/MI300/MI350): a conflict is right there too, and only there.
        const std::string mt = a["model"].value("model_type", std::string());
        for (const auto& c : o.conflicts)
          if (c.rule == "torch.serve.architecture") {
            // (or an architecture the runtime removed or never implemented: Llama 3.2 Vision, Qwen 1, InternLM, phi-2's MixFormer)
            const bool gone = c.message.find("no longer implements") != std::string::npos || c.message.find("has no implementation of") != std::string::npos;
            EXPECT_TRUE(mt == "deepseek_v32" || mt == "glm_moe_dsa" || gone) << where << ": " << c.message;
          } else if (c.message.find("Quark leaves these experts 16-bit") != std::string::npos) {
            // Experts Quark cannot quantize (Granite MoE): a GPU runtime builds them for the global scheme, so
            // the source as it is is the answer there (and only for such a model).
            EXPECT_FALSE(has_expert_modules) << where << ": " << c.message;
          } else if (!(is_moe && std::string(hw) == "ryzen-ai")) {
            EXPECT_NE(c.rule.rfind("torch.serve", 0), 0u) << where << ": " << c.message;
          }
        if (!o.conflicts.empty() || !o.plan["global_scheme"].is_string() || !o.plan["serve_runtime"].is_string()) continue;
        const Json* rt = cat.runtime(o.plan["serve_runtime"]);
        if (!rt) {
          ADD_FAILURE() << where << ": no runtime " << o.plan["serve_runtime"];
          continue;
        }
        const std::string platform = cat.runtime_platform(*cat.accelerator(hw));
        // Each scheme on the layer kinds it reaches: an '.experts' pattern reaches routed experts only
        // (the size goal's W4A8 for MoE), and the global scheme then reaches dense layers only.
        std::vector<std::pair<std::string, std::vector<const char*>>> schemes;
        bool experts_pattern = false;
        for (auto& [p, v] : o.plan["layer_quant_config"].items()) {
          const bool experts = p.find(".experts") != std::string::npos;
          experts_pattern = experts_pattern || experts;
          schemes.push_back({v, experts ? std::vector<const char*>{"experts"} : std::vector<const char*>{"dense", "experts"}});
        }
        schemes.push_back({o.plan["global_scheme"], experts_pattern ? std::vector<const char*>{"dense"} : std::vector<const char*>{"dense", "experts"}});
        for (const auto& [sch_name, kinds] : schemes)
          for (const char* kind : kinds) {
            const std::string sch = sch_name;
            // Experts Quark cannot quantize (Granite MoE's, torch.intake.experts_not_linear) take no scheme.
            if (std::string(kind) == "experts" && (!is_moe || !has_expert_modules)) continue;
            std::string level = runtime_load(*rt, platform, kind, sch).level;
            // Emulation only where no runtime of the platform does better (a CPU), and then said.
            bool said = false;
            for (const auto& k : o.plan["risks"]) said = said || (k["rule"] == "torch.serve.loads" && k["message"].get<std::string>().find("emulated") != std::string::npos);
            EXPECT_TRUE(level == "loads" || level == "recent" || (level == "emulated" && said)) << where << ": " << o.plan["serve_runtime"] << " " << level << " " << sch << " for " << kind;
          }
        moe += is_moe;
        ++checked;
        const Json& serve = o.plan["serve"];
        if (!serve.contains("tensor_parallel_size")) continue;
        int64_t tp = serve["tensor_parallel_size"], heads = a["model"]["architecture"].value("num_attention_heads", Json(0)).get<int64_t>();
        int64_t kv = a["model"]["architecture"].value("num_key_value_heads", Json(0)).is_number_integer() ? a["model"]["architecture"]["num_key_value_heads"].get<int64_t>() : heads;
        if (heads > 0) {
          EXPECT_EQ(heads % tp, 0) << where << " tp " << tp;
        }
        if (kv > 0) {
          EXPECT_TRUE(kv >= tp ? kv % tp == 0 : tp % kv == 0) << where << " tp " << tp << " kv " << kv;
        }
      }
  }
  return {checked, moe};
}

TEST(ServeRuntime, EveryDefaultPlanOnInstinctIsOneItsRuntimeLoads) {
  Checked c = every_default_plan_is_one_its_runtime_loads({"mi300x", "mi355x", "mi250x"});
  EXPECT_GT(c.plans, 500);
  EXPECT_GT(c.moe, 100);
}
TEST(ServeRuntime, EveryDefaultPlanOnNvidiaIsOneItsRuntimeLoads) {
  Checked c = every_default_plan_is_one_its_runtime_loads({"h100", "a100", "b200"});
  EXPECT_GT(c.plans, 500);
  EXPECT_GT(c.moe, 100);
}
TEST(ServeRuntime, EveryDefaultPlanOnCpuAndRyzenAiIsOneItsRuntimeLoads) {
  Checked c = every_default_plan_is_one_its_runtime_loads({"cpu", "ryzen-ai"});
  EXPECT_GT(c.plans, 200);
}

}  // namespace
