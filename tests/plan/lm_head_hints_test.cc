// Issue 9 (intake review): a tied lm_head is a module Quark sees and quantizes
// unless excluded, and every hint that names the head names a pattern that
// matches it in this model (the template's own, matched by fnmatch).
#include <gtest/gtest.h>

#include "intake/module_names.h"
#include "plan/plan_test_support.h"

using namespace qp_test;
using quarkplan::Json;
using quarkplan::PlanRequest;

namespace {

const Json* risk_of(const Json& plan, const std::string& rule) {
  for (const auto& r : plan["risks"])
    if (r.value("rule", "") == rule) return &r;
  return nullptr;
}

quarkplan::PlanOutcome plan_with(const std::string& dir, const std::string& hardware, const Json& exclude) {
  PlanRequest r;
  r.confirmed = true;
  r.hardware = hardware;
  if (!exclude.is_null()) r.choices["exclude_layers"] = exclude;
  return quarkplan::make_plan(hf_analysis(dir), r);
}

}  // namespace

// The review's commands, run by the binary: excluding lm_head of a tied model
// is accepted, and dropping it from the exclusions is a risk, not silence.
TEST(LmHeadHints, TiedHeadCanBeExcludedAndIsFlaggedWhenQuantized) {
  for (const char* dir : {"llama-3.2-1b-instruct", "llama-3.2-3b-instruct", "qwen3-0.6b", "gemma-2b"}) {
    TempDir d;
    RunResult ok = run_quarkplan({"plan", testdata(std::string("hf/") + dir).string(), "--hardware", "mi300x", "--yes", "--exclude", "lm_head",
                                  "--exclude", "*down_proj", "--json"},
                                 d.path());
    // Gemma has no Quark template: a draft (exit 3) whose open question asks for one, never exit 2.
    ASSERT_EQ(ok.exit_code, std::string(dir) == "gemma-2b" ? 3 : 0) << dir << ": " << ok.err;
    Json p = Json::parse(ok.out)["plan"];
    EXPECT_EQ(p["exclude_layers"], Json::parse(R"(["lm_head","*down_proj"])")) << dir;
    EXPECT_EQ(risk_of(p, "torch.exclude.lm_head"), nullptr) << dir;
  }
  auto o = plan_with("llama-3.2-1b-instruct", "mi300x", Json::array({"*down_proj"}));
  ASSERT_FALSE(o.plan.is_null());
  const Json* r = risk_of(o.plan, "torch.exclude.lm_head");
  ASSERT_NE(r, nullptr) << o.plan["risks"].dump();
  EXPECT_EQ((*r)["severity"], "high");
  EXPECT_EQ((*r)["recovery_hint"], "Add 'lm_head' to the exclusions (the template default).");
  EXPECT_NE(o.plan["reasons"]["exclude_layers"].get<std::string>().find("no longer excluded: lm_head (1 module)"), std::string::npos)
      << o.plan["reasons"]["exclude_layers"];
}

