// ONNX intake on generated models: every field of SPEC §2 and the intake rules.
#include <gtest/gtest.h>
#include <unistd.h>

#include "catalog/catalog.h"
#include "common/error.h"
#include "intake/intake.h"
#include "intake/onnx_builder.h"
#include "intake/onnx_reader.h"
#include "support/test_support.h"

using namespace qp_test;
using quarkplan::Json;

namespace {

Json analyze(const fs::path& file, const std::string& target = "") {
  quarkplan::IntakeRequest req;
  req.model = file.string();
  req.target = target;
  return quarkplan::run_intake(req);
}

Json analyze_builder(const OnnxBuilder& b, const std::string& target = "") {
  TempDir d;
  write_file(d / "m.onnx", b.bytes());
  return analyze(d / "m.onnx", target);
}

bool has_rule(const Json& a, const std::string& rule) {
  for (const auto& r : a["risks"])
    if (r["rule"] == rule) return true;
  return false;
}

const Json& risk(const Json& a, const std::string& rule) {
  for (const auto& r : a["risks"])
    if (r["rule"] == rule) return r;
  throw std::runtime_error("no risk " + rule);
}

}  // namespace

TEST(OnnxIntake, SmallCnnFieldsAndClassifier) {
  Json a = analyze_builder(small_cnn(6));
  const Json& o = a["model"]["onnx_specific"];
  EXPECT_EQ(a["analysis_status"], "complete");
  EXPECT_EQ(a["model"]["model_type"], "onnx");
  EXPECT_EQ(o["ir_version"], 8);
  EXPECT_EQ(o["producer_name"], "qp-test");
  EXPECT_EQ(o["opsets"][0]["domain"], "ai.onnx");
  EXPECT_EQ(o["opsets"][0]["version"], 17);
  ASSERT_EQ(o["inputs"].size(), 1u);
  EXPECT_EQ(o["inputs"][0]["name"], "images");
  EXPECT_EQ(o["inputs"][0]["dtype"], "float32");
  EXPECT_EQ(o["inputs"][0]["shape"], Json::parse("[1,3,224,224]"));
  EXPECT_EQ(o["input_layout_guess"], "NCHW");
  EXPECT_FALSE(o["has_dynamic_dims"]);
  EXPECT_EQ(o["architecture_guess"], "cnn");
  EXPECT_EQ(o["node_count"], 6 * 2 + 4);
  EXPECT_EQ(a["quantization_targets"]["linear_layer_count"], 7);
  EXPECT_EQ(a["quantization_targets"]["onnx_specific"]["quantizable_op_counts"]["Conv"], 6);
  EXPECT_EQ(a["quantization_targets"]["onnx_specific"]["quantizable_op_counts"]["Gemm"], 1);
  EXPECT_EQ(a["quantization_targets"]["onnx_specific"]["quantizable_op_counts"]["MatMul"], 0);
  // 8*3*3*3 + 5*(8*8*3*3) + 10*8
  EXPECT_EQ(o["weights"]["total_params"], 216 + 5 * 576 + 80);
  EXPECT_EQ(o["weights"]["by_dtype"]["float32"], 216 + 5 * 576 + 80);
  // Unknown target: the seed's ResNet example candidates.
  EXPECT_EQ(a["quantization_targets"]["onnx_specific"]["preset_candidates"], Json::parse(R"(["XINT8","A8W8","INT8_CNN_DEFAULT"])"));
  // The final Gemm (through Softmax) is flagged, not excluded.
  EXPECT_TRUE(has_rule(a, "onnx.intake.final_classifier"));
  EXPECT_NE(risk(a, "onnx.intake.final_classifier")["message"].get<std::string>().find("/head/fc"), std::string::npos);
  EXPECT_TRUE(a["quantization_targets"]["exclude_defaults"].empty());
}

