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

// Reads answers from the terminal (libedit) until confirmed or declined.
ConfirmResult confirm_loop(const Json& analysis, PlanRequest req, const Style& style, int width);

// The same loop over any line source (tests drive it without a terminal):
// `read_line` returns false at end of input (a decline).
template <typename ReadLine>
ConfirmResult confirm_loop_with(const Json& analysis, PlanRequest req, const Style& style, int width, FILE* out, ReadLine&& read_line);

}  // namespace quarkplan::ui

#include "ui/confirm_impl.h"
