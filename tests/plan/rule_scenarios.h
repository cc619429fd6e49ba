// One scenario per registered rule, kept beside its rule family: each
// tests/plan/{onnx,torch}/<family>_rules_test.cc returns its family's list, and
// tests/plan/rules_test.cc runs them all (All/RuleScenario.Fires/<rule>) and checks
// that no registered rule lacks one. The helpers the scenarios share are here.
#pragma once
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "plan/plan_test_support.h"

namespace qp_test::rule_scenarios {

inline quarkplan::PlanOutcome plan(const quarkplan::Json& a, std::function<void(quarkplan::PlanRequest&)> setup = {}) {
  quarkplan::PlanRequest r;
  r.confirmed = true;
  r.calib_data = "calibration_set/";  // ONNX plans without calibration data stay drafts
  if (setup) setup(r);
  return quarkplan::make_plan(a, r);
}

inline quarkplan::Json with(quarkplan::Json a, const std::string& path, const quarkplan::Json& value) {
  quarkplan::Json* cur = &a;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (dot == std::string::npos) {
      (*cur)[key] = value;
      return a;
    }
    cur = &(*cur)[key];
    start = dot + 1;
  }
}

inline bool has_question(const quarkplan::PlanOutcome& o, const std::string& word) {
  for (const auto& q : o.plan["open_questions"])
    if (q.get<std::string>().find(word) != std::string::npos) return true;
  return false;
}

struct Scenario {
  const char* rule;
  std::function<void()> check;
};

inline void PrintTo(const Scenario& s, std::ostream* os) { *os << s.rule; }

// Each family's scenarios, in the file named after its source (src/plan/onnx/npu_rules.cc:
// tests/plan/onnx/npu_rules_test.cc).
std::vector<Scenario> onnx_target_preset_scenarios();
std::vector<Scenario> onnx_calibration_scenarios();
std::vector<Scenario> onnx_algorithm_scenarios();
std::vector<Scenario> onnx_npu_scenarios();
std::vector<Scenario> onnx_npu_generation_scenarios();
std::vector<Scenario> onnx_target_kind_scenarios();
std::vector<Scenario> onnx_interface_scenarios();
std::vector<Scenario> onnx_per_channel_scenarios();
std::vector<Scenario> onnx_layer_preset_scenarios();
std::vector<Scenario> onnx_option_scenarios();
std::vector<Scenario> onnx_estimate_scenarios();
std::vector<Scenario> torch_source_scenarios();
std::vector<Scenario> torch_hardware_scheme_scenarios();
std::vector<Scenario> torch_exclusion_scenarios();
std::vector<Scenario> torch_algorithm_calibration_scenarios();
std::vector<Scenario> torch_export_device_scenarios();
std::vector<Scenario> torch_fit_scenarios();
std::vector<Scenario> torch_serve_scenarios();
std::vector<Scenario> release_scenarios();

}  // namespace qp_test::rule_scenarios
