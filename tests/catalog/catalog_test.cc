// The embedded catalog: valid against its schemas, complete, and overridable.
#include <gtest/gtest.h>

#include "catalog/catalog.h"
#include "common/error.h"
#include "common/resources.h"
#include "support/test_support.h"

using namespace qp_test;
using quarkplan::Catalog;
using quarkplan::Json;

TEST(Catalog, EmbeddedFilesMatchTheirSchemas) {
  // Every release's facts, as resolved from the shared files and their per-release marks.
  ASSERT_EQ(Catalog::release_versions(), (std::vector<std::string>{"0.12.post1", "0.13"}));
  for (const auto& release : Catalog::release_versions()) {
    const Catalog& c = Catalog::load("", release);
    EXPECT_EQ(c.release(), release);
    EXPECT_TRUE(quarkplan::validate_against_schema(c.onnx(), "schemas/catalog_onnx.schema.json").empty()) << release;
    EXPECT_TRUE(quarkplan::validate_against_schema(c.torch(), "schemas/catalog_torch.schema.json").empty()) << release;
    EXPECT_TRUE(quarkplan::validate_against_schema(c.hardware(), "schemas/catalog_hardware.schema.json").empty()) << release;
    EXPECT_TRUE(quarkplan::validate_against_schema(c.releases(), "schemas/catalog_releases.schema.json").empty()) << release;
    for (const Json* j : {&c.onnx(), &c.torch(), &c.hardware()}) {
      EXPECT_EQ((*j)["quark_version"].get<std::string>().rfind(release + " ", 0), 0u) << (*j)["quark_version"];
      // No per-release mark survives resolution.
      std::string text = j->dump();
      for (const char* mark : {"\"by_release\"", "\"since_release\"", "\"until_release\""}) EXPECT_EQ(text.find(mark), std::string::npos) << mark;
    }
  }
  EXPECT_EQ(&Catalog::load(), &Catalog::load("", "0.13"));  // the default is the newest
  EXPECT_EQ(Catalog::canonical_release("0.12"), "0.12.post1");
  EXPECT_EQ(Catalog::canonical_release("0.13.0"), "0.13");
  EXPECT_EQ(Catalog::canonical_release("0.11"), "");
  EXPECT_THROW(Catalog::load("", "0.11"), quarkplan::InputError);
}

// What differs between the releases is what Quark's two wheels differ by (read from them by
// importing each: tests/data/quark/quantize_quark_facts.json's releases entry).
TEST(Catalog, EachReleaseHoldsItsOwnQuarkFacts) {
  const Catalog& old = Catalog::load("", "0.12.post1");
  const Catalog& now = Catalog::load("", "0.13");
  EXPECT_EQ(old.torch()["schemes"].size(), 26u);
  EXPECT_EQ(now.torch()["schemes"].size(), 27u);
  EXPECT_EQ(old.torch_scheme("mx9"), nullptr);
  ASSERT_NE(now.torch_scheme("mx9"), nullptr);
  EXPECT_EQ(old.torch()["templates"].size(), 41u);
  EXPECT_EQ(now.torch()["templates"].size(), 51u);
  EXPECT_EQ(old.torch_template("qwen3_5"), nullptr);
  ASSERT_NE(now.torch_template("qwen3_5"), nullptr);
  EXPECT_TRUE(old.torch()["unsupported_model_types"].contains("qwen3_5"));
  EXPECT_FALSE(now.torch()["unsupported_model_types"].contains("qwen3_5"));
  EXPECT_EQ(old.torch()["algorithms"].size(), 7u);
  EXPECT_EQ(now.torch()["algorithms"].size(), 9u);
  EXPECT_EQ((*old.torch_template("deepseek_v3"))["exclude_defaults"], Json::parse(R"(["lm_head","*self_attn*","*mlp.gate","*mlp.gate.linear"])"));
  EXPECT_EQ((*now.torch_template("deepseek_v3"))["exclude_defaults"], Json::parse(R"(["lm_head","*self_attn*","*mlp.gate"])"));
  EXPECT_TRUE(old.exclude_covers_children());
  EXPECT_FALSE(now.exclude_covers_children());
  EXPECT_EQ(old.file2file_flag(), (std::vector<std::string>{"--file2file_quantization"}));
  EXPECT_EQ(now.file2file_flag(), (std::vector<std::string>{"--quant_flow", "file2file"}));
  EXPECT_EQ(old.torch()["transformers_upper_bound"], "<5.3");
  EXPECT_EQ(now.torch()["transformers_upper_bound"], "<5.17");
  // Against what each wheel registers.
  Json f = quarkplan::parse_json(read_file(testdata("quark/quantize_quark_facts.json")), "facts");
  const Json& r13 = f["releases"]["0.13"];
  std::set<std::string> want, have;
  for (const auto& s : r13["torch_schemes_registered"]) want.insert(s);
  for (const auto& s : now.torch()["schemes"]) have.insert(s["name"]);
  for (auto& [alias, to] : now.torch()["scheme_aliases"].items()) have.insert(alias);
  EXPECT_EQ(have, want);
  for (auto& [model_type, t] : r13["torch_templates"].items()) {
    const Json* mine = now.torch_template(model_type);
    ASSERT_NE(mine, nullptr) << model_type;
    EXPECT_EQ((*mine)["exclude_defaults"], t["exclude_layers_name"]) << model_type;
  }
  for (auto& [algo, types] : r13["torch_algorithms"]["builtin_config_model_types"].items())
    for (const auto& type : types) {
      const Json* mine = now.torch_template(type);
      ASSERT_NE(mine, nullptr) << type;
      EXPECT_NE(std::find((*mine)["builtin_algorithms"].begin(), (*mine)["builtin_algorithms"].end(), algo), (*mine)["builtin_algorithms"].end())
          << algo << " for " << type;
    }
}

