// Estimates as people read them: weight size per scheme, KV cache, and how
// many accelerators calibration and serving need (binary units throughout).
#pragma once
#include <string>

#include "common/json.h"
#include "ui/terminal.h"

namespace quarkplan::ui {

std::string render_estimates(const Json& estimates, const Style& style);

}  // namespace quarkplan::ui