// Llama 4 names its head language_model.lm_head: the template's '*lm_head'
// matches it, a bare 'lm_head' does not (Quark matches the whole name).
TEST(LmHeadHints, HintNamesThePatternThatMatchesTheHead) {
  auto o = plan_with("llama4-scout-17b-16e-instruct", "mi355x", Json::array({"*self_attn*"}));
  ASSERT_FALSE(o.plan.is_null());
  const Json* r = risk_of(o.plan, "torch.exclude.lm_head");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ((*r)["recovery_hint"], "Add '*lm_head' to the exclusions (the template default).");
  // Following the hint works: the pattern matches, the risk is gone.
  auto fixed = plan_with("llama4-scout-17b-16e-instruct", "mi355x", Json::array({"*self_attn*", "*lm_head"}));
  ASSERT_TRUE(fixed.errors.empty()) << fixed.errors[0];
  EXPECT_EQ(risk_of(fixed.plan, "torch.exclude.lm_head"), nullptr);
  auto bare = plan_with("llama4-scout-17b-16e-instruct", "mi355x", Json::array({"*self_attn*", "lm_head"}));
  EXPECT_FALSE(bare.errors.empty());  // what the old hint said: matches nothing
  // The same review with the binary.
  TempDir d;
  RunResult x = run_quarkplan({"plan", testdata("hf/llama4-scout-17b-16e-instruct").string(), "--hardware", "mi355x", "--exclude", "*self_attn*",
                               "--exclude", "*lm_head", "--yes"},
                              d.path());
  EXPECT_EQ(x.exit_code, 0) << x.err;
  // Every corpus model: the hint's pattern matches the head it names.
  for (const auto& e : fs::directory_iterator(testdata("hf"))) {
    if (!e.is_directory()) continue;
    const std::string dir = e.path().filename().string();
    const Json& a = hf_analysis(dir);
    const Json& names = a["quantization_targets"]["module_names"];
    const Json& roles = a["quantization_targets"]["module_roles"];
    std::string head;
    for (size_t i = 0; i < names.size() && i < roles.size(); ++i)
      if (roles[i] == "lm_head") head = names[i];
    if (head.empty() || !a["model"]["template_supported"].get<bool>()) continue;
    // Exclude one other module so the list replaces the defaults and leaves the head quantized.
    std::string other;
    for (size_t i = 0; i < names.size() && i < roles.size(); ++i)
      if (roles[i] == "attention") {
        other = names[i];
        break;
      }
    if (other.empty()) continue;
    auto p = plan_with(dir, "mi355x", Json::array({other}));
    if (p.plan.is_null()) continue;
    const Json* hr = risk_of(p.plan, "torch.exclude.lm_head");
    if (!hr) continue;  // AMD's recipe quantizes it on purpose
    std::string hint = (*hr)["recovery_hint"];
    size_t q1 = hint.find('\''), q2 = hint.find('\'', q1 + 1);
    ASSERT_NE(q2, std::string::npos) << dir << ": " << hint;
    std::string pattern = hint.substr(q1 + 1, q2 - q1 - 1);
    EXPECT_TRUE(quarkplan::QuarkPattern(pattern, quarkplan::PatternMatch::kVerbatim).matches(quarkplan::expand_module_names({head})[0])) << dir << ": " << hint << " vs " << head;
  }
}

// A quantized tied head no longer shares the embedding's storage: the estimate
// keeps the embedding at 16 bits and adds the quantized head; excluded, the
// shared weight counts once.
TEST(LmHeadHints, EstimatesCountATiedHeadOnceExcludedTwiceQuantized) {
  auto bytes = [](const quarkplan::PlanOutcome& o) { return o.plan["estimates"]["weights"][1]["bytes"].get<double>(); };
  PlanRequest r;
  r.confirmed = true;
  r.hardware = "mi300x";
  r.choices["global_scheme"] = "fp8";
  r.choices["exclude_layers"] = Json::array({"lm_head"});
  const Json& a = hf_analysis("llama-3.2-1b-instruct");
  auto excluded = quarkplan::make_plan(a, r);
  r.choices["exclude_layers"] = Json::array({"*down_proj"});
  auto quantized = quarkplan::make_plan(a, r);
  ASSERT_FALSE(excluded.plan.is_null());
  ASSERT_FALSE(quantized.plan.is_null());
  const double head = 128256.0 * 2048.0, total = a["model"]["total_params"].get<double>();
  const double linears = 16.0 * (2048.0 * 2048 * 2 + 512.0 * 2048 * 2 + 8192.0 * 2048 * 3);
  // Excluded: the shared weight once at 16 bits, the other Linears at 8.
  EXPECT_NEAR(bytes(excluded) / ((total - linears) * 2 + linears * 1), 1.0, 0.005) << bytes(excluded);
  // Quantized (down_proj excluded instead): the embedding at 16 bits plus the head at 8.
  const double down = 16.0 * 8192.0 * 2048;
  EXPECT_NEAR(bytes(quantized) / ((total - linears) * 2 + (linears - down) * 1 + down * 2 + head * 1), 1.0, 0.005) << bytes(quantized);
}
