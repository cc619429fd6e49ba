#include "intake/module_names.h"

#include "common/parallel.h"

#include <fnmatch.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

namespace quarkplan {

namespace {

bool is_index(std::string_view s) {
  if (s.empty() || s.size() > 9) return false;
  if (s.size() > 1 && s[0] == '0') return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

uint32_t index_value(std::string_view s) {
  uint32_t v = 0;
  for (char c : s) v = v * 10 + static_cast<uint32_t>(c - '0');
  return v;
}

// Names that differ only in their numeric parts: the parts ("#" where an
// index stands) and every name's indices, `stride` per name, in one array.
struct Group {
  std::vector<std::string> parts;
  std::vector<size_t> slots;  // positions of "#"
  std::vector<uint32_t> flat;
  size_t count = 0;  // names in the group
};

std::string render(const std::vector<std::string>& parts) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) s += '.';
    s += parts[i];
  }
  return s;
}

using Row = const uint32_t*;

void emit(std::vector<std::string> parts, const std::vector<size_t>& slots, std::vector<Row> rows, size_t from,
          std::vector<std::string>& out) {
  const size_t k = slots.size();
  if (from == k || rows.size() == 1) {
    for (Row t : rows) {
      auto p = parts;
      for (size_t i = from; i < k; ++i) p[slots[i]] = std::to_string(t[i]);
      out.push_back(render(p));
    }
    return;
  }
  // Full product of contiguous ranges over the remaining slots: one entry.
  size_t product = 1;
  bool contiguous = true;
  std::vector<std::pair<uint32_t, uint32_t>> ranges;
  std::vector<uint32_t> vals;
  std::vector<char> seen;
  for (size_t i = from; i < k; ++i) {
    uint32_t lo = UINT32_MAX, hi = 0;
    for (Row t : rows) {
      lo = std::min(lo, t[i]);
      hi = std::max(hi, t[i]);
    }
    // Distinct values: marked in a table when the span is within a few times
    // the rows (layer and expert numbers: 45,000 rows, no sort), else sorted
    // (so the cost follows the rows, whatever numbers a name holds).
    size_t distinct = 0;
    if (static_cast<uint64_t>(hi - lo) < 4 * static_cast<uint64_t>(rows.size()) + 64) {
      seen.assign(static_cast<size_t>(hi - lo) + 1, 0);
      for (Row t : rows) {
        char& s = seen[t[i] - lo];
        distinct += !s;
        s = 1;
      }
    } else {
      vals.clear();
      for (Row t : rows) vals.push_back(t[i]);
      std::sort(vals.begin(), vals.end());
      distinct = static_cast<size_t>(std::unique(vals.begin(), vals.end()) - vals.begin());
    }
    contiguous = contiguous && (hi - lo + 1 == distinct);
    product *= distinct;
    ranges.emplace_back(lo, hi);
  }
  auto less = [k](Row a, Row b) { return std::lexicographical_compare(a, a + k, b, b + k); };
  auto same = [k](Row a, Row b) { return std::equal(a, a + k, b); };
  if (!std::is_sorted(rows.begin(), rows.end(), less)) std::sort(rows.begin(), rows.end(), less);
  rows.erase(std::unique(rows.begin(), rows.end(), same), rows.end());
  if (contiguous && product == rows.size()) {
    for (size_t i = from; i < k; ++i) {
      auto [lo, hi] = ranges[i - from];
      std::string& part = parts[slots[i]];
      part = std::to_string(lo);
      if (lo != hi) {  // appended piece by piece (GCC 12's -Wrestrict misfires on "{" + ... at -O3)
        part.insert(0, 1, '{');
        part += "..";
        part += std::to_string(hi);
        part += '}';
      }
    }
    out.push_back(render(parts));
    return;
  }
  // Otherwise fix the first remaining slot and recurse per value (rows are
  // sorted, so each value's rows are one run).
  for (size_t i = 0; i < rows.size();) {
    size_t j = i;
    while (j < rows.size() && rows[j][from] == rows[i][from]) ++j;
    auto p = parts;
    p[slots[from]] = std::to_string(rows[i][from]);
    emit(p, slots, std::vector<Row>(rows.begin() + static_cast<std::ptrdiff_t>(i), rows.begin() + static_cast<std::ptrdiff_t>(j)), from + 1, out);
    i = j;
  }
}

}  // namespace

