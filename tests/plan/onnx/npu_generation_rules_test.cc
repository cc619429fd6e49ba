// Ryzen AI NPU generations: the scenario of src/plan/onnx/npu_generation_rules.cc
// (onnx.npu.generation), and every generation x preset x NPU target against
// what the catalog says Ryzen AI documents for it (catalog onnx.json
// npu_generations): documented presets plan, the rest are the gate's conflict
// with a documented alternative, float-scale formats keep their calibration
// and NPU CNN mode off, an insisted choice is kept exactly as chosen, and an
// unknown generation keeps Quark's planning guide's gate and asks which NPU.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "plan/rule_scenarios.h"

using quarkplan::Json;
using quarkplan::PlanRequest;
using quarkplan::PlanStatus;

namespace qp_test::rule_scenarios {

std::vector<Scenario> onnx_npu_generation_scenarios() {
  return {
      {"onnx.npu.generation", [] {
         // Named: recorded, shown, and the target follows the model's kind.
         auto o = plan(cnn_analysis(), [](PlanRequest& r) { r.hardware = "Strix Halo"; });
         EXPECT_EQ(o.plan["onnx_specific"]["npu_generation"], "strix-halo");
         EXPECT_EQ(o.plan["deployment_target"], "npu_cnn");
         EXPECT_NE(o.plan["reasons"]["deployment_target"].get<std::string>().find("--hardware Strix Halo"), std::string::npos);
         // Unknown generation on an NPU target: the guide's gate, and a question that does not block.
         auto u = plan(cnn_analysis(), [](PlanRequest& r) { r.target = "npu_cnn"; });
         EXPECT_TRUE(has_question(u, "Which Ryzen AI NPU will run this model?"));
         EXPECT_EQ(u.status, PlanStatus::kConfirmed);
         EXPECT_EQ(u.plan["preset"], "XINT8");
         // Not an NPU: exit 2 with what to type instead.
         auto bad = plan(cnn_analysis(), [](PlanRequest& r) { r.hardware = "mi300x"; });
         EXPECT_EQ(bad.status, PlanStatus::kInvalid);
         ASSERT_FALSE(bad.errors.empty());
         EXPECT_NE(bad.errors[0].find("--target rocm, cuda or cpu"), std::string::npos) << bad.errors[0];
       }},
  };
}

}  // namespace qp_test::rule_scenarios

namespace {

using qp_test::rule_scenarios::has_question;
using qp_test::rule_scenarios::plan;

const quarkplan::Catalog& cat() { return quarkplan::Catalog::load(); }

std::set<std::string> documented(const Json& g, const std::string& t) {
  std::set<std::string> s;
  if (!g["targets"].contains(t)) return s;
  for (const auto& grp : g["targets"][t]["groups"])
    for (const auto& p : grp["presets"]) s.insert(p);
  return s;
}

const Json& analysis_for(const std::string& t) { return t == "npu_cnn" ? qp_test::cnn_analysis() : qp_test::transformer_analysis(); }

}  // namespace

TEST(NpuGenerations, CatalogNamesEveryGenerationWithItsSources) {
  const Json& gens = cat().onnx()["npu_generations"]["generations"];
  std::set<std::string> names;
  for (const auto& g : gens) {
    names.insert(g["name"]);
    EXPECT_FALSE(g["sources"].empty()) << g["name"];
    for (const auto& [t, tj] : g["targets"].items())
      for (const auto& grp : tj["groups"]) {
        EXPECT_FALSE(grp["source"].get<std::string>().empty()) << g["name"] << " " << t;
        for (const auto& p : grp["presets"]) EXPECT_NE(cat().onnx_preset(p), nullptr) << g["name"] << ": " << p;
      }
    // Every alias resolves to its own generation, whatever the case and separators.
    for (const auto& a : g["aliases"]) {
      const Json* r = cat().npu_generation(a);
      ASSERT_NE(r, nullptr) << a;
      EXPECT_EQ((*r)["name"], g["name"]) << a;
    }
  }
  EXPECT_EQ(names, (std::set<std::string>{"phoenix", "hawk-point", "strix", "strix-halo", "krackan", "xdna", "xdna2"}));
  EXPECT_EQ((*cat().npu_generation("strixhalo"))["name"], "strix-halo");
  EXPECT_EQ((*cat().npu_generation("STX-H"))["name"], "strix-halo");
  EXPECT_EQ((*cat().npu_generation("npu2"))["name"], "xdna2");
  EXPECT_EQ((*cat().npu_generation("STRIX_HALO"))["name"], "strix-halo");
  EXPECT_EQ((*cat().npu_generation("PHX"))["name"], "phoenix");
  EXPECT_TRUE(cat().npu_generic_name("Ryzen AI"));
  EXPECT_EQ(cat().npu_generation("ryzen-ai"), nullptr);
}

