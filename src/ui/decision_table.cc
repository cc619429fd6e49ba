#include "ui/decision_table.h"

#include <algorithm>
#include <cstring>

namespace quarkplan::ui {

namespace {

// Narrowest layout supported (the terminal's own minimum).
constexpr size_t kMinWidth = kMinTerminalWidth;
// Beyond this a reason column gets too long to read comfortably.
constexpr size_t kMaxTableWidth = 160;

bool continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// Byte offset where the first `cols` display columns of `s` end.
size_t byte_prefix(const std::string& s, size_t cols) {
  size_t i = 0, n = 0;
  while (i < s.size()) {
    if (!continuation(static_cast<unsigned char>(s[i]))) {
      if (n == cols) break;
      ++n;
    }
    ++i;
  }
  return i;
}

std::string pad(const std::string& s, size_t n) {
  size_t w = display_width(s);
  return w >= n ? s : s + std::string(n - w, ' ');
}

// Breaks a word wider than `width` into pieces at its natural boundaries.
std::vector<std::string> break_word(std::string word, size_t width) {
  std::vector<std::string> out;
  while (display_width(word) > width) {
    size_t limit = byte_prefix(word, width);  // bytes that fit
    size_t cut = std::string::npos;
    for (size_t i = limit; i > limit / 3 && cut == std::string::npos; --i)  // after a list or path separator
      if (word[i - 1] && std::strchr(",;/:", word[i - 1])) cut = i;
    for (const char* seps : {".", "_-"})  // before a name separator, dots first
      for (size_t i = limit; i-- > limit / 3 + 1 && cut == std::string::npos;)
        if (word[i] && std::strchr(seps, word[i])) cut = i;
    if (cut == std::string::npos || cut == 0) cut = limit;  // last resort
    while (cut < word.size() && continuation(static_cast<unsigned char>(word[cut]))) ++cut;
    out.push_back(word.substr(0, cut));
    word = word.substr(cut);
  }
  if (!word.empty()) out.push_back(word);
  return out;
}

void append_json(const Json& v, std::string& out) {
  if (v.is_array()) {
    out += "[";
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) out += ", ";
      append_json(v[i], out);
    }
    out += "]";
  } else if (v.is_object()) {
    out += "{";
    bool first = true;
    for (auto& [k, x] : v.items()) {
      if (!first) out += ", ";
      first = false;
      out += Json(k).dump() + ": ";
      append_json(x, out);
    }
    out += "}";
  } else {
    out += v.dump();
  }
}

struct Row {
  std::string key, label, value, reason;
  bool changed = false;
};

std::vector<Row> rows_of(const Json& rows, const std::set<std::string>& changed) {
  std::vector<Row> out;
  for (const auto& r : rows) {
    Row x;
    x.key = r.value("key", "");
    x.label = r.value("decision", x.key);
    const Json& v = r.contains("value") ? r["value"] : Json(nullptr);
    // Structured values are re-spaced so they wrap between items; scalars keep
    // the planner's text (it formats sizes and the like).
    x.value = (v.is_array() || v.is_object()) ? value_display(v) : r.value("value_text", value_display(v));
    x.reason = r.value("reason", "");
    x.changed = changed.count(x.key) > 0;
    out.push_back(std::move(x));
  }
  return out;
}

std::string render_table(const std::vector<Row>& rows, const Style& st, size_t K, size_t V, size_t R, bool any_changed) {
  auto sep = [&](char c) { return "  +" + std::string(K + 2, c) + "+" + std::string(V + 2, c) + "+" + std::string(R + 2, c) + "+\n"; };
  std::string out = sep('-');
  out += "  | " + st.bold(pad("Decision", K)) + " | " + st.bold(pad("Value", V)) + " | " + st.bold(pad("Reason", R)) + " |\n";
  out += sep('=');
  for (const auto& r : rows) {
    auto d = wrap(r.label, K), v = wrap(r.value, V), why = wrap(r.reason, R);
    size_t n = std::max({d.size(), v.size(), why.size()});
    for (size_t i = 0; i < n; ++i) {
      std::string dv = i < d.size() ? d[i] : "", vv = i < v.size() ? v[i] : "", rv = i < why.size() ? why[i] : "";
      out += std::string(r.changed && i == 0 ? "* " : "  ") + "| " + pad(dv, K) + " | " + (r.changed ? st.cyan(pad(vv, V)) : pad(vv, V)) +
             " | " + st.dim(pad(rv, R)) + " |\n";
    }
    out += sep('-');
  }
  if (any_changed) out += "  (* changed by your last edit)\n";
  return out;
}

