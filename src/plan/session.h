// session_context.json: creation (`quarkplan session init`) and the updates
// intake and plan make (SPEC §2). Every update is a locked read-merge-replace
// (an advisory lock next to the session, re-read, merge, atomic rename), so
// concurrent quarkplan runs on one session lose nothing.
//
// quarkplan keeps what it added under `quarkplan.artifacts` (one entry per
// plan or analysis it wrote, keyed by its path relative to the session): the
// questions that artifact left open. When an artifact is rewritten, the
// questions it no longer asks are answered and leave `open_questions` (they
// are listed in `quarkplan.closed_questions`); questions asked by other tools
// are never touched. Constraints follow the latest confirmed plan.
#pragma once
#include <string>

#include "common/json.h"

namespace quarkplan {

// A new, schema-valid session. `workflow` empty means quark-torch-ptq (the
// workflow of Quark's current session schema); throws UsageError for a
// workflow the schema does not allow.
Json new_session(const std::string& workflow, const std::string& goal);

// What a plan run tells the session (all paths relative to the session's folder).
struct PlanUpdate {
  Json plan;                 // the plan as written
  std::string plan_ref;      // where it was written
  std::string analysis_ref;  // the analysis it points to
  std::string removed_ref;   // a stale draft the run removed, or ""
};

// The merge itself (pure): the session after `u`. `hardware` is the catalog's
// hardware.json (maps a Torch plan's accelerator to a deployment target).
Json merged_session(const Json& session, const PlanUpdate& u, const Json& hardware);

// Locked update of the session file after a plan was written.
void update_session(const std::string& path, const PlanUpdate& u, const Json& hardware);

// After intake: sets model_analysis_ref and records the analysis' high risks
// as constraints (open questions) for the router; never writes env_context.json.
Json merged_session_after_intake(const Json& session, const Json& analysis, const std::string& analysis_ref);
void update_session_after_intake(const std::string& path, const Json& analysis, const std::string& analysis_path);

// The path of `target` as a session (or plan) stores it: relative to `from_dir`
// and starting with "./" or "../", or absolute when no relative path exists.
std::string relative_ref(const std::string& target, const std::string& from_dir);

}  // namespace quarkplan
