// Shared helpers of the two verifiers: failures grouped by what broke, names
// collapsed, so 45,000 expert modules that break one promise the same way
// read as one line.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/json.h"
#include "verify/verify.h"

namespace quarkplan::verify::detail {

class FailureSink {
 public:
  void add(const std::string& subject, std::string expected, std::string found) {
    groups_[{std::move(expected), std::move(found)}].push_back(subject);
  }
  // Moves the grouped failures into `check` (subjects collapsed).
  void flush_into(Check& check);

 private:
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> groups_;
};

// A promise group filled module by module.
struct GroupBuilder {
  std::string promise;
  std::vector<std::string> kept, broken;
  PromiseGroup finish();
};

// Tolerant reading of the export's config and the analysis (files from other
// tools): a missing key or a value of another type reads as absent.
inline const Json& member(const Json& j, const char* key) {
  static const Json null_json;
  return j.is_object() && j.contains(key) ? j[key] : null_json;
}
inline std::string text_of(const Json& j, const char* key, const std::string& def = "") {
  const Json& v = member(j, key);
  return v.is_string() ? v.get<std::string>() : def;
}
inline bool flag_of(const Json& j, const char* key) {
  const Json& v = member(j, key);
  return v.is_boolean() && v.get<bool>();
}

// "[4096, 128]" / "[]".
std::string shape_text(const std::vector<uint64_t>& shape);

}  // namespace quarkplan::verify::detail
