// Terminal facts for the UI layer: whether a stream is a terminal, whether to
// use colour (never with NO_COLOR set or off a terminal), and its width.
#pragma once
#include <cstdio>
#include <string>

namespace quarkplan::ui {

bool is_terminal(FILE* f);
bool use_color(FILE* f);
// Narrowest width laid out; a terminal narrower than this gets this width.
constexpr int kMinTerminalWidth = 20;
int terminal_width(FILE* f);  // the real width (at least kMinTerminalWidth); 80 when unknown

struct Style {
  bool color = false;
  std::string bold(const std::string& s) const { return color ? "\033[1m" + s + "\033[0m" : s; }
  std::string red(const std::string& s) const { return color ? "\033[31m" + s + "\033[0m" : s; }
  std::string yellow(const std::string& s) const { return color ? "\033[33m" + s + "\033[0m" : s; }
  std::string green(const std::string& s) const { return color ? "\033[32m" + s + "\033[0m" : s; }
  std::string dim(const std::string& s) const { return color ? "\033[2m" + s + "\033[0m" : s; }
  std::string cyan(const std::string& s) const { return color ? "\033[36m" + s + "\033[0m" : s; }
};

}  // namespace quarkplan::ui
