// Which nodes an ONNX plan's nodes_to_exclude keeps in float, read as Quark
// reads it (quark/onnx/quantization/quant_utils.py get_all_target_nodes, the
// same in amd-quark 0.12.post1 and 0.13): an entry is a node's exact name,
// unless it starts with '^', when it is a regular expression matched with
// re.search against every node name — and only if it contains '.*' (Quark
// drops any other '^' entry with a warning). Used by the rules, the
// estimates, the report and verify, so they all exclude the same nodes.
#pragma once
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "common/json.h"

namespace quarkplan {

class NodeExclusions {
 public:
  NodeExclusions() = default;
  // Entries that are not strings, and regexes std::regex cannot compile, are
  // skipped here (the rules report them).
  explicit NodeExclusions(const Json& nodes_to_exclude);
  bool excludes(const std::string& node_name) const;
  bool empty() const { return exact_.empty() && patterns_.empty(); }

  // A '^' entry Quark reads as a regex; "" when it is one Quark uses, else why not.
  static bool is_pattern(const std::string& entry) { return !entry.empty() && entry[0] == '^'; }
  static std::string pattern_problem(const std::string& entry);

 private:
  std::set<std::string> exact_;
  std::vector<std::regex> patterns_;
};

}  // namespace quarkplan
