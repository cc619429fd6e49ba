// The progress bar: drawn only when enabled and after its delay, erased when done.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "ui/progress.h"

namespace {

std::string captured(FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  char buf[256];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  return s;
}

}  // namespace

TEST(ProgressBar, RendersStagePercentAndBinaryUnits) {
  std::string line = quarkplan::ui::ProgressBar::render("Scanning weights", 512ull << 20, 1ull << 30, 80);
  EXPECT_NE(line.find("Scanning weights ["), std::string::npos) << line;
  EXPECT_NE(line.find("50%"), std::string::npos) << line;
  EXPECT_NE(line.find("MiB / "), std::string::npos) << line;  // format_bytes: binary IEC units
  EXPECT_NE(line.find("GiB"), std::string::npos) << line;
  EXPECT_LE(line.size(), 80u);
}

TEST(ProgressBar, SilentWhenDisabledOrShort) {
  FILE* f = std::tmpfile();
  {
    quarkplan::ui::ProgressBar off(f, false, std::chrono::milliseconds(0));
    off.update("Scanning weights", 1, 2);
    quarkplan::ui::ProgressBar quick(f, true, std::chrono::hours(1));  // a step shorter than its delay
    quick.update("Scanning weights", 1, 2);
    EXPECT_FALSE(quick.drawn());
  }
  EXPECT_EQ(captured(f), "");
  std::fclose(f);
  // Not a terminal (a file, a pipe, CI): never enabled.
  FILE* g = std::tmpfile();
  EXPECT_FALSE(quarkplan::ui::progress_enabled(g, false));
  EXPECT_FALSE(quarkplan::ui::progress_enabled(g, true));
  std::fclose(g);
}

TEST(ProgressBar, DrawsAfterItsDelayAndErasesItself) {
  FILE* f = std::tmpfile();
  {
    quarkplan::ui::ProgressBar bar(f, true, std::chrono::milliseconds(0));
    auto cb = bar.callback();
    cb("Scanning weights", 1, 4);
    EXPECT_TRUE(bar.drawn());
  }
  std::string out = captured(f);
  EXPECT_NE(out.find("25%"), std::string::npos) << out;
  EXPECT_EQ(out.substr(out.size() - 4), "\r\033[K");  // erased at the end
  std::fclose(f);
}

// On a narrow terminal the bar shrinks, then drops the byte counts, then
// shortens the stage: it never reaches the terminal's last column.
TEST(ProgressBar, FitsNarrowTerminals) {
  for (int width : {20, 30, 40, 50, 60, 80, 120}) {
    std::string line = quarkplan::ui::ProgressBar::render("Scanning weights", 512ull << 20, 1ull << 30, width);
    EXPECT_LT(line.size(), static_cast<size_t>(width)) << width << ": " << line;
    EXPECT_NE(line.find("50%"), std::string::npos) << width << ": " << line;
    EXPECT_NE(line.find("[#"), std::string::npos) << width << ": " << line;
  }
  EXPECT_NE(quarkplan::ui::ProgressBar::render("Scanning weights", 512ull << 20, 1ull << 30, 60).find("MiB / "), std::string::npos);
}
