#include "ui/markdown.h"

#include <vector>

#include "ui/decision_table.h"

namespace quarkplan::ui {

namespace {

enum class Kind { kPara, kItem, kQuote, kCode };
struct Block {
  Kind kind;
  std::string text;  // paragraphs/items/quotes joined by spaces; code with newlines
};

std::vector<Block> blocks_of(const std::string& md) {
  std::vector<Block> out;
  std::vector<std::string> lines;
  for (size_t start = 0; start < md.size();) {
    size_t nl = md.find('\n', start);
    if (nl == std::string::npos) nl = md.size();
    std::string l = md.substr(start, nl - start);
    if (!l.empty() && l.back() == '\r') l.pop_back();
    lines.push_back(l);
    start = nl + 1;
  }
  auto trimmed = [](const std::string& s) {
    size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
    return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
  };
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string t = trimmed(lines[i]);
    if (t.empty()) continue;
    if (t.rfind("```", 0) == 0) {
      Block b{Kind::kCode, ""};
      for (++i; i < lines.size() && trimmed(lines[i]).rfind("```", 0) != 0; ++i) b.text += lines[i] + "\n";
      out.push_back(b);
      continue;
    }
    Kind k = t.rfind("- ", 0) == 0 || t.rfind("* ", 0) == 0 ? Kind::kItem : t.rfind(">", 0) == 0 ? Kind::kQuote : Kind::kPara;
    std::string text = k == Kind::kItem ? t.substr(2) : k == Kind::kQuote ? trimmed(t.substr(1)) : t;
    // Continuation lines join the block until a blank line or a new block.
    while (i + 1 < lines.size()) {
      std::string n = trimmed(lines[i + 1]);
      if (n.empty() || n.rfind("```", 0) == 0 || n.rfind("- ", 0) == 0 || n.rfind("* ", 0) == 0) break;
      if ((n.rfind(">", 0) == 0) != (k == Kind::kQuote)) break;
      text += " " + (k == Kind::kQuote ? trimmed(n.substr(1)) : n);
      ++i;
    }
    out.push_back({k, text});
  }
  return out;
}

// `code` spans: dropped backticks on a terminal, <code> in HTML.
std::string inline_text(const std::string& s) {
  std::string out;
  for (char c : s)
    if (c != '`') out += c;
  return out;
}

std::string inline_html(const std::string& s) {
  std::string out;
  bool code = false;
  size_t i = 0;
  while (i < s.size()) {
    size_t tick = s.find('`', i);
    std::string part = s.substr(i, tick == std::string::npos ? std::string::npos : tick - i);
    out += html_escape(part);
    if (tick == std::string::npos) break;
    out += code ? "</code>" : "<code>";
    code = !code;
    i = tick + 1;
  }
  if (code) out += "</code>";
  return out;
}

}  // namespace

std::string html_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      case '\0': out += "&#xFFFD;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string markdown_to_text(const std::string& md, const Style& st, size_t width, size_t indent) {
  std::string out, pad(indent, ' ');
  size_t w = width > indent + 20 ? width - indent : 20;
  bool first = true;
  for (const auto& b : blocks_of(md)) {
    if (!first && b.kind != Kind::kItem) out += "\n";
    first = false;
    switch (b.kind) {
      case Kind::kCode:
        for (size_t s = 0, nl; (nl = b.text.find('\n', s)) != std::string::npos; s = nl + 1)
          out += pad + "  " + st.cyan(b.text.substr(s, nl - s)) + "\n";
        break;
      case Kind::kItem: {
        auto lines = wrap(inline_text(b.text), w - 2);
        for (size_t i = 0; i < lines.size(); ++i) out += pad + (i == 0 ? "- " : "  ") + lines[i] + "\n";
        break;
      }
      case Kind::kQuote:
        for (const auto& l : wrap(inline_text(b.text), w - 2)) out += pad + "| " + l + "\n";
        break;
      case Kind::kPara:
        for (const auto& l : wrap(inline_text(b.text), w)) out += pad + l + "\n";
        break;
    }
  }
  return out;
}

std::string markdown_to_html(const std::string& md) {
  std::string out;
  bool in_list = false;
  for (const auto& b : blocks_of(md)) {
    if (in_list && b.kind != Kind::kItem) {
      out += "</ul>\n";
      in_list = false;
    }
    switch (b.kind) {
      case Kind::kCode: out += "<pre><code>" + html_escape(b.text) + "</code></pre>\n"; break;
      case Kind::kItem:
        if (!in_list) out += "<ul>\n";
        in_list = true;
        out += "<li>" + inline_html(b.text) + "</li>\n";
        break;
      case Kind::kQuote: out += "<blockquote>" + inline_html(b.text) + "</blockquote>\n"; break;
      case Kind::kPara: out += "<p>" + inline_html(b.text) + "</p>\n"; break;
    }
  }
  if (in_list) out += "</ul>\n";
  return out;
}

}  // namespace quarkplan::ui
