// Plan <-> analysis integrity. A plan written by quarkplan names its model
// (model.model_path), its analysis (model.analysis_ref), the request it was
// made from (`request`) and an `integrity` record:
//   analysis_sha256    SHA-256 of the analysis file's bytes as written
//   model_fingerprint  the model source's fingerprint (artifacts.h)
//   plan_sha256        SHA-256 of the plan itself (canonical JSON with sorted
//                      keys, without `integrity`): an edit made outside
//                      quarkplan changes it
// `explain` and `validate` check all three, then re-run the rules on the
// plan's own request and report every decision that no longer follows. This
// catches mistakes and stale files; it is not a signature (anyone can
// recompute a SHA-256).
#pragma once
#include <string>
#include <vector>

#include "common/json.h"

namespace quarkplan {

// SHA-256 of `plan` without its `integrity` record, over canonical JSON.
std::string plan_digest(const Json& plan);

// Adds the integrity record to a plan about to be written. `analysis_text` is
// the analysis file's exact content; `fingerprint` the model's (null when the
// model cannot be read, e.g. a plan from an analysis whose model moved).
void seal_plan(Json& plan, const std::string& analysis_text, const Json& fingerprint);

struct IntegrityReport {
  bool sealed = false;                // the plan has an integrity record
  bool rules_rechecked = false;       // the rules were re-run and agree
  std::vector<std::string> problems;  // each a sentence; any makes the plan invalid (exit 2)
  std::vector<std::string> notes;     // what could not be checked, and why
  Json analysis;                      // the analysis, when found and unchanged
  std::string analysis_path;
  bool ok() const { return problems.empty(); }
  // One line: "integrity verified: ..." or why not.
  std::string summary() const;
};

// Checks the plan read from `plan_path`; `catalog_dir` overrides the one the
// plan recorded (explain --catalog).
IntegrityReport verify_plan(const std::string& plan_path, const Json& plan, const std::string& catalog_dir = "");

// An analysis checked against its model: a problem when the model changed.
std::vector<std::string> verify_analysis(const std::string& analysis_path, const Json& analysis);

}  // namespace quarkplan
