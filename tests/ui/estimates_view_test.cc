// The Quark command `explain` prints, fitted to the terminal: every break is a
// shell line continuation, so the words (quotes kept whole) are the same.
#include "ui/estimates_view.h"

#include <gtest/gtest.h>

#include <sstream>

namespace {

std::vector<std::string> shell_words(const std::string& text) {
  std::string joined;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "\\\n") == 0) {
      joined += ' ';
      ++i;
      continue;
    }
    joined += text[i] == '\n' ? ' ' : text[i];
  }
  std::vector<std::string> words;
  std::string w;
  char quote = 0;
  for (char c : joined) {
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == ' ') {
      if (!w.empty()) words.push_back(w), w.clear();
      continue;
    }
    w += c;
  }
  if (!w.empty()) words.push_back(w);
  return words;
}

TEST(FitCommand, BreaksOnlyBetweenShellWordsWithContinuations) {
  const std::string cmd =
      "CUDA_VISIBLE_DEVICES=0,1 python quantize_quark.py \\\n"
      "    --model_dir /models/meta-llama/Llama-3.1-70B-Instruct \\\n"
      "    --exclude_layers 'lm_head' '*mlp.gate' \\\n"
      "    --quant_algo_config_file awq \"/a path/with spaces/awq.json\" \\\n"
      "    --multi_gpu";
  const auto words = shell_words(cmd);
  for (int width = 20; width <= 120; ++width) {
    SCOPED_TRACE(width);
    std::string fitted = quarkplan::ui::fit_command(cmd, width);
    EXPECT_EQ(shell_words(fitted), words) << fitted;
    std::istringstream lines(fitted);
    for (std::string l; std::getline(lines, l);) {
      if (static_cast<int>(l.size()) <= width) continue;
      std::string body = l.substr(l.find_first_not_of(' '));
      if (body.size() > 2 && body.compare(body.size() - 2, 2, " \\") == 0) body.resize(body.size() - 2);
      EXPECT_EQ(shell_words(body).size(), 1u) << "only a word wider than the terminal overflows: " << l;
    }
  }
  EXPECT_EQ(quarkplan::ui::fit_command(cmd, 200), cmd);  // wide enough: unchanged
}

// A comment does not continue with a trailing backslash in Python or the
// shell: a long one becomes several comment lines, words in order, no "\\".
TEST(FitCommand, WrapsCommentsIntoCommentLines) {
  const std::string code =
      "config = QConfig(\n"
      "    # A8W8 stays a legacy preset: Quark 0.12 has no QConfig spec for its float-scale INT8 activations on this route\n"
      "    global_config=spec)\n"
      "quant_config = get_default_config(\"A8W8\")  # a deep copy of the preset, which stays untouched";
  for (int width = 20; width <= 120; ++width) {
    SCOPED_TRACE(width);
    std::string fitted = quarkplan::ui::fit_command(code, width);
    std::istringstream lines(fitted);
    std::string words;
    for (std::string l; std::getline(lines, l);) {
      std::string body = l.substr(l.find_first_not_of(' '));
      if (body[0] != '#') {
        if (auto at = body.find("  # "); at != std::string::npos) words += body.substr(at + 4) + " ";  // fits beside its code
        continue;
      }
      // Each comment line keeps its code line's indent: 4 inside QConfig(, 0 at the top.
      EXPECT_TRUE(l.rfind("    # ", 0) == 0 || l.rfind("# ", 0) == 0) << l;
      EXPECT_NE(l.back(), '\\') << l;
      words += body.substr(2) + " ";
    }
    EXPECT_EQ(words, "A8W8 stays a legacy preset: Quark 0.12 has no QConfig spec for its float-scale INT8 activations on this route "
                     "a deep copy of the preset, which stays untouched ");
    // Code keeps its words; a trailing comment that does not fit moves above its line.
    if (width < 70) {
      EXPECT_NE(fitted.find("# a deep copy"), std::string::npos) << fitted;
    }
    if (width > 45) {  // narrower, the code itself breaks with a continuation
      EXPECT_NE(fitted.find("\nquant_config = get_default_config(\"A8W8\")"), std::string::npos) << fitted;
    }
  }
}

}  // namespace
