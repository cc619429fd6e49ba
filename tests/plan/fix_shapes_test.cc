// Quark's FixShapes value: parsed, checked, and printed back.
#include <gtest/gtest.h>

#include "plan/fix_shapes.h"

using quarkplan::FixedShape;
using quarkplan::parse_fix_shapes;

TEST(FixShapes, ParsesQuarksFormat) {
  auto s = parse_fix_shapes("input_1:[1,224,224,3];input_2:[1,96,96,3]");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].name, "input_1");
  EXPECT_EQ(s[0].dims, (std::vector<int64_t>{1, 224, 224, 3}));
  EXPECT_EQ(s[1].name, "input_2");
  // Names with ':' (exporters write onnx::Flatten_0; Quark splits at the last ':'), spaces.
  auto c = parse_fix_shapes(" onnx::Flatten_0 : [1, 16, 96] ; y:[1]");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].name, "onnx::Flatten_0");
  EXPECT_EQ(c[0].dims, (std::vector<int64_t>{1, 16, 96}));
  EXPECT_EQ(quarkplan::format_fix_shapes(c), "onnx::Flatten_0:[1,16,96];y:[1]");
}

// What Quark's parse_input_and_output_shapes cannot read: '[]' (int('')) and a
// trailing ';' (an empty entry, IndexError). Both are named.
TEST(FixShapes, RefusesEmptyShapesAndTrailingSemicolons) {
  try {
    parse_fix_shapes("input:[1,512];sr:[]");
    ADD_FAILURE() << "'[]' accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'sr' has an empty shape"), std::string::npos) << e.what();
  }
  try {
    parse_fix_shapes("x:[1,3,640,640];");
    ADD_FAILURE() << "trailing ';' accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("ends with ';'"), std::string::npos) << e.what();
  }
}

// The inputs and outputs FixShapes must name, as Quark's pre-process leaves
// them: convert_nchw_to_nhwc permutes 4-D tensors with integer C, H, W (and
// renames such outputs), and skips the others.
TEST(FixShapes, SlotsFollowQuarksNhwcConversion) {
  quarkplan::Json facts = quarkplan::Json::parse(R"({
    "inputs": [{"name":"x","shape":["n",3,48,192]}, {"name":"d","shape":["n",3,"h","w"]}, {"name":"sr","shape":[]}],
    "outputs": [{"name":"y","shape":["n",2,8,32]}, {"name":"z","shape":null}],
    "node_names": ["y_transpose"]})");
  auto plain = quarkplan::fix_shapes_slots(facts, false);
  ASSERT_EQ(plain.size(), 5u);
  EXPECT_EQ(plain[0].text(), "x:[?,3,48,192]");
  EXPECT_TRUE(plain[4].output);
  EXPECT_FALSE(plain[2].expressible());  // a scalar
  EXPECT_FALSE(plain[4].expressible());  // no declared shape
  auto nhwc = quarkplan::fix_shapes_slots(facts, true);
  EXPECT_EQ(nhwc[0].text(), "x:[?,48,192,3]");
  EXPECT_EQ(nhwc[1].text(), "d:[?,3,?,?]");             // skipped: H and W are not integers
  EXPECT_EQ(nhwc[3].text(), "y_transpose_1:[?,8,32,2]");  // a node already holds y_transpose
  EXPECT_EQ(quarkplan::nhwc_skipped_inputs(facts), (std::vector<std::string>{"d:[?,3,?,?]"}));
}

TEST(FixShapes, RefusesWhatQuarkCannotUse) {
  for (const char* bad : {"", "x", "x:1,3", "x:[1,3", ":[1]", "x:[1,,3]", "x:[1,-3]", "x:[0]", "x:[a]", "x:[1];;y:[2]", "x:[1];x:[2]", "x:[]", "x:[1];",
                          "x:[99999999999999999999]"}) {
    EXPECT_THROW(parse_fix_shapes(bad), std::invalid_argument) << bad;
  }
  try {
    parse_fix_shapes("x:[1,-3]");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
  }
}
