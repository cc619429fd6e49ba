#include "plan/onnx_exclusions.h"

namespace quarkplan {

std::string NodeExclusions::pattern_problem(const std::string& entry) {
  if (entry.find(".*") == std::string::npos)
    return "starts with '^', so Quark reads it as a regular expression, and drops it because it has no '.*' (quant_utils.get_all_target_nodes)";
  try {
    std::regex re(entry, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return std::string("is not a regular expression Python's re compiles alike: ") + e.what();
  }
  return "";
}

NodeExclusions::NodeExclusions(const Json& list) {
  if (!list.is_array()) return;
  for (const auto& e : list) {
    if (!e.is_string()) continue;
    const std::string s = e.get<std::string>();
    if (!is_pattern(s)) {
      exact_.insert(s);
      continue;
    }
    if (!pattern_problem(s).empty()) continue;
    patterns_.emplace_back(s, std::regex::ECMAScript | std::regex::optimize);
  }
}

bool NodeExclusions::excludes(const std::string& name) const {
  if (exact_.count(name)) return true;
  // std::regex may give up on a pathological pattern (error_complexity,
  // error_stack): such a pattern matches nothing rather than ending the run.
  for (const auto& re : patterns_) {
    try {
      if (std::regex_search(name, re)) return true;
    } catch (const std::regex_error&) {
    }
  }
  return false;
}

}  // namespace quarkplan
