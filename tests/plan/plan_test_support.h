// Shared fixtures for planner tests: analyses of generated and real models.
#pragma once
#include "common/json.h"
#include "intake/intake.h"
#include "intake/onnx_builder.h"
#include "plan/planner.h"
#include "support/test_support.h"

namespace qp_test {

inline quarkplan::Json analysis_of(const fs::path& model, const std::string& target = "") {
  quarkplan::IntakeRequest req;
  req.model = model.string();
  req.target = target;
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

// A transformer-like graph (MatMul-heavy), analysed once.
inline const quarkplan::Json& transformer_analysis() {
  static quarkplan::Json a = [] {
    TempDir d;
    OnnxBuilder b;
    b.input("x", onnx::TensorProto::FLOAT, {"1", "128", "64"});
    std::string prev = "x";
    for (int i = 0; i < 8; ++i) {
      std::string w = "w" + std::to_string(i);
      b.init(w, onnx::TensorProto::FLOAT, {64, 64});
      b.node("MatMul", "/layers." + std::to_string(i) + "/MatMul", {prev, w}, {"m" + std::to_string(i)});
      b.node("Add", "/layers." + std::to_string(i) + "/Add", {"m" + std::to_string(i)}, {"a" + std::to_string(i)});
      prev = "a" + std::to_string(i);
    }
    b.output(prev, onnx::TensorProto::FLOAT, {"1", "128", "64"});
    write_file(d / "t.onnx", b.bytes());
    return analysis_of(d / "t.onnx");
  }();
  return a;
}

inline const quarkplan::Json& hf_analysis(const std::string& dir) {
  static std::map<std::string, quarkplan::Json> cache;
  auto it = cache.find(dir);
  if (it == cache.end()) it = cache.emplace(dir, analysis_of(testdata("hf/" + dir))).first;
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
  return false;
}

}  // namespace qp_test
