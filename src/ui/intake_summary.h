// The intake summary shown on the terminal (quark_contracts.md §2.6 / §2.7).
#pragma once
#include <string>

#include "common/json.h"
#include "ui/terminal.h"

namespace quarkplan::ui {
std::string render_intake_summary(const Json& analysis, const Style& style);
std::string human_bytes(double bytes);
}  // namespace quarkplan::ui