TEST(OnnxIntake, TargetFiltersCandidatesAndRaisesNpuRisks) {
  auto b = small_cnn(6);
  Json npu = analyze_builder(b, "npu_cnn");
  EXPECT_EQ(npu["quantization_targets"]["onnx_specific"]["preset_candidates"], Json::parse(R"(["XINT8","XINT8_ADAROUND","XINT8_ADAQUANT"])"));
  EXPECT_TRUE(has_rule(npu, "onnx.intake.nchw_npu_cnn"));
  EXPECT_EQ(risk(npu, "onnx.intake.nchw_npu_cnn")["severity"], "low");  // AMD's examples keep NCHW; the guide's NHWC is optional
  Json cpu = analyze_builder(b, "cpu");
  for (const auto& p : cpu["quantization_targets"]["onnx_specific"]["preset_candidates"])
    EXPECT_EQ(p.get<std::string>().rfind("XINT8", 0), std::string::npos) << "XINT8 suggested outside npu_cnn";
  EXPECT_FALSE(has_rule(cpu, "onnx.intake.nchw_npu_cnn"));
  Json tr = analyze_builder(b, "npu_transformer");
  EXPECT_EQ(tr["quantization_targets"]["onnx_specific"]["preset_candidates"][0], "INT8_TRANSFORMER_DEFAULT");
}

TEST(OnnxIntake, InitializersListedAsInputsAreNotModelInputs) {
  OnnxBuilder b(11, 4);
  b.input("x", onnx::TensorProto::FLOAT, {"batch", "16"});
  b.input("w", onnx::TensorProto::FLOAT, {"16", "4"});  // older exporters list weights as inputs
  b.init("w", onnx::TensorProto::FLOAT, {16, 4});
  b.node("MatMul", "mm", {"x", "w"}, {"y"});
  b.output("y", onnx::TensorProto::FLOAT, {"batch", "4"});
  Json a = analyze_builder(b);
  const Json& o = a["model"]["onnx_specific"];
  ASSERT_EQ(o["inputs"].size(), 1u);
  EXPECT_EQ(o["inputs"][0]["name"], "x");
  EXPECT_EQ(o["inputs"][0]["shape"], Json::parse(R"(["batch",16])"));
  EXPECT_TRUE(o["has_dynamic_dims"]);
  // One MatMul and no attention: an MLP, not a transformer.
  EXPECT_EQ(o["architecture_guess"], "unknown");
  EXPECT_EQ(o["architecture_detail"], "mlp");
  EXPECT_TRUE(has_rule(a, "onnx.intake.opset_below_13"));
  EXPECT_EQ(risk(a, "onnx.intake.opset_below_13")["severity"], "high");
}

TEST(OnnxIntake, UnknownDimsAndLayouts) {
  OnnxBuilder b;
  b.input("a", onnx::TensorProto::FLOAT, {"?", "224", "224", "3"});
  b.init("w", onnx::TensorProto::FLOAT, {3, 3, 3, 3});
  b.node("Conv", "c", {"a", "w"}, {"y"});
  b.output("y", onnx::TensorProto::FLOAT16, {});
  Json a = analyze_builder(b, "npu_cnn");
  const Json& o = a["model"]["onnx_specific"];
  EXPECT_EQ(o["inputs"][0]["shape"], Json::parse(R"(["?",224,224,3])"));
  EXPECT_EQ(o["input_layout_guess"], "NHWC");
  EXPECT_EQ(o["outputs"][0]["dtype"], "float16");
  EXPECT_TRUE(has_rule(a, "onnx.intake.dynamic_dims_npu"));
  EXPECT_FALSE(has_rule(a, "onnx.intake.nchw_npu_cnn"));
}

TEST(OnnxIntake, SubgraphOpsCountAndLstmInsideIfIsRecurrent) {
  OnnxBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {"1", "1", "64"});
  b.input("cond", onnx::TensorProto::BOOL, {});
  b.init("w", onnx::TensorProto::FLOAT, {1, 8, 64});
  for (int i = 0; i < 3; ++i) b.node("Conv", "conv" + std::to_string(i), {"x", "w"}, {"c" + std::to_string(i)});
  auto [then_g, else_g] = b.if_node("branch");
  OnnxBuilder::node(then_g, "LSTM", "lstm_then", {"x"}, {"h"});
  OnnxBuilder::node(else_g, "LSTM", "lstm_else", {"x"}, {"h"});
  auto [inner_then, inner_else] = b.if_node("nested", else_g);
  b.constant("inner_weight", {4, 16}, inner_then);
  OnnxBuilder::node(inner_else, "Relu", "r", {"x"}, {"y"});
  b.output("branch_out", onnx::TensorProto::FLOAT, {"1"});
  Json a = analyze_builder(b);
  const Json& o = a["model"]["onnx_specific"];
  EXPECT_EQ(o["subgraph_count"], 4);
  EXPECT_EQ(a["quantization_targets"]["onnx_specific"]["op_counts"]["LSTM"], 2);
  EXPECT_EQ(o["architecture_guess"], "recurrent");
  // Conv(3) + If(1) + then{LSTM} + else{LSTM, If{Constant | Relu}}
  EXPECT_EQ(o["node_count"], 3 + 1 + 1 + 2 + 2);
  EXPECT_EQ(o["weights"]["in_constant_nodes"], 64);
  EXPECT_EQ(o["weights"]["total_params"], 8 * 64 + 64);
  EXPECT_TRUE(has_rule(a, "onnx.intake.subgraphs"));
  EXPECT_TRUE(has_rule(a, "onnx.intake.recurrent_ops"));
}

