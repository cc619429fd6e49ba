#include "intake/module_names.h"

#include <fnmatch.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

namespace quarkplan {

namespace {

bool is_index(const std::string& s) {
  if (s.empty() || s.size() > 9) return false;
  if (s.size() > 1 && s[0] == '0') return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == '.') {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

struct Group {
  std::vector<std::string> parts;  // "#" where an index stands
  std::vector<size_t> slots;       // positions of "#"
  std::vector<std::vector<uint32_t>> tuples;
};

std::string render(const std::vector<std::string>& parts) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? "." : "") + parts[i];
  return s;
}

void emit(std::vector<std::string> parts, const std::vector<size_t>& slots, std::vector<std::vector<uint32_t>> tuples,
          size_t from, std::vector<std::string>& out) {
  if (from == slots.size() || tuples.size() == 1) {
    for (auto& t : tuples) {
      auto p = parts;
      for (size_t i = from; i < slots.size(); ++i) p[slots[i]] = std::to_string(t[i]);
      out.push_back(render(p));
    }
    return;
  }
  // Full product of contiguous ranges over the remaining slots: one entry.
  size_t product = 1;
  bool contiguous = true;
  std::vector<std::pair<uint32_t, uint32_t>> ranges;
  for (size_t i = from; i < slots.size(); ++i) {
    std::set<uint32_t> vals;
    for (auto& t : tuples) vals.insert(t[i]);
    uint32_t lo = *vals.begin(), hi = *vals.rbegin();
    contiguous = contiguous && (hi - lo + 1 == vals.size());
    product *= vals.size();
    ranges.emplace_back(lo, hi);
  }
  std::sort(tuples.begin(), tuples.end());
  tuples.erase(std::unique(tuples.begin(), tuples.end()), tuples.end());
  if (contiguous && product == tuples.size()) {
    for (size_t i = from; i < slots.size(); ++i) {
      auto [lo, hi] = ranges[i - from];
      parts[slots[i]] = lo == hi ? std::to_string(lo) : "{" + std::to_string(lo) + ".." + std::to_string(hi) + "}";
    }
    out.push_back(render(parts));
    return;
  }
  // Otherwise fix the first remaining slot and recurse per value.
  std::map<uint32_t, std::vector<std::vector<uint32_t>>> by_first;
  for (auto& t : tuples) by_first[t[from]].push_back(t);
  for (auto& [v, sub] : by_first) {
    auto p = parts;
    p[slots[from]] = std::to_string(v);
    emit(p, slots, sub, from + 1, out);
  }
}

}  // namespace

std::vector<std::string> collapse_module_names(const std::vector<std::string>& names) {
  std::map<std::string, Group> groups;
  for (const auto& n : names) {
    auto parts = split(n);
    std::vector<uint32_t> tuple;
    std::vector<size_t> slots;
    for (size_t i = 0; i < parts.size(); ++i)
      if (is_index(parts[i])) {
        tuple.push_back(static_cast<uint32_t>(std::stoul(parts[i])));
        parts[i] = "#";
        slots.push_back(i);
      }
    auto& g = groups[render(parts)];
    if (g.parts.empty()) {
      g.parts = parts;
      g.slots = slots;
    }
    g.tuples.push_back(std::move(tuple));
  }
  std::vector<std::string> out;
  for (auto& [key, g] : groups) emit(g.parts, g.slots, g.tuples, 0, out);
  return out;
}

