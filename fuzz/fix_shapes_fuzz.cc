// libFuzzer target for the FixShapes parser (plan/fix_shapes): any text must
// parse or throw std::invalid_argument, and a parse must round-trip; the
// parsed shapes as a model's inputs give one slot each, NHWC or not.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "plan/fix_shapes.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto shapes = quarkplan::parse_fix_shapes(text);
    auto again = quarkplan::parse_fix_shapes(quarkplan::format_fix_shapes(shapes));
    if (again.size() != shapes.size()) std::abort();
    for (size_t i = 0; i < shapes.size(); ++i)
      if (again[i].name != shapes[i].name || again[i].dims != shapes[i].dims) std::abort();
    quarkplan::Json facts = {{"inputs", quarkplan::Json::array()}, {"outputs", quarkplan::Json::array()}};
    for (const auto& sh : shapes) facts["inputs"].push_back({{"name", sh.name}, {"shape", sh.dims}});
    if (quarkplan::fix_shapes_slots(facts, true).size() != shapes.size() || quarkplan::fix_shapes_slots(facts, false).size() != shapes.size()) std::abort();
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
