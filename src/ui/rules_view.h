// `quarkplan rules` for people: each rule's documentation (docs/rules/*.md)
// laid out for the terminal.
#pragma once
#include <string>
#include <vector>

#include "common/json.h"
#include "plan/rule_docs.h"
#include "ui/terminal.h"

namespace quarkplan::ui {

std::string render_rule_doc(const RuleDoc& doc, const Style& style, int width);
// Several rules: a heading per flow, each rule's documentation under it.
std::string render_rule_docs(const std::vector<RuleDoc>& docs, const Style& style, int width);
// The machine-readable form (`--json`): {"rules": [{id, flow, purpose, ...}]}.
Json rule_docs_json(const std::vector<RuleDoc>& docs);

}  // namespace quarkplan::ui
