// A zero-copy pull scanner for the two big, flat JSON documents of a
// Hugging Face checkpoint: safetensors headers and model.safetensors.index.json.
//
// Why hand-written: DeepSeek-V3's 163 shard headers and its index hold ~92,000
// entries (~17 MB of JSON). Building an nlohmann DOM for them costs ~4 billion
// instructions (~0.7 s); this scanner reads the same bytes in one pass, keys
// and values as views, with every position checked against the end. Unknown
// values are skipped with a depth bound, so hostile nesting cannot recurse.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace quarkplan::json_scan {

class Scanner {
 public:
  explicit Scanner(std::string_view s) : s_(s) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(what + " at byte " + std::to_string(pos_));
  }

  void ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t')) ++pos_;
  }
  char peek() {
    ws();
    if (pos_ >= s_.size()) fail("unexpected end of JSON");
    return s_[pos_];
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  bool consume(char c) {
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
    if (pos_ < s_.size() && s_[pos_] == '-') fail(std::string(what) + " is negative");
    size_t start = pos_;
    uint64_t v = 0;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      uint64_t d = static_cast<uint64_t>(s_[pos_] - '0');
      if (v > (UINT64_MAX - d) / 10) fail(std::string(what) + " overflows 64 bits");
      v = v * 10 + d;
      ++pos_;
    }
    if (pos_ == start) fail(std::string(what) + " is not an integer");
    if (pos_ < s_.size() && (s_[pos_] == '.' || s_[pos_] == 'e' || s_[pos_] == 'E'))
      fail(std::string(what) + " is not an integer");
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
      if (lit != "true" && lit != "false" && lit != "null" &&
          lit.find_first_not_of("0123456789+-.eE") != std::string_view::npos)
        fail("invalid literal");
    }
  }

  size_t position() const { return pos_; }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace quarkplan::json_scan