// Every ONNX preset's extra options are what get_default_config returns in each release's wheel
// (tests/data/quark/onnx_preset_extra_options.json): 0.13 redesigned the five mixed presets'
// AutoMixprecision (TargetLayerConfig) and dropped their BFP/MX attributes.
TEST(Catalog, EachReleasesOnnxPresetsAreItsWheels) {
  Json wheels = quarkplan::parse_json(read_file(testdata("quark/onnx_preset_extra_options.json")), "wheels");
  for (auto& [release, presets] : wheels["releases"].items()) {
    const Catalog& c = Catalog::load("", release);
    ASSERT_EQ(presets.size(), c.onnx()["presets"].size()) << release;
    for (auto& [name, extra] : presets.items()) {
      const Json* p = c.onnx_preset(name);
      ASSERT_NE(p, nullptr) << release << " " << name;
      Json mine = (*p)["extra_options"];
      mine.erase("FastFinetune");
      EXPECT_EQ(nlohmann::json(mine), nlohmann::json(extra)) << release << " " << name;  // key order aside
    }
  }
  const Json& s16 = *Catalog::load("", "0.13").onnx_preset("S16S16_MIXED_S8S8");
  EXPECT_EQ(s16["mixed_targets"]["weight"], "QInt8");  // what verify accepts on a layer AutoMixprecision moved
  EXPECT_FALSE(s16["extra_options"]["AutoMixprecision"].contains("WeightTargetQuantType"));
}

// A release mark naming no release is the catalog author's error, named with its file.
TEST(Catalog, AReleaseMarkForAnUnknownReleaseIsRefused) {
  TempDir d;
  Json t = quarkplan::parse_json(std::string(quarkplan::embedded_resource("catalog/torch.json")), "torch");
  t["schemes"][0]["since_release"] = "0.99";
  write_file(d / "torch.json", t.dump());
  try {
    (void)Catalog::load(d.path().string());
    ADD_FAILURE() << "accepted";
  } catch (const quarkplan::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("0.99"), std::string::npos) << e.what();
  }
}

