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
  // Names with ':' (exporters write onnx::Flatten_0), spaces, scalars, a trailing ';'.
  auto c = parse_fix_shapes(" onnx::Flatten_0 : [1, 16, 96] ; sr:[];");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].name, "onnx::Flatten_0");
  EXPECT_EQ(c[0].dims, (std::vector<int64_t>{1, 16, 96}));
  EXPECT_TRUE(c[1].dims.empty());
  EXPECT_EQ(quarkplan::format_fix_shapes(c), "onnx::Flatten_0:[1,16,96];sr:[]");
}

TEST(FixShapes, RefusesWhatQuarkCannotUse) {
  for (const char* bad : {"", "x", "x:1,3", "x:[1,3", ":[1]", "x:[1,,3]", "x:[1,-3]", "x:[0]", "x:[a]", "x:[1];;y:[2]", "x:[1];x:[2]",
                          "x:[99999999999999999999]"}) {
    EXPECT_THROW(parse_fix_shapes(bad), std::invalid_argument) << bad;
  }
  try {
    parse_fix_shapes("x:[1,-3]");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
  }
}
