// Quark's FixShapes extra option: "name:[d0,d1,...];name2:[...]" (inputs and
// outputs by name; Quark's pre-processing calls fix_input_and_output_shapes,
// quark/onnx/tools/fix_shapes.py, which looks up every graph input and every
// graph output by name).
#pragma once
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/json.h"

namespace quarkplan {

struct FixedShape {
  std::string name;
  std::vector<int64_t> dims;
};

// Parses a FixShapes value; throws std::invalid_argument with a one-line
// reason (which entry, what is wrong) for anything Quark could not use.
std::vector<FixedShape> parse_fix_shapes(const std::string& text);

// The FixShapes a request sets (--set onnx_specific.extra_options.FixShapes=...),
// by name; empty when it sets none or one Quark could not use (the plan's
// rules refuse that).
std::map<std::string, std::vector<int64_t>> fix_shapes_choice(const struct PlanRequest& req);

// Back to Quark's text form.
std::string format_fix_shapes(const std::vector<FixedShape>& shapes);

// A graph input or output as Quark's FixShapes step sees it. dims: a value
// per dimension, -1 where it is dynamic. shaped: the model declares a shape.
struct ShapeSlot {
  std::string name;
  bool output = false;
  bool shaped = false;
  std::vector<int64_t> dims;
  bool dynamic() const;
  // FixShapes cannot name it: Quark parses '[]' with int('') and a shapeless
  // tensor has no dimension to set.
  bool expressible() const { return shaped && !dims.empty(); }
  std::string text() const;  // name:[?,3,?,?]
};

// Every graph input (initializers are not inputs) and output, from the
// analysis' onnx_specific facts. With convert_nhwc, as Quark's pre-process
// leaves them before FixShapes: convert_nchw_to_nhwc (quark/onnx/utils/
// model_utils.py) permutes each 4-D input and output whose C, H and W are
// integers to N,H,W,C and renames such outputs '<name>_transpose'.
std::vector<ShapeSlot> fix_shapes_slots(const Json& onnx_facts, bool convert_nhwc);

// The 4-D NCHW inputs Quark's convert_nchw_to_nhwc skips because C, H or W is
// not an integer (it logs a warning and leaves the input as it is).
std::vector<std::string> nhwc_skipped_inputs(const Json& onnx_facts);

}  // namespace quarkplan
