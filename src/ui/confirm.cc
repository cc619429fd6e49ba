#include "ui/confirm.h"

#include <editline/readline.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include "plan/rules.h"

namespace quarkplan::ui {

namespace {

std::vector<std::string> g_words;  // completion candidates for the current plan

char* completion_generator(const char* text, int state) {
  static size_t index;
  static std::string prefix;
  if (state == 0) {
    index = 0;
    prefix = text;
  }
  while (index < g_words.size()) {
    const std::string& w = g_words[index++];
    if (w.compare(0, prefix.size(), prefix) == 0) return ::strdup(w.c_str());
  }
  return nullptr;
}

char** complete(const char* text, int, int) {
  rl_attempted_completion_over = 1;
  return rl_completion_matches(text, completion_generator);
}

// Re-layout on resize. libedit reads keys through this function: it first
// replays the words typed before a resize, then waits for a key or a resize.
// A resize to a new width ends the line early (as if Enter was pressed) with
// `g_resize_pending` set, so the loop can redraw the table and offer the
// words again.
volatile std::sig_atomic_t g_winch = 0;
int g_fallback_width = 80;
int g_laid_out_width = 80;
bool g_resize_pending = false;
std::string g_replay;
size_t g_replay_pos = 0;

void on_winch(int) { g_winch = 1; }

int current_width() {
  return is_terminal(stdout) ? terminal_width(stdout) : g_fallback_width;
}

int read_key(FILE* in) {
  if (g_replay_pos < g_replay.size()) return static_cast<unsigned char>(g_replay[g_replay_pos++]);
  const int fd = ::fileno(in);
  while (true) {
    if (g_winch) {
      g_winch = 0;
      if (current_width() != g_laid_out_width) {
        g_resize_pending = true;
        return '\n';
      }
    }
    struct pollfd p {fd, POLLIN, 0};
    // The timeout also catches a resize whose signal went elsewhere.
    int r = ::poll(&p, 1, 500);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) {
      if (current_width() != g_laid_out_width) g_winch = 1;
      continue;
    }
    unsigned char c;
    ssize_t n = ::read(fd, &c, 1);
    if (n == 1) return c;
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    return -1;  // end of input
  }
}

}  // namespace

ConfirmResult confirm_loop(const Json& analysis, PlanRequest req, const Style& style, int width) {
  // Tab completes decision keys, presets / schemes and the answers.
  const std::string flow = plan_flow(analysis);
  const Catalog& cat = Catalog::load(req.catalog_dir, req.quark_release);
  g_words = {"yes", "no", "help", "show", "insist", "preset ", "scheme ", "target ", "hardware "};
  for (const auto& k : flow == "onnx" ? onnx_decision_keys() : torch_decision_keys()) g_words.push_back(k + "=");
  if (flow == "onnx") {
    for (const auto& p : cat.onnx()["presets"]) {
      g_words.push_back("preset=" + p["name"].get<std::string>());
      g_words.push_back(p["name"].get<std::string>());  // after "preset " or when '=' breaks words
    }
    for (const auto& m : cat.onnx()["calibration_methods"]) {
      g_words.push_back("calibration.method=" + m["name"].get<std::string>());
      g_words.push_back(m["name"].get<std::string>());
    }
  } else {
    for (const auto& s : cat.torch()["schemes"]) {
      g_words.push_back("global_scheme=" + s["name"].get<std::string>());
      g_words.push_back(s["name"].get<std::string>());
    }
    for (const auto& a : cat.torch()["algorithms"]) {
      g_words.push_back("algorithm=" + a["name"].get<std::string>());
      g_words.push_back(a["name"].get<std::string>());
    }
    for (const auto& a : cat.hardware()["accelerators"]) g_words.push_back(a["name"].get<std::string>());
  }
  rl_attempted_completion_function = complete;
  rl_completer_word_break_characters = const_cast<char*>(" ");
  rl_getc_function = read_key;  // before libedit initializes (using_history)
  using_history();
  g_fallback_width = width;
  struct sigaction sa {}, old {};
  sa.sa_handler = on_winch;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a resize interrupts the wait for a key
  ::sigaction(SIGWINCH, &sa, &old);
  auto width_now = [] {
    g_laid_out_width = current_width();
    return g_laid_out_width;
  };
  auto read_line = [](const std::string& prompt, std::string& line) {
    g_replay = line;
    g_replay_pos = 0;
    g_resize_pending = false;
    char* s = ::readline(prompt.c_str());
    g_replay.clear();
    g_replay_pos = 0;
    if (!s) {
      std::fputs("\n", stdout);
      return LineStatus::kEnd;
    }
    line = s;
    std::free(s);
    if (g_resize_pending) {
      g_resize_pending = false;
      return LineStatus::kResized;
    }
    if (!line.empty()) add_history(line.c_str());
    return LineStatus::kLine;
  };
  ConfirmResult r = confirm_loop_with(analysis, std::move(req), style, width_now, stdout, read_line);
  ::sigaction(SIGWINCH, &old, nullptr);
  return r;
}

}  // namespace quarkplan::ui
