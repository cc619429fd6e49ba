// Quark's FixShapes extra option: "name:[d0,d1,...];name2:[...]" (inputs and
// outputs by name; Quark's pre-processing calls fix_input_and_output_shapes).
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace quarkplan {

struct FixedShape {
  std::string name;
  std::vector<int64_t> dims;
};

// Parses a FixShapes value; throws std::invalid_argument with a one-line
// reason (which entry, what is wrong) for anything Quark could not use.
std::vector<FixedShape> parse_fix_shapes(const std::string& text);

// Back to Quark's text form.
std::string format_fix_shapes(const std::vector<FixedShape>& shapes);

}  // namespace quarkplan
