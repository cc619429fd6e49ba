// Every row of Quark's planning guide (both flows), through the planner.
#include <gtest/gtest.h>

#include "catalog/catalog.h"
#include "plan/plan_test_support.h"

using namespace qp_test;
using quarkplan::Json;
using quarkplan::PlanRequest;

namespace {
Json torch_plan(const std::string& model, const std::string& hw, const std::string& goal, const std::string& exp = "") {
  PlanRequest r;
  r.confirmed = true;
  r.hardware = hw;
  r.goal = goal;
  r.export_format = exp;
  return quarkplan::make_plan(hf_analysis(model), r).plan;
}
Json onnx_plan(const Json& a, const std::string& target, const std::string& goal) {
  PlanRequest r;
  r.confirmed = true;
  r.target = target;
  r.goal = goal;
  r.custom_ops_compile_ok = true;
  return quarkplan::make_plan(a, r).plan;
}
}  // namespace

// Every row of Quark's planning guide (Torch) through the planner: the plan
// follows the row, or shows it as the first alternative with why the default
// differs (hardware facts, size), and the catalog lists that deviation.
TEST(TorchDecisionGuide, EveryRowIsTheDefaultOrTheFirstAlternative) {
  auto guide_is_first_alternative = [](const Json& p, const std::string& scheme) {
    return p["alternatives"].is_array() && !p["alternatives"].empty() && p["alternatives"][0]["scheme"] == scheme &&
           p["alternatives"][0]["source"] == "Quark's planning guide";
  };
  // "I want the best accuracy" -> fp8 (or ptpc_fp8)
  EXPECT_EQ(torch_plan("llama-3.1-8b", "h100", "accuracy")["global_scheme"], "fp8");
  // "I want the smallest model" -> int4_wo_32 with awq: int4_wo_128 is smaller; the guide's row is the first alternative.
  Json small = torch_plan("llama-3.1-8b", "h100", "size");
  EXPECT_EQ(small["global_scheme"], "int4_wo_128");
  EXPECT_EQ(small["algorithm"], "awq");
  EXPECT_TRUE(guide_is_first_alternative(small, "int4_wo_32")) << small["alternatives"];
  EXPECT_NE(small["reasons"]["global_scheme"].get<std::string>().find("int4_wo_32 is larger"), std::string::npos);
  // "I need CPU deployment" -> int8
  EXPECT_EQ(torch_plan("llama-3.1-8b", "cpu", "")["global_scheme"], "int8");
  EXPECT_EQ(torch_plan("llama-3.1-8b", "cpu", "accuracy")["global_scheme"], "int8");
  // "I need GGUF format" -> uint4_wo_32 with awq
  Json gguf = torch_plan("llama-3.1-8b", "mi300x", "", "gguf");
  EXPECT_EQ(gguf["global_scheme"], "uint4_wo_32");
  EXPECT_EQ(gguf["algorithm"], "awq");
  // "I'm on AMD MI300X" -> amdfp4, which gfx942 only emulates: FP8 (AMD's own
  // MI300X recipe) is the default, amdfp4 the first alternative with its cost.
  for (const char* hw : {"mi300x", "mi325x"}) {
    Json mi = torch_plan("llama-3.1-8b", hw, "");
    EXPECT_EQ(mi["global_scheme"], "fp8") << hw;
    EXPECT_TRUE(guide_is_first_alternative(mi, "amdfp4")) << hw << mi["alternatives"];
    EXPECT_NE(mi["alternatives"][0]["note"].get<std::string>().find("emulat"), std::string::npos);
    EXPECT_EQ(mi["reasons"]["global_scheme"].get<std::string>().find("MI300X:"), std::string::npos);  // no other device's name
  }
  // Leaving out --goal is the balanced goal, said so: the answer never changes silently.
  EXPECT_EQ(torch_plan("llama-3.1-8b", "mi300x", "")["global_scheme"], torch_plan("llama-3.1-8b", "mi300x", "balanced")["global_scheme"]);
  EXPECT_NE(torch_plan("llama-3.1-8b", "mi300x", "")["reasons"]["global_scheme"].get<std::string>().find("default goal"), std::string::npos);
  // "I'm on NVIDIA H100/Blackwell" -> fp8 / nvfp4
  EXPECT_EQ(torch_plan("llama-3.1-8b", "h100", "")["global_scheme"], "fp8");
  EXPECT_EQ(torch_plan("llama-3.1-8b", "b200", "size")["global_scheme"], "nvfp4");
  EXPECT_TRUE(guide_is_first_alternative(torch_plan("llama-3.1-8b", "b200", ""), "nvfp4"));
  // "I want to experiment" -> mxfp4 (native on MI355X)
  EXPECT_EQ(torch_plan("llama-3.1-8b", "mi355x", "experiment")["global_scheme"], "mxfp4");
  // MI350/MI355X run MXFP4 natively (AMD's Llama MXFP4 recipe, released for 70B and larger)
  EXPECT_EQ(torch_plan("llama-3.1-70b", "mi355x", "")["global_scheme"], "mxfp4");
  // An 8B model is below the sizes AMD released MXFP4 Llama for: FP8, with the guide's mxfp4 as the first alternative.
  EXPECT_EQ(torch_plan("llama-3.1-8b", "mi355x", "")["global_scheme"], "fp8");
  EXPECT_TRUE(guide_is_first_alternative(torch_plan("llama-3.1-8b", "mi355x", ""), "mxfp4"));
  // Accuracy on AMD Instinct: PTPC-FP8, AMD's practice (amd/*-ptpc).
  EXPECT_EQ(torch_plan("qwen3-8b", "mi300x", "accuracy")["global_scheme"], "ptpc_fp8");
  EXPECT_EQ(torch_plan("llama-3.1-8b", "mi355x", "accuracy")["global_scheme"], "ptpc_fp8");
  // Mixed: MXFP4 with 8-bit attention (PTPC-FP8, as AMD's AttnFP8 releases)
  Json mixed = torch_plan("llama-3.1-8b", "mi355x", "mixed");
  EXPECT_EQ(mixed["global_scheme"], "mxfp4");
  EXPECT_EQ(mixed["layer_quant_config"]["*self_attn*"], "ptpc_fp8");
  // Each deviation from the guide is listed in the catalog.
  EXPECT_GE(quarkplan::Catalog::load().torch()["guide_deviations"].size(), 4u);
}

