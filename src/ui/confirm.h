// The interactive confirmation loop (SPEC §1): the decision table is shown,
// then "Confirm this plan? Any changes?" — yes, no, KEY=VALUE edits, shorthands,
// insist, help, show — with line editing, history and tab completion (libedit).
// Every edit re-runs all rules and the table is shown again, changed rows marked.
#pragma once
#include <cstdio>
#include <string>

#include "common/json.h"
#include "plan/planner.h"
#include "ui/terminal.h"

namespace quarkplan::ui {

struct ConfirmResult {
  bool declined = false;
  PlanOutcome outcome;
};

// Reads answers from the terminal (libedit) until confirmed or declined. The
// table is laid out for the terminal's width, and laid out again when the
// terminal is resized while the prompt waits (SIGWINCH); `width` is the width
// when the terminal does not report one.
ConfirmResult confirm_loop(const Json& analysis, PlanRequest req, const Style& style, int width);

// What a line source returns: a line, the end of input (a decline), or a
// resize of the terminal before the line was finished (the words typed so far
// are handed back in `line` and offered again after the table is redrawn).
enum class LineStatus { kLine, kEnd, kResized };

// The same loop over any line source (tests drive it without a terminal):
// `width()` gives the width to lay out for; `read_line(prompt, line)` reads
// one answer into `line`, which holds on entry the text to start from.
template <typename Width, typename ReadLine>
ConfirmResult confirm_loop_with(const Json& analysis, PlanRequest req, const Style& style, Width&& width, FILE* out, ReadLine&& read_line);

}  // namespace quarkplan::ui

#include "ui/confirm_impl.h"
