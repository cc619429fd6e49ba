#include "ui/estimates_view.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/units.h"
#include "ui/decision_table.h"

namespace quarkplan::ui {

namespace {
uint64_t u64(const Json& j, const char* k) { return j.contains(k) && j[k].is_number_unsigned() ? j[k].get<uint64_t>() : 0; }
int64_t i64(const Json& j, const char* k) { return j.contains(k) && j[k].is_number_integer() ? j[k].get<int64_t>() : 0; }
}  // namespace

std::string render_estimates(const Json& est, const Style& st, int width_in) {
  const size_t width = static_cast<size_t>(std::max(20, width_in > 0 ? width_in : 80));
  auto plural = [](int64_t n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); };
  std::string out;
  if (!est.is_object()) return out;
  if (est.contains("weights") && est["weights"].is_array() && !est["weights"].empty()) {
    for (const auto& l : wrap("Weight size per scheme:", width)) out += st.bold(l) + "\n";
    // The name column fits the longest name (ONNX presets like INT16_TRANSFORMER_ACCURATE).
    size_t name_w = 14;
    for (const auto& w : est["weights"]) name_w = std::max(name_w, w.value("scheme", "?").size());
    // The numbers on the scheme's line; how they were estimated wrapped below
    // it, so no line is wider than the terminal.
    for (const auto& w : est["weights"]) {
      std::string row = fmt::format("  {:<{}} {:>10}  {:6.3f} bits/weight", w.value("scheme", "?"), name_w, format_bytes(u64(w, "bytes")),
                                    w.value("bits_per_weight_effective", 0.0));
      if (row.size() <= width) {
        out += row + "\n";
      } else {  // a narrow terminal: the same facts without the column padding
        std::string text = fmt::format("{} {} {:.3f} bits/weight", w.value("scheme", "?"), format_bytes(u64(w, "bytes")), w.value("bits_per_weight_effective", 0.0));
        for (const auto& l : wrap_indented(text, width, 2)) out += l + "\n";
      }
      std::string method = w.value("method", "");
      if (!method.empty())
        for (const auto& l : wrap_indented("(" + method + ")", width, 4)) out += l + "\n";
    }
  }
  if (est.contains("kv_cache") && est["kv_cache"].is_object()) {
    const Json& kv = est["kv_cache"];
    const uint64_t state = u64(kv, "state_bytes_per_sequence");
    std::string text = fmt::format("KV cache: {}, {} per token{}, {} at {} tokens x batch {}", kv.value("dtype", "?"), format_bytes(u64(kv, "bytes_per_token")),
                                   state ? fmt::format(" + {} of linear-attention/Mamba state per sequence", format_bytes(state)) : std::string(),
                                   format_bytes(u64(kv, "bytes")), i64(kv, "context_length"), i64(kv, "batch"));
    auto lines = wrap_indented(text, width, 2);
    for (size_t i = 0; i < lines.size(); ++i) {
      std::string l = i == 0 ? lines[i].substr(2) : lines[i];
      if (i == 0 && l.rfind("KV cache:", 0) == 0) l = st.bold("KV cache:") + l.substr(9);
      out += l + "\n";
    }
  }
  if (est.contains("fit") && est["fit"].is_object()) {
    const Json& f = est["fit"];
    std::string hw = f.value("accelerator", "?");
    std::string have = f.contains("accelerators_available") && f["accelerators_available"].is_number_integer()
                           ? std::to_string(f["accelerators_available"].get<int64_t>()) + " available"
                           : "count not given";
    // Without a count there is nothing to fit against: the count needed is the answer. A streamed
    // calibration (file-to-file, per-block, CPU offload) holds no whole model on the accelerators.
    const bool counted = f.contains("accelerators_available") && f["accelerators_available"].is_number_integer();
    const int64_t needed = std::max(i64(f, "deployment_accelerators"), f.contains("calibration_streamed") ? int64_t{0} : i64(f, "calibration_accelerators"));
    std::string verdict = !counted ? "needs " + plural(needed, "accelerator", "accelerators") + " (give --gpus N to check)."
                          : f.value("fits", false) ? "fits."
                                                   : "DOES NOT FIT the accelerators available.";
    std::string calib = f.contains("calibration_streamed") && f["calibration_streamed"].is_string()
                            ? "calibration streamed (" + f["calibration_streamed"].get<std::string>() + ", about one shard or block in memory)"
                            : fmt::format("calibration {} -> {}", format_bytes(u64(f, "calibration_bytes")), plural(i64(f, "calibration_accelerators"), "accelerator", "accelerators"));
    std::string text = fmt::format("Fit: {} x {} each ({}): {}; serving {} -> {}; {}", hw, format_bytes(u64(f, "memory_bytes")), have, calib,
                                   format_bytes(u64(f, "deployment_bytes")), plural(i64(f, "deployment_accelerators"), "accelerator", "accelerators"), verdict);
    auto lines = wrap_indented(text, width, 2);
    for (size_t i = 0; i < lines.size(); ++i) {
      std::string l = i == 0 ? lines[i].substr(2) : lines[i];  // the first line starts at the margin
      if (i == 0 && l.rfind("Fit:", 0) == 0) l = st.bold("Fit:") + l.substr(4);
      out += l + "\n";
    }
  }
  return out;
}