// One row per block: "key  value" (the value below the key when they do not
// share a line), the reason indented under it.
std::string render_stacked(const std::vector<Row>& rows, const Style& st, size_t width, size_t K, bool any_changed) {
  const size_t inner = width - 6;  // "  | " + text + " |"
  const size_t kcol = std::min(K, inner / 2);
  const size_t reason_indent = 4;
  const std::string rule = "  +" + std::string(inner + 2, '-') + "+\n";
  std::string out = rule;
  {
    std::string head = pad("Decision", kcol + 2) + "Value";
    std::string styled = st.bold(pad("Decision", kcol + 2)) + st.bold("Value");
    out += "  | " + styled + std::string(inner - display_width(head), ' ') + " |\n";
    std::string sub = std::string(reason_indent, ' ') + "Reason";
    out += "  | " + std::string(reason_indent, ' ') + st.bold("Reason") + std::string(inner - display_width(sub), ' ') + " |\n";
  }
  out += "  +" + std::string(inner + 2, '=') + "+\n";
  for (const auto& r : rows) {
    std::vector<std::string> keys = wrap(r.label, inner);
    size_t vwidth = inner - kcol - 2;
    bool same_line = keys.size() == 1 && display_width(r.label) <= kcol && longest_word(r.value) <= vwidth;
    std::vector<std::pair<std::string, std::string>> lines;  // (plain, styled)
    auto value_style = [&](const std::string& s) { return r.changed ? st.cyan(s) : s; };
    if (same_line) {
      auto v = wrap(r.value, vwidth);
      for (size_t i = 0; i < v.size(); ++i) {
        std::string k = i == 0 ? pad(r.label, kcol + 2) : std::string(kcol + 2, ' ');
        lines.push_back({k + v[i], (i == 0 ? st.bold(r.label) + std::string(kcol + 2 - display_width(r.label), ' ') : k) + value_style(v[i])});
      }
    } else {
      for (const auto& k : keys) lines.push_back({k, st.bold(k)});
      for (const auto& v : wrap(r.value, inner - 2)) lines.push_back({"  " + v, "  " + value_style(v)});
    }
    for (const auto& w : r.reason.empty() ? std::vector<std::string>{} : wrap(r.reason, inner - reason_indent)) {
      std::string plain = std::string(reason_indent, ' ') + w;
      lines.push_back({plain, std::string(reason_indent, ' ') + st.dim(w)});
    }
    for (size_t i = 0; i < lines.size(); ++i)
      out += std::string(r.changed && i == 0 ? "* " : "  ") + "| " + lines[i].second + std::string(inner - display_width(lines[i].first), ' ') + " |\n";
    out += rule;
  }
  if (any_changed) out += "  (* changed by your last edit)\n";
  return out;
}

// The stacked layout without its frame, for widths where the frame would
// split a key, a value word or a rule ID: the key at the margin, its value
// beside or below it, the reason indented by two (or at the margin when a
// word of it needs the whole width). Rows are separated by a rule.
std::string render_bare(const std::vector<Row>& rows, const Style& st, size_t width, bool any_changed) {
  std::string out;
  const std::string rule = std::string(width, '-') + "\n";
  out += st.bold("Decision") + "  " + st.bold("Value") + "\n  " + st.bold("Reason") + "\n" + std::string(width, '=') + "\n";
  for (const auto& r : rows) {
    std::string mark = r.changed ? "* " : "";
    auto value_style = [&](const std::string& s) { return r.changed ? st.cyan(s) : s; };
    size_t kw = display_width(mark + r.label);
    if (kw + 2 + display_width(r.value) <= width) {
      out += mark + st.bold(r.label) + "  " + value_style(r.value) + "\n";
    } else {
      for (const auto& k : wrap(mark + r.label, width)) out += st.bold(k) + "\n";
      for (const auto& l : wrap_indented(r.value, width, 2)) out += value_style(l) + "\n";
    }
    for (const auto& l : wrap_indented(r.reason, width, 2)) out += st.dim(l) + "\n";
    out += rule;
  }
  if (any_changed) out += "(* changed by your last edit)\n";
  return out;
}

