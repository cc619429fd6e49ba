// Shared helpers of the two verifiers: failures grouped by what broke, names
// collapsed, so 45,000 expert modules that break one promise the same way
// read as one line.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

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

// "[4096, 128]" / "[]".
std::string shape_text(const std::vector<uint64_t>& shape);

}  // namespace quarkplan::verify::detail