// Defaults that run natively: for every accelerator and every goal (and no
// goal), the default global scheme and every layer override run natively.
TEST(TorchDecisionGuide, EveryHardwareAndGoalDefaultsToANativeScheme) {
  const auto& cat = quarkplan::Catalog::load();
  for (const auto& acc : cat.hardware()["accelerators"]) {
    std::string hw = acc["name"];
    for (const char* goal : {"", "accuracy", "balanced", "size", "experiment", "mixed"}) {
      for (const char* model : {"llama-3.1-8b", "qwen3-30b-a3b", "deepseek-v3"}) {
        PlanRequest r;
        r.confirmed = true;
        r.hardware = hw;
        r.goal = goal;
        auto o = quarkplan::make_plan(hf_analysis(model), r);
        ASSERT_FALSE(o.plan.is_null()) << hw << " " << goal << " " << model;
        // The one conflict without a user choice: a model far beyond what a Ryzen AI PC runs.
        bool too_big_for_the_pc = acc.contains("llm_limits") && model != std::string("llama-3.1-8b");
        if (too_big_for_the_pc) {
          ASSERT_FALSE(o.conflicts.empty()) << hw << " " << model;
          EXPECT_EQ(o.conflicts[0].rule, "torch.hardware.resolve");
        } else if (!o.conflicts.empty() && o.conflicts[0].rule == "torch.pre_quantized.serve_source") {
          // The FP8 DeepSeek-V3 source where the goal keeps 8 bits: serving the source as it is.
          EXPECT_EQ(model, std::string("deepseek-v3")) << hw << " " << goal;
          EXPECT_TRUE(std::string(goal).empty() || std::string(goal) == "balanced" || std::string(goal) == "accuracy") << hw << " " << goal;
        } else {
          EXPECT_TRUE(o.conflicts.empty()) << hw << " " << goal << " " << model << ": " << o.conflicts[0].message;
        }
        EXPECT_EQ(o.plan["hardware_support"], "native") << hw << " " << goal << " " << model << " -> " << o.plan["global_scheme"];
        const Json* sc = cat.torch_scheme(o.plan["global_scheme"]);
        ASSERT_NE(sc, nullptr);
        EXPECT_EQ(acc["support"][(*sc)["family"].get<std::string>()], "native") << hw << " " << goal << " " << model;
        for (auto& [pat, sch] : o.plan["layer_quant_config"].items())
          EXPECT_EQ(acc["support"][(*cat.torch_scheme(sch))["family"].get<std::string>()], "native") << hw << " " << goal << " " << pat;
      }
    }
  }
  // GPUs without FP8 compute get a native scheme, not weight-only FP8.
  for (const char* hw : {"a100", "mi250x", "t4", "radeon-8060s"}) {
    Json p = torch_plan("llama-3.1-8b", hw, "");
    EXPECT_NE(p["global_scheme"], "fp8") << hw;
    EXPECT_TRUE(p["global_scheme"] == "int8" || p["global_scheme"] == "int4_wo_128") << hw << " " << p["global_scheme"];
  }
}

