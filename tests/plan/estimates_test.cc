// Estimates against independently known sizes: published checkpoint sizes
// (the corpus' model.safetensors.index.json total_size), KV-cache formulas.
#include <gtest/gtest.h>

#include "plan/plan_test_support.h"

using namespace qp_test;
using quarkplan::Json;
using quarkplan::PlanRequest;

namespace {

Json torch_plan(const Json& analysis, std::function<void(PlanRequest&)> setup) {
  PlanRequest r;
  r.confirmed = true;
  r.hardware = "mi355x";
  setup(r);
  auto o = quarkplan::make_plan(analysis, r);
  EXPECT_FALSE(o.plan.is_null()) << (o.errors.empty() ? "" : o.errors[0]);
  return o.plan;
}

// The analysis of a corpus model from its config.json alone (no index).
Json config_only(const std::string& dir) {
  TempDir d;
  fs::copy_file(testdata("hf/" + dir + "/config.json"), d / "config.json");
  return analysis_of(d.path());
}

}  // namespace

TEST(Estimates, ConfigEstimateMatchesPublishedCheckpointSizes) {
  // BF16 checkpoints whose index states total_size; estimated from config.json only.
  for (const auto& [dir, total_size] : std::vector<std::pair<std::string, double>>{
           {"gemma-2b", 5012344832.0}, {"llama-3.2-3b-instruct", 6425499648.0}, {"mistral-7b-v0.3", 14496047104.0},
           {"phi-3-mini-128k-instruct", 7642159104.0}, {"falcon-180b-chat", 359045130240.0}}) {
    Json a = config_only(dir);
    EXPECT_NEAR(a["model"]["estimated_size_gb"].get<double>() * 1e9 / total_size, 1.0, 0.02) << dir;
  }
}

TEST(Estimates, MxFp4CheckpointOfGptOssWithin2Percent) {
  // openai/gpt-oss-20b ships its MoE experts in MXFP4 and everything else in
  // BF16: 13,761,264,768 bytes (its index). Estimate the same layout from the
  // config: mxfp4 weight-only experts, attention / routers / lm_head excluded.
  Json a = config_only("gpt-oss-20b");
  a["model"]["pre_quantized"] = nullptr;  // plan the layout as if from BF16
  Json plan = torch_plan(a, [](PlanRequest& r) {
    r.choices["global_scheme"] = "mxfp4_weight_only";
    r.choices["exclude_layers"] = Json::parse(R"(["lm_head","*router*","*self_attn*"])");
  });
  double est = plan["estimates"]["weights"][1]["bytes"].get<double>();
  EXPECT_EQ(plan["estimates"]["weights"][1]["scheme"], "mxfp4_weight_only");
  EXPECT_NEAR(est / 13761264768.0, 1.0, 0.02) << est;
}

TEST(Estimates, SchemesOrderedOriginalChosenAlternatives) {
  Json plan = torch_plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["global_scheme"] = "int4_wo_128"; });
  const Json& w = plan["estimates"]["weights"];
  ASSERT_GE(w.size(), 3u);
  EXPECT_EQ(w[0]["scheme"], "original");
  EXPECT_EQ(w[1]["scheme"], "int4_wo_128");
  // lm_head and embeddings stay BF16: 2 x 128256 x 4096 x 2 bytes ~ 2.1 GB on top of 4.125-bit linears.
  double linears = 6979321856.0;  // 32 x (4x4096^2/4x... ) Llama-3.1-8B Linear params without lm_head
  double expected = linears * 4.125 / 8 + 2.0 * 128256 * 4096 * 2 + 32 * 2 * 4096 * 2 + 4096 * 2;
  EXPECT_NEAR(w[1]["bytes"].get<double>() / expected, 1.0, 0.01);
  EXPECT_GT(w[1]["bits_per_weight_effective"].get<double>(), 4.125);  // excluded layers count at 16 bits
}

