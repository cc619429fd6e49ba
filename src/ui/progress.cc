#include "ui/progress.h"

#include <algorithm>

#include "common/units.h"
#include "ui/terminal.h"

namespace quarkplan::ui {

ProgressBar::ProgressBar(FILE* out, bool enabled, std::chrono::milliseconds delay)
    : out_(out), enabled_(enabled), delay_(delay), start_(std::chrono::steady_clock::now()) {}

ProgressBar::~ProgressBar() { finish(); }

std::string ProgressBar::render(const std::string& stage_in, uint64_t done, uint64_t total, int width_in) {
  // The line never reaches the last column (a terminal wraps there): on a
  // narrow terminal the byte counts go first, then the stage is shortened.
  const int width = std::max(20, width_in) - 1;
  double frac = total ? std::min(1.0, static_cast<double>(done) / static_cast<double>(total)) : 0.0;
  std::string pct = "  " + std::to_string(static_cast<int>(frac * 100)) + "%";
  std::string stage = stage_in;
  std::string tail = pct + "  " + format_bytes(done) + " / " + format_bytes(total);
  constexpr int kMinBar = 10;
  auto room = [&] { return width - static_cast<int>(stage.size() + tail.size()) - 3; };  // " [" and "]"
  if (room() < kMinBar) tail = pct;
  if (room() < kMinBar) stage = stage.substr(0, static_cast<size_t>(std::max(0, width - static_cast<int>(tail.size()) - 3 - kMinBar)));
  int bar = std::max(1, std::min(40, room()));
  int filled = static_cast<int>(frac * bar);
  return stage + " [" + std::string(static_cast<size_t>(filled), '#') + std::string(static_cast<size_t>(bar - filled), '.') + "]" + tail;
}

void ProgressBar::update(const std::string& stage, uint64_t done, uint64_t total) {
  if (!enabled_) return;
  if (!drawn_ && std::chrono::steady_clock::now() - start_ < delay_) return;
  drawn_ = true;
  std::fprintf(out_, "\r\033[K%s", render(stage, done, total, terminal_width(out_)).c_str());
  std::fflush(out_);
}

void ProgressBar::finish() {
  if (!drawn_) return;
  std::fputs("\r\033[K", out_);
  std::fflush(out_);
  drawn_ = false;
}

std::function<void(const std::string&, uint64_t, uint64_t)> ProgressBar::callback() {
  return [this](const std::string& stage, uint64_t done, uint64_t total) { update(stage, done, total); };
}

bool progress_enabled(FILE* out, bool json) { return !json && is_terminal(out); }

}  // namespace quarkplan::ui
