#include "ui/decision_table.h"

#include <algorithm>

namespace quarkplan::ui {

std::vector<std::string> wrap(const std::string& text, size_t width) {
  std::vector<std::string> lines;
  if (width < 4) width = 4;
  std::string line;
  size_t i = 0;
  while (i < text.size()) {
    size_t sp = text.find(' ', i);
    std::string word = text.substr(i, sp == std::string::npos ? std::string::npos : sp - i);
    i = sp == std::string::npos ? text.size() : sp + 1;
    while (word.size() > width) {  // hard-break long tokens (paths, JSON)
      if (!line.empty()) {
        lines.push_back(line);
        line.clear();
      }
      lines.push_back(word.substr(0, width));
      word = word.substr(width);
    }
    if (line.empty()) line = word;
    else if (line.size() + 1 + word.size() <= width) line += " " + word;
    else {
      lines.push_back(line);
      line = word;
    }
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

std::string render_decision_table(const Json& rows, const Style& st, int width, const std::set<std::string>& changed) {
  size_t w = static_cast<size_t>(std::max(60, width));
  size_t dcol = 0, vcol = 0;
  for (const auto& r : rows) {
    dcol = std::max(dcol, r["decision"].get<std::string>().size());
    vcol = std::max(vcol, r["value_text"].get<std::string>().size());
  }
  dcol = std::min<size_t>(dcol, w / 3);
  vcol = std::min<size_t>(std::max<size_t>(vcol, 5), w / 4);
  // "| d | v | r |" + a change marker column.
  size_t rcol = w > dcol + vcol + 12 ? w - dcol - vcol - 12 : 20;
  auto pad = [](const std::string& s, size_t n) { return s.size() >= n ? s : s + std::string(n - s.size(), ' '); };
  auto sep = [&](char c) {
    return "  +" + std::string(dcol + 2, c) + "+" + std::string(vcol + 2, c) + "+" + std::string(rcol + 2, c) + "+\n";
  };
  std::string out = sep('-');
  out += "  | " + st.bold(pad("Decision", dcol)) + " | " + st.bold(pad("Value", vcol)) + " | " + st.bold(pad("Reason", rcol)) + " |\n";
  out += sep('=');
  for (const auto& r : rows) {
    auto d = wrap(r["decision"].get<std::string>(), dcol);
    auto v = wrap(r["value_text"].get<std::string>(), vcol);
    auto why = wrap(r["reason"].get<std::string>(), rcol);
    bool mark = changed.count(r["key"].get<std::string>()) > 0;
    size_t n = std::max({d.size(), v.size(), why.size()});
    for (size_t i = 0; i < n; ++i) {
      std::string dv = i < d.size() ? d[i] : "", vv = i < v.size() ? v[i] : "", rv = i < why.size() ? why[i] : "";
      out += std::string(mark && i == 0 ? "* " : "  ") + "| " + pad(dv, dcol) + " | " + (mark ? st.cyan(pad(vv, vcol)) : pad(vv, vcol)) + " | " +
             st.dim(pad(rv, rcol)) + " |\n";
    }
    out += sep('-');
  }
  if (!changed.empty()) out += "  (* changed by your last edit)\n";
  return out;
}

std::string render_risks(const Json& risks, const Style& st, int width) {
  if (risks.empty()) return "Risks: none\n";
  std::string out = "Risks:\n";
  size_t w = static_cast<size_t>(std::max(60, width)) - 6;
  for (const char* sev : {"high", "medium", "low"}) {
    for (const auto& r : risks) {
      if (r["severity"] != sev) continue;
      std::string tag = std::string(sev) == "high" ? st.red("HIGH") : std::string(sev) == "medium" ? st.yellow("MED ") : st.dim("LOW ");
      auto lines = wrap(r["message"].get<std::string>() + " [" + r.value("rule", "") + "]", w);
      for (size_t i = 0; i < lines.size(); ++i) out += (i == 0 ? "  " + tag + " " : "       ") + lines[i] + "\n";
      if (r.contains("recovery_hint") && !r["recovery_hint"].get<std::string>().empty())
        for (const auto& l : wrap("-> " + r["recovery_hint"].get<std::string>(), w)) out += "       " + l + "\n";
    }
  }
  return out;
}

std::string render_questions(const Json& questions, const Style& st, int width) {
  if (questions.empty()) return "";
  std::string out = st.bold("Open questions:") + "\n";
  size_t w = static_cast<size_t>(std::max(60, width)) - 6;
  int i = 1;
  for (const auto& q : questions) {
    auto lines = wrap(q.get<std::string>(), w);
    for (size_t k = 0; k < lines.size(); ++k) out += (k == 0 ? "  " + std::to_string(i) + ". " : "     ") + lines[k] + "\n";
    ++i;
  }
  return out;
}

}  // namespace quarkplan::ui
