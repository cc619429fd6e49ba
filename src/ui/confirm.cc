#include "ui/confirm.h"

#include <editline/readline.h>

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

}  // namespace

ConfirmResult confirm_loop(const Json& analysis, PlanRequest req, const Style& style, int width) {
  // Tab completes decision keys, presets / schemes and the answers.
  const std::string flow = plan_flow(analysis);
  const Catalog& cat = Catalog::load(req.catalog_dir);
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
  using_history();
  auto read_line = [](const std::string& prompt, std::string& line) {
    char* s = ::readline(prompt.c_str());
    if (!s) {
      std::fputs("\n", stdout);
      return false;
    }
    line = s;
    if (*s) add_history(s);
    std::free(s);
    return true;
  };
  return confirm_loop_with(analysis, std::move(req), style, width, stdout, read_line);
}

}  // namespace quarkplan::ui
