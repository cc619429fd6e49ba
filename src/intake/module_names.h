// Module names kept compactly: numeric path components collapse into ranges,
// so 91,000 DeepSeek-V3 names become a few dozen entries such as
// "model.layers.{3..60}.mlp.experts.{0..255}.gate_proj". Patterns are matched
// (fnmatch, as Quark does) against the expanded names.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace quarkplan {

std::vector<std::string> collapse_module_names(const std::vector<std::string>& names);
std::vector<std::string> collapse_module_views(const std::vector<std::string_view>& names);
// Expands collapsed names. Throws std::invalid_argument for a malformed range
// ("{3..x}", "{9..2}") or when the expansion would exceed `limit` names (names
// come from analysis files, which are user input).
std::vector<std::string> expand_module_names(const std::vector<std::string>& collapsed, size_t limit = 4000000);

// Names with a per-module size: collapsed separately per (params, in_features),
// so every expanded name of an entry has the entry's size.
struct SizedName {
  std::string name;
  uint64_t params = 0, in_features = 0;
  std::string role;  // attention, expert, router, lm_head, ... ("" when unknown); collapsed separately too
};
std::vector<SizedName> collapse_sized(const std::vector<SizedName>& names);
// The same over names held elsewhere (no copies of 45,000 module names).
struct SizedView {
  std::string_view name;
  uint64_t params = 0, in_features = 0;
  std::string_view role;
};
std::vector<SizedName> collapse_sized(const std::vector<SizedView>& names);

// How Quark matches a pattern against module names: layer_quant_config
// patterns, and every pattern in Quark 0.13, verbatim (fnmatch); exclude
// patterns in 0.12, also the modules under it (p not ending in ".*" also
// matches p + ".*"). Catalog::exclude_covers_children() says which a release does.
enum class PatternMatch { kVerbatim, kWithChildren };

bool quark_pattern_matches(const std::string& pattern, const std::string& module, PatternMatch how);

// The same, prepared once for matching many names (planning a model with
// 45,000 Linear modules matches every pattern against every module).
class QuarkPattern {
 public:
  QuarkPattern(const std::string& pattern, PatternMatch how);
  bool matches(std::string_view module) const;
  const std::string& pattern() const { return pattern_; }

 private:
  struct Glob {
    std::vector<std::string> parts;  // literal segments between '*'
    bool leading_star = false, trailing_star = false, simple = true;  // simple: only '*' wildcards
    std::string text;
    bool match(std::string_view s) const;
  };
  std::string pattern_;
  Glob exact_, dotted_;  // p, and p + ".*" (kWithChildren, unless p already ends with ".*")
  bool has_dotted_ = false;
};

}  // namespace quarkplan
