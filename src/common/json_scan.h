// A zero-copy pull scanner for the two big, flat JSON documents of a
// Hugging Face checkpoint: safetensors headers and model.safetensors.index.json
// (and for the top-level keys of an artifact about to be replaced).
//
// Why hand-written: DeepSeek-V3's 163 shard headers and its index hold ~92,000
// entries (~17 MB of JSON). Building an nlohmann DOM for them costs ~4 billion
// instructions (~0.7 s); this scanner reads the same bytes in one pass, keys
// and values as views, with every position checked against the end. Unknown
// values are skipped with a depth bound, so hostile nesting cannot recurse.
#pragma once
#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <stdexcept>
#include <string>
#include <string_view>

namespace quarkplan::json_scan {

class Scanner {
 public:
  explicit Scanner(std::string_view s) : s_(s) {}

  // Out of line and cold: the error path stays out of the hot loops.
  [[noreturn, gnu::noinline, gnu::cold]] void fail(const std::string& what) const {
    throw std::runtime_error(what + " at byte " + std::to_string(pos_));
  }

  void ws() {
    if (pos_ < s_.size() && static_cast<unsigned char>(s_[pos_]) > ' ') return;  // compact JSON
    // Indented files (model.safetensors.index.json) hold runs of spaces: eight at a step.
    for (uint64_t x; pos_ + 8 <= s_.size() && (std::memcpy(&x, s_.data() + pos_, 8), x == 0x2020202020202020ull);) pos_ += 8;
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t')) ++pos_;
  }
  char peek() {
    ws();
    if (pos_ >= s_.size()) fail("unexpected end of JSON");
    return s_[pos_];
  }
  void expect(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {  // compact JSON: no whitespace to skip
      ++pos_;
      return;
    }
    if (peek() != c) fail_expected(c);
    ++pos_;
  }
  bool consume(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  bool at_end() {
    ws();
    return pos_ >= s_.size();
  }

  // A string; `scratch` holds the unescaped text when the string has escapes.
  std::string_view string(std::string& scratch) {
    expect('"');
    size_t start = pos_;
    // Fast path (almost every string): the first quote, backslash or control
    // byte, sixteen bytes at a time; a quote means a plain string.
    size_t at = find_special(pos_);
    if (at != std::string_view::npos && s_[at] == '"') {
      pos_ = at + 1;
      return s_.substr(start, at - start);
    }
    while (pos_ < s_.size() && s_[pos_] != '"' && s_[pos_] != '\\') {
      if (static_cast<unsigned char>(s_[pos_]) < 0x20) fail("control character in string");
      ++pos_;
    }
    if (pos_ >= s_.size()) fail("unterminated string");
    if (s_[pos_] == '"') return s_.substr(start, pos_++ - start);
    scratch.assign(s_.substr(start, pos_ - start));
    while (true) {
      if (pos_ >= s_.size()) fail("unterminated string");
      char c = s_[pos_++];
      if (c == '"') return scratch;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
      if (c != '\\') {
        scratch.push_back(c);
        continue;
      }
      if (pos_ >= s_.size()) fail("unterminated escape");
      char e = s_[pos_++];
      switch (e) {
        case '"': case '\\': case '/': scratch.push_back(e); break;
        case 'b': scratch.push_back('\b'); break;
        case 'f': scratch.push_back('\f'); break;
        case 'n': scratch.push_back('\n'); break;
        case 'r': scratch.push_back('\r'); break;
        case 't': scratch.push_back('\t'); break;
        case 'u': {
          if (s_.size() - pos_ < 4) fail("short \\u escape");
          unsigned cp = 0;
          for (int i = 0; i < 4; ++i) {
            char h = s_[pos_++];
            cp <<= 4;
            if (h >= '0' && h <= '9') cp |= static_cast<unsigned>(h - '0');
            else if (h >= 'a' && h <= 'f') cp |= static_cast<unsigned>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') cp |= static_cast<unsigned>(h - 'A' + 10);
            else fail("bad \\u escape");
          }
          // UTF-8 encode (surrogates kept as-is: names only need to compare equal).
          if (cp < 0x80) scratch.push_back(static_cast<char>(cp));
          else if (cp < 0x800) {
            scratch.push_back(static_cast<char>(0xC0 | (cp >> 6)));
            scratch.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
          } else {
            scratch.push_back(static_cast<char>(0xE0 | (cp >> 12)));
            scratch.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            scratch.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
          }
          break;
        }
        default: fail("bad escape");
      }
    }
  }

  // A non-negative integer; `what` names it in errors.
  uint64_t u64(const char* what) {
    ws();
    const char* p = s_.data() + pos_;
    const char* end = s_.data() + s_.size();
    if (p < end && *p == '-') fail(std::string(what) + " is negative");
    const char* start = p;
    uint64_t v = 0;
    auto digit = [](char c) { return static_cast<unsigned>(static_cast<unsigned char>(c)) - '0'; };
    // Eight digits at a step while they last (offsets have 8-11), then one at
    // a time; nineteen digits never overflow 64 bits, so no check until then.
    if (end - p >= 8) {
      uint64_t chunk;
      std::memcpy(&chunk, p, 8);
      if (eight_digits(chunk)) {
        v = eight_digit_value(chunk);
        p += 8;
      }
    }
    const char* fast_end = end - start > 19 ? start + 19 : end;
    for (unsigned d; p < fast_end && (d = digit(*p)) <= 9; ++p) v = v * 10 + d;
    for (unsigned d; p < end && (d = digit(*p)) <= 9; ++p) {
      if (v > (UINT64_MAX - d) / 10) fail(std::string(what) + " overflows 64 bits");
      v = v * 10 + d;
    }
    pos_ = static_cast<size_t>(p - s_.data());
    if (p == start) fail(std::string(what) + " is not an integer");
    if (p < end && (*p == '.' || *p == 'e' || *p == 'E')) fail(std::string(what) + " is not an integer");
    return v;
  }

  // Skips any JSON value, nesting at most `max_depth` levels.
  void skip(int max_depth = 64) {
    if (max_depth <= 0) fail("JSON nested too deeply");
    char c = peek();
    std::string scratch;
    if (c == '"') {
      string(scratch);
    } else if (c == '{') {
      ++pos_;
      if (consume('}')) return;
      do {
        string(scratch);
        expect(':');
        skip(max_depth - 1);
      } while (consume(','));
      expect('}');
    } else if (c == '[') {
      ++pos_;
      if (consume(']')) return;
      do skip(max_depth - 1);
      while (consume(','));
      expect(']');
    } else {
      size_t start = pos_;
      while (pos_ < s_.size() && std::string_view("{}[],: \n\r\t\"").find(s_[pos_]) == std::string_view::npos) ++pos_;
      std::string_view lit = s_.substr(start, pos_ - start);
      if (lit.empty()) fail("unexpected character");
      if (lit != "true" && lit != "false" && lit != "null" && !json_number(lit)) fail("invalid literal");
    }
  }

  // JSON's number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
  static bool json_number(std::string_view t) {
    size_t i = 0;
    auto digits = [&] {
      const size_t from = i;
      while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
      return i > from;
    };
    if (i < t.size() && t[i] == '-') ++i;
    if (i < t.size() && t[i] == '0') ++i;
    else if (!digits()) return false;
    if (i < t.size() && t[i] == '.' && (++i, !digits())) return false;
    if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
      ++i;
      if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
      if (!digits()) return false;
    }
    return i == t.size();
  }

