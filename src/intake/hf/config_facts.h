// What the Hugging Face analysis reads from config.json and the catalog's
// Torch facts about the model type, and the model and architecture facts it
// writes from them (rules 32, 35, 37 and 38).
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/json.h"
#include "intake/hf_config.h"
#include "intake/model_reader.h"

namespace quarkplan {
class Catalog;
}

namespace quarkplan::hf_detail {

// config.json of the folder `dir` (InputError when there is none), with
// tie_word_embeddings defaulted from the catalog when the config does not say.
hf::Config read_config(const Catalog& cat, const std::filesystem::path& dir, const std::filesystem::path& cfg_path);

// The unsupported-model-type and no-template risks; returns the index in
// `risks` of the no-template risk (SIZE_MAX when there is none).
size_t add_template_risks(const Json& tc, const hf::Config& cfg, const Json* tmpl, Json& risks, std::vector<std::string>& partial);

// The remote-code risks of an auto_map; returns whether the model needs
// trust_remote_code.
bool add_remote_code_risks(const IntakeContext& ctx, const Json& tc, const hf::Config& cfg, Json& risks, std::vector<std::string>& partial);

void add_pre_quantized_risk(const Json& tc, const hf::Config& cfg, Json& risks);

// The transformers requirement (">=min,upper"), with the risks of a model type
// that needs a newer transformers or a checkpoint saved by a newer one.
std::string transformers_requirement(const Json& tc, const Json* tmpl, const hf::Config& cfg, Json& risks);

// The multimodal and hybrid-layer (linear attention, Mamba) risks.
void add_modality_and_hybrid_layer_risks(const hf::Config& cfg, Json& risks);

std::string loading_class(const Json* tmpl, const hf::Config& cfg);

// The analysis' model facts from model_type to dtype, in the analysis' order.
void write_model_facts(Json& m, const IntakeContext& ctx, const Json& tc, const hf::Config& cfg, const Json* tmpl, bool needs_remote,
                       const std::string& tf_req, const std::string& loading, bool is_moe, int64_t num_experts);

// The architecture facts config.json gives, from num_attention_heads to
// max_position_embeddings, in the analysis' order.
void write_config_architecture(Json& arch, const hf::Config& cfg);

}  // namespace quarkplan::hf_detail
