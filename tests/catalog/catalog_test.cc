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
  const Catalog& c = Catalog::load();
  EXPECT_TRUE(quarkplan::validate_against_schema(c.onnx(), "schemas/catalog_onnx.schema.json").empty());
  EXPECT_TRUE(quarkplan::validate_against_schema(c.torch(), "schemas/catalog_torch.schema.json").empty());
  EXPECT_TRUE(quarkplan::validate_against_schema(c.hardware(), "schemas/catalog_hardware.schema.json").empty());
  for (const Json* j : {&c.onnx(), &c.torch(), &c.hardware()})
    EXPECT_FALSE((*j)["quark_version"].get<std::string>().empty());
}

TEST(Catalog, HoldsEveryQuarkFact) {
  const Catalog& c = Catalog::load();
  EXPECT_EQ(c.onnx()["presets"].size(), 65u);  // DefaultConfigMapping @6cb02c72
  EXPECT_EQ(c.torch()["schemes"].size(), 26u);  // 26 distinct schemes ...
  EXPECT_NE(c.torch_scheme("fp4_block16_scale_e4m3"), nullptr);  // ... + the legacy alias
  EXPECT_EQ((*c.torch_scheme("fp4_block16_scale_e4m3"))["name"], "nvfp4");
  EXPECT_EQ(c.torch()["templates"].size(), 41u);
  EXPECT_EQ(c.torch()["algorithms"].size(), 7u);
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
  EXPECT_EQ(c.torch()["templates"].size(), 41u);  // not overridden: embedded
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