  size_t position() const { return pos_; }
  // SWAR digit tests (little-endian byte order: the first character is the low byte).
  static bool eight_digits(uint64_t x) {
    return (x & 0xF0F0F0F0F0F0F0F0ull) == 0x3030303030303030ull &&
           ((x + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) == 0x3030303030303030ull;
  }
  static uint64_t eight_digit_value(uint64_t x) {
    x -= 0x3030303030303030ull;
    x = (x * 10) + (x >> 8);
    x = (((x & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) + (((x >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >> 32;
    return x;
  }
  // For callers with a fast path of their own over the same text.
  std::string_view text() const { return s_; }
  void seek(size_t pos) { pos_ = pos < s_.size() ? pos : s_.size(); }

 private:
  [[noreturn, gnu::noinline, gnu::cold]] void fail_expected(char c) const { fail(std::string("expected '") + c + "'"); }

  // The position of the first '"', '\\' or control byte at or after `i`.
  size_t find_special(size_t i) const {
    const char* p = s_.data();
    const size_t n = s_.size();
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), below_space = _mm_set1_epi8(0x1f);
    for (; i + 16 <= n; i += 16) {
      __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)),
                                 _mm_cmpeq_epi8(_mm_min_epu8(x, below_space), x));  // unsigned x <= 0x1f
      if (int mask = _mm_movemask_epi8(hit)) return i + static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
    }
#endif
    for (; i < n; ++i) {
      unsigned char c = static_cast<unsigned char>(p[i]);
      if (c == '"' || c == '\\' || c < 0x20) return i;
    }
    return std::string_view::npos;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace quarkplan::json_scan
