// The registry of verify's checks: one table, in the order they run, each
// with an ID and the promise it checks in one line (as the planning rules in
// plan/rules.cc). Plans cite rule IDs; verify results cite these.
#include <algorithm>
#include <stdexcept>

#include "intake/module_names.h"
#include "verify/verify.h"

namespace quarkplan::verify {

const std::vector<CheckInfo>& check_table() {
  static const std::vector<CheckInfo> table = {
      {"verify.plan.confirmed", "both", "The plan was confirmed: a draft promises nothing yet"},
      {"verify.torch.quant_method", "torch", "config.json carries Quark's quantization_config (quant_method \"quark\")"},
      {"verify.torch.model", "torch", "The export is the plan's model: its model_type and every Linear module the analysis lists"},
      {"verify.torch.global_scheme", "torch", "quantization_config's global config is the plan's global scheme"},
      {"verify.torch.layer_overrides", "torch", "Each layer_quant_config override of the plan is in the export with its scheme"},
      {"verify.torch.module_configs", "torch", "The quantization_config entry that applies to each quantized module records the plan's scheme for it"},
      {"verify.torch.exclusions_listed", "torch", "Every module the plan excludes is covered by the export's exclude list"},
      {"verify.torch.quantized_tensors", "torch", "Every module the plan quantizes carries the weight, scales and zero points its scheme writes"},
      {"verify.torch.excluded_untouched", "torch", "Every module the plan excludes keeps its original dtype and shape, with no scales"},
      {"verify.torch.algorithm", "torch", "quantization_config.algo_config records the algorithms the plan runs, and no other"},
      {"verify.torch.kv_cache", "torch", "FP8 KV-cache scales on every attention layer when kv_cache_scheme is fp8, none otherwise"},
      {"verify.torch.source_files", "torch", "The source's tokenizer, chat template and generation files are present and unchanged"},
      {"verify.torch.quark_release", "torch", "The Quark release that wrote the export is the plan's"},
      {"verify.onnx.model", "onnx", "The quantized model is the plan's model: its op counts and the nodes the plan names"},
      {"verify.onnx.quantized_nodes", "onnx", "Every node of the op types the plan quantizes has Q/DQ on its activations and weights"},
      {"verify.onnx.excluded_nodes", "onnx", "Nodes the plan excludes, by name or subgraph, have no Q/DQ on their inputs or weights"},
      {"verify.onnx.data_types", "onnx", "Quantize/dequantize pairs use the preset's activation and weight data types"},
      {"verify.onnx.weight_granularity", "onnx", "Weight scales are per channel when the plan says per_channel, one per tensor otherwise"},
      {"verify.onnx.power_of_two", "onnx", "For power-of-two presets (NPU CNN) every scale is an exact power of two"},
      {"verify.onnx.custom_ops", "onnx", "Quark's custom Q/DQ ops appear exactly where the preset's format needs them"},
      {"verify.onnx.interface", "onnx", "The inputs and outputs are the ones the plan announced (layout, fixed shapes, float I/O)"},
      {"verify.size", "both", "The exported size is within the stated tolerance of the plan's estimate"},
  };
  return table;
}

Check make_check(const std::string& id) {
  for (const auto& c : check_table())
    if (id == c.id) {
      Check k;
      k.id = c.id;
      k.purpose = c.purpose;
      return k;
    }
  throw std::logic_error("unregistered verify check " + id);
}

bool Result::ok() const {
  for (const auto& c : checks)
    if (c.failed()) return false;
  return true;
}

uint64_t Result::broken_count() const {
  uint64_t n = 0;
  for (const auto& c : checks) n += c.failed() ? std::max<uint64_t>(c.broken_subjects, 1) : 0;
  return n;
}

Json to_json(const Result& r) {
  Json checks = Json::array();
  for (const auto& c : r.checks) {
    Json f = Json::array();
    for (const auto& x : c.failures) f.push_back({{"subject", x.subject}, {"expected", x.expected}, {"found", x.found}});
    checks.push_back({{"id", c.id},
                      {"promise", c.purpose},
                      {"result", c.failed() ? "broken" : !c.skipped.empty() ? "not checked" : "kept"},
                      {"checked", c.checked},
                      {"broken", std::max<uint64_t>(c.broken_subjects, c.failures.empty() ? 0 : 1)},
                      {"failures", f},
                      {"not_checked_because", c.skipped.empty() ? Json(nullptr) : Json(c.skipped)}});
  }
  Json groups = Json::array();
  for (const auto& g : r.groups)
    groups.push_back({{"promise", g.promise}, {"kept", g.kept}, {"broken", g.broken}, {"kept_names", g.kept_names}, {"broken_names", g.broken_names}});
  Json bytes = Json::array();
  for (const auto& b : r.bytes) bytes.push_back({{"label", b.label}, {"bytes", b.bytes}});
  return {{"verified", r.ok()},
          {"flow", r.flow},
          {"plan", r.plan_path},
          {"output", r.output_path},
          {"broken_promises", r.broken_count()},
          {"checks", checks},
          {"modules", groups},
          {"size", {{"exported_bytes", r.exported_bytes},
                    {"estimated_bytes", r.estimated_bytes ? Json(r.estimated_bytes) : Json(nullptr)},
                    {"tolerance", r.size_tolerance},
                    {"by_kind", bytes}}},
          {"notes", r.notes}};
}

}  // namespace quarkplan::verify
