// Files embedded at build time (catalog/*.json, schemas/*.json).
#pragma once
#include <string_view>
#include <utility>
#include <vector>

namespace quarkplan::embedded {
const std::vector<std::pair<std::string_view, std::string_view>>& all();
}

namespace quarkplan {
// The embedded file at `relative_path` (e.g. "schemas/model_analysis.schema.json"),
// or an empty view when there is none.
std::string_view embedded_resource(std::string_view relative_path);
}  // namespace quarkplan
