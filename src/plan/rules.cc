#include "plan/rules.h"

namespace quarkplan {

// The one table of rules. Order is evaluation order within a flow: facts and
// refusals first, then decisions, then the checks that read the decisions.
const std::vector<Rule>& rule_registry() {
  static const std::vector<Rule> rules = {
      {"onnx.quark_release", "onnx", "The plan is for one Quark release: --quark-version, the installed amd-quark, or the newest", quark_release},
      {"onnx.analysis.complete", "onnx", "A partial analysis makes the plan a draft with the missing facts as questions", onnx_rules::analysis_complete},
      {"onnx.refuse.already_quantized", "onnx", "A model that already holds QDQ or Quark custom ops gets no plan (exit 4)", onnx_rules::refuse_already_quantized},
      {"onnx.target.resolve", "onnx", "Deployment target from --target, the session or the analysis; else an open question", onnx_rules::resolve_target},
      {"onnx.npu.generation", "onnx", "The Ryzen AI NPU generation (--hardware, env_context.json) gates the NPU targets by what Ryzen AI documents for it; unknown: the guide's gate and an open question", onnx_rules::npu_generation},
      {"onnx.architecture.known", "onnx", "An unknown architecture makes a draft that shows the op histogram and asks the path", onnx_rules::architecture_known},
      {"onnx.preset.choose", "onnx", "Preset from the user, else Quark's planning guide for goal x target x architecture, else the candidates", onnx_rules::choose_preset},
      {"onnx.preset.known", "onnx", "A preset must be a DefaultConfigMapping key (did-you-mean otherwise)", onnx_rules::preset_known},
      {"onnx.target.gate", "onnx", "Hard gate: the preset family must run on the deployment target", onnx_rules::target_gate},
      {"onnx.target.npu_preset_off_npu", "onnx", "An NPU preset on the CPU or a GPU (ONNX Runtime runs its QDQ model) is a recorded risk, not a refusal", onnx_rules::npu_preset_off_npu},
      {"onnx.target.npu_model_kind", "onnx", "An NPU target of the other model kind (npu_cnn for a transformer, npu_transformer for a CNN) is a recorded risk naming the other target", onnx_rules::npu_model_kind},
      {"onnx.custom_ops.block_formats", "onnx", "Block formats need the Quark custom-ops library: suppressed if it failed, verified if unknown", onnx_rules::custom_ops_gate},
      {"onnx.preset.op_types_present", "onnx", "A preset whose op types the model does not hold (in or out of subgraphs) is a conflict with the alternative that fits", onnx_rules::op_types_present},
      {"onnx.recurrent.risk", "onnx", "A recurrent model (LSTM/GRU/RNN ops or unrolled cells) carries the intake's recurrent risk into the plan", onnx_rules::recurrent_risk},
      {"onnx.npu.flags_tied", "onnx", "enable_npu_cnn / enable_npu_transformer equal the deployment target", onnx_rules::npu_flags_tied},
      {"onnx.npu_transformer.constant_weights", "onnx", "Quark's NPU transformer flow quantizes only MatMuls with initializer weights: a model whose weights are all Constant nodes is a conflict, some a risk", onnx_rules::npu_transformer_constant_weights},
      {"onnx.calibration.method", "onnx", "Calibration method from the user, else PowerOfTwo_MinMSE for NPU CNN, else the preset's", onnx_rules::calibration_method},
      {"onnx.calibration.outlier_percentile", "onnx", "Planning guide step 4: Percentile for transformers whose weights carry outliers (--weight-stats)", onnx_rules::outlier_percentile},
      {"onnx.calibration.layerwise_percentile", "onnx", "Planning guide step 4: LayerWisePercentile for transformers when the goal is accuracy", onnx_rules::layerwise_percentile},
      {"onnx.npu_cnn.pof2_calibration", "onnx", "Hard gate: NPU CNN needs power-of-two calibration", onnx_rules::npu_cnn_pof2},
      {"onnx.combination.xint8_without_pof2", "onnx", "XINT8-family presets without power-of-two calibration are recorded as a risk", onnx_rules::xint8_pof2},
      {"onnx.npu_cnn.nhwc", "onnx", "NCHW inputs on NPU CNN stay NCHW (AMD's practice); the guide's ConvertNCHWToNHWC is the alternative, and its interface change is stated", onnx_rules::npu_cnn_nhwc},
      {"onnx.calibration.sizes", "onnx", "data_size 200 and batch_size 1 (1-4) unless chosen", onnx_rules::calibration_sizes},
      {"onnx.calibration.data", "onnx", "No calibration data makes a draft asking for a small calibration set", onnx_rules::calibration_data},
      {"onnx.algorithms.defaults", "onnx", "Algorithms from the user, else per architecture and preset (CLE for INT8 CNN)", onnx_rules::algorithms},
      {"onnx.algorithms.compatibility", "onnx", "Algorithms that do not suit the preset family are recorded as a risk", onnx_rules::algorithm_compat},
      {"onnx.algorithms.exclusive", "onnx", "AdaRound and AdaQuant do not run together", onnx_rules::algorithm_exclusive},
      {"onnx.algorithms.at_most_two", "onnx", "More than two algorithms are recorded as a risk", onnx_rules::algorithm_count},
      {"onnx.algorithms.cle_transformer", "onnx", "CLE on a transformer is recorded as an unusual combination", onnx_rules::cle_transformer},
      {"onnx.combination.mx_without_amp", "onnx", "MXFP4 without AutoMixprecision is recorded as a risk", onnx_rules::mx_without_amp},
      {"onnx.external_data.over_2gb", "onnx", "use_external_data_format is true exactly when the model is over 2 GB", onnx_rules::external_data},
      {"onnx.nodes.check", "onnx", "Node names in exclusions and inclusions must exist in the graph (did-you-mean otherwise)", onnx_rules::node_names},
      {"onnx.weights.per_channel", "onnx", "Per-channel weights when chosen (QuantGranularity.Channel / per_channel=True); refused with NPU CNN mode, which Quark runs per tensor only", onnx_rules::per_channel},
      {"onnx.weight_stats.exclude_outliers", "onnx", "Layers whose weights make INT8 risky (--weight-stats) are proposed for nodes_to_exclude", onnx_rules::exclude_outlier_layers},
      {"onnx.op_types.check", "onnx", "op_types_to_quantize must name op types present in the graph", onnx_rules::op_types},
      {"onnx.layer_presets", "onnx", "--layer-scheme NODE|^regex.*|op:TYPE=PRESET gives layers another preset's data types through Quark's specific_layer_config / layer_type_config (QConfig route only)", onnx_rules::layer_presets},
      {"onnx.opset.upgrade", "onnx", "ConvertOpsetVersion 13 at least, 17 on a Ryzen AI NPU (its recommendation); 16-bit Q/DQ below opset 21 is a low risk", onnx_rules::opset_upgrade},
      {"onnx.npu.static_shapes", "onnx", "Dynamic inputs on an NPU target need FixShapes (asked for every input and output); a FixShapes answer must name each with its rank", onnx_rules::dynamic_dims_npu},
      {"onnx.fp16.convert", "onnx", "An FP16-only model is quantized as FP16 (QuantizeFP16): Quark's FP32 conversion does not run", onnx_rules::fp16_model},
      {"onnx.subgraphs", "onnx", "Weights inside If/Loop/Scan bodies: EnableSubgraph when they are all the preset would quantize, else a recorded risk", onnx_rules::subgraphs},
      {"onnx.extra_options.check", "onnx", "Extra options must be known Quark keys with the right type", onnx_rules::extra_options},
      {"onnx.calibration.moving_average", "onnx", "CalibMovingAverage with PowerOfTwo_NonOverflow is refused (Quark: should be False); with a method that ignores it, a low risk", onnx_rules::moving_average},
      {"onnx.interface.changes", "onnx", "FixShapes and ConvertFP16ToFP32 change the deployed model's inputs and outputs: each change is stated", onnx_rules::interface_changes},
      {"onnx.preset.weight_coverage", "onnx", "A preset whose op types hold under the catalog's share of the weights is a high risk naming the share and the preset that quantizes more", onnx_rules::weight_coverage},
      {"onnx.execution_providers", "onnx", "Execution providers follow the target and the installed onnxruntime's providers", onnx_rules::execution_providers},
      {"onnx.install.onnxruntime_range", "onnx", "The installed onnxruntime (--install-result) must be one the plan's Quark release supports", onnx_rules::onnxruntime_range},
      {"onnx.install.ort_folded_if", "onnx", "A static model whose shape-only If branch folds to a large constant does not open in the ONNX Runtime of Quark 0.12.post1", onnx_rules::onnxruntime_folded_if},
      {"onnx.evaluation_intent", "onnx", "evaluation_intent is smoke unless chosen (smoke, mlperf, mAP)", onnx_rules::evaluation_intent},

      {"onnx.estimates.weights", "onnx", "Weight size per preset: the weights the preset's op types quantize at its bits, the rest as stored", onnx_rules::estimates},

      {"torch.quark_release", "torch", "The plan is for one Quark release: --quark-version, the installed amd-quark, or the newest", quark_release},
      {"torch.analysis.complete", "torch", "Missing analysis facts become open questions of a draft", torch_rules::analysis_complete},
      {"torch.refuse.pre_quantized", "torch", "A checkpoint quantized in a form Quark cannot dequantize on load gets no plan (exit 4)", torch_rules::refuse_pre_quantized},
      {"torch.pre_quantized.dequantized", "torch", "FP8/MXFP4/compressed-tensors sources are planned with a high risk and their dequantized (BF16) memory", torch_rules::pre_quantized_dequantized},
      {"torch.template.required", "torch", "A model type without a Quark template makes a draft asking for a template", torch_rules::template_required},
      {"torch.remote_code", "torch", "Remote code runs only when the user approved it; else a draft with the question", torch_rules::remote_code},
      {"torch.hardware.resolve", "torch", "Accelerator and how many from --hardware/--gpus or env_context.json; else an open question", torch_rules::resolve_hardware},
      {"torch.serve.runtime", "torch", "The runtime that serves the result: --serve, else from the export and the hardware (vLLM on GPUs, llama.cpp for GGUF, ONNX Runtime GenAI on Ryzen AI)", torch_rules::serve_runtime},
      {"torch.transformers.required", "torch", "A model type only newer transformers implement needs that transformers where Quark runs and where the runtime serves", torch_rules::transformers_required},
      {"torch.recipe.amd", "torch", "AMD's published recipe for the model family on this hardware and goal, where it runs natively", torch_rules::amd_recipe},
      {"torch.scheme.choose", "torch", "Scheme from the user, GGUF's only scheme, AMD's recipe, else the goal's first scheme the hardware runs natively", torch_rules::choose_scheme},
      {"torch.scheme.hardware_gate", "torch", "A scheme the accelerator only emulates, globally or per layer, is a conflict; weight-only support is stated", torch_rules::scheme_hardware},
      {"torch.scheme.risky", "torch", "A risky scheme is kept and its risk recorded", torch_rules::scheme_risky},
      {"torch.export.format", "torch", "GGUF and ONNX exports accept only the schemes and architectures Quark's exporters take", torch_rules::export_format},
      {"torch.algorithm.choose", "torch", "Algorithm from the user, AMD's recipe, GGUF or the size goal (AWQ for INT4)", torch_rules::choose_algorithm},
      {"torch.algorithm.model_support", "torch", "An algorithm needs a built-in config for the model type", torch_rules::algorithm_model_support},
      {"torch.algorithm.awq_needs_int4", "torch", "AWQ/GPTQ-family weight optimisers suit INT4/UINT4 weight-only: other schemes are unusual", torch_rules::awq_needs_int4},
      {"torch.algorithm.smoothquant_needs_activations", "torch", "SmoothQuant needs quantized activations (INT8/FP8): other schemes are unusual", torch_rules::smoothquant_needs_activations},
      {"torch.algorithm.int4_needs_optimizer", "torch", "INT4 weight-only without AWQ/GPTQ is recorded with the algorithm to add", torch_rules::int4_needs_optimizer},
      {"torch.algorithm.at_most_two", "torch", "More than two algorithms are recorded as a risk", torch_rules::algorithm_count},
      {"torch.kv_cache.fp8_only", "torch", "KV cache is fp8 or null: fp8 when requested or AMD's recipe uses it", torch_rules::kv_cache},
      {"torch.exclude.template_defaults", "torch", "Exclusions start from the template (or AMD's recipe); a user list replaces them (never appends)", torch_rules::exclude_layers},
      {"torch.layer_quant_config.patterns", "torch", "Per-pattern schemes must match real module names, name real schemes and differ from the global scheme", torch_rules::layer_quant_config},
      {"torch.exclude.lm_head", "torch", "A quantized lm_head is recorded as a high risk (low where AMD's recipe quantizes it)", torch_rules::lm_head_excluded},
      {"torch.moe.routers", "torch", "Quantized MoE routers are recorded as a high risk", torch_rules::moe_routers},
      {"torch.exclude.nothing_quantized", "torch", "A plan whose exclusions cover every Linear module is an error", torch_rules::nothing_quantized},
      {"torch.exclude.release_matching", "torch", "An exclusion that another Quark release would match differently is named", torch_rules::exclude_release_matching},
      {"torch.kv_cache.layers_kept", "torch", "An FP8 KV cache needs the template's k/v projections quantized: excluded, Quark writes no KV scales", torch_rules::kv_layers_kept},
      {"torch.weight_stats.outliers", "torch", "Outlier-heavy modules found by --weight-stats are named with the fix", torch_rules::weight_outliers},
      {"torch.calibration.defaults", "torch", "Calibration pileval / 128 samples / seq_len 512 unless chosen or set by AMD's recipe", torch_rules::calibration},
      {"torch.evaluation_intent", "torch", "evaluation_intent is smoke unless chosen (none, smoke, full)", torch_rules::evaluation_intent},
      {"torch.fit.accelerators", "torch", "Weight size per scheme, KV cache, and how many accelerators calibration and deployment need", torch_rules::fit_accelerators},
      {"torch.device.strategy", "torch", "Single accelerator, multi-GPU, CPU offload, file-to-file or CPU from the fit and the accelerators available", torch_rules::device_strategy},
      {"torch.calibration.data", "torch", "--calib-data none makes a draft unless the plan runs file-to-file (quantize_quark.py loads a dataset in every other mode)", torch_rules::calibration_data},
      {"torch.serve.architecture", "torch", "A model architecture the serving runtime runs only on some accelerators (DeepSeek Sparse Attention) is a conflict elsewhere, naming where it runs", torch_rules::serve_architecture},
      {"torch.serve.loads", "torch", "Every planned layer kind (dense, MoE experts, KV cache) is one the serving runtime's loader takes; else a conflict naming the closest it loads", torch_rules::serve_loads},
      {"torch.serve.parallel", "torch", "The serve command's tensor/pipeline-parallel size: the fewest accelerators that hold the model, at a size its heads and group-quantized layers divide into", torch_rules::serve_parallel},
      {"torch.serve.fused_shards", "torch", "Modules the serving runtime fuses (q/k/v, gate/up) get one scheme or one exclusion; else a conflict naming the offenders and the repair", torch_rules::fused_shards},
      {"torch.pre_quantized.serve_source", "torch", "A plan not half a bit per weight smaller than its already-quantized source is a conflict: serve the source as it is (its serve command)", torch_rules::serve_source},
      {"torch.recipe.differences", "torch", "Every way the plan departs from the AMD recipe it follows is named with the plan's reason", torch_rules::recipe_differences},
  };
  return rules;
}

std::vector<const Rule*> rules_for(const std::string& flow) {
  std::vector<const Rule*> out;
  for (const auto& r : rule_registry())
    if (flow == r.flow) out.push_back(&r);
  return out;
}

const Rule* find_rule(const std::string& id) {
  for (const auto& r : rule_registry())
    if (id == r.id) return &r;
  return nullptr;
}

// The checks intake runs on the model, in one table beside the rules: they
// decide nothing, but their risks reach the analysis, the intake summary and
// the report, so each has an ID, a one-line purpose and a documentation file
// like a rule's. Every ID a make_risk() call in src/intake names is listed
// here (tests/plan/rule_docs_test.cc scans the sources and fails otherwise).
const std::vector<IntakeCheck>& intake_check_registry() {
  static const std::vector<IntakeCheck> checks = {
      {"onnx.intake.external_data_missing", "onnx", "An external data file the model names is missing"},
      {"onnx.intake.external_data_short", "onnx", "An external data file is shorter than the tensors that point into it"},
      {"onnx.intake.protobuf_over_2gb", "onnx", "A model over 2 GiB with its weights inline cannot be loaded by protobuf"},
      {"onnx.intake.opset_below_13", "onnx", "An ai.onnx opset below 13 is too old for QDQ quantization"},
      {"onnx.intake.opset_below_19", "onnx", "An ai.onnx opset from 13 to 18 suits INT8/INT16 but not INT4/FP8"},
      {"onnx.intake.already_quantized", "onnx", "QDQ or QOperator nodes mean the model is already quantized"},
      {"onnx.intake.quark_custom_ops", "onnx", "Quark's custom quantize ops mean the model is already quantized by Quark"},
      {"onnx.intake.custom_domain", "onnx", "Ops from a custom domain need their runtime library during calibration"},
      {"onnx.intake.dynamic_dims_npu", "onnx", "Dynamic input dimensions cannot be compiled for a Ryzen AI NPU target"},
      {"onnx.intake.dynamic_dims", "onnx", "Dynamic input dimensions need calibration batches of concrete shapes"},
      {"onnx.intake.nchw_npu_cnn", "onnx", "NCHW inputs on the NPU CNN target: the guide converts them to NHWC, AMD's examples keep NCHW"},
      {"onnx.intake.fp16_model", "onnx", "All floating-point weights are FP16: Quark quantizes the model as FP16, and cannot convert it"},
      {"onnx.intake.recurrent_ops", "onnx", "Recurrent ops or unrolled recurrent cells quantize poorly or stay in float"},
      {"onnx.intake.mlp", "onnx", "Only Gemm/MatMul layers and no attention: a plain MLP"},
      {"onnx.intake.architecture_unknown", "onnx", "No Conv, MatMul, Gemm or recurrent op dominates: the architecture is unknown"},
      {"onnx.intake.subgraphs", "onnx", "Control-flow subgraphs (If/Loop/Scan) stay in float unless EnableSubgraph is set"},
      {"onnx.intake.npu_cnn_matmul", "onnx", "MatMul ops on the NPU CNN target, which does not run MatMul-based attention"},
      {"onnx.intake.npu_transformer_custom_attention", "onnx", "Fused attention kernels the NPU transformer flow does not support"},
      {"onnx.intake.final_classifier", "onnx", "A classifier head that produces a model output is often better left in float"},
      {"onnx.intake.block_formats_suppressed", "onnx", "Block-format presets are left out when the Quark custom-ops library failed to compile"},
      {"onnx.intake.weight_outliers", "onnx", "Layers whose weights sit far out (--weight-stats) make per-tensor INT8 scales coarse"},

      {"torch.intake.weights_missing", "torch", "No weight files, or only the index: counts and sizes are estimated"},
      {"torch.intake.missing_shards", "torch", "Shards the safetensors index names are missing"},
      {"torch.intake.index_mismatch", "torch", "The safetensors index and the shard headers disagree"},
      {"torch.intake.layer_count", "torch", "config.json declares more or fewer decoder layers than the checkpoint holds"},
      {"torch.intake.pickle_weights", "torch", "PyTorch .bin/.pth weights (pickle) cannot be read safely, so counts are estimated"},
      {"torch.intake.structure_guessed", "torch", "A model type without a structure description is read with the Llama layout"},
      {"torch.intake.unsupported_model_type", "torch", "A model type Quark's LLM templates name as unsupported"},
      {"torch.intake.no_template", "torch", "A model type without a Quark LLM template, which quantize_quark.py rejects"},
      {"torch.intake.trust_remote_code", "torch", "An auto_map whose model code runs only with trust_remote_code"},
      {"torch.intake.auto_map_not_needed", "torch", "An auto_map for a model type transformers implements itself"},
      {"torch.intake.pre_quantized", "torch", "A checkpoint that is already quantized (quantization_config)"},
      {"torch.intake.moe_preparation", "torch", "A mixture-of-experts model whose experts Quark splits into Linear layers first"},
      {"torch.intake.very_large", "torch", "A checkpoint too large for one accelerator during calibration"},
      {"torch.intake.large", "torch", "A checkpoint that may not fit a single 48-80 GiB accelerator during calibration"},
      {"torch.intake.huge_moe_loader", "torch", "A mixture-of-experts model with so many Linear modules that loading needs a large vm.max_map_count"},
      {"torch.intake.weight_outliers", "torch", "Linear modules whose weights sit far out (--weight-stats) waste per-tensor range"},
      {"torch.intake.transformers_version", "torch", "A model type that needs a newer transformers than Quark supports"},
      {"torch.intake.transformers_declared_newer", "torch", "A checkpoint saved with a transformers newer than Quark's supported range"},
      {"torch.intake.tokenizer_missing", "torch", "No tokenizer files next to the weights, which calibration needs"},
      {"torch.intake.multimodal", "torch", "A multimodal model: only the language model is calibrated with text"},
      {"torch.intake.experts_not_linear", "torch", "Experts held in a module that is not Linear, which Quark does not replace, stay 16-bit"},
      {"torch.intake.hybrid_layers", "torch", "Linear-attention or state-space layers keep no KV cache and are often excluded"},
      {"torch.intake.template_patterns", "torch", "A template exclusion pattern that matches no Linear module of the checkpoint excludes nothing"},
  };
  return checks;
}

const IntakeCheck* find_intake_check(const std::string& id) {
  for (const auto& c : intake_check_registry())
    if (id == c.id) return &c;
  return nullptr;
}

const char* documented_purpose(const std::string& id) {
  if (const Rule* r = find_rule(id)) return r->purpose;
  if (const IntakeCheck* c = find_intake_check(id)) return c->purpose;
  return nullptr;
}

const std::vector<std::string>& onnx_decision_keys() {
  static const std::vector<std::string> keys = {
      "deployment_target", "preset", "calibration.method", "calibration.data_size", "calibration.batch_size", "calibration.data_path", "algorithms",
      "onnx_specific.enable_npu_cnn", "onnx_specific.enable_npu_transformer", "onnx_specific.include_cle",
      "onnx_specific.op_types_to_quantize", "onnx_specific.nodes_to_quantize", "onnx_specific.nodes_to_exclude",
      "onnx_specific.subgraphs_to_exclude", "onnx_specific.use_external_data_format", "onnx_specific.extra_options",
      "onnx_specific.execution_providers", "onnx_specific.npu_generation", "onnx_specific.op_types_to_exclude", "onnx_specific.per_channel", "onnx_specific.layer_presets", "evaluation_intent"};
  return keys;
}

const std::vector<std::string>& torch_decision_keys() {
  static const std::vector<std::string> keys = {
      "global_scheme", "kv_cache_scheme", "exclude_layers", "layer_quant_config", "algorithm", "calibration.dataset",
      "calibration.num_calib_data", "calibration.seq_len", "calibration.batch_size", "evaluation_intent", "export_format", "hardware",
      "trust_remote_code", "device_strategy", "serve_runtime", "serve.tensor_parallel_size"};
  return keys;
}

}  // namespace quarkplan