TEST(Estimates, KvCacheForGqaMlaAndHybrid) {
  // Llama-3.1-8B: 32 layers x 8 KV heads x 128 x 2 (K,V) x 2 bytes = 128 KiB/token, 1 GiB at 8k.
  Json g = torch_plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "h100"; });
  EXPECT_EQ(g["estimates"]["kv_cache"]["bytes_per_token"], 131072);
  EXPECT_EQ(g["estimates"]["kv_cache"]["bytes"], 1073741824);
  Json f = torch_plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["kv_cache_scheme"] = "fp8"; r.context = 4096; r.batch = 4; });
  EXPECT_EQ(f["estimates"]["kv_cache"]["bytes_per_token"], 65536);
  EXPECT_EQ(f["estimates"]["kv_cache"]["bytes"], 65536ull * 4096 * 4);
  // DeepSeek-V3 MLA: 61 layers x (512 + 64) x 2 bytes.
  Json m = torch_plan(hf_analysis("deepseek-v3"), [](PlanRequest&) {});
  EXPECT_EQ(m["estimates"]["kv_cache"]["bytes_per_token"], 61 * 576 * 2);
  // Qwen3-Next: only every 4th layer keeps a KV cache (2 KV heads x 256).
  Json h = torch_plan(hf_analysis("qwen3-next-80b-a3b-thinking"), [](PlanRequest&) {});
  EXPECT_EQ(h["estimates"]["kv_cache"]["bytes_per_token"], 2 * 12 * 2 * 256 * 2);
  // ... and its 36 Gated DeltaNet layers a fixed state per sequence (conv inputs + recurrent state, BF16).
  const uint64_t qn_state = 36ull * ((2 * 16 * 128 + 32 * 128) * 3 + 32 * 128 * 128) * 2;
  EXPECT_EQ(h["estimates"]["kv_cache"]["state_bytes_per_sequence"], qn_state);
  const uint64_t ctx = h["estimates"]["kv_cache"]["context_length"], batch = h["estimates"]["kv_cache"]["batch"];
  EXPECT_EQ(h["estimates"]["kv_cache"]["bytes"], (2ull * 12 * 2 * 256 * 2 * ctx + qn_state) * batch);
  // An FP8 KV cache halves the attention layers' cache, not the state.
  Json h8 = torch_plan(hf_analysis("qwen3-next-80b-a3b-thinking"), [](PlanRequest& r) { r.choices["kv_cache_scheme"] = "fp8"; });
  EXPECT_EQ(h8["estimates"]["kv_cache"]["bytes"], (2ull * 12 * 2 * 256 * ctx + qn_state) * batch);
  // Nemotron-H: 23 Mamba-2 layers, the SSM state in float32 (its config's mamba_ssm_cache_dtype).
  Json n = torch_plan(hf_analysis("nemotron-3-nano-30b-a3b-bf16"), [](PlanRequest&) {});
  EXPECT_EQ(n["estimates"]["kv_cache"]["state_bytes_per_sequence"], 23ull * ((64 * 64 + 2 * 8 * 128) * 3 * 2 + 64 * 64 * 128 * 4));
  EXPECT_NE(n["estimates"]["kv_cache"]["method"].get<std::string>().find("23 linear-attention/Mamba layers"), std::string::npos);
  EXPECT_FALSE(g["estimates"]["kv_cache"].contains("state_bytes_per_sequence"));
}

// Experts Quark cannot quantize (Granite MoE's GraniteMoeParallelExperts) are counted at 16 bits
// whatever the scheme, and the plan repeats the intake's high risk.
TEST(Estimates, ExpertsQuarkCannotReachStay16Bit) {
  Json g = torch_plan(hf_analysis("granite-3.1-1b-a400m-instruct"), [](PlanRequest& r) { r.hardware = "cpu"; });
  ASSERT_TRUE(g["global_scheme"].is_string());
  EXPECT_GT(g["estimates"]["weights"][1]["bits_per_weight_effective"].get<double>(), 14.0);
  bool said = false;
  for (const auto& r : g["risks"]) said = said || (r["rule"] == "torch.intake.experts_not_linear" && r["severity"] == "high");
  EXPECT_TRUE(said) << g["risks"];
  // A MoE whose experts are Linear: 8 bits and nothing said.
  Json q = torch_plan(hf_analysis("qwen3-30b-a3b"), [](PlanRequest& r) { r.hardware = "mi300x"; });
  EXPECT_LT(q["estimates"]["weights"][1]["bits_per_weight_effective"].get<double>(), 9.0);
  for (const auto& r : q["risks"]) EXPECT_NE(r["rule"], "torch.intake.experts_not_linear");
}

TEST(Estimates, FitUsesTheAcceleratorMemory) {
  Json ok = torch_plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "h100"; });
  EXPECT_TRUE(ok["estimates"]["fit"]["fits"].get<bool>());
  EXPECT_EQ(ok["estimates"]["fit"]["memory_bytes"], 80ull << 30);
  Json no = torch_plan(hf_analysis("llama-3.1-70b"), [](PlanRequest& r) { r.hardware = "rtx4090"; r.choices["global_scheme"] = "fp8"; });
  EXPECT_FALSE(no["estimates"]["fit"]["fits"].get<bool>());
}

TEST(Estimates, OnnxPresetsShrinkTheLinearWeights) {
  PlanRequest r;
  r.confirmed = true;
  r.target = "cpu";
  auto o = quarkplan::make_plan(cnn_analysis(), r);
  const Json& w = o.plan["estimates"]["weights"];
  ASSERT_GE(w.size(), 2u);
  uint64_t q = cnn_analysis()["model"]["onnx_specific"]["weights"]["quantizable_params"];
  EXPECT_EQ(q, 216u + 5 * 576 + 80);  // every Conv/Gemm weight of the generated CNN
  EXPECT_EQ(w[1]["scheme"], "INT8_CNN_DEFAULT");
  // fp32 -> int8, plus the Q/DQ graph: two nodes (~240 bytes) per node but constants and BatchNormalization.
  const Json& oc = cnn_analysis()["quantization_targets"]["onnx_specific"]["op_counts"];
  uint64_t nodes = cnn_analysis()["model"]["onnx_specific"]["node_count"];
  for (const char* folded : {"Constant", "BatchNormalization", "Identity"}) nodes -= oc.value(folded, uint64_t{0});
  EXPECT_NEAR(w[0]["bytes"].get<double>() - w[1]["bytes"].get<double>(), q * 3.0 - 2.0 * nodes * 240, 1.0);
  EXPECT_NE(w[1]["method"].get<std::string>().find(std::to_string(2 * nodes) + " Q/DQ nodes"), std::string::npos) << w[1].dump();
}
