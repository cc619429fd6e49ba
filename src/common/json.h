// The JSON type used for every artifact: insertion-ordered so files read the
// way the SPEC lists their fields.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace quarkplan {
using Json = nlohmann::ordered_json;

// Parses `text` (from `file`) or throws InputError with the parser's position.
Json parse_json(const std::string& text, const std::string& file);
// Reads and parses a JSON file no larger than `max_bytes`.
Json read_json_file(const std::string& path, uint64_t max_bytes = 64ull << 20);
// The strings of a JSON array (non-strings skipped); empty for non-arrays.
std::vector<std::string> string_list(const Json& j);
// Two-space indented text with a trailing newline.
std::string dump_json(const Json& j);
}  // namespace quarkplan
