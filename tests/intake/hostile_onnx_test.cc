// Corrupt and hostile ONNX files (tests/data/corrupt_onnx): a one-line error
// naming the file, exit 2, nothing written — never a crash.
#include <gtest/gtest.h>

#include "common/error.h"
#include "intake/onnx_reader.h"
#include "intake/protobuf_wire.h"
#include "support/test_support.h"

using namespace qp_test;

TEST(HostileOnnx, EveryCorruptFileIsAOneLineErrorWithExit2) {
  int seen = 0;
  for (const auto& e : fs::directory_iterator(testdata("corrupt_onnx"))) {
    ++seen;
    TempDir d;
    fs::copy_file(e.path(), d / e.path().filename());
    // An earlier analysis (a file quarkplan may replace): the failed intake keeps it.
    const std::string previous = "{\"model\": {}, \"quantization_targets\": {}, \"keep\": true}\n";
    write_file(d / "previous.json", previous);
    RunResult r = run_quarkplan({"intake", e.path().filename().string(), "-o", "previous.json"}, d.path());
    std::string name = e.path().filename().string();
    EXPECT_EQ(r.exit_code, 2) << name << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << name << ": " << r.err;
    EXPECT_NE(r.err.find(name), std::string::npos) << "error does not name the file: " << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_EQ(read_file(d / "previous.json"), previous) << "an existing output was touched";
    size_t files = 0;
    for ([[maybe_unused]] const auto& x : fs::directory_iterator(d.path())) ++files;
    EXPECT_EQ(files, 2u) << "something was written for " << name;
  }
  EXPECT_GE(seen, 15);
}

TEST(HostileOnnx, MissingPathsAndFoldersWithoutModels) {
  TempDir d;
  RunResult r = run_quarkplan({"intake", "nope.onnx"}, d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nope.onnx: no such file"), std::string::npos) << r.err;
  fs::create_directories(d / "empty_dir");
  r = run_quarkplan({"intake", "empty_dir"}, d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("empty_dir: directory holds no model"), std::string::npos) << r.err;
  write_file(d / "two" / "a.onnx", read_file(testdata("valid_tiny.onnx")));
  write_file(d / "two" / "b.onnx", read_file(testdata("valid_tiny.onnx")));
  r = run_quarkplan({"intake", "two"}, d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("2 .onnx files"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(d / "model_analysis.json"));
  r = run_quarkplan({"intake", (d / "two" / "a.onnx").string(), "--target", "gpu"}, d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--target"), std::string::npos) << r.err;
  r = run_quarkplan({"intake"}, d.path());
  EXPECT_EQ(r.exit_code, 2);
}

TEST(HostileOnnx, EveryPrefixOfAValidModelIsHandled) {
  // Truncation at every byte: either a clean parse or a WireError, never a crash.
  std::string good = read_file(testdata("valid_tiny.onnx"));
  ASSERT_NO_THROW(quarkplan::onnx::read_model(good));
  int errors = 0;
  for (size_t n = 0; n < good.size(); ++n) {
    try {
      quarkplan::onnx::read_model(std::string_view(good).substr(0, n));
    } catch (const quarkplan::wire::WireError&) {
      ++errors;
    }
  }
  EXPECT_GT(errors, static_cast<int>(good.size()) / 2);
}

TEST(HostileOnnx, BitFlipsGiveAParseOrAWireError) {
  std::string good = read_file(testdata("valid_tiny.onnx"));
  for (size_t i = 0; i < good.size(); ++i)
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      try {
        quarkplan::onnx::read_model(bad);
      } catch (const quarkplan::wire::WireError&) {
      } catch (const std::exception& e) {
        ADD_FAILURE() << "byte " << i << " bit " << bit << ": unexpected exception " << e.what();
      }
    }
}