TEST(OnnxDecisionGuide, EveryRow) {
  const Json& cnn = cnn_analysis();
  const Json& tr = transformer_analysis();
  EXPECT_EQ(onnx_plan(cnn, "rocm", "accuracy")["preset"], "BF16");                 // best accuracy, AMD GPU
  EXPECT_EQ(onnx_plan(cnn, "cpu", "balanced")["preset"], "INT8_CNN_DEFAULT");      // INT8 CNN, CPU/GPU
  EXPECT_EQ(onnx_plan(cnn, "cpu", "balanced")["algorithms"], Json::array({"CLE"}));
  Json npu = onnx_plan(cnn, "npu_cnn", "balanced");                                // INT8 CNN -> Ryzen AI NPU
  EXPECT_EQ(npu["preset"], "XINT8");
  EXPECT_EQ(npu["algorithms"], Json::array({"CLE"}));
  EXPECT_EQ(npu["calibration"]["method"], "PowerOfTwo_MinMSE");
  EXPECT_EQ(onnx_plan(cnn, "npu_cnn", "accuracy")["preset"], "XINT8_ADAROUND");    // accuracy-tight NPU CNN
  EXPECT_EQ(onnx_plan(cnn, "cpu", "experiment")["preset"], "BFP16");               // block-format experimentation
  Json mixed = onnx_plan(tr, "cpu", "mixed");                                      // hybrid mixed precision
  EXPECT_EQ(mixed["preset"], "BF16_MIXED_BFP16");
  EXPECT_EQ(mixed["algorithms"], Json::array({"AutoMixprecision"}));
  EXPECT_EQ(onnx_plan(tr, "cpu", "accuracy")["preset"], "A16W8");                  // CPU best accuracy
  EXPECT_EQ(onnx_plan(tr, "cpu", "size")["preset"], "MATMUL_NBITS");               // CPU smallest transformer
  EXPECT_EQ(onnx_plan(cnn, "cpu", "size")["preset"], "A8W8");                      // CPU smallest
  EXPECT_EQ(onnx_plan(tr, "npu_transformer", "balanced")["preset"], "INT8_TRANSFORMER_DEFAULT");
  EXPECT_EQ(onnx_plan(tr, "npu_transformer", "accuracy")["preset"], "INT16_TRANSFORMER_DEFAULT");
  // CUDA/ROCm smallest: the guide's BFP16/MXFP4 keep the float weights in the
  // file, so quarkplan's recorded deviation picks integer weights and names them.
  Json small = onnx_plan(tr, "cuda", "size");
  EXPECT_EQ(small["preset"], "MATMUL_NBITS");
  EXPECT_NE(small["reasons"]["preset"].get<std::string>().find("Quark's planning guide's choice: BFP16, MXFP4E2M1"), std::string::npos) << small["reasons"]["preset"];
  EXPECT_EQ(onnx_plan(tr, "rocm", "size")["preset"], "A8W8");
  EXPECT_EQ(onnx_plan(cnn, "cuda", "size")["preset"], "A8W8");
  // No goal picks a format that keeps float weights as "smallest", on any target.
  const auto& cat = quarkplan::Catalog::load();
  for (const char* t : {"cpu", "cuda", "rocm", "npu_cnn", "npu_transformer"})
    for (const Json* a : {&cnn, &tr}) {
      Json p = onnx_plan(*a, t, "size");
      if (!p["preset"].is_string()) continue;
      const Json* pj = cat.onnx_preset(p["preset"]);
      ASSERT_TRUE(pj);
      const Json& types = cat.onnx()["qdq_layout"]["types"];
      const std::string w = (*pj)["weight_type"].is_string() ? (*pj)["weight_type"].get<std::string>() : "";
      EXPECT_FALSE(types.contains(w) && types[w].value("keeps_float_weights", false)) << t << ": " << p["preset"];
    }
}