TEST(OnnxIntake, ClassifierRules) {
  // conv/mm/gemm counts, plus `attention` Q.K^T -> Softmax -> .V blocks.
  auto analysis = [](int conv, int mm, int gemm, int attention = 0) {
    OnnxBuilder b;
    b.input("x", onnx::TensorProto::FLOAT, {"1", "8"});
    for (int i = 0; i < conv; ++i) b.node("Conv", "c" + std::to_string(i), {"x"}, {"c" + std::to_string(i)});
    for (int i = 0; i < mm; ++i) b.node("MatMul", "m" + std::to_string(i), {"x"}, {"m" + std::to_string(i)});
    for (int i = 0; i < gemm; ++i) b.node("Gemm", "g" + std::to_string(i), {"x"}, {"g" + std::to_string(i)});
    for (int i = 0; i < attention; ++i) {
      std::string p = "a" + std::to_string(i) + "_";
      b.init(p + "wq", onnx::TensorProto::FLOAT, {8, 8});
      b.init(p + "wk", onnx::TensorProto::FLOAT, {8, 8});
      b.node("MatMul", p + "q", {"x", p + "wq"}, {p + "q"});
      b.node("MatMul", p + "k", {"x", p + "wk"}, {p + "k"});
      b.node("MatMul", p + "qk", {p + "q", p + "k"}, {p + "s"});
      b.node("Div", p + "scale", {p + "s", "x"}, {p + "sd"});
      b.node("Softmax", p + "softmax", {p + "sd"}, {p + "p"});
      b.node("MatMul", p + "pv", {p + "p", "x"}, {p + "o"});
    }
    b.node("Relu", "r", {"x"}, {"y"});
    b.output("y", onnx::TensorProto::FLOAT, {"1", "8"});
    return analyze_builder(b)["model"]["onnx_specific"];
  };
  auto arch = [&](int conv, int mm, int gemm, int attention = 0) { return analysis(conv, mm, gemm, attention)["architecture_guess"].get<std::string>(); };
  EXPECT_EQ(arch(6, 1, 0), "cnn");
  EXPECT_EQ(arch(0, 0, 0, 2), "transformer");
  EXPECT_EQ(analysis(0, 0, 0, 2)["attention_blocks"], 2);
  EXPECT_EQ(arch(1, 2, 0, 2), "transformer");
  // MatMuls without attention are not a transformer (the planning guide's
  // classifier would say so; quarkplan asks for attention).
  EXPECT_EQ(arch(1, 6, 0), "hybrid");
  EXPECT_EQ(arch(0, 0, 3), "unknown");
  EXPECT_EQ(analysis(0, 0, 3)["architecture_detail"], "mlp");
  EXPECT_EQ(arch(3, 2, 0), "hybrid");
  EXPECT_EQ(arch(0, 0, 0), "unknown");
  EXPECT_EQ(analysis(0, 0, 0)["architecture_detail"], "unknown");
  OnnxBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {"1", "8"});
  b.node("Relu", "r", {"x"}, {"y"});
  b.output("y", onnx::TensorProto::FLOAT, {"1", "8"});
  Json a = analyze_builder(b);
  EXPECT_TRUE(a["quantization_targets"]["onnx_specific"]["preset_candidates"].empty());
}