TEST(Catalog, HoldsEveryQuarkFact) {
  const Catalog& c = Catalog::load();
  EXPECT_EQ(c.onnx()["presets"].size(), 65u);  // DefaultConfigMapping @6cb02c72
  EXPECT_EQ(c.torch()["schemes"].size(), 27u);  // 27 distinct schemes (0.13) ...
  EXPECT_NE(c.torch_scheme("fp4_block16_scale_e4m3"), nullptr);  // ... + the legacy alias
  EXPECT_EQ((*c.torch_scheme("fp4_block16_scale_e4m3"))["name"], "nvfp4");
  EXPECT_EQ(c.torch()["templates"].size(), 51u);
  EXPECT_EQ(c.torch()["algorithms"].size(), 9u);
  EXPECT_EQ(c.torch()["kv_cache"]["schemes"], Json::array({"fp8"}));
  // Every preset named anywhere in the ONNX catalog exists.
  for (const auto& row : c.onnx()["preset_candidates"])
    for (const auto& p : row["presets"]) EXPECT_NE(c.onnx_preset(p), nullptr) << p;
  for (const auto& row : c.onnx()["decision_guide"])
    for (const auto& p : row["presets"]) EXPECT_NE(c.onnx_preset(p), nullptr) << p;
  for (const auto& t : c.onnx()["deployment_targets"]) EXPECT_NE(c.onnx_preset(t["closest_alternative"]), nullptr);
  for (const auto& row : c.torch()["decision_guide"]) EXPECT_NE(c.torch_scheme(row["scheme"]), nullptr) << row["scheme"];
  // Block formats are exactly the seed's {BFP16*, MX*, MXFP*, MXINT8*, BF16_*BFP*, BF16_*MXINT8*}.
  for (const auto& p : c.onnx()["presets"]) {
    std::string n = p["name"];
    bool block = n.rfind("BFP16", 0) == 0 || n.rfind("MX", 0) == 0 ||
                 (n.rfind("BF16_", 0) == 0 && (n.find("BFP") != std::string::npos || n.find("MXINT8") != std::string::npos));
    EXPECT_EQ(p["needs_custom_ops"].get<bool>(), block) << n;
  }
  EXPECT_EQ(c.canonical_preset("mxfp4"), "MXFP4E2M1");
  EXPECT_EQ(c.canonical_preset("xint8"), "XINT8");
  EXPECT_EQ(c.canonical_calibration("MinMSE"), "PowerOfTwo_MinMSE");
  EXPECT_EQ(c.canonical_calibration("nonsense"), "");
}

TEST(Catalog, DirectoryOverridesAFileAndIsValidated) {
  TempDir d;
  Json onnx = Catalog::load().onnx();
  onnx["quark_version"] = "9.9-test";
  write_file(d / "onnx.json", onnx.dump());
  const Catalog& c = Catalog::load(d.path().string());
  EXPECT_EQ(c.onnx()["quark_version"], "9.9-test");
  EXPECT_EQ(c.torch()["templates"].size(), 51u);  // not overridden: embedded
  TempDir bad;
  write_file(bad / "onnx.json", R"({"catalog":"onnx","presets":[]})");
  EXPECT_THROW(Catalog::load(bad.path().string()), quarkplan::InputError);
  EXPECT_THROW(Catalog::load((d / "missing").string()), quarkplan::InputError);
}

// Every spec class a preset prints is described (module, defaults), and every
// QConfig-route preset names both specs: explain needs them.
TEST(Catalog, OnnxQuarkApiIsComplete) {
  const auto& c = quarkplan::Catalog::load().onnx();
  for (const auto& p : c["presets"]) {
    const auto& api = p["quark_api"];
    if (api["route"] != "qconfig") continue;
    for (const char* role : {"input_tensors", "weight"})
      EXPECT_TRUE(c["spec_classes"].contains(api[role]["class"].get<std::string>())) << p["name"] << " " << role;
  }
  for (const auto& m : c["calibration_methods"]) EXPECT_TRUE(m.contains("legacy")) << m["name"];
}

// Hardware facts: AMD accelerators have no instruction for FP4 with non-MX
// block scales (CDNA4's scaled MFMA takes E8M0 scales only), so amdfp4 and
// nvfp4 are never native on them; MXFP4 is native on CDNA4 only.
TEST(Catalog, Fp4FormatsFollowTheScaleTypeTheHardwareTakes) {
  const Catalog& c = Catalog::load();
  for (const auto& hw : c.hardware()["accelerators"]) {
    if (hw.value("vendor", "") != "amd" || !hw.contains("support")) continue;
    for (const char* family : {"amdfp4", "nvfp4"}) {
      if (hw["support"].contains(family)) {
        EXPECT_NE(hw["support"][family], "native") << hw["name"] << " " << family;
      }
    }
    if (hw["support"].contains("mxfp4")) {
      EXPECT_EQ(hw["support"]["mxfp4"] == "native", hw.value("arch", "") == "gfx950") << hw["name"];
    }
  }
}

// What users read cites public sources (Quark's code, AMD's docs and model
// cards, vendor docs), never the team's internal reference notes.
TEST(Catalog, CitesNoInternalReferenceFiles) {
  RunResult r = run_quarkplan({"catalog", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string all = r.out;
  for (const auto& [name, data] : quarkplan::embedded::all())
    if (name.rfind("catalog/", 0) == 0 || name.rfind("schemas/", 0) == 0 || name.rfind("docs/", 0) == 0) all += std::string(data);
  for (const char* internal : {"peers.md", "shared/reference", "reference/seeds", "quark_contracts.md", "quark_library.md", "quark_cli_facts.json"})
    EXPECT_EQ(all.find(internal), std::string::npos) << "cites " << internal << ": ..." << all.substr(all.find(internal) > 80 ? all.find(internal) - 80 : 0, 200);
}
