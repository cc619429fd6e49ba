// Helpers the Torch plan rules (src/plan/torch/*_rules.cc) share: the model and its
// template, the plan's scheme, algorithms and export, and what the resolved
// accelerator supports. Defined in rule_helpers.cc.
#pragma once

// The Torch rules as a whole (quark_contracts.md §4.5, rules 67-87, Quark's
// planning guide for Torch) are held to the hardware catalog (a default always
// runs natively; emulation is a conflict the user must insist on) and to AMD's
// published recipes (catalog amd_recipes). Every reason says whose choice it
// was: "Your choice", "Quark's planning guide", "AMD's recipe (amd/...)", or
// the rule's own finding.

#include <initializer_list>
#include <string>
#include <vector>

#include "plan/plan_state.h"

namespace quarkplan {
namespace torch_rules {
namespace detail {

const Json& model(const PlanState& s);
std::string model_type(const PlanState& s);
const Json* tmpl(const PlanState& s);
const Json* scheme(const PlanState& s);
std::string hw_name(const PlanState& s);
// The analysis' risk of intake rule `rule`, or nullptr: what intake found that a plan rule follows up.
const Json* intake_risk(const PlanState& s, const char* rule);
std::vector<std::string> scheme_names(const PlanState& s);
std::vector<std::string> algorithms_of(const PlanState& s);
bool has_algorithm(const PlanState& s, std::initializer_list<const char*> names);
// Support level of a scheme family on the resolved accelerator ("" when unknown).
std::string support(const PlanState& s, const std::string& family);
std::string support_of(const PlanState& s, const std::string& scheme_name);
bool is_int4_weight_only(const Json* sc);
// The export the plan writes: "hf", "gguf" or "onnx" (a catalog exports key).
std::string export_key(const PlanState& s);

// What a serving runtime's loader does with `scheme` for one layer kind ("dense", "experts",
// "kv_cache") on a platform (catalog/runtimes.json): loads | recent | emulated | refused, and
// the catalog entry that says so (nullptr when no entry names the scheme: refused).
struct RuntimeLoad {
  std::string level;
  const Json* entry = nullptr;
};
// Entries limited to some model types ("model_types": experts vLLM's kernels cannot take, such as
// Nemotron-H's ungated relu2 experts under W4A8) apply only when `model_type` is one of them.
RuntimeLoad runtime_load(const Json& runtime, const std::string& platform, const std::string& kind, const std::string& scheme,
                         const std::string& model_type = "");
bool runtime_on_platform(const Json& runtime, const std::string& platform);
// The plan's runtime's worst level for `scheme` over the layer kinds the model has ("loads" when
// no runtime is resolved): what a default must keep at "loads" (or "recent" when nothing loads).
std::string servable(const PlanState& s, const std::string& scheme);
// The scheme each module of s.modules() gets: the first layer_quant_config pattern naming it
// (matched verbatim, as Quark matches them), else the global scheme; "" for an excluded module.
std::vector<std::string> module_schemes(PlanState& s);
// The config quarkplan writes for an algorithm Quark has no built-in one for on this model type
// (catalog torch algo_config_files), or nullptr.
const Json* algo_config_file(const PlanState& s, const std::string& algorithm);
// Quark can run `algorithm` on this model: its template has a built-in config, or the catalog gives one.
bool algorithm_available(const PlanState& s, const std::string& algorithm);
// The attention and KV heads a tensor-parallel split must respect (0 when unknown; KV = attention
// heads when not given), and why `tp` cannot split them ("" when it can: vLLM partitions or replicates KV heads).
struct HeadCounts {
  int64_t heads = 0, kv = 0;
};
HeadCounts head_counts(const PlanState& s);
std::string heads_split_problem(const HeadCounts& h, int64_t tp);
// The transformers version the model type needs when it is a newer major release than Quark's usual
// minimum (transformers 5 for minimax_m2, qwen3_5, gemma4), else "".
std::string newer_transformers(const PlanState& s);
// Why an attention kernel the serve environment selects cannot take `tp` ranks (vLLM's AITER MLA
// takes 16 or 128 heads per rank: catalog runtimes serve.attention_constraints), "" when it can.
std::string attention_kernel_problem(const PlanState& s, const Json& env, int64_t tp);
// A runtime's error text with its "<layer>" placeholder filled in.
std::string replace_layer(std::string text, const std::string& layer);

}  // namespace detail
}  // namespace torch_rules
}  // namespace quarkplan