// An LSTM cell unrolled into Gemm/Sigmoid/Tanh/Mul (as in silero_vad_op18_ifless)
// is recurrent; a gated activation (tanh(a) * sigmoid(b), no state) is not.
TEST(OnnxIntake, UnrolledRecurrentCells) {
  auto build = [](bool cell) {
    OnnxBuilder b;
    b.input("x", onnx::TensorProto::FLOAT, {"1", "8"});
    b.input("c", onnx::TensorProto::FLOAT, {"1", "8"});
    b.init("w", onnx::TensorProto::FLOAT, {8, 32});
    b.node("Gemm", "gates", {"x", "w"}, {"g"});
    b.node("Split", "split", {"g"}, {"i", "f", "gg", "o"});
    b.node("Sigmoid", "si", {"i"}, {"si"});
    b.node("Sigmoid", "sf", {"f"}, {"sf"});
    b.node("Tanh", "tg", {"gg"}, {"tg"});
    b.node("Sigmoid", "so", {"o"}, {"so"});
    if (cell) {
      b.node("Mul", "fc", {"sf", "c"}, {"fc"});
      b.node("Mul", "ig", {"si", "tg"}, {"ig"});
      b.node("Add", "c_next", {"fc", "ig"}, {"c2"});
      b.node("Tanh", "tc", {"c2"}, {"tc"});
      b.node("Mul", "h", {"so", "tc"}, {"y"});
    } else {
      b.node("Mul", "gated", {"so", "tg"}, {"y"});
    }
    b.output("y", onnx::TensorProto::FLOAT, {"1", "8"});
    return analyze_builder(b);
  };
  Json cell = build(true);
  EXPECT_EQ(cell["model"]["onnx_specific"]["architecture_guess"], "recurrent");
  EXPECT_EQ(cell["model"]["onnx_specific"]["architecture_detail"], "unrolled_recurrent");
  EXPECT_EQ(cell["model"]["onnx_specific"]["recurrent_cells"], 1);
  EXPECT_TRUE(has_rule(cell, "onnx.intake.recurrent_ops"));
  Json gated = build(false);
  EXPECT_EQ(gated["model"]["onnx_specific"]["recurrent_cells"], 0);
  EXPECT_NE(gated["model"]["onnx_specific"]["architecture_guess"], "recurrent");
}

// Weights per op type: inside and outside subgraphs, through Constant nodes,
// outer-scope initializers and a Cast/Transpose on the way.
TEST(OnnxIntake, WeightsByOpTypeInAndOutOfSubgraphs) {
  OnnxBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {"1", "3", "8", "8"});
  b.input("cond", onnx::TensorProto::BOOL, {});
  b.init("w_main", onnx::TensorProto::FLOAT, {4, 3, 3, 3});
  b.node("Conv", "conv_main", {"x", "w_main"}, {"c"});
  b.init("w_outer", onnx::TensorProto::FLOAT, {8, 16});  // read from inside the If body
  auto [then_g, else_g] = b.if_node("branch");
  OnnxBuilder::node(then_g, "MatMul", "mm_then", {"c", "w_outer"}, {"t"});
  b.constant("w_const", {16, 4}, else_g);
  OnnxBuilder::node(else_g, "Transpose", "wt", {"w_const_out"}, {"w_t"});
  OnnxBuilder::node(else_g, "Gemm", "gemm_else", {"c", "w_t"}, {"e"});
  OnnxBuilder::node(else_g, "MatMul", "mm_act", {"c", "c"}, {"e2"});
  b.output("branch_out", onnx::TensorProto::FLOAT, {"1"});
  Json a = analyze_builder(b);
  const Json& w = a["quantization_targets"]["weights_by_op_type"];
  EXPECT_EQ(w["Conv"]["weighted_nodes"], 1);
  EXPECT_EQ(w["Conv"]["weight_params"], 108);
  EXPECT_EQ(w["Conv"]["weight_params_in_subgraphs"], 0);
  EXPECT_EQ(w["MatMul"]["nodes"], 2);
  EXPECT_EQ(w["MatMul"]["weighted_nodes"], 1);
  EXPECT_EQ(w["MatMul"]["weighted_nodes_in_subgraphs"], 1);
  EXPECT_EQ(w["MatMul"]["weighted_2d_nodes"], 1);
  EXPECT_EQ(w["MatMul"]["weight_params"], 128);
  EXPECT_EQ(w["Gemm"]["weight_params_in_subgraphs"], 64);
  EXPECT_EQ(a["model"]["onnx_specific"]["weights"]["quantizable_params"], 108 + 128 + 64);
}

