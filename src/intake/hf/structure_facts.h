// What the Hugging Face analysis does with the model structure
// (model_structure.h): builds it beside the header scan, lists the Linear
// modules against the checkpoint's tensors, and writes the structure's facts.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "intake/hf/checkpoint_scan.h"
#include "intake/hf_config.h"
#include "intake/model_structure.h"
#include "intake/module_names.h"

namespace quarkplan {
class Catalog;
}

namespace quarkplan::hf_detail {

// Starts building the structure on its own thread (an invalid future when
// config.json lacks the layer count or hidden size: then a partial reason).
// `family_guessed` (no family describes the model type: Llama's is used) is
// set by the job: read it once the job is done.
std::future<ModelStructure> start_structure(const Catalog& cat, const hf::Config& cfg, const std::filesystem::path& cfg_path,
                                            std::vector<std::string>& partial, bool& family_guessed);

// The first risk, once the structure is built: no structure description for
// the model type (its counts follow Llama's); `no_template_risk` follows it.
void add_structure_guessed_risk(const hf::Config& cfg, Json& risks, size_t& no_template_risk);

// The no-template risk's hint excludes the model's own head and routers.
void add_exclusions_to_template_hint(const ModelStructure& st, Json& risks, size_t no_template_risk);

// The Linear modules of the analysis (rule 39) and their collapsed lists.
struct LinearModules {
  std::vector<SizedView> sized;  // views into the headers, the structure, or WeightFacts::made_names
  std::string names_source;      // safetensors | safetensors_index | config | "" (none)
  bool fused_experts = false;
  uint64_t linear_params = 0;
  Json tied_modules;                         // modules whose weight is the input embedding's
  Json names_json, shapes_json, roles_json;  // the collapsed entries
};
// The structure's modules whose weight the checkpoint holds, and the checkpoint's
// Linears the structure does not describe (without tensors: the structure's
// modules). Renames `w`'s tensors in place as transformers loads them, and with
// the tensors checks the layer count against config.json.
LinearModules linear_modules(WeightFacts& w, const std::optional<ModelStructure>& st, const hf::Config& cfg, Json& risks,
                             std::vector<std::string>& partial);

// The architecture facts of the structure, from layer_kinds to kv_cache.
void write_structure_architecture(Json& arch, const ModelStructure& st);

// The template's exclusion patterns that match none of the model's Linear modules (as the plan's
// release matches them), each with a low risk naming the modules it most likely meant.
Json unmatched_exclude_defaults(const LinearModules& modules, const Json* tmpl, const std::string& model_type, PatternMatch how, Json& risks);

// The analysis' quantization_targets.
void write_quantization_targets(Json& q, const LinearModules& modules, const hf::Config& cfg, const Json* tmpl, bool is_moe);

}  // namespace quarkplan::hf_detail