size_t clamp_width(int width) { return std::max<size_t>(kMinWidth, width > 0 ? static_cast<size_t>(width) : 80); }

}  // namespace

size_t display_width(const std::string& s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == 0x1b) {  // skip an escape sequence (colour)
      while (i < s.size() && s[i] != 'm') ++i;
      continue;
    }
    if (!continuation(c)) ++n;
  }
  return n;
}

size_t longest_word(const std::string& text) {
  size_t best = 0, start = 0;
  while (start <= text.size()) {
    size_t sp = text.find(' ', start);
    if (sp == std::string::npos) sp = text.size();
    best = std::max(best, display_width(text.substr(start, sp - start)));
    start = sp + 1;
  }
  return best;
}

std::string value_display(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  std::string out;
  append_json(value, out);
  return out;
}

std::vector<std::string> wrap(const std::string& text, size_t width) {
  std::vector<std::string> lines;
  if (width < 4) width = 4;
  std::string line;
  size_t line_w = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t sp = text.find(' ', i);
    std::string word = text.substr(i, sp == std::string::npos ? std::string::npos : sp - i);
    i = sp == std::string::npos ? text.size() : sp + 1;
    if (word.empty()) continue;
    size_t ww = display_width(word);
    if (ww > width) {  // only a word wider than the whole column is broken
      if (!line.empty()) {
        lines.push_back(line);
        line.clear();
        line_w = 0;
      }
      auto pieces = break_word(word, width);
      for (size_t k = 0; k + 1 < pieces.size(); ++k) lines.push_back(pieces[k]);
      line = pieces.back();
      line_w = display_width(line);
      continue;
    }
    if (line.empty()) {
      line = word;
      line_w = ww;
    } else if (line_w + 1 + ww <= width) {
      line += " " + word;
      line_w += 1 + ww;
    } else {
      lines.push_back(line);
      line = word;
      line_w = ww;
    }
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

std::vector<std::string> wrap_indented(const std::string& text, size_t width, size_t indent) {
  std::vector<std::string> out;
  if (text.empty()) return out;
  const std::string pad_in(indent, ' ');
  if (longest_word(text) + indent <= width) {
    for (const auto& l : wrap(text, width - indent)) out.push_back(pad_in + l);
    return out;
  }
  // Runs of words that fit at the indent wrap there; a word that needs more
  // room gets a line of its own, as far right as it fits.
  std::string run;
  auto flush = [&] {
    if (run.empty()) return;
    for (const auto& l : wrap(run, width - indent)) out.push_back(pad_in + l);
    run.clear();
  };
  for (size_t i = 0; i <= text.size();) {
    size_t sp = text.find(' ', i);
    if (sp == std::string::npos) sp = text.size();
    std::string word = text.substr(i, sp - i);
    i = sp + 1;
    if (word.empty()) continue;
    size_t ww = display_width(word);
    if (ww + indent <= width) {
      run += (run.empty() ? "" : " ") + word;
      continue;
    }
    flush();
    if (ww <= width) out.push_back(std::string(std::min(indent, width - ww), ' ') + word);
    else for (const auto& piece : wrap(word, width)) out.push_back(piece);
  }
  flush();
  return out;
}

std::string paragraph(const std::string& text, int width) {
  std::string out;
  for (const auto& l : wrap_indented(text, clamp_width(width), 0)) out += l + "\n";
  return out;
}

std::string render_decision_table(const Json& rows_json, const Style& st, int width_in, const std::set<std::string>& changed) {
  const size_t width = std::min(clamp_width(width_in), kMaxTableWidth);
  std::vector<Row> rows = rows_of(rows_json, changed);
  bool any_changed = false;
  size_t K = display_width("Decision"), Vfull = display_width("Value"), Vword = 5, Rword = 0;
  for (const auto& r : rows) {
    K = std::max(K, display_width(r.label));
    Vfull = std::max(Vfull, display_width(r.value));
    Vword = std::max(Vword, longest_word(r.value));
    Rword = std::max(Rword, longest_word(r.reason));
    any_changed = any_changed || r.changed;
  }
  // Three columns only when each can hold its longest word (keys, rule IDs and
  // values are never split) and the reason column stays readable.
  const size_t Rmin = std::max<size_t>(Rword, 20);
  if (K + 12 + Vword + Rmin <= width && K <= width / 2) {
    size_t avail = width - 12 - K;
    size_t V = std::min(Vfull, std::max(Vword, avail / 3));
    V = std::min(std::max(V, Vword), avail - Rmin);
    return render_table(rows, st, K, V, avail - V, any_changed);
  }
  // The framed stack when it splits nothing, else the same rows bare.
  const size_t inner = width - 6;
  bool fits = K <= inner && Rword <= inner - 4;
  for (const auto& r : rows) fits = fits && longest_word(r.value) <= inner - 2;
  if (fits) return render_stacked(rows, st, width, K, any_changed);
  return render_bare(rows, st, width, any_changed);
}

std::string render_risks(const Json& risks, const Style& st, int width_in) {
  if (risks.empty()) return "Risks: none\n";
  const size_t width = clamp_width(width_in);
  const size_t indent = 7;  // "  HIGH " / "       "
  std::string out = "Risks:\n";
  for (const char* sev : {"high", "medium", "low"}) {
    for (const auto& r : risks) {
      if (r.value("severity", "") != sev) continue;
      std::string tag = std::string(sev) == "high" ? st.red("HIGH") : std::string(sev) == "medium" ? st.yellow("MED ") : st.dim("LOW ");
      std::string rule = r.contains("rule") && r["rule"].is_string() && !r["rule"].get<std::string>().empty() ? " [" + r["rule"].get<std::string>() + "]" : "";
      auto lines = wrap_indented(r.value("message", "") + rule, width, indent);
      // The tag takes the first line's indent (a line of its own when a long
      // rule ID starts at the margin).
      if (!lines.empty() && lines[0].compare(0, indent, std::string(indent, ' ')) != 0) out += "  " + tag + "\n";
      for (size_t i = 0; i < lines.size(); ++i)
        out += (i == 0 && lines[0].compare(0, indent, std::string(indent, ' ')) == 0 ? "  " + tag + " " + lines[i].substr(indent) : lines[i]) + "\n";
      if (r.contains("recovery_hint") && r["recovery_hint"].is_string() && !r["recovery_hint"].get<std::string>().empty())
        for (const auto& l : wrap_indented("-> " + r["recovery_hint"].get<std::string>(), width, indent)) out += l + "\n";
    }
  }
  return out;
}

std::string render_questions(const Json& questions, const Style& st, int width_in) {
  if (questions.empty()) return "";
  const size_t width = clamp_width(width_in);
  std::string out = st.bold("Open questions:") + "\n";
  int i = 1;
  for (const auto& q : questions) {
    std::string num = "  " + std::to_string(i) + ". ";
    std::string indent(num.size(), ' ');
    auto lines = wrap_indented(q.is_string() ? q.get<std::string>() : q.dump(), width, num.size());
    if (!lines.empty() && lines[0].compare(0, num.size(), indent) != 0) out += num + "\n";
    for (size_t k = 0; k < lines.size(); ++k)
      out += (k == 0 && lines[0].compare(0, num.size(), indent) == 0 ? num + lines[k].substr(num.size()) : lines[k]) + "\n";
    ++i;
  }
  return out;
}

std::string render_conflicts(const std::vector<Conflict>& conflicts, const Style& st, int width_in, bool interactive) {
  const size_t width = clamp_width(width_in);
  std::string out;
  for (const auto& c : conflicts) {
    std::string head = "Conflict [" + c.rule + "]:";
    auto lines = wrap(head + " " + c.message, width);
    for (size_t i = 0; i < lines.size(); ++i)
      out += (i == 0 && lines[i].rfind(head, 0) == 0 ? st.red(head) + lines[i].substr(head.size()) : lines[i]) + "\n";
    std::string keep = !c.insistable ? "--insist cannot keep it: Quark would not do what the plan says."
                       : interactive ? "Change it, or type 'insist' to keep your choice (recorded as a high risk)."
                                     : "Pass --insist to keep your choice (recorded as a high risk).";
    for (const auto& l : wrap_indented("Closest viable alternative: " + c.alternative + ". " + keep, width, 2)) out += l + "\n";
  }
  return out;
}

}  // namespace quarkplan::ui
