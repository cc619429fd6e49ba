#include "common/resources.h"

namespace quarkplan {
std::string_view embedded_resource(std::string_view relative_path) {
  for (const auto& [name, data] : embedded::all())
    if (name == relative_path) return data;
  return {};
}
}  // namespace quarkplan
