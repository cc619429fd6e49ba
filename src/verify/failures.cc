#include "verify/failures.h"

#include "intake/module_names.h"

namespace quarkplan::verify::detail {

void FailureSink::flush_into(Check& check) {
  for (auto& [what, subjects] : groups_) {
    std::vector<std::string> names = subjects.size() > 1 ? collapse_module_names(subjects) : subjects;
    std::string subject;
    for (size_t i = 0; i < names.size(); ++i) subject += (i ? ", " : "") + names[i];
    if (subjects.size() > 1) subject += " (" + std::to_string(subjects.size()) + ")";
    check.failures.push_back({subject, what.first, what.second});
    check.broken_subjects += subjects.size();
  }
  groups_.clear();
}

PromiseGroup GroupBuilder::finish() {
  PromiseGroup g;
  g.promise = promise;
  g.kept = kept.size();
  g.broken = broken.size();
  g.kept_names = collapse_module_names(kept);
  g.broken_names = collapse_module_names(broken);
  return g;
}

std::string shape_text(const std::vector<uint64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace quarkplan::verify::detail