// What AMD documents, as the plans must follow it: XDNA (Phoenix, Hawk Point)
// runs XINT8 on CNNs and no BF16; XDNA2 (Strix, Strix Halo, Krackan) runs
// XINT8, A8W8, A16W8 and BF16 on CNNs and BF16 on transformers.
TEST(NpuGenerations, GatesFollowRyzenAIsDocumentation) {
  for (const char* g : {"phoenix", "hawk-point", "xdna"}) {
    const Json& j = *cat().npu_generation(g);
    EXPECT_TRUE(documented(j, "npu_cnn").count("XINT8")) << g;
    for (const char* no : {"A8W8", "A16W8", "BF16"}) EXPECT_FALSE(documented(j, "npu_cnn").count(no)) << g << " " << no;
    EXPECT_FALSE(documented(j, "npu_transformer").count("BF16")) << g;
  }
  for (const char* g : {"strix", "strix-halo", "krackan", "xdna2"}) {
    const Json& j = *cat().npu_generation(g);
    for (const char* yes : {"XINT8", "A8W8", "A16W8", "BF16"}) EXPECT_TRUE(documented(j, "npu_cnn").count(yes)) << g << " " << yes;
    // Transformers: BF16, and the INT8 types Ryzen AI's operator table lists for NLP models.
    for (const char* yes : {"BF16", "XINT8", "A8W8", "A16W8"}) EXPECT_TRUE(documented(j, "npu_transformer").count(yes)) << g << " " << yes;
  }
}

TEST(NpuGenerations, EveryGenerationPresetAndTargetPlansOrIsRefusedWithADocumentedAlternative) {
  size_t planned = 0, refused = 0;
  for (const auto& g : cat().onnx()["npu_generations"]["generations"])
    for (const std::string t : {"npu_cnn", "npu_transformer"}) {
      const std::set<std::string> ok = documented(g, t);
      for (const auto& p : cat().onnx_preset_names()) {
        const std::string where = g["name"].get<std::string>() + " / " + t + " / " + p;
        auto o = plan(analysis_for(t), [&](PlanRequest& r) {
          r.hardware = g["name"];
          r.target = t;
          r.choices["preset"] = p;
          r.custom_ops_compile_ok = true;
        });
        ASSERT_NE(o.status, PlanStatus::kInvalid) << where << ": " << (o.errors.empty() ? "" : o.errors[0]);
        bool gated = false;
        for (const auto& c : o.conflicts)
          if (c.rule == "onnx.target.gate") {
            gated = true;
            EXPECT_TRUE(ok.count(c.alternative)) << where << ": alternative " << c.alternative;
            EXPECT_NE(c.message.find(g["label"].get<std::string>()), std::string::npos) << where << ": " << c.message;
          }
        EXPECT_EQ(gated, !ok.count(p)) << where;
        if (gated) {
          ++refused;
          continue;
        }
        ++planned;
        // Documented: the preset's own NPU mode and calibration, as its group says.
        const Json* grp = cat().npu_group(g, t, p);
        ASSERT_NE(grp, nullptr) << where;
        const std::string scales = (*grp)["scales"];
        const Json& os = o.plan["onnx_specific"];
        const Json& pj = *cat().onnx_preset(p);
        if (t == "npu_cnn") {
          EXPECT_EQ(os["enable_npu_cnn"].get<bool>(), scales == "power_of_two") << where;
          const Json* cm = cat().onnx_calibration(o.plan["calibration"]["method"]);
          ASSERT_NE(cm, nullptr) << where;
          EXPECT_EQ((*cm)["power_of_two"].get<bool>(), scales == "power_of_two") << where << ": " << o.plan["calibration"]["method"];
        } else {
          EXPECT_EQ(os["enable_npu_transformer"].get<bool>(), pj["enable_npu_transformer"].get<bool>()) << where;
        }
        for (const auto& c : o.conflicts) EXPECT_NE(c.rule, "onnx.npu_cnn.pof2_calibration") << where;
      }
    }
  EXPECT_GT(planned, 40u);
  EXPECT_GT(refused, 300u);
}