TEST(OnnxIntake, Fp16OnlyWeights) {
  OnnxBuilder b;
  b.input("x", onnx::TensorProto::FLOAT16, {"1", "8"});
  b.init("w", onnx::TensorProto::FLOAT16, {8, 8}, 2);
  b.node("MatMul", "mm", {"x", "w"}, {"y"});
  b.output("y", onnx::TensorProto::FLOAT16, {"1", "8"});
  Json a = analyze_builder(b);
  EXPECT_EQ(a["model"]["onnx_specific"]["weights"]["by_dtype"]["float16"], 64);
  EXPECT_TRUE(has_rule(a, "onnx.intake.fp16_model"));
}

TEST(OnnxIntake, CustomOpsFailureSuppressesBlockFormats) {
  TempDir d;
  OnnxBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {"1", "8"});
  for (int i = 0; i < 4; ++i) b.node("MatMul", "m" + std::to_string(i), {"x"}, {"m" + std::to_string(i)});
  b.output("m0", onnx::TensorProto::FLOAT, {"1", "8"});
  write_file(d / "m.onnx", b.bytes());
  write_file(d / "install.json", R"({"status":"ok","verification":{"custom_ops_compile_ok":false}})");
  quarkplan::IntakeRequest req;
  req.model = (d / "m.onnx").string();
  req.target = "cuda";
  Json ok = quarkplan::run_intake(req);
  // Four MatMuls and no attention: an MLP, planned with the presets for any architecture.
  EXPECT_EQ(ok["model"]["onnx_specific"]["architecture_detail"], "mlp");
  EXPECT_EQ(ok["quantization_targets"]["onnx_specific"]["preset_candidates"], Json::parse(R"(["A16W8","BF16","MXFP4E2M1"])"));
  req.install_result = (d / "install.json").string();
  Json failed = quarkplan::run_intake(req);
  EXPECT_EQ(failed["quantization_targets"]["onnx_specific"]["preset_candidates"], Json::parse(R"(["A16W8","BF16"])"));
  EXPECT_TRUE(has_rule(failed, "onnx.intake.block_formats_suppressed"));
}

TEST(OnnxIntake, SessionContextGivesTheTarget) {
  TempDir d;
  write_file(d / "m.onnx", small_cnn().bytes());
  write_file(d / "session.json", R"({"user_goal":"q","workflow":"quark-onnx-ptq-workflow","constraints":{"backend":"onnx","deployment_target":"npu_cnn"},"open_questions":[]})");
  quarkplan::IntakeRequest req;
  req.model = (d / "m.onnx").string();
  req.session = (d / "session.json").string();
  Json a = quarkplan::run_intake(req);
  EXPECT_EQ(a["intake"]["deployment_target"], "npu_cnn");
  EXPECT_EQ(a["intake"]["deployment_target_source"], "session_context");
  EXPECT_EQ(a["quantization_targets"]["onnx_specific"]["preset_candidates"][0], "XINT8");
}

// ---- external data ---------------------------------------------------------

namespace {
OnnxBuilder external_model(const std::string& location, int64_t offset, int64_t length) {
  OnnxBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {"1", "16"});
  auto* t = b.graph->add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(16);
  t->add_dims(16);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const std::string& k, const std::string& v) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", location);
  add("offset", std::to_string(offset));
  if (length >= 0) add("length", std::to_string(length));
  b.node("MatMul", "mm", {"x", "w"}, {"y"});
  b.output("y", onnx::TensorProto::FLOAT, {"1", "16"});
  return b;
}
}  // namespace

TEST(OnnxExternalData, PresentAndSized) {
  TempDir d;
  write_file(d / "model.onnx", external_model("model.onnx_data", 0, 1024).bytes());
  write_file(d / "model.onnx_data", std::string(1024, '\0'));
  Json a = analyze(d.path());  // a folder holding model.onnx
  const Json& o = a["model"]["onnx_specific"];
  EXPECT_EQ(a["analysis_status"], "complete");
  EXPECT_TRUE(o["uses_external_data"]);
  EXPECT_EQ(o["external_data_files"], Json::array({"model.onnx_data"}));
  EXPECT_EQ(o["weights"]["total_params"], 256);
}

