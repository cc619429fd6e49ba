// Rules as small named units, in the manner of clang-tidy checks: an ID, a
// one-line purpose, and a function over the plan state. One registry lists
// them all; the planner runs a flow's rules in registry order.
#pragma once
#include <string>
#include <vector>

#include "plan/plan_state.h"

namespace quarkplan {

struct Rule {
  const char* id;
  const char* flow;     // "onnx" | "torch"
  const char* purpose;  // one line
  void (*apply)(PlanState&);
};

const std::vector<Rule>& rule_registry();
std::vector<const Rule*> rules_for(const std::string& flow);
const Rule* find_rule(const std::string& id);

// A check intake runs on the model: it raises a risk in the analysis and
// decides nothing. Documented like a rule (docs/rules/<id>.md).
struct IntakeCheck {
  const char* id;
  const char* flow;     // "onnx" | "torch"
  const char* purpose;  // one line
};

const std::vector<IntakeCheck>& intake_check_registry();
const IntakeCheck* find_intake_check(const std::string& id);
// The one-line purpose of a rule or an intake check; nullptr for neither.
const char* documented_purpose(const std::string& id);

// Defined in onnx/*_rules.cc and torch/*_rules.cc (one file per rule family),
// listed by rule_registry().
// The Quark release the plan is for, with where it came from, in both flows (release_rules.cc).
void quark_release(PlanState&);

namespace onnx_rules {
void analysis_complete(PlanState&);
void refuse_already_quantized(PlanState&);
void resolve_target(PlanState&);
void npu_generation(PlanState&);
void npu_model_kind(PlanState&);
void interface_changes(PlanState&);
void per_channel(PlanState&);
void layer_presets(PlanState&);
// The NPU generation asked for (--hardware, a table edit, env_context.json),
// as typed; "" when none. `source` says where it came from.
std::string npu_generation_name(const PlanState&, std::string* source);
void architecture_known(PlanState&);
void choose_preset(PlanState&);
void preset_known(PlanState&);
void target_gate(PlanState&);
void custom_ops_gate(PlanState&);
void npu_flags_tied(PlanState&);
void npu_transformer_constant_weights(PlanState&);
void calibration_method(PlanState&);
void npu_cnn_pof2(PlanState&);
void xint8_pof2(PlanState&);
void npu_cnn_nhwc(PlanState&);
void calibration_sizes(PlanState&);
void calibration_data(PlanState&);
void algorithms(PlanState&);
void algorithm_compat(PlanState&);
void algorithm_exclusive(PlanState&);
void algorithm_count(PlanState&);
void cle_transformer(PlanState&);
void mx_without_amp(PlanState&);
void external_data(PlanState&);
void node_names(PlanState&);
void op_types(PlanState&);
void opset_upgrade(PlanState&);
void dynamic_dims_npu(PlanState&);
void fp16_model(PlanState&);
void subgraphs(PlanState&);
void extra_options(PlanState&);
void weight_coverage(PlanState&);
void execution_providers(PlanState&);
void onnxruntime_range(PlanState&);
void onnxruntime_folded_if(PlanState&);
void evaluation_intent(PlanState&);
void estimates(PlanState&);
void npu_preset_off_npu(PlanState&);
void op_types_present(PlanState&);
void recurrent_risk(PlanState&);
void outlier_percentile(PlanState&);
void layerwise_percentile(PlanState&);
void moving_average(PlanState&);
void exclude_outlier_layers(PlanState&);
}  // namespace onnx_rules

namespace torch_rules {
void analysis_complete(PlanState&);
void refuse_pre_quantized(PlanState&);
void pre_quantized_dequantized(PlanState&);
void template_required(PlanState&);
void remote_code(PlanState&);
void transformers_required(PlanState&);
void resolve_hardware(PlanState&);
void amd_recipe(PlanState&);
void recipe_differences(PlanState&);
void choose_scheme(PlanState&);
void scheme_hardware(PlanState&);
void scheme_risky(PlanState&);
void export_format(PlanState&);
void choose_algorithm(PlanState&);
void algorithm_model_support(PlanState&);
void awq_needs_int4(PlanState&);
void smoothquant_needs_activations(PlanState&);
void int4_needs_optimizer(PlanState&);
void algorithm_count(PlanState&);
void kv_cache(PlanState&);
void exclude_layers(PlanState&);
void lm_head_excluded(PlanState&);
void moe_routers(PlanState&);
void nothing_quantized(PlanState&);
void exclude_release_matching(PlanState&);
void kv_layers_kept(PlanState&);
void weight_outliers(PlanState&);
void layer_quant_config(PlanState&);
void calibration(PlanState&);
void calibration_data(PlanState&);
void evaluation_intent(PlanState&);
void fit_accelerators(PlanState&);
void device_strategy(PlanState&);
void serve_runtime(PlanState&);
void serve_architecture(PlanState&);
void serve_loads(PlanState&);
void serve_parallel(PlanState&);
void serve_source(PlanState&);
void fused_shards(PlanState&);
}  // namespace torch_rules

}  // namespace quarkplan
