// `quarkplan report`: one self-contained HTML page of a plan — the model card,
// the decision table (each rule ID linked to its documentation), the risks and
// open questions, charts drawn here as inline SVG (weight size per scheme,
// memory fit, what gets quantized, weight outliers) and the exact Quark
// invocation with a copy button. No network, fonts or scripts from elsewhere:
// the page opens from disk anywhere, prints, and follows light/dark mode.
//
// The page shows whatever the plan and its analysis hold; a chart without data
// is left out with a sentence saying why. Every string from the plan or the
// analysis is escaped.
#pragma once
#include <string>

#include "common/json.h"

namespace quarkplan::ui {

struct ReportInput {
  Json plan;                  // a quant_plan.json (schema-valid)
  std::string plan_path;      // shown on the page
  Json analysis;              // the model_analysis.json it points to, or null
  std::string analysis_note;  // why the analysis is null (a sentence)
  std::string catalog_dir;    // --catalog, for the Quark invocation
  std::string tool_version;   // e.g. "quarkplan 0.1.0"
  std::string integrity;      // the integrity check's one-line summary ("" when not run)
  bool verified = true;       // false: confirmed by its author but not re-checked
  Json verification;          // quarkplan verify's JSON result (report --verify), or null
};

std::string render_report(const ReportInput& in);

}  // namespace quarkplan::ui