TEST(OnnxExternalData, MissingIsPartial) {
  TempDir d;
  write_file(d / "m.onnx", external_model("weights.bin", 0, 1024).bytes());
  Json a = analyze(d / "m.onnx");
  EXPECT_EQ(a["analysis_status"], "partial");
  EXPECT_TRUE(has_rule(a, "onnx.intake.external_data_missing"));
}

TEST(OnnxExternalData, ShortIsPartialWithAndWithoutLength) {
  TempDir d;
  write_file(d / "m.onnx", external_model("weights.bin", 512, 1024).bytes());
  write_file(d / "weights.bin", std::string(1000, '\0'));
  Json a = analyze(d / "m.onnx");
  EXPECT_EQ(a["analysis_status"], "partial");
  EXPECT_TRUE(has_rule(a, "onnx.intake.external_data_short"));
  // No length: the tensor's own size (256 floats = 1024 bytes) is required.
  write_file(d / "n.onnx", external_model("w2.bin", 0, -1).bytes());
  write_file(d / "w2.bin", std::string(1023, '\0'));
  EXPECT_EQ(analyze(d / "n.onnx")["analysis_status"], "partial");
  write_file(d / "w2.bin", std::string(1024, '\0'));
  EXPECT_EQ(analyze(d / "n.onnx")["analysis_status"], "complete");
}

TEST(OnnxExternalData, LocationsMustStayInsideTheFolder) {
  TempDir d;
  fs::create_directories(d / "model");
  write_file(d / "secret.bin", std::string(2048, '\0'));
  for (const std::string loc : {"/etc/passwd", "../secret.bin", "sub/../../secret.bin"}) {
    write_file(d / "model" / "m.onnx", external_model(loc, 0, 16).bytes());
    try {
      analyze(d / "model" / "m.onnx");
      FAIL() << "accepted " << loc;
    } catch (const quarkplan::InputError& e) {
      std::string what = e.what();
      EXPECT_NE(what.find("m.onnx"), std::string::npos) << what;
      EXPECT_NE(what.find("refused"), std::string::npos) << what;
    }
  }
  fs::create_symlink(d / "secret.bin", d / "model" / "link.bin");
  write_file(d / "model" / "m.onnx", external_model("link.bin", 0, 16).bytes());
  EXPECT_THROW(analyze(d / "model" / "m.onnx"), quarkplan::InputError);
  // A link that stays inside the folder is fine.
  write_file(d / "model" / "real.bin", std::string(64, '\0'));
  fs::create_symlink(d / "model" / "real.bin", d / "model" / "inside.bin");
  write_file(d / "model" / "m.onnx", external_model("inside.bin", 0, 16).bytes());
  EXPECT_EQ(analyze(d / "model" / "m.onnx")["analysis_status"], "complete");
}

TEST(OnnxExternalData, Over2GiBWithoutExternalDataIsPartial) {
  // A sparse file: a model whose single initializer claims 2.2 GB of raw_data.
  // The reader must skip the bytes by length without touching them.
  TempDir d;
  OnnxBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {"1", "8"});
  b.node("MatMul", "mm", {"x", "w"}, {"y"});
  b.output("y", onnx::TensorProto::FLOAT, {"1", "8"});
  const uint64_t n = 550000000ull;  // floats
  std::string prefix = b.bytes_before_big_initializer("w", n);
  fs::path p = d / "big.onnx";
  write_file(p, prefix);
  ASSERT_EQ(::truncate(p.c_str(), static_cast<off_t>(prefix.size() + n * 4)), 0);
  Json a = analyze(p);
  EXPECT_EQ(a["analysis_status"], "partial");
  EXPECT_TRUE(has_rule(a, "onnx.intake.protobuf_over_2gb"));
  EXPECT_EQ(a["model"]["onnx_specific"]["weights"]["total_params"], n);
  EXPECT_GT(a["model"]["estimated_size_gb"].get<double>(), 2.0);
}
