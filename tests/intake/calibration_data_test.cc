// Calibration sets checked as Quark's PathDataReader reads them
// (intake/calibration_data.h): layouts, shapes, dtypes, sample counts, and
// the .npy header reader on real NumPy files and a corrupt corpus.
#include <gtest/gtest.h>

#include "common/error.h"
#include "intake/calibration_data.h"
#include "intake/npy_reader.h"
#include "intake/onnx_builder.h"
#include "support/test_support.h"

namespace qp_test {
namespace {

using quarkplan::Json;

// A .npy file as numpy.save writes it (format 1.0, header padded to 64 bytes).
void write_npy(const fs::path& p, const std::string& descr, const std::vector<uint64_t>& shape) {
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i) dims += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dims += ",";
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  size_t total = 10 + dict.size() + 1;
  dict += std::string((64 - total % 64) % 64, ' ') + "\n";
  uint64_t n = 1;
  for (auto d : shape) n *= d;
  uint64_t item = static_cast<uint64_t>(std::stoi(descr.substr(2)));
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(dict.size() & 0xff);
  bytes += static_cast<char>(dict.size() >> 8);
  bytes += dict + std::string(n * item, '\0');
  fs::create_directories(p.parent_path());
  write_file(p, bytes);
}

Json analysis_with(const Json& inputs) { return {{"model", {{"onnx_specific", {{"inputs", inputs}}}}}}; }

const Json kImage = Json::array({{{"name", "images"}, {"dtype", "float32"}, {"shape", {1, 3, 8, 8}}}});
const Json kTwo = Json::array({{{"name", "input_ids"}, {"dtype", "int64"}, {"shape", {"batch", "seq"}}},
                               {{"name", "attention_mask"}, {"dtype", "int64"}, {"shape", {"batch", "seq"}}}});

std::string error_of(const fs::path& p, const Json& inputs) {
  try {
    quarkplan::inspect_calibration_data(p.string(), analysis_with(inputs));
  } catch (const quarkplan::InputError& e) {
    return e.what();
  }
  return "";
}

TEST(CalibrationData, OneInputTakesNpyFilesInTheFolderInEveryShapeQuarkAccepts) {
  TempDir d;
  write_npy(d / "calib/a.npy", "<f4", {1, 3, 8, 8});  // the input's shape
  write_npy(d / "calib/b.npy", "<f4", {3, 8, 8});     // one less: a batch of one is added
  write_npy(d / "calib/c.npy", "<f4", {192});         // 1-D, the input's element count: reshaped
  write_npy(d / "calib/d.npy", "|u1", {3, 8, 8});     // cast to float32 by the reader
  Json r = quarkplan::inspect_calibration_data((d / "calib").string(), analysis_with(kImage));
  EXPECT_EQ(r["layout"], "shared");
  EXPECT_EQ(r["samples"], 4);
  EXPECT_EQ(r["inputs"][0]["cast_from"], Json::array({"uint8"}));
}

// The leading dimension is a batch only where it is not the input's own fixed one: Silero's state
// [2, batch, 128] leads with its 2 layers; an image array [4, 3, 8, 8] for a [batch, 3, 8, 8] input holds 4.
TEST(CalibrationData, LargestBatchIsNotTheInputsOwnLeadingDimension) {
  TempDir d;
  const Json state = Json::array({{{"name", "state"}, {"dtype", "float32"}, {"shape", {2, "batch", 128}}}});
  write_npy(d / "state/s0.npy", "<f4", {2, 1, 128});
  EXPECT_EQ(quarkplan::inspect_calibration_data((d / "state").string(), analysis_with(state))["largest_batch"], 1);
  write_npy(d / "images/s0.npy", "<f4", {4, 3, 8, 8});
  const Json images = Json::array({{{"name", "images"}, {"dtype", "float32"}, {"shape", {"batch", 3, 8, 8}}}});
  EXPECT_EQ(quarkplan::inspect_calibration_data((d / "images").string(), analysis_with(images))["largest_batch"], 4);
}

TEST(CalibrationData, TwoInputsNeedOneFolderEachWithTheSameFileNames) {
  TempDir d;
  for (const char* in : {"input_ids", "attention_mask"})
    for (int i = 0; i < 3; ++i) write_npy(d / "calib" / in / ("s" + std::to_string(i) + ".npy"), "<i8", {1, 32});
  Json r = quarkplan::inspect_calibration_data((d / "calib").string(), analysis_with(kTwo));
  EXPECT_EQ(r["layout"], "per_input");
  EXPECT_EQ(r["samples"], 3);
  // A flat folder feeds every input the same arrays: refused, naming the layout.
  write_npy(d / "flat/s0.npy", "<i8", {1, 32});
  std::string e = error_of(d / "flat", kTwo);
  EXPECT_NE(e.find("which Quark feeds to every one of the model's 2 inputs: lay them out as"), std::string::npos) << e;
  EXPECT_NE(e.find("/input_ids/*.npy"), std::string::npos) << e;
  // A folder missing for one input; mismatched names.
  fs::remove_all(d / "calib/attention_mask");
  e = error_of(d / "calib", kTwo);
  EXPECT_NE(e.find("for input 'attention_mask': Quark's PathDataReader expects"), std::string::npos) << e;
  for (int i = 0; i < 3; ++i) write_npy(d / "calib/attention_mask" / ("t" + std::to_string(i) + ".npy"), "<i8", {1, 32});
  e = error_of(d / "calib", kTwo);
  EXPECT_NE(e.find("holds other file names than"), std::string::npos) << e;
}

TEST(CalibrationData, WhatQuarksReaderWouldRaiseOnIsRefusedWithTheLayoutExpected) {
  TempDir d;
  fs::create_directories(d / "empty");
  EXPECT_NE(error_of(d / "empty", kImage).find("has no .npy files and no folder 'images'"), std::string::npos) << error_of(d / "empty", kImage);
  write_npy(d / "one.npy", "<f4", {1, 3, 8, 8});
  EXPECT_NE(error_of(d / "one.npy", kImage).find("reads a folder of .npy arrays, not a file"), std::string::npos);
  write_npy(d / "rank/a.npy", "<f4", {8, 8});
  EXPECT_NE(error_of(d / "rank", kImage).find("a.npy: array of shape (8, 8) for input 'images' of shape [1, 3, 8, 8]: Quark needs the input's rank (4)"), std::string::npos)
      << error_of(d / "rank", kImage);
  write_npy(d / "dims/a.npy", "<f4", {1, 3, 16, 16});
  EXPECT_NE(error_of(d / "dims", kImage).find("(dimension 2 is 16, the model fixes it at 8)"), std::string::npos) << error_of(d / "dims", kImage);
  write_npy(d / "zero/a.npy", "<f4", {0, 3, 8, 8});
  EXPECT_NE(error_of(d / "zero", kImage).find("holds no data (a dimension is 0)"), std::string::npos) << error_of(d / "zero", kImage);
  write_npy(d / "flat1d/a.npy", "<f4", {8});
  Json dyn3 = Json::array({{{"name", "x"}, {"dtype", "float32"}, {"shape", {"b", 3, "h"}}}});
  EXPECT_NE(error_of(d / "flat1d", dyn3).find("a 1-D array is reshaped only for an input whose dimensions are all fixed"), std::string::npos) << error_of(d / "flat1d", dyn3);
  fs::create_directories(d / "corrupt");
  write_file(d / "corrupt/a.npy", "not numpy");
  EXPECT_NE(error_of(d / "corrupt", kImage).find("a.npy: unreadable calibration array: not a NumPy .npy file"), std::string::npos);
}

TEST(CalibrationData, AScalarInputIsOneQuarksPathDataReaderCannotRead) {
  TempDir d;
  write_npy(d / "c/input/a.npy", "<f4", {1, 512});
  write_npy(d / "c/sr/a.npy", "<i8", {});
  Json inputs = Json::array({{{"name", "input"}, {"dtype", "float32"}, {"shape", {"?", "?"}}}, {{"name", "sr"}, {"dtype", "int64"}, {"shape", Json::array()}}});
  EXPECT_NE(error_of(d / "c", inputs).find("input 'sr' is a scalar, for which Quark's PathDataReader cannot read calibration data"), std::string::npos) << error_of(d / "c", inputs);
}

// Quark casts complex arrays (dropping the imaginary part) rather than failing: a cast, not an error.
TEST(CalibrationData, ComplexArraysAreACastAndFixShapesIsTheShapeThatCounts) {
  TempDir d;
  write_npy(d / "complex/a.npy", "<c8", {1, 3, 8, 8});
  Json r = quarkplan::inspect_calibration_data((d / "complex").string(), analysis_with(kImage));
  EXPECT_EQ(r["inputs"][0]["cast_from"], Json::array({"complex64"}));
  // A dynamic input fixed by the plan: arrays must fit the fixed shape.
  Json dyn = Json::array({{{"name", "x"}, {"dtype", "float32"}, {"shape", {"?", 3, "?", "?"}}}});
  write_npy(d / "small/a.npy", "<f4", {1, 3, 64, 64});
  EXPECT_NO_THROW(quarkplan::inspect_calibration_data((d / "small").string(), analysis_with(dyn)));
  try {
    quarkplan::inspect_calibration_data((d / "small").string(), analysis_with(dyn), {{"x", {1, 3, 640, 640}}});
    ADD_FAILURE() << "a set of another shape than FixShapes' was accepted";
  } catch (const quarkplan::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("the plan's FixShapes sets it to 640"), std::string::npos) << e.what();
  }
}

