// Runs a command body and maps every way it can end onto the exit codes of
// SPEC §1: a one-line message per problem on stderr and, with --json, exactly
// one {"error": {"code", "message", "rule", "hint"}} object on stdout. stdout
// is flushed before anything reaches stderr, so `2>&1` keeps the order.
#pragma once
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/json.h"

namespace quarkplan {

// A command that ends with a known outcome other than success: a refusal (4),
// a conflict or invalid plan (2), a decline (5).
struct CommandFailure : std::exception {
  int code = kExitBadInput;
  std::string message;             // the first line (and the JSON message)
  std::string rule;                // the rule that decided, or ""
  std::string hint;                // what to do, or ""
  std::vector<std::string> lines;  // every line for stderr; {message} when empty
  Json extra = Json::object();     // more fields for the JSON error
  const char* what() const noexcept override { return message.c_str(); }
};

// Writes human text to stderr after flushing stdout.
inline void print_stderr(const std::string& text) {
  std::fflush(stdout);
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
}

inline void print_json_error(int code, const std::string& message, const std::string& rule, const std::string& hint,
                             const Json& extra = Json::object()) {
  Json e = {{"code", code},
            {"message", message},
            {"rule", rule.empty() ? Json(nullptr) : Json(rule)},
            {"hint", hint.empty() ? Json(nullptr) : Json(hint)}};
  for (auto& [k, v] : extra.items()) e[k] = v;
  std::fputs(dump_json(Json{{"error", e}}).c_str(), stdout);
  std::fflush(stdout);
}

template <typename Fn>
int guarded(bool json, Fn&& body) {
  auto fail = [&](int code, const std::string& prefix, const std::string& message, const std::string& rule, const std::string& hint,
                  const std::vector<std::string>& lines, const Json& extra) {
    std::string text;
    for (const auto& l : lines.empty() ? std::vector<std::string>{message} : lines) text += "quarkplan: " + prefix + l + "\n";
    print_stderr(text);
    if (json) print_json_error(code, message, rule, hint, extra);
    return code;
  };
  try {
    return body();
  } catch (const CommandFailure& f) {
    return fail(f.code, "", f.message, f.rule, f.hint, f.lines, f.extra);
  } catch (const InputError& e) {
    return fail(kExitBadInput, "error: ", e.what(), "", "", {}, e.errors.empty() ? Json::object() : Json{{"errors", e.errors}});
  } catch (const UsageError& e) {
    return fail(kExitBadInput, "error: ", e.what(), "", "Run 'quarkplan --help' for usage.", {}, Json::object());
  } catch (const std::exception& e) {
    return fail(kExitInternal, "internal error: ", e.what(), "", "This is a bug in quarkplan: please report it with the command line.", {},
                Json::object());
  }
}

}  // namespace quarkplan