TEST(NpuGenerations, EachGenerationsDefaultsAreWhatItDocuments) {
  for (const auto& g : cat().onnx()["npu_generations"]["generations"])
    for (const std::string t : {"npu_cnn", "npu_transformer"})
      for (const char* goal : {"balanced", "accuracy", "size"}) {
        auto o = plan(analysis_for(t), [&](PlanRequest& r) {
          r.hardware = g["name"];
          r.target = t;
          r.goal = goal;
        });
        const std::string where = g["name"].get<std::string>() + " / " + t + " / " + goal;
        ASSERT_TRUE(o.plan["preset"].is_string()) << where;
        EXPECT_TRUE(documented(g, t).count(o.plan["preset"])) << where << ": " << o.plan["preset"];
        EXPECT_TRUE(o.conflicts.empty()) << where << ": " << o.conflicts[0].message;
        EXPECT_FALSE(has_question(o, "Which Ryzen AI NPU")) << where;
      }
  // Phoenix: XINT8 with power-of-two scales and NHWC; Strix for accuracy: A16W8 with float scales.
  auto phx = plan(qp_test::cnn_analysis(), [](PlanRequest& r) { r.hardware = "phoenix"; });
  EXPECT_EQ(phx.plan["preset"], "XINT8");
  EXPECT_EQ(phx.plan["calibration"]["method"], "PowerOfTwo_MinMSE");
  EXPECT_FALSE(phx.plan["onnx_specific"]["extra_options"].contains("ConvertNCHWToNHWC"));  // NCHW, as AMD's XINT8 examples
  auto stx = plan(qp_test::cnn_analysis(), [](PlanRequest& r) {
    r.hardware = "strix";
    r.goal = "accuracy";
  });
  EXPECT_EQ(stx.plan["preset"], "A16W8");
  EXPECT_EQ(stx.plan["calibration"]["method"], "MinMax");
  EXPECT_FALSE(stx.plan["onnx_specific"]["enable_npu_cnn"].get<bool>());
  EXPECT_FALSE(stx.plan["onnx_specific"]["extra_options"].contains("ConvertNCHWToNHWC"));
  // Transformers on Strix: BF16, with the Vitis AI EP compiling the FP32 model said as a risk.
  auto tr = plan(qp_test::transformer_analysis(), [](PlanRequest& r) { r.hardware = "krackan"; });
  EXPECT_EQ(tr.plan["deployment_target"], "npu_transformer");
  EXPECT_EQ(tr.plan["preset"], "BF16");
  EXPECT_FALSE(tr.plan["onnx_specific"]["enable_npu_transformer"].get<bool>());
  EXPECT_NE(tr.plan["risks"].dump().find("which converts it to BF16 itself"), std::string::npos) << tr.plan["risks"].dump();
}

// Quark's planning guide's gate for an NPU nobody named, and the user's
// insisted choice kept exactly: A8W8 stays A8W8 with its own MinMax calibration.
TEST(NpuGenerations, UnknownGenerationKeepsTheGuidesGateAndInsistKeepsTheChoice) {
  auto a8 = plan(qp_test::cnn_analysis(), [](PlanRequest& r) {
    r.target = "npu_cnn";
    r.choices["preset"] = "A8W8";
  });
  ASSERT_EQ(a8.status, PlanStatus::kConflict);
  ASSERT_EQ(a8.conflicts.size(), 1u);
  EXPECT_EQ(a8.conflicts[0].rule, "onnx.target.gate");
  EXPECT_EQ(a8.conflicts[0].alternative, "XINT8");
  auto kept = plan(qp_test::cnn_analysis(), [](PlanRequest& r) {
    r.target = "npu_cnn";
    r.choices["preset"] = "A8W8";
    r.insist = true;
  });
  EXPECT_EQ(kept.plan["preset"], "A8W8");
  EXPECT_EQ(kept.plan["calibration"]["method"], "MinMax");
  EXPECT_FALSE(kept.plan["onnx_specific"]["enable_npu_cnn"].get<bool>() && kept.plan["calibration"]["method"] != "MinMax");
  bool high = false;
  for (const auto& r : kept.plan["risks"]) high = high || (r["rule"] == "onnx.target.gate" && r["severity"] == "high");
  EXPECT_TRUE(high) << kept.plan["risks"].dump();
  // Named Phoenix: A8W8 is refused with XINT8, naming the generation.
  auto phx = plan(qp_test::cnn_analysis(), [](PlanRequest& r) {
    r.hardware = "hawk-point";
    r.choices["preset"] = "BF16";
  });
  ASSERT_EQ(phx.status, PlanStatus::kConflict);
  EXPECT_NE(phx.conflicts[0].message.find("Hawk Point"), std::string::npos) << phx.conflicts[0].message;
  // The same A8W8 on Strix: documented, confirmed, float scales.
  auto stx = plan(qp_test::cnn_analysis(), [](PlanRequest& r) {
    r.hardware = "strix";
    r.choices["preset"] = "A8W8";
  });
  EXPECT_EQ(stx.status, PlanStatus::kConfirmed) << (stx.conflicts.empty() ? "" : stx.conflicts[0].message);
  EXPECT_EQ(stx.plan["calibration"]["method"], "MinMax");
}

