// What the model source itself decides: an incomplete analysis, a pre-quantized checkpoint,
// a missing template, remote code. Rules torch.analysis.complete, torch.refuse.pre_quantized,
// torch.pre_quantized.dequantized, torch.template.required, torch.remote_code, torch.transformers.required.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <vector>

#include "catalog/catalog.h"
#include "common/strings.h"
#include "common/units.h"
#include "plan/rules.h"
#include "plan/torch/rule_helpers.h"

namespace quarkplan {

namespace torch_rules {

using namespace detail;

void analysis_complete(PlanState& s) {
  if (s.analysis["analysis_status"] != "partial") return;
  for (const auto& r : s.analysis.value("partial_reasons", Json::array())) {
    std::string why = r;
    if (why.find("trust_remote_code") != std::string::npos) continue;  // remote_code asks its own question
    if (why.find("Quark template") != std::string::npos || why.find("cannot quantize") != std::string::npos) continue;
    s.question("The analysis is incomplete: " + why + ". Resolve it and re-run intake, or confirm planning without it.");
  }
  // Experts Quark cannot reach stay 16-bit whatever this plan says for them: the plan repeats it.
  if (const Json* r = intake_risk(s, "torch.intake.experts_not_linear"))
    s.risk("torch.intake.experts_not_linear", "high", r->value("message", std::string()), r->value("recovery_hint", std::string()));
}

void refuse_pre_quantized(PlanState& s) {
  if (!model(s)["pre_quantized"].is_string()) return;
  std::string m = model(s)["pre_quantized"];
  const Json& tc = s.cat.torch();
  const Json& deq = tc["dequantizable_pre_quantized"];
  if (std::count(deq.begin(), deq.end(), m)) return;  // planned with a risk (torch.pre_quantized.dequantized)
  std::string hint = tc["pre_quantized_recovery"].contains(m) ? tc["pre_quantized_recovery"][m].get<std::string>()
                                                              : tc["pre_quantized_recovery"]["*"].get<std::string>();
  s.refused = true;
  s.refusal = "The checkpoint is already quantized (quantization_config.quant_method = '" + m +
              "'), in a form Quark cannot dequantize on load: no plan is produced. Recovery: " + hint;
}

void pre_quantized_dequantized(PlanState& s) {
  if (!model(s)["pre_quantized"].is_string()) return;
  std::string m = model(s)["pre_quantized"];
  const Json& tc = s.cat.torch();
  std::string hint = tc["pre_quantized_recovery"].contains(m) ? tc["pre_quantized_recovery"][m].get<std::string>()
                                                              : tc["pre_quantized_recovery"]["*"].get<std::string>();
  uint64_t params = model(s).value("total_params", uint64_t{0});
  s.risk("torch.pre_quantized.dequantized", "high",
         "The checkpoint is already quantized (" + m + "). Quark dequantizes it to BF16 on load (about " + format_bytes(params * 2) +
             " in memory, not its " + format_bytes(model(s).value("size_bytes", uint64_t{0})) +
             " on disk), so loading and calibration need that memory and the result is bounded by the " + m + " source's quality.",
         hint);
}

void template_required(PlanState& s) {
  if (model(s)["template_supported"].get<bool>()) return;
  const std::string mt = model_type(s);
  if (std::string rel = s.other_release_where([&](const Catalog& c) { return c.torch_template(mt) != nullptr; }); !rel.empty()) {
    s.question("Model type '" + mt + "' has no template in Quark " + s.cat.release() + ", which this plan is for; Quark " + rel +
               " has one: plan with --quark-version " + rel + " (with amd-quark " + rel + " installed), or register a template with "
               "LLMTemplate.register_template() (kv_layers_name, q_layer_name, exclude_layers_name) and confirm its name.");
    return;
  }
  s.question("Model type '" + mt + "' has no Quark template: register one with LLMTemplate.register_template() "
             "(kv_layers_name, q_layer_name, exclude_layers_name) and confirm its name, or pick a supported model.");
}

void remote_code(PlanState& s) {
  bool needs = model(s).value("trust_remote_code", false);
  bool approved = s.req.trust_remote_code || model(s).value("trust_remote_code_approved", false);
  s.plan["trust_remote_code"] = needs && approved;
  if (!needs) {
    s.reason("trust_remote_code", "torch.remote_code",
             s.req.trust_remote_code ? "Not needed, so your approval is not used: transformers implements '" + model_type(s) +
                                           "' itself and the command keeps --no_trust_remote_code"
                                     : "Not needed: --no_trust_remote_code");
    return;
  }
  if (approved) {
    s.reason("trust_remote_code", "torch.remote_code", "Your choice: approved, the model repository's code will run");
    s.risk("torch.remote_code", "high", "The plan runs the model repository's own Python code (trust_remote_code).",
           "Review the repository's modeling files before executing the plan.");
  } else {
    s.reason("trust_remote_code", "torch.remote_code", "Needed but not approved: the command keeps --no_trust_remote_code");
    s.question("The model needs trust_remote_code (its config has an auto_map): approve running the repository's code with --trust-remote-code?");
  }
}


// A model type newer transformers implement: Quark's environment and the serving runtime's both
// need that transformers (older ones do not know the model type), and a config with an auto_map
// lets an older one read it only with the repository's own code.
namespace detail {
std::string newer_transformers(const PlanState& s) {
  const std::string req = model(s).value("transformers_version_required", std::string());
  if (req.rfind(">=", 0) != 0) return "";
  const std::string min = req.substr(2, req.find(',') == std::string::npos ? std::string::npos : req.find(',') - 2);
  const std::string usual = s.cat.torch().value("transformers_default_minimum", std::string("0"));
  // Minor steps within a major release are in every environment built this year; a new major
  // (transformers 5) is not, in Quark's or in a serving image's.
  const std::vector<int> need = version_numbers(min), have = version_numbers(usual);
  return need.empty() || have.empty() || need[0] <= have[0] ? "" : min;
}
}  // namespace detail

void transformers_required(PlanState& s) {
  const std::string req = model(s).value("transformers_version_required", std::string());
  // Beyond this Quark release's supported transformers: it cannot load the model at all.
  if (const size_t comma = req.find(",<"); req.rfind(">=", 0) == 0 && comma != std::string::npos) {
    const std::string need = req.substr(2, comma - 2), upper = req.substr(comma + 2);
    if (version_numbers(need) >= version_numbers(upper)) {
      std::string other;
      for (const auto& r : Catalog::release_versions(s.req.catalog_dir)) {
        const std::string bound = Catalog::load(s.req.catalog_dir, r).torch().value("transformers_upper_bound", std::string());
        if (r != s.cat.release() && bound.rfind("<", 0) == 0 && version_numbers(need) < version_numbers(bound.substr(1))) other = r;
      }
      s.conflict("torch.transformers.required", "quark_release",
                 model_type(s) + " needs transformers >= " + need + ", and Quark " + s.cat.release() + " supports transformers <" + upper + ": it cannot load the model.",
                 other.empty() ? "a Quark release that supports transformers " + need : "--quark-version " + other + " (it supports transformers " +
                                                                                             Catalog::load(s.req.catalog_dir, other).torch().value("transformers_upper_bound", std::string()) + ")",
                 /*quark_rejects=*/true);
      return;
    }
  }
  const std::string min = newer_transformers(s);
  if (min.empty()) return;
  const bool auto_map = intake_risk(s, "torch.intake.auto_map_not_needed") != nullptr;
  const bool served = s.runtime && (s.platform.rfind("rocm", 0) == 0 || s.platform.rfind("cuda", 0) == 0);
  std::string where = "the Quark environment (Quark loads it with transformers)";
  if (served) where += " and " + (*s.runtime)["label"].get<std::string>() + "'s (it reads the config and tokenizer with transformers)";
  s.risk("torch.transformers.required", "medium",
         model_type(s) + " needs transformers >= " + min + " in " + where + ": older releases do not know the model type" +
             (auto_map ? ", and read its config only with the repository's own code (its auto_map)" : "") + ".",
         "pip install 'transformers" + req + "' in the Quark environment" +
             (served ? std::string("; serve with a ") + (*s.runtime)["label"].get<std::string>() + " built on transformers >= " + min +
                           (auto_map ? " (or review the repository's code and add --trust-remote-code)" : "")
                     : std::string()) +
             ".");
}

}  // namespace torch_rules
}  // namespace quarkplan