TEST(CalibrationData, SymbolicDimensionsTakeAnySize) {
  TempDir d;
  write_npy(d / "c/input_ids/a.npy", "<i8", {1, 7});
  write_npy(d / "c/attention_mask/a.npy", "<i8", {1, 7});
  write_npy(d / "c/input_ids/b.npy", "<i8", {1, 300});
  write_npy(d / "c/attention_mask/b.npy", "<i8", {1, 300});
  EXPECT_EQ(quarkplan::inspect_calibration_data((d / "c").string(), analysis_with(kTwo))["samples"], 2);
}

TEST(NpyReader, ReadsRealNumpyFilesAndRefusesTheCorruptCorpus) {
  for (const auto& e : fs::directory_iterator(source_dir() / "fuzz/corpus/npy_header")) {
    if (e.path().filename().string().rfind("corrupt_", 0) == 0) continue;
    std::string bytes = read_file(e.path());
    auto h = quarkplan::npy::parse_header(bytes, bytes.size() < 4096 ? bytes.size() : UINT64_MAX);
    EXPECT_FALSE(h.descr.empty()) << e.path();
  }
  auto big = quarkplan::npy::parse_header(read_file(source_dir() / "fuzz/corpus/npy_header/big_endian.npy"), 4096);
  EXPECT_TRUE(big.big_endian);
  EXPECT_EQ(big.shape, (std::vector<uint64_t>{2, 2}));
  auto v3 = quarkplan::npy::parse_header(read_file(source_dir() / "fuzz/corpus/npy_header/v3.npy"), 4096);
  EXPECT_EQ(quarkplan::npy::onnx_dtype_name(v3), "float32");
  int n = 0;
  for (const auto& e : fs::directory_iterator(testdata("corrupt_npy"))) {
    std::string bytes = read_file(e.path());
    EXPECT_THROW(quarkplan::npy::parse_header(bytes, bytes.size()), std::runtime_error) << e.path();
    ++n;
  }
  EXPECT_EQ(n, 10);
}

