// A progress bar on a terminal for long steps (the --weight-stats scan). It
// appears only when the stream is a terminal and the step has run for more
// than a second, and it erases itself when done, so short runs, pipes, CI logs
// and --json output never see it.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

namespace quarkplan::ui {

class ProgressBar {
 public:
  // `enabled` false: the bar never draws (not a terminal, or --json).
  ProgressBar(FILE* out, bool enabled, std::chrono::milliseconds delay = std::chrono::milliseconds(1000));
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void update(const std::string& stage, uint64_t done, uint64_t total);
  void finish();  // erases the bar if it was drawn
  bool drawn() const { return drawn_; }

  // The library's progress callback, bound to this bar.
  std::function<void(const std::string&, uint64_t, uint64_t)> callback();

  // The text of one bar line, e.g. "Scanning weights [#####.....]  52%  1.1 GiB / 2.1 GiB".
  static std::string render(const std::string& stage, uint64_t done, uint64_t total, int width);

 private:
  FILE* out_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::milliseconds delay_;
  std::chrono::steady_clock::time_point start_;
};

// True when a progress bar may draw on `out`: a terminal, and not --json.
bool progress_enabled(FILE* out, bool json);

}  // namespace quarkplan::ui