namespace {

// The groups of a run of names, in order of first appearance.
struct Groups {
  std::unordered_map<std::string, size_t> index_of;
  std::vector<std::pair<std::string, Group>> list;
  // The index in `list` of the key's group (added when new).
  size_t at(const std::string& key, std::string_view name_for_parts) {
    auto [it, added] = index_of.try_emplace(key, list.size());
    if (added) {
      Group g;
      size_t found = 0;
      for (size_t start = 0, i = 0;; ++i) {
        size_t dot = name_for_parts.find('.', start);
        std::string_view part = name_for_parts.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
        bool idx = is_index(part) && found < 64;
        g.parts.emplace_back(idx ? std::string_view("#") : part);
        if (idx) {
          g.slots.push_back(i);
          ++found;
        }
        if (dot == std::string_view::npos) break;
        start = dot + 1;
      }
      list.emplace_back(key, std::move(g));
    }
    return it->second;
  }
};

// One pass per name: the key ("#" for each index part) is built in a reused
// buffer and looked up by hash; the previous name's group is tried first.
void group_names(const std::string_view* names, size_t count, Groups& out) {
  std::string key;
  uint32_t tuple[64];
  // The groups of the last few names, most recent first: an expert's
  // gate/up/down projections alternate, so one entry would miss every time.
  // (Indices, not pointers: `list` grows.)
  constexpr size_t kRecent = 4;
  std::pair<std::string, size_t> recent[kRecent];
  for (auto& r : recent) r.second = SIZE_MAX;
  for (size_t k = 0; k < count; ++k) {
    std::string_view n = names[k];
    key.clear();
    size_t slots = 0;
    const char* seg = n.data();
    const char* end = n.data() + n.size();
    for (const char* c = seg;; ++c) {
      if (c != end && *c != '.') continue;
      std::string_view part(seg, static_cast<size_t>(c - seg));
      if (is_index(part) && slots < 64) {
        tuple[slots++] = index_value(part);
        key += '#';
      } else {
        key.append(part);
      }
      if (c == end) break;
      key += '.';
      seg = c + 1;
    }
    size_t hit = 0;
    while (hit < kRecent && !(recent[hit].second != SIZE_MAX && recent[hit].first == key)) ++hit;
    if (hit == kRecent) {  // not recent: look it up, and make room at the front
      hit = kRecent - 1;
      recent[hit] = {key, out.at(key, n)};
    }
    std::rotate(recent, recent + hit, recent + hit + 1);
    Group& g = out.list[recent[0].second].second;
    g.flat.insert(g.flat.end(), tuple, tuple + slots);
    ++g.count;
  }
}

}  // namespace

