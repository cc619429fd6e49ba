// Estimates as people read them: weight size per scheme, KV cache, and how
// many accelerators calibration and serving need (binary units throughout).
#pragma once
#include <string>

#include "common/json.h"
#include "ui/terminal.h"

namespace quarkplan::ui {

// Wrapped to `width` columns (the terminal's).
std::string render_estimates(const Json& estimates, const Style& style, int width = 80);

// A shell command (lines ending in " \\") for a `width`-column terminal: an
// option whose value would overflow puts the value on the next line, so no
// word is split and the text still runs as printed.
std::string fit_command(const std::string& text, int width);

}  // namespace quarkplan::ui
