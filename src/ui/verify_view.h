// The terminal view of a verify result: one line per check (kept, BROKEN,
// not checked), then every broken promise with what the plan said and what
// the export holds, wrapped to the terminal.
#pragma once
#include <string>

#include "ui/terminal.h"
#include "verify/verify.h"

namespace quarkplan::ui {

std::string render_verify(const verify::Result& result, const Style& style, int width);

}  // namespace quarkplan::ui
