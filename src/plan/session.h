// session_context.json updates (SPEC §2): new open questions and constraints
// appended, model_analysis_ref / quant_plan_ref set, everything else kept.
#pragma once
#include <string>

#include "common/json.h"

namespace quarkplan {

// Returns the updated session (pure; the caller writes it).
Json updated_session(const Json& session, const Json& plan, const std::string& analysis_ref, const std::string& plan_ref);
// Reads, validates, updates and atomically rewrites the session file.
void update_session(const std::string& path, const Json& plan, const std::string& /*plan_relative_analysis_ref*/,
                    const std::string& plan_ref, const std::string& analysis_path);

// After intake: sets model_analysis_ref and appends the analysis' high risks as
// constraints for the router (never writes env_context.json).
void update_session_after_intake(const std::string& path, const Json& analysis, const std::string& analysis_path);

}  // namespace quarkplan