namespace {
uint32_t range_bound(const std::string& text, const std::string& whole) {
  if (text.empty() || text.size() > 9 || !std::all_of(text.begin(), text.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
    throw std::invalid_argument("module name '" + whole + "' has a malformed index range");
  return static_cast<uint32_t>(std::stoul(text));
}
}  // namespace

std::vector<std::string> expand_module_names(const std::vector<std::string>& collapsed, size_t limit) {
  std::vector<std::string> out;
  for (const auto& c : collapsed) {
    std::vector<std::string> partial{""};
    size_t i = 0;
    while (i < c.size()) {
      size_t open = c.find('{', i);
      if (open == std::string::npos) {
        for (auto& p : partial) p += c.substr(i);
        break;
      }
      size_t dots = c.find("..", open), close = c.find('}', open);
      if (dots == std::string::npos || close == std::string::npos || dots > close) {
        for (auto& p : partial) p += c.substr(i);
        break;
      }
      std::string prefix = c.substr(i, open - i);
      uint32_t lo = range_bound(c.substr(open + 1, dots - open - 1), c);
      uint32_t hi = range_bound(c.substr(dots + 2, close - dots - 2), c);
      if (lo > hi) throw std::invalid_argument("module name '" + c + "' has an empty index range");
      // Bound the expansion before allocating it.
      if (static_cast<uint64_t>(hi - lo + 1) * partial.size() + out.size() > limit)
        throw std::invalid_argument("module names expand to more than " + std::to_string(limit) + " modules");
      std::vector<std::string> next;
      next.reserve(partial.size() * (hi - lo + 1));
      for (auto& p : partial)
        for (uint32_t v = lo; v <= hi; ++v) next.push_back(p + prefix + std::to_string(v));
      partial.swap(next);
      i = close + 1;
    }
    out.insert(out.end(), partial.begin(), partial.end());
    if (out.size() > limit) throw std::invalid_argument("module names expand to more than " + std::to_string(limit) + " modules");
  }
  return out;
}

std::vector<SizedName> collapse_sized(const std::vector<SizedName>& names) {
  std::map<std::tuple<uint64_t, uint64_t, std::string>, std::vector<std::string>> buckets;
  for (const auto& n : names) buckets[{n.params, n.in_features, n.role}].push_back(n.name);
  std::vector<SizedName> out;
  for (auto& [key, list] : buckets)
    for (auto& c : collapse_module_names(list)) out.push_back({c, std::get<0>(key), std::get<1>(key), std::get<2>(key)});
  std::sort(out.begin(), out.end(), [](const SizedName& a, const SizedName& b) { return a.name < b.name; });
  return out;
}

bool QuarkPattern::Glob::match(std::string_view s) const {
  if (!simple) return ::fnmatch(text.c_str(), std::string(s).c_str(), 0) == 0;
  if (parts.size() == 1 && !leading_star && !trailing_star) return s == parts[0];
  size_t pos = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    if (part.empty()) continue;
    bool first = i == 0 && !leading_star;
    bool last = i + 1 == parts.size() && !trailing_star;
    if (first) {
      if (s.compare(0, part.size(), part) != 0) return false;
      pos = part.size();
    } else if (last) {
      if (s.size() < pos + part.size() || s.compare(s.size() - part.size(), part.size(), part) != 0) return false;
      pos = s.size();
    } else {
      size_t at = s.find(part, pos);
      if (at == std::string_view::npos) return false;
      pos = at + part.size();
    }
  }
  return trailing_star || pos == s.size() || parts.back().empty();
}

namespace {
void compile(const std::string& text, bool& simple, bool& lead, bool& trail, std::vector<std::string>& parts) {
  simple = text.find_first_of("?[\\") == std::string::npos;
  lead = !text.empty() && text.front() == '*';
  trail = !text.empty() && text.back() == '*';
  parts.clear();
  std::string cur;
  for (char c : text) {
    if (c == '*') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  // Drop the empty pieces the leading/trailing stars produce.
  if (lead && !parts.empty() && parts.front().empty()) parts.erase(parts.begin());
  if (trail && !parts.empty() && parts.back().empty()) parts.pop_back();
  if (parts.empty()) parts.push_back("");
}
}  // namespace

QuarkPattern::QuarkPattern(const std::string& pattern) : pattern_(pattern) {
  exact_.text = pattern;
  compile(pattern, exact_.simple, exact_.leading_star, exact_.trailing_star, exact_.parts);
  has_dotted_ = !(pattern.size() >= 2 && pattern.compare(pattern.size() - 2, 2, ".*") == 0);
  if (has_dotted_) {
    dotted_.text = pattern + ".*";
    compile(dotted_.text, dotted_.simple, dotted_.leading_star, dotted_.trailing_star, dotted_.parts);
  }
}

bool QuarkPattern::matches(std::string_view module) const {
  return exact_.match(module) || (has_dotted_ && dotted_.match(module));
}

bool quark_pattern_matches(const std::string& pattern, const std::string& module) {
  return QuarkPattern(pattern).matches(module);
}


}  // namespace quarkplan