std::vector<std::string> collapse_module_views(const std::vector<std::string_view>& names) {
  // Names are grouped in chunks on every core (45,000 for DeepSeek-V3), then
  // the chunks' groups are merged in order.
  constexpr size_t kChunk = 8192;
  const size_t chunks = std::max<size_t>(1, (names.size() + kChunk - 1) / kChunk);
  std::vector<Groups> parts(chunks);
  auto run = [&](size_t c) {
    size_t from = c * kChunk, to = std::min(names.size(), from + kChunk);
    group_names(names.data() + from, to - from, parts[c]);
  };
  if (chunks == 1) run(0);
  else parallel_for(chunks, run);
  Groups merged = std::move(parts[0]);
  for (size_t c = 1; c < chunks; ++c)
    for (auto& [key, g] : parts[c].list) {
      auto [it, added] = merged.index_of.try_emplace(key, merged.list.size());
      if (added) {
        merged.list.emplace_back(key, std::move(g));
        continue;
      }
      Group& into = merged.list[it->second].second;
      into.flat.insert(into.flat.end(), g.flat.begin(), g.flat.end());
      into.count += g.count;
    }
  auto& groups = merged.list;
  std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (auto& [k, g] : groups) {
    static const uint32_t none = 0;  // rows of a group without index parts hold nothing
    const size_t stride = g.slots.size();
    if (stride == 1 || stride == 2) {
      // Sort the indices once as packed integers (cheaper than comparing rows);
      // emit then finds them in order.
      std::vector<uint64_t> packed(g.count);
      for (size_t i = 0; i < g.count; ++i)
        packed[i] = stride == 1 ? g.flat[i] : (static_cast<uint64_t>(g.flat[2 * i]) << 32) | g.flat[2 * i + 1];
      if (!std::is_sorted(packed.begin(), packed.end())) {
        std::sort(packed.begin(), packed.end());
        for (size_t i = 0; i < g.count; ++i) {
          if (stride == 1) g.flat[i] = static_cast<uint32_t>(packed[i]);
          else {
            g.flat[2 * i] = static_cast<uint32_t>(packed[i] >> 32);
            g.flat[2 * i + 1] = static_cast<uint32_t>(packed[i]);
          }
        }
      }
    }
    std::vector<Row> rows(g.count, &none);
    for (size_t i = 0; stride && i < g.count; ++i) rows[i] = g.flat.data() + i * stride;
    emit(g.parts, g.slots, rows, 0, out);
  }
  return out;
}

std::vector<std::string> collapse_module_names(const std::vector<std::string>& names) {
  return collapse_module_views(std::vector<std::string_view>(names.begin(), names.end()));
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

std::vector<SizedName> collapse_sized(const std::vector<SizedView>& names) {
  using Key = std::tuple<uint64_t, uint64_t, std::string_view>;
  std::map<Key, std::vector<std::string_view>> buckets;
  // Runs of names share a few buckets (an expert's gate and up projections,
  // then its down projection): the last two are tried first.
  std::pair<Key, std::vector<std::string_view>*> recent[2];
  for (const auto& n : names) {
    Key key{n.params, n.in_features, n.role};
    if (!(recent[0].second && recent[0].first == key)) {
      if (!(recent[1].second && recent[1].first == key)) recent[1] = {key, &buckets[key]};
      std::swap(recent[0], recent[1]);
    }
    recent[0].second->push_back(n.name);
  }
  std::vector<SizedName> out;
  for (auto& [key, list] : buckets)
    for (auto& c : collapse_module_views(list))
      out.push_back({std::move(c), std::get<0>(key), std::get<1>(key), std::string(std::get<2>(key))});
  std::sort(out.begin(), out.end(), [](const SizedName& a, const SizedName& b) { return a.name < b.name; });
  return out;
}

std::vector<SizedName> collapse_sized(const std::vector<SizedName>& names) {
  std::vector<SizedView> views;
  views.reserve(names.size());
  for (const auto& n : names) views.push_back({n.name, n.params, n.in_features, n.role});
  return collapse_sized(views);
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

QuarkPattern::QuarkPattern(const std::string& pattern, PatternMatch how) : pattern_(pattern) {
  exact_.text = pattern;
  compile(pattern, exact_.simple, exact_.leading_star, exact_.trailing_star, exact_.parts);
  has_dotted_ = how == PatternMatch::kWithChildren && !(pattern.size() >= 2 && pattern.compare(pattern.size() - 2, 2, ".*") == 0);
  if (has_dotted_) {
    dotted_.text = pattern + ".*";
    compile(dotted_.text, dotted_.simple, dotted_.leading_star, dotted_.trailing_star, dotted_.parts);
  }
}

bool QuarkPattern::matches(std::string_view module) const {
  return exact_.match(module) || (has_dotted_ && dotted_.match(module));
}

bool quark_pattern_matches(const std::string& pattern, const std::string& module, PatternMatch how) {
  return QuarkPattern(pattern, how).matches(module);
}


}  // namespace quarkplan