// env_context.json's NPU names the generation when no flag does.
TEST(NpuGenerations, EnvContextNamesTheNpu) {
  auto o = plan(qp_test::cnn_analysis(), [](PlanRequest& r) {
    r.target = "npu_cnn";
    r.env_context = Json::parse(R"({"environment":{"os":"Linux","python":"3.11","containerized":false},
                                    "hardware":{"accelerator":"cpu","npu":"amdxdna","npu_generation":"krackan"}})");
  });
  EXPECT_EQ(o.plan["onnx_specific"]["npu_generation"], "krackan");
  EXPECT_NE(o.plan["reasons"]["onnx_specific.npu_generation"].get<std::string>().find("env_context.json"), std::string::npos);
}

// From the second review: STX/KRK run A8W8/A16W8 for NLP models too (Ryzen
// AI's operator table) and pick A8W8 for size; Quark's NPU transformer presets
// are never called documented; MatMulNBits ignores exclusions; GPTQ on BF16 is refused.
TEST(NpuGenerations, TransformersOnStrixTakeTheDocumentedIntegerFormats) {
  auto a8 = plan(qp_test::transformer_analysis(), [](PlanRequest& r) {
    r.hardware = "strix";
    r.choices["preset"] = "A8W8";
  });
  EXPECT_EQ(a8.status, PlanStatus::kConfirmed) << (a8.conflicts.empty() ? "" : a8.conflicts[0].message);
  EXPECT_FALSE(a8.plan["onnx_specific"]["enable_npu_transformer"].get<bool>());
  auto size = plan(qp_test::transformer_analysis(), [](PlanRequest& r) {
    r.hardware = "krackan";
    r.goal = "size";
  });
  EXPECT_EQ(size.plan["preset"], "A8W8");
  auto phx = plan(qp_test::transformer_analysis(), [](PlanRequest& r) {
    r.hardware = "phoenix";
    r.choices["preset"] = "A8W8";
  });
  ASSERT_EQ(phx.status, PlanStatus::kConflict);
  EXPECT_NE(phx.conflicts[0].message.find("Ryzen AI documents no format there; quarkplan also keeps INT8_TRANSFORMER_DEFAULT"), std::string::npos)
      << phx.conflicts[0].message;
  auto nbits = plan(qp_test::transformer_analysis(), [](PlanRequest& r) {
    r.target = "cpu";
    r.choices["preset"] = "MATMUL_NBITS";
    r.choices["onnx_specific.nodes_to_exclude"] = Json::array({"^/layers.0/.*"});
  });
  ASSERT_EQ(nbits.status, PlanStatus::kInvalid);
  EXPECT_NE(nbits.errors[0].find("ignores nodes_to_exclude"), std::string::npos) << nbits.errors[0];
  auto gptq = plan(qp_test::transformer_analysis(), [](PlanRequest& r) {
    r.hardware = "strix";
    r.choices["algorithms"] = "GPTQ";
  });
  ASSERT_EQ(gptq.status, PlanStatus::kConflict);
  EXPECT_NE(gptq.conflicts[0].message.find("GPTQ with BF16"), std::string::npos) << gptq.conflicts[0].message;
}
