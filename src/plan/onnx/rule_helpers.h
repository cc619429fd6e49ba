// What every ONNX plan rule reads (quark_contracts.md §4.6, rules 88-116, and the
// ONNX seed): the intake's ONNX facts, the target, architecture and preset, the plan's onnx_specific.
#pragma once
#include <string>

#include "catalog/catalog.h"
#include "common/json.h"
#include "plan/plan_state.h"

namespace quarkplan::onnx_rules::detail {

inline const Json& onnx_facts(const PlanState& s) { return s.analysis["model"]["onnx_specific"]; }
inline std::string target(const PlanState& s) {
  return s.plan["deployment_target"].is_string() ? s.plan["deployment_target"].get<std::string>() : "";
}
inline std::string arch(const PlanState& s) { return onnx_facts(s)["architecture_guess"].get<std::string>(); }
// The architecture the rules plan for: the guess, or "mlp" for a plain stack
// of Gemm/MatMul layers (architecture_guess "unknown", but no question to ask).
inline std::string plan_arch(const PlanState& s) {
  std::string a = arch(s);
  return a == "unknown" && onnx_facts(s).value("architecture_detail", "") == "mlp" ? "mlp" : a;
}
inline const Json* preset(const PlanState& s) {
  return s.plan["preset"].is_string() ? s.cat.onnx_preset(s.plan["preset"].get<std::string>()) : nullptr;
}
// Why Quark cannot run preset `p` on this model at all, or "": catalog fp16_models
// failing_preset_flags on a model whose floating-point weights are all FP16.
inline bool fp16_only_model(const PlanState& s) {
  const Json& by = onnx_facts(s)["weights"]["by_dtype"];
  return by.contains("float16") && !by.contains("float32");
}
inline std::string preset_fails_on_model(const PlanState& s, const Json& p) {
  if (!fp16_only_model(s)) return "";
  for (const auto& [flag, why] : s.cat.onnx()["fp16_models"]["failing_preset_flags"].items())
    if (p.value(flag, false) == true) return why.get<std::string>();
  return "";
}
inline std::string family(const PlanState& s) {
  const Json* p = preset(s);
  return p ? (*p)["family"].get<std::string>() : "";
}
inline Json& spec(PlanState& s) { return s.plan["onnx_specific"]; }
// Whether Quark takes the plan's preset on its legacy route (get_default_config):
// the preset's own route, or NPU transformer mode, or a calibration method with
// no QConfig form keep it there (as plan/invocation_onnx.cc prints it).
inline bool legacy_route(const PlanState& s) {
  const Json* p = preset(s);
  if (!p) return false;
  const Json* cm = s.plan["calibration"]["method"].is_string() ? s.cat.onnx_calibration(s.plan["calibration"]["method"]) : nullptr;
  return (*p)["quark_api"].value("route", "") != "qconfig" || s.plan["onnx_specific"].value("enable_npu_transformer", false) || (cm && (*cm)["qconfig"].is_null());
}
// The Ryzen AI NPU generation the plan is for (onnx.npu.generation), or nullptr.
inline const Json* generation(const PlanState& s) {
  const Json& g = s.plan["onnx_specific"].value("npu_generation", Json());
  return g.is_string() ? s.cat.npu_generation(g.get<std::string>()) : nullptr;
}

}  // namespace quarkplan::onnx_rules::detail
