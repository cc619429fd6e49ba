// A quant_plan.json read back from disk with the analysis it points to
// (model.analysis_ref, relative to the plan's folder), for the commands that
// show a plan (`report`; `explain` reads it the same way).
#pragma once
#include <string>

#include "common/json.h"

namespace quarkplan {

struct LoadedPlan {
  Json plan;                  // validated against schemas/quant_plan.schema.json
  Json analysis;              // null when the analysis is missing, unreadable or invalid
  std::string analysis_path;  // where analysis_ref points
  std::string analysis_note;  // why `analysis` is null, as a sentence; empty otherwise
};

// Throws InputError when the plan is unreadable or not a valid quant_plan; a
// missing or broken analysis is not an error (the note says what happened).
LoadedPlan load_plan_file(const std::string& path);

// The analysis `plan` points to, read relative to `plan_path`'s folder.
void load_plan_analysis(LoadedPlan& lp, const std::string& plan_path);

}  // namespace quarkplan
