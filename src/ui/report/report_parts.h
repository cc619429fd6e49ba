// What the report's sections share: tolerant reading of the plan and the
// analysis, the small HTML builders (notes, figures, sortable tables) and the
// rule links a section cites. Internal to src/ui/report/.
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/json.h"

namespace quarkplan::ui::report_detail {

// ---- Tolerant reading: the analysis may come from another tool or version,
// so every field is checked for its type before use.

const Json* get(const Json& j, const std::string& key);
const Json* get(const Json* j, const std::string& key);
std::string str(const Json* j, const std::string& def = "");
std::optional<double> number(const Json* j);
std::optional<uint64_t> count(const Json* j);
bool truthy(const Json* j);
const Json& array_or_empty(const Json* j);
std::string e(const std::string& s);
std::string fixed(double v, int digits);

// ---- Small HTML builders.

std::string omitted(const std::string& sentence);
std::string figure(const std::string& svg, const std::string& caption);

// A table whose columns sort when their header is clicked; cells are
// (html, sort key) pairs — a numeric sort key makes the column sort by number.
struct Cell {
  std::string html;
  std::string sort;  // empty: sort by the text
};
std::string sortable_table(const std::string& caption, const std::vector<std::string>& heads, const std::vector<std::vector<Cell>>& rows,
                           const std::vector<std::string>& row_classes = {});

// ---- Rule references.

// The rule IDs cited during one render (one set per thread; render_report
// clears it before and after): the rules section documents them.
std::set<std::string>& cited_rules();
std::string rule_link(const std::string& id);

// ---- What kind of plan this is.

bool is_onnx(const Json& plan);
std::string chosen_scheme(const Json& plan);

}  // namespace quarkplan::ui::report_detail