// End to end: the plan records what the set holds and refuses a layout Quark would fail on.
TEST(CalibrationData, PlansRecordTheSetAndRefuseWhatQuarkWouldFailOn) {
  TempDir d;
  write_file(d / "cnn.onnx", small_cnn(2).bytes());
  for (int i = 0; i < 5; ++i) write_npy(d / "calib" / ("s" + std::to_string(i) + ".npy"), "|u1", {1, 3, 224, 224});
  RunResult r = run_quarkplan({"plan", "cnn.onnx", "--target", "npu_cnn", "--calib-data", "calib", "--yes", "--json"}, d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j = quarkplan::parse_json(r.out, "plan --json");
  EXPECT_EQ(j["plan"]["calibration"]["samples"], 5);
  EXPECT_EQ(j["plan"]["calibration"]["data_layout"], "shared");
  std::string risks = j["plan"]["risks"].dump();
  EXPECT_NE(risks.find("The calibration set holds 5 samples where data_size asks for"), std::string::npos) << risks;
  EXPECT_NE(risks.find("are cast to float32 by Quark's reader"), std::string::npos) << risks;
  // Arrays of another shape than FixShapes sets: refused (Quark runs the fixed model on them).
  OnnxBuilder dyn = small_cnn(2);
  auto* shape = dyn.graph->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  shape->mutable_dim(2)->set_dim_param("H");
  shape->mutable_dim(3)->set_dim_param("W");
  write_file(d / "dyn.onnx", dyn.bytes());
  RunResult fixed = run_quarkplan({"plan", "dyn.onnx", "--target", "cpu", "--calib-data", "calib", "--yes", "-o", "pf.json", "--set",
                                   "onnx_specific.extra_options.FixShapes=\"images:[1,3,448,448];probs:[1,10]\""},
                                  d.path());
  EXPECT_EQ(fixed.exit_code, 2) << fixed.err;
  EXPECT_NE(fixed.err.find("the plan's FixShapes sets it to 448"), std::string::npos) << fixed.err;
  // explain re-runs the rules from the recorded check, not from the folder.
  fs::remove_all(d / "calib");
  RunResult ex = run_quarkplan({"explain", "quant_plan.json"}, d.path());
  EXPECT_EQ(ex.exit_code, 0) << ex.err;
  write_npy(d / "bad/s0.npy", "<f4", {1, 3, 100, 100});
  r = run_quarkplan({"plan", "cnn.onnx", "--target", "npu_cnn", "--calib-data", "bad", "--yes", "-o", "p2.json"}, d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("s0.npy: array of shape (1, 3, 100, 100) does not fit input 'images' of shape [1, 3, 224, 224]"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(d / "p2.json"));
}

}  // namespace
}  // namespace qp_test
