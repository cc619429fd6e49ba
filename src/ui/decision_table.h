// The decision table every plan shows (Decision | Value | Reason), wrapped to
// the terminal width, then the risks by severity and the open questions.
#pragma once
#include <set>
#include <string>

#include "common/json.h"
#include "ui/terminal.h"

namespace quarkplan::ui {

// `changed` marks rows (by key) that changed since the last table.
std::string render_decision_table(const Json& rows, const Style& style, int width,
                                  const std::set<std::string>& changed = {});
std::string render_risks(const Json& risks, const Style& style, int width);
std::string render_questions(const Json& questions, const Style& style, int width);
// Greedy word wrap of `text` to `width` columns.
std::vector<std::string> wrap(const std::string& text, size_t width);

}  // namespace quarkplan::ui
