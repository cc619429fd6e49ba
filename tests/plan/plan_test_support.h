// Shared fixtures for planner tests: analyses of generated and real models.
#pragma once
#include <cstring>
#include "common/json.h"
#include "intake/intake.h"
#include "intake/onnx_builder.h"
#include "plan/planner.h"
#include "support/test_support.h"

namespace qp_test {

inline quarkplan::Json analysis_of(const fs::path& model, const std::string& target = "", const std::string& release = "") {
  quarkplan::IntakeRequest req;
  req.model = model.string();
  req.target = target;
  req.quark_version = release;
  return quarkplan::run_intake(req);
}

// A CNN (NCHW, 6 convs + classifier), analysed once.
inline const quarkplan::Json& cnn_analysis() {
  static quarkplan::Json a = [] {
    TempDir d;
    write_file(d / "cnn.onnx", small_cnn(6).bytes());
    return analysis_of(d / "cnn.onnx");
  }();
  return a;
}

// A transformer-like graph (MatMul-heavy, with attention: Q.K^T -> Softmax -> .V), analysed once.
inline const quarkplan::Json& transformer_analysis() {
  static quarkplan::Json a = [] {
    TempDir d;
    OnnxBuilder b;
    b.input("x", onnx::TensorProto::FLOAT, {"1", "128", "64"});
    std::string prev = "x";
    for (int i = 0; i < 8; ++i) {
      std::string l = "/layers." + std::to_string(i), p = "l" + std::to_string(i) + ".";
      for (const char* w : {"q", "k", "v", "o"}) b.init(p + w, onnx::TensorProto::FLOAT, {64, 64});
      b.node("MatMul", l + "/q_proj/MatMul", {prev, p + "q"}, {p + "qo"});
      b.node("MatMul", l + "/k_proj/MatMul", {prev, p + "k"}, {p + "ko"});
      b.node("MatMul", l + "/v_proj/MatMul", {prev, p + "v"}, {p + "vo"});
      b.node("Transpose", l + "/Transpose_k", {p + "ko"}, {p + "kt"});
      b.node("MatMul", l + "/MatMul_qk", {p + "qo", p + "kt"}, {p + "s"});
      b.node("Softmax", l + "/Softmax", {p + "s"}, {p + "a"});
      b.node("MatMul", l + "/MatMul_av", {p + "a", p + "vo"}, {p + "av"});
      b.node("MatMul", l + "/o_proj/MatMul", {p + "av", p + "o"}, {p + "m"});
      b.node("Add", l + "/Add", {p + "m", prev}, {p + "r"});
      prev = p + "r";
    }
    b.output(prev, onnx::TensorProto::FLOAT, {"1", "128", "64"});
    write_file(d / "t.onnx", b.bytes());
    return analysis_of(d / "t.onnx");
  }();
  return a;
}

// The same transformer (hidden size 128) with real-valued weights (a
// deterministic bell curve) and one spike in layer `spike_layer`'s q_proj (every layer's when negative):
// the model bytes. The rule docs' examples use a two-layer one
// (tests/data/docs/outlier_transformer.onnx).
inline std::string outlier_transformer_onnx(int layers, int spike_layer) {
  OnnxBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {"1", "16", "128"});
  std::string prev = "x";
  uint32_t seed = 12345;
  auto fill = [&](onnx::TensorProto* t, bool spike) {
    std::string raw(128 * 128 * 4, '\0');
    for (size_t i = 0; i < 128 * 128; ++i) {
      float v = 0;
      for (int k = 0; k < 4; ++k) {  // sum of uniforms: close to normal
        seed = seed * 1664525u + 1013904223u;
        v += static_cast<float>(seed >> 8) / 16777216.0f - 0.5f;
      }
      v *= 0.02f;
      if (spike && i == 7) v = 5.0f;
      std::memcpy(&raw[i * 4], &v, 4);
    }
    t->set_raw_data(raw);
  };
  for (int i = 0; i < layers; ++i) {
    std::string l = "/layers." + std::to_string(i), p = "l" + std::to_string(i) + ".";
    for (const char* w : {"q", "k", "v", "o"}) fill(b.init(p + w, onnx::TensorProto::FLOAT, {128, 128}), (spike_layer < 0 || i == spike_layer) && std::string(w) == "q");
    b.node("MatMul", l + "/q_proj/MatMul", {prev, p + "q"}, {p + "qo"});
    b.node("MatMul", l + "/k_proj/MatMul", {prev, p + "k"}, {p + "ko"});
    b.node("MatMul", l + "/v_proj/MatMul", {prev, p + "v"}, {p + "vo"});
    b.node("Transpose", l + "/Transpose_k", {p + "ko"}, {p + "kt"});
    b.node("MatMul", l + "/MatMul_qk", {p + "qo", p + "kt"}, {p + "s"});
    b.node("Softmax", l + "/Softmax", {p + "s"}, {p + "a"});
    b.node("MatMul", l + "/MatMul_av", {p + "a", p + "vo"}, {p + "av"});
    b.node("MatMul", l + "/o_proj/MatMul", {p + "av", p + "o"}, {p + "m"});
    b.node("Add", l + "/Add", {p + "m", prev}, {p + "r"});
    prev = p + "r";
  }
  b.output(prev, onnx::TensorProto::FLOAT, {"1", "16", "128"});
  return b.bytes();
}

// Eight layers, the spike in layer 3, analysed with --weight-stats.
inline const quarkplan::Json& outlier_transformer_analysis() {
  static quarkplan::Json a = [] {
    TempDir d;
    write_file(d / "t.onnx", outlier_transformer_onnx(8, 3));
    quarkplan::IntakeRequest req;
    req.model = (d / "t.onnx").string();
    req.weight_stats = true;
    return quarkplan::run_intake(req);
  }();
  return a;
}

// A corpus config read with the facts of Quark `release` ("" for the newest).
inline const quarkplan::Json& hf_analysis(const std::string& dir, const std::string& release = "") {
  static std::map<std::string, quarkplan::Json> cache;
  auto it = cache.find(dir + "@" + release);
  if (it == cache.end()) it = cache.emplace(dir + "@" + release, analysis_of(testdata("hf/" + dir), "", release)).first;
  return it->second;
}

inline bool cites(const quarkplan::PlanOutcome& o, const std::string& rule) {
  for (const auto& c : o.conflicts)
    if (c.rule == rule) return true;
  if (o.plan.is_null()) return false;
  for (const auto& r : o.plan["risks"])
    if (r["rule"] == rule) return true;
  for (auto& [k, v] : o.plan["reasons"].items())
    if (v.get<std::string>().find("[" + rule + "]") != std::string::npos) return true;
  for (const auto& row : o.decision_table)  // rows the planner adds (estimated_size) cite their rule too
    if (row.contains("reason") && row["reason"].is_string() && row["reason"].get<std::string>().find("[" + rule + "]") != std::string::npos) return true;
  return false;
}

}  // namespace qp_test
