// The small Markdown subset the rule documentation is written in, shown on a
// terminal (wrapped text) or in the HTML report (escaped HTML): paragraphs,
// "- " lists, "> " quotes, ``` fenced blocks and `inline code`.
#pragma once
#include <string>

#include "ui/terminal.h"

namespace quarkplan::ui {

// Terminal text, each line indented by `indent` spaces and no wider than
// `width`. Fenced blocks are kept verbatim (commands must be copyable).
std::string markdown_to_text(const std::string& md, const Style& style, size_t width, size_t indent);

// HTML (every character of the input escaped); fenced blocks become <pre>.
std::string markdown_to_html(const std::string& md);

// Text escaped for HTML element content and attribute values.
std::string html_escape(const std::string& s);

}  // namespace quarkplan::ui
