// Config values and expressions for the structure: the catalog's integer
// expressions evaluated with checked arithmetic, and config.json values looked
// up by path (the language model's sub-config first).
#include "intake/structure/config_values.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "common/error.h"

namespace quarkplan::structure_detail {
namespace {

// Integer expressions over config variables, as the catalog writes shapes:
// "heads*hd", "2*Im", "(heads+2*kvh)*hd", "cdiv(out,128)", "!tied", "a>b".
// Arithmetic is checked: a config whose numbers overflow is an input error.
class ExprEval {
 public:
  ExprEval(std::string_view text, const Vars& vars, const std::string& file) : s_(text), vars_(vars), file_(file) {}
  int64_t run() {
    int64_t v = comparison();
    skip();
    if (pos_ != s_.size()) fail("unexpected '" + std::string(s_.substr(pos_)) + "'");
    return v;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
  const Vars& vars_;
  const std::string& file_;

  [[noreturn]] void fail(const std::string& why) const {
    // Expressions come from the catalog, not the user: a bad one is a catalog error.
    throw InputError("catalog/architectures.json", "expression '" + std::string(s_) + "': " + why);
  }
  void skip() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }
  bool eat(char c) {
    skip();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  int64_t checked(__int128 v) const {
    if (v > INT64_MAX || v < INT64_MIN)
      throw InputError(file_, "the model's dimensions overflow when multiplied (" + std::string(s_) + "): check the sizes in config.json");
    return static_cast<int64_t>(v);
  }
  int64_t comparison() {
    int64_t a = sum();
    skip();
    if (eat('>')) return a > sum() ? 1 : 0;
    if (eat('<')) return a < sum() ? 1 : 0;
    if (pos_ + 1 < s_.size() && s_[pos_] == '=' && s_[pos_ + 1] == '=') {
      pos_ += 2;
      return a == sum() ? 1 : 0;
    }
    return a;
  }
  int64_t sum() {
    int64_t v = product();
    while (true) {
      if (eat('+')) v = checked(static_cast<__int128>(v) + product());
      else if (eat('-')) v = checked(static_cast<__int128>(v) - product());
      else return v;
    }
  }
  int64_t product() {
    int64_t v = unary();
    while (true) {
      if (eat('*')) v = checked(static_cast<__int128>(v) * unary());
      else if (eat('/')) {
        int64_t d = unary();
        if (d == 0) throw InputError(file_, "a dimension is zero where the model divides by it (" + std::string(s_) + ")");
        v /= d;
      } else return v;
    }
  }
  int64_t unary() {
    if (eat('!')) return unary() == 0 ? 1 : 0;
    if (eat('-')) return -unary();
    return atom();
  }
  int64_t atom() {
    skip();
    if (eat('(')) {
      int64_t v = comparison();
      if (!eat(')')) fail("missing ')'");
      return v;
    }
    if (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      int64_t v = 0;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) v = checked(static_cast<__int128>(v) * 10 + (s_[pos_++] - '0'));
      return v;
    }
    size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    if (start == pos_) fail("expected a number or a name");
    std::string_view name = s_.substr(start, pos_ - start);
    if (eat('(')) {  // functions: cdiv(a,b), max(a,b), min(a,b)
      int64_t a = comparison();
      if (!eat(',')) fail("expected ','");
      int64_t b = comparison();
      if (!eat(')')) fail("missing ')'");
      if (name == "cdiv") {
        if (b <= 0) throw InputError(file_, "a block size is zero (" + std::string(s_) + ")");
        return a / b + (a % b != 0 ? 1 : 0);
      }
      if (name == "max") return std::max(a, b);
      if (name == "min") return std::min(a, b);
      fail("unknown function " + std::string(name));
    }
    auto it = vars_.find(name);
    if (it == vars_.end()) fail("unknown variable '" + std::string(name) + "'");
    return it->second;
  }
};

int64_t eval(std::string_view expr, const Vars& vars, const std::string& file) { return ExprEval(expr, vars, file).run(); }

}  // namespace

int64_t eval_json(const Json& e, const Vars& vars, const std::string& file) {
  if (e.is_number_integer()) return e.get<int64_t>();
  if (e.is_string()) return eval(e.get<std::string>(), vars, file);
  throw InputError("catalog/architectures.json", "an expression must be a string or an integer, not " + e.dump());
}

std::string show(const Json& v) {
  std::string d = v.dump();
  return d.size() > 40 ? d.substr(0, 37) + "..." : d;
}

const Json* lookup(const hf::Config& cfg, const std::string& path) {
  auto walk = [&cfg](const Json* cur, const std::string& p) -> const Json* {
    size_t start = 0;
    while (cur && start <= p.size()) {
      size_t dot = p.find('.', start);
      std::string key = p.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      // A nested config of the wrong type ("ffn_config": "x") names itself,
      // not the count the family would have read from it.
      if (!cur->is_object() && start == 0) return nullptr;
      if (!cur->is_object())
        throw InputError(cfg.file, "'" + p.substr(0, start - 1) + "' must be an object, not " + show(*cur));
      auto it = cur->find(key);
      if (it == cur->end() || it->is_null()) return nullptr;
      cur = &*it;
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    return cur;
  };
  if (!path.empty() && path[0] == '/') return walk(&cfg.raw, path.substr(1));
  if (const Json* v = walk(&cfg.text(), path)) return v;
  return cfg.text_key.empty() ? nullptr : walk(&cfg.raw, path);
}

}  // namespace quarkplan::structure_detail
