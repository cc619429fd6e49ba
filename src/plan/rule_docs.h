// Rule documentation, in the manner of clang-tidy's check docs: every
// registered rule has docs/rules/<rule-id>.md beside the code (embedded at
// build time), with a fixed shape — the ID, the registry's one-line purpose,
// then "Decides", "Fires when", "Follows" and "Example". `quarkplan rules` and
// the HTML report show the same text.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace quarkplan {

struct RuleDoc {
  std::string id, flow, purpose;
  std::string kind;  // "rule" (a planning rule) | "intake" (an intake check)
  std::string decides, fires_when, follows, example;  // section bodies (Markdown)
  std::string markdown;                               // the whole file
};

// The documentation of a registered rule; nullopt when the rule is unknown or
// has no (well-formed) documentation file.
std::optional<RuleDoc> rule_doc(const std::string& id);

// Every documented ID: per flow, the intake checks, then the planning rules
// in registry order.
std::vector<std::string> documented_ids();

// Documentation of every registered rule and intake check, in documented_ids() order (rules without a
// documentation file are left out; rule_doc_problems() names them).
std::vector<RuleDoc> rule_docs();

// Parses one documentation file; `problems` receives what is wrong with it
// (wrong title, missing or empty sections, a purpose that differs from the
// registry's). `path` names the file in messages.
RuleDoc parse_rule_doc(const std::string& markdown, const std::string& path, std::vector<std::string>& problems);

// Everything wrong with the documentation set: registered rules without a
// file, files that name no registered rule, malformed files. Empty when whole.
// `doc_files` lists (path, content); by default the embedded docs/rules/*.md.
std::vector<std::string> rule_doc_problems();
std::vector<std::string> rule_doc_problems(const std::vector<std::pair<std::string, std::string>>& doc_files);

}  // namespace quarkplan