std::string fit_command(const std::string& text, int width_in) {
  const size_t width = static_cast<size_t>(std::max(20, width_in > 0 ? width_in : 80));
  std::string out;
  size_t s = 0;
  while (s < text.size()) {
    size_t nl = text.find('\n', s);
    std::string line = text.substr(s, nl == std::string::npos ? std::string::npos : nl - s);
    s = nl == std::string::npos ? text.size() : nl + 1;
    const std::string end = nl == std::string::npos ? "" : "\n";
    size_t indent = line.find_first_not_of(' ');
    if (display_width(line) <= width || indent == std::string::npos) {
      out += line + end;
      continue;
    }
    // A comment (Python's or the shell's) does not continue with a backslash:
    // it is wrapped into comment lines at the line's indent, its words in
    // order; a comment after code moves above that code.
    const std::string pad = line.substr(0, indent);
    auto comment_lines = [&](size_t from) {  // the comment's words, wrapped as "# " lines
      const std::string prefix = pad + "# ";
      const size_t from_text = line.find_first_not_of(" #", from);
      std::string lines;
      for (const auto& l : wrap(from_text == std::string::npos ? "" : line.substr(from_text),
                                width > prefix.size() + 8 ? width - prefix.size() : 8))
        lines += (lines.empty() ? "" : "\n") + prefix + l;
      return lines.empty() ? pad + "#" : lines;
    };
    if (line[indent] == '#') {
      out += comment_lines(indent) + end;
      continue;
    }
    {
      // The first '#' outside quotes that starts a word begins a trailing comment.
      char q = 0;
      size_t hash = std::string::npos;
      for (size_t i = indent; i < line.size() && hash == std::string::npos; ++i) {
        char c = line[i];
        if (q) {
          if (c == q) q = 0;
        } else if (c == '\'' || c == '"') {
          q = c;
        } else if (c == '#' && line[i - 1] == ' ') {
          hash = i;
        }
      }
      // After a backslash-continued line a comment line would end the statement
      // (Python) or the command (shell): that line is left as it is.
      const bool after_continuation = out.size() >= 2 && out.compare(out.size() - 2, 2, "\\\n") == 0;
      if (hash != std::string::npos && after_continuation) {
        out += line + end;
        continue;
      }
      if (hash != std::string::npos) {
        out += comment_lines(hash) + "\n";
        size_t code_end = line.find_last_not_of(' ', hash - 1);
        line = line.substr(0, code_end + 1);
        if (display_width(line) <= width) {
          out += line + end;
          continue;
        }
      }
    }
    // Shell words (quotes kept whole), packed greedily; every break is " \"
    // at the end of a line, so the command still runs as printed.
    bool continued = line.size() >= 2 && line.compare(line.size() - 2, 2, " \\") == 0;
    std::string body = line.substr(indent, line.size() - indent - (continued ? 2 : 0));
    std::vector<std::string> words;
    std::string w;
    char quote = 0;
    for (char c : body) {
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
    const size_t lead = words.empty() ? 0 : display_width(words[0]) + 2;
    std::string cur = std::string(std::min(indent, width > lead ? width - lead : 0), ' ');
    bool first = true;
    for (const auto& word : words) {
      if (!first && display_width(cur) + 1 + display_width(word) + 2 > width) {
        out += cur + " \\\n";
        const size_t room = width > display_width(word) + 2 ? width - display_width(word) - 2 : 0;  // less indent before a long word
        cur = std::string(std::min(indent + 4, room), ' ') + word;
      } else {
        cur += (first ? "" : " ") + word;
      }
      first = false;
    }
    out += cur + (continued ? " \\" : "") + end;
  }
  return out;
}

}  // namespace quarkplan::ui
