#include "ui/terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace quarkplan::ui {

bool is_terminal(FILE* f) { return ::isatty(::fileno(f)) == 1; }

bool use_color(FILE* f) {
  const char* nc = std::getenv("NO_COLOR");
  if (nc && *nc) return false;
  const char* term = std::getenv("TERM");
  if (term && std::string(term) == "dumb") return false;
  return is_terminal(f);
}

int terminal_width(FILE* f) {
  // The real width, however narrow, down to kMinTerminalWidth (below it a
  // line holds too little to read); 80 only when nothing says otherwise.
  struct winsize ws {};
  if (::ioctl(::fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return std::max<int>(kMinTerminalWidth, ws.ws_col);
  const char* cols = std::getenv("COLUMNS");
  if (cols) {
    int c = std::atoi(cols);
    if (c > 0) return std::max(kMinTerminalWidth, c);
  }
  return 80;
}

}  // namespace quarkplan::ui
