// The decision table every plan shows (Decision | Value | Reason), laid out
// for the terminal width, then the risks by severity and the open questions.
//
// What users must type — decision keys (onnx_specific.enable_npu_cnn), rule
// IDs ([torch.exclude.template_defaults]), scheme and preset names — is never
// split across lines: text wraps at spaces, every column is at least as wide as
// its longest word, and when three columns cannot hold them (narrow terminals,
// long ONNX keys) each row is stacked instead: the key and its value on one
// line, the reason indented below. No line is wider than the width given.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "common/json.h"
#include "plan/plan_state.h"
#include "ui/terminal.h"

namespace quarkplan::ui {

// `changed` marks rows (by key) that changed since the last table.
std::string render_decision_table(const Json& rows, const Style& style, int width,
                                  const std::set<std::string>& changed = {});
std::string render_risks(const Json& risks, const Style& style, int width);
std::string render_questions(const Json& questions, const Style& style, int width);
// Choices that break a hard gate, each with the closest viable alternative and
// how to keep it anyway ('insist' at the prompt, --insist on the command line).
std::string render_conflicts(const std::vector<Conflict>& conflicts, const Style& style, int width, bool interactive);

// Word wrap of `text` to `width` columns (display columns: UTF-8 aware). Words
// are never split, except a word longer than the whole width, which is broken
// after a ',' '/' ';' or ':' when it has one, else before a '.', '_' or '-',
// and only as a last resort anywhere.
std::vector<std::string> wrap(const std::string& text, size_t width);

// `text` wrapped to `width` with every line indented by `indent` (the indent
// is part of the returned lines), except that a word too wide for the indent
// gets a line of its own with less indent, so it stays whole when it fits the
// width at all.
std::vector<std::string> wrap_indented(const std::string& text, size_t width, size_t indent);

// A sentence or two for the terminal: wrapped to `width`, each line ended
// with a newline.
std::string paragraph(const std::string& text, int width);

// Columns `s` takes on a terminal (UTF-8 code points; escape sequences excluded).
size_t display_width(const std::string& s);

// The longest word (run of non-spaces) of `text`, in display columns.
size_t longest_word(const std::string& text);

// A decision value as people read it: strings as they are, JSON with a space
// after each ',' and ':' so lists and objects can wrap between their items.
std::string value_display(const Json& value);

}  // namespace quarkplan::ui
