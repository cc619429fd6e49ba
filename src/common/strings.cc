#include "common/strings.h"

#include <algorithm>
#include <cctype>

namespace quarkplan {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                                          std::tolower(static_cast<unsigned char>(b[j - 1]))
                                      ? 0
                                      : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    prev.swap(cur);
  }
  return prev[b.size()];
}

std::vector<std::string> closest(const std::string& word, const std::vector<std::string>& candidates, size_t n) {
  std::vector<std::pair<size_t, std::string>> scored;
  size_t limit = std::max<size_t>(2, word.size() / 3);
  std::string lw = lower(word);
  for (const auto& c : candidates) {
    size_t d = edit_distance(word, c);
    std::string lc = lower(c);
    // A candidate that contains the word (or the reverse) is close too.
    if (d > limit && !lw.empty() && lc.find(lw) != std::string::npos) d = limit;
    if (d <= limit) scored.emplace_back(d, c);
  }
  std::stable_sort(scored.begin(), scored.end(), [](auto& x, auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (auto& [d, c] : scored) {
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    if (out.size() == n) break;
  }
  return out;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  auto c = closest(word, candidates, 3);
  if (c.empty()) return "";
  std::string s = " (did you mean ";
  for (size_t i = 0; i < c.size(); ++i) s += (i ? (i + 1 == c.size() ? " or " : ", ") : "") + ("'" + c[i] + "'");
  return s + "?)";
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<int> version_numbers(const std::string& v) {
  std::vector<int> out;
  for (size_t at = 0; at < v.size() && out.size() < 4;) {
    size_t end = at;
    while (end < v.size() && end - at < 9 && v[end] >= '0' && v[end] <= '9') ++end;
    if (end == at) break;
    out.push_back(std::stoi(v.substr(at, end - at)));
    at = end < v.size() && v[end] == '.' ? end + 1 : v.size();
  }
  return out;
}

}  // namespace quarkplan
