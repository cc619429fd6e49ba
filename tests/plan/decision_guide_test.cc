// Every decision-guide row of both seed documents, through the planner.
#include <gtest/gtest.h>

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

TEST(TorchDecisionGuide, EveryRow) {
  // "I want the best accuracy" -> fp8 (or ptpc_fp8), optionally smoothquant
  EXPECT_EQ(torch_plan("llama-3.1-8b", "h100", "accuracy")["global_scheme"], "fp8");
  // "I want the smallest model" -> int4_wo_32 with awq
  Json small = torch_plan("llama-3.1-8b", "h100", "size");
  EXPECT_EQ(small["global_scheme"], "int4_wo_32");
  EXPECT_EQ(small["algorithm"], "awq");
  // "I need CPU deployment" -> int8
  EXPECT_EQ(torch_plan("llama-3.1-8b", "cpu", "")["global_scheme"], "int8");
  EXPECT_EQ(torch_plan("llama-3.1-8b", "cpu", "accuracy")["global_scheme"], "int8");
  // "I need GGUF format" -> uint4_wo_32 with awq
  Json gguf = torch_plan("llama-3.1-8b", "mi300x", "", "gguf");
  EXPECT_EQ(gguf["global_scheme"], "uint4_wo_32");
  EXPECT_EQ(gguf["algorithm"], "awq");
  // "I'm on AMD MI300X" -> amdfp4
  EXPECT_EQ(torch_plan("llama-3.1-8b", "mi300x", "")["global_scheme"], "amdfp4");
  // "I'm on NVIDIA H100/Blackwell" -> fp8 / nvfp4
  EXPECT_EQ(torch_plan("llama-3.1-8b", "h100", "")["global_scheme"], "fp8");
  EXPECT_EQ(torch_plan("llama-3.1-8b", "b200", "")["global_scheme"], "nvfp4");
  // "I want to experiment" -> mxfp4
  EXPECT_EQ(torch_plan("llama-3.1-8b", "mi355x", "experiment")["global_scheme"], "mxfp4");
  // MI350/MI355X run MXFP4 natively
  EXPECT_EQ(torch_plan("llama-3.1-8b", "mi355x", "")["global_scheme"], "mxfp4");
  // Mixed: MXFP4 with FP8 attention
  Json mixed = torch_plan("llama-3.1-8b", "mi355x", "mixed");
  EXPECT_EQ(mixed["layer_quant_config"]["*self_attn*"], "fp8");
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
  EXPECT_EQ(onnx_plan(tr, "cuda", "size")["preset"], "BFP16");                     // CUDA/ROCm throughput
}
