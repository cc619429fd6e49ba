#include "common/json.h"

#include "common/error.h"
#include "common/files.h"

namespace quarkplan {

Json parse_json(const std::string& text, const std::string& file) {
  try {
    // Depth is bounded by nlohmann's recursive parser only by the stack; reject
    // absurd nesting first so hostile files cannot exhaust it.
    int depth = 0, max_depth = 0;
    bool in_str = false, esc = false;
    for (char c : text) {
      if (in_str) {
        if (esc) esc = false;
        else if (c == '\\') esc = true;
        else if (c == '"') in_str = false;
        continue;
      }
      if (c == '"') in_str = true;
      else if (c == '[' || c == '{') max_depth = std::max(max_depth, ++depth);
      else if (c == ']' || c == '}') --depth;
    }
    if (max_depth > 256) throw InputError(file, "JSON nesting deeper than 256 levels");
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    std::string what = e.what();
    auto pos = what.find("parse error");
    throw InputError(file, "invalid JSON: " + (pos == std::string::npos ? what : what.substr(pos)));
  } catch (const Json::exception& e) {  // e.g. out_of_range: a number like 1e406
    std::string what = e.what();
    auto pos = what.find("] ");
    throw InputError(file, "invalid JSON: " + (pos == std::string::npos ? what : what.substr(pos + 2)));
  }
}

Json read_json_file(const std::string& path, uint64_t max_bytes) {
  return parse_json(read_small_file(path, max_bytes), path);
}

std::vector<std::string> string_list(const Json& j) {
  std::vector<std::string> v;
  if (j.is_array())
    for (const auto& x : j)
      if (x.is_string()) v.push_back(x.get<std::string>());
  return v;
}

std::string dump_json(const Json& j) { return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n"; }

}  // namespace quarkplan
