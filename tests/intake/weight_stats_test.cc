// --weight-stats: per-module statistics from real tensor bytes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "intake/intake.h"
#include "intake/weight_stats.h"
#include "plan/planner.h"
#include "support/test_support.h"

using namespace qp_test;
using quarkplan::Json;

namespace {

std::string bf16_bytes(const std::vector<float>& v) {
  std::string s;
  for (float f : v) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    uint16_t h = static_cast<uint16_t>(b >> 16);
    s.append(reinterpret_cast<const char*>(&h), 2);
  }
  return s;
}

// A deterministic bell-ish sample in [-3, 3] (sum of uniforms).
std::vector<float> bulk(size_t n, float scale, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t x = seed;
  for (auto& f : v) {
    float acc = 0;
    for (int k = 0; k < 3; ++k) {
      x = x * 1664525u + 1013904223u;
      acc += static_cast<float>(x >> 8) / 16777216.0f - 0.5f;
    }
    f = acc * 2 * scale;
  }
  return v;
}

// Writes a real (non-sparse) BF16 safetensors file.
void write_bf16_safetensors(const fs::path& p, const std::vector<std::pair<std::string, std::pair<std::vector<uint64_t>, std::vector<float>>>>& ts) {
  std::string header = "{", data;
  for (size_t i = 0; i < ts.size(); ++i) {
    const auto& [name, sv] = ts[i];
    std::string bytes = bf16_bytes(sv.second);
    header += (i ? "," : "") + std::string("\"") + name + "\":{\"dtype\":\"BF16\",\"shape\":[" + std::to_string(sv.first[0]) + "," +
              std::to_string(sv.first[1]) + "],\"data_offsets\":[" + std::to_string(data.size()) + "," + std::to_string(data.size() + bytes.size()) + "]}";
    data += bytes;
  }
  header += "}";
  std::string len(8, '\0');
  for (int i = 0; i < 8; ++i) len[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  write_file(p, len + header + data);
}

}  // namespace

TEST(WeightStats, TensorStatisticsPerDtype) {
  std::vector<float> v = bulk(10000, 0.02f, 7);
  v[1234] = 4.0f;  // an outlier far beyond 6 sigma
  quarkplan::TensorStats s;
  ASSERT_TRUE(quarkplan::tensor_stats(bf16_bytes(v), "BF16", s));
  EXPECT_EQ(s.numel, 10000u);
  EXPECT_NEAR(s.max_abs, 4.0, 1e-6);
  EXPECT_NEAR(s.stddev, 0.048, 0.01);  // the bulk's std plus the outlier's share
  EXPECT_NEAR(s.outlier_ratio, 1.0 / 10000, 1e-9);
  std::string f32(reinterpret_cast<const char*>(v.data()), v.size() * 4);
  quarkplan::TensorStats t;
  ASSERT_TRUE(quarkplan::tensor_stats(f32, "F32", t));
  EXPECT_NEAR(t.max_abs, 4.0, 1e-6);
  EXPECT_NEAR(t.stddev, s.stddev, 1e-3);
  // float16: 1.0 = 0x3C00, -2.0 = 0xC000, 0.5 = 0x3800
  const uint16_t h[] = {0x3C00, 0xC000, 0x3800, 0x0000};
  quarkplan::TensorStats u;
  ASSERT_TRUE(quarkplan::tensor_stats(std::string_view(reinterpret_cast<const char*>(h), 8), "F16", u));
  EXPECT_DOUBLE_EQ(u.max_abs, 2.0);
  EXPECT_DOUBLE_EQ(u.mean, -0.5 / 4);
  quarkplan::TensorStats x;
  EXPECT_FALSE(quarkplan::tensor_stats("abcd", "F8_E4M3", x));
}

TEST(WeightStats, IntakeFindsOutlierModulesAndThePlanNamesThem) {
  TempDir d;
  write_file(d / "config.json", R"({"model_type":"llama","num_hidden_layers":1,"hidden_size":64,"intermediate_size":128,
     "num_attention_heads":4,"num_key_value_heads":4,"vocab_size":32,"tie_word_embeddings":false})");
  write_file(d / "tokenizer.json", "{}");
  auto w = bulk(64 * 64, 0.02f, 1);
  auto spiky = bulk(128 * 64, 0.02f, 2);
  spiky[77] = 9.0f;
  write_bf16_safetensors(d / "model.safetensors",
                         {{"model.layers.0.self_attn.q_proj.weight", {{64, 64}, w}},
                          {"model.layers.0.mlp.down_proj.weight", {{64, 128}, spiky}},
                          {"lm_head.weight", {{32, 64}, bulk(32 * 64, 0.02f, 3)}}});
  quarkplan::IntakeRequest req;
  req.model = d.path().string();
  req.weight_stats = true;
  Json a = quarkplan::run_intake(req);
  ASSERT_TRUE(a.contains("weight_stats"));
  const Json& ws = a["weight_stats"];
  EXPECT_EQ(ws["tensors"], 3);
  EXPECT_EQ(ws["scanned_bytes"], (64 * 64 + 128 * 64 + 32 * 64) * 2);
  EXPECT_EQ(ws["outlier_modules"], Json::array({"model.layers.0.mlp.down_proj"}));
  EXPECT_EQ(ws["top_modules"][0]["module"], "model.layers.0.mlp.down_proj");
  quarkplan::PlanRequest r;
  r.hardware = "h100";
  r.confirmed = true;
  auto o = quarkplan::make_plan(a, r);
  bool cited = false;
  for (const auto& risk : o.plan["risks"]) cited = cited || risk["rule"] == "torch.weight_stats.outliers";
  EXPECT_TRUE(cited);
  // Through the command line too (ONNX has its own tests in onnx_weight_stats_test.cc).
  RunResult cli = run_quarkplan({"intake", d.path().string(), "--weight-stats", "-o", (d / "a.json").string()});
  EXPECT_EQ(cli.exit_code, 0) << cli.err;
}
