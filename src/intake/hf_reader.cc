// HfModelReader: the Torch flavour of model_analysis.json from a Hugging Face
// folder — config.json plus safetensors headers (or the index alone), never
// the weights (rules 29-42 of quark_contracts.md §4.3). analyze() runs the
// steps in order: config facts (hf/config_facts), the header scan
// (hf/checkpoint_scan), the structure (hf/structure_facts), the size, MoE and
// tokenizer risks and the weight statistics (here), then writes the analysis.
#include <cmath>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>

#include "catalog/catalog.h"
#include "common/error.h"
#include "common/keep_until_exit.h"
#include "common/units.h"
#include "intake/hf/checkpoint_scan.h"
#include "intake/hf/config_facts.h"
#include "intake/hf/structure_facts.h"
#include "intake/hf_config.h"
#include "intake/model_reader.h"
#include "intake/model_structure.h"
#include "intake/weight_stats.h"

namespace fs = std::filesystem;

namespace quarkplan {
namespace {

using namespace hf_detail;

double round3(double v) { return std::round(v * 1000.0) / 1000.0; }

// Experts Quark cannot reach: the loading class holds them in a module that is not nn.Linear and
// that Quark's preprocess_for_quantization does not replace, so every scheme leaves them 16-bit.
void add_experts_not_linear_risk(const ModelStructure& st, const hf::Config& cfg, Json& risks) {
  if (st.experts_not_linear.empty() || st.total_params == 0) return;
  uint64_t experts = 0;
  for (const auto& t : st.tensors)
    if (t.role == "expert") experts += t.numel;
  if (experts == 0) return;
  const int pct = static_cast<int>(std::lround(100.0 * static_cast<double>(experts) / static_cast<double>(st.total_params)));
  risks.push_back(make_risk("torch.intake.experts_not_linear", "high",
                            "The " + cfg.model_type + " experts (" + std::to_string(pct) + "% of the parameters) are " + st.experts_not_linear +
                                " modules, not Linear: Quark quantizes Linear layers only and does not replace these before quantizing, so they stay 16-bit "
                                "whatever the scheme; only its Linear layers (attention, the router) can be.",
                            "Expect the checkpoint to shrink by the Linear layers' share only (the plan's size estimate counts the experts at 16 bits); "
                            "serve the source as it is where the experts' size matters."));
}

// Mixture-of-experts preparation, the checkpoint's size against one
// accelerator, and the loader limits of huge MoE models.
void add_moe_and_size_risks(const Json& tc, const std::string& f2f_flag, bool is_moe, int64_t num_experts, const LinearModules& modules, uint64_t size_bytes, double gb,
                            Json& risks) {
  const bool fused_experts = modules.fused_experts;
  const std::vector<SizedView>& sized = modules.sized;
  if (is_moe)
    risks.push_back(make_risk("torch.intake.moe_preparation", "medium",
                              "Mixture-of-experts model (" + std::to_string(num_experts) +
                                  " experts): Quark replaces the expert modules with per-expert Linear layers before quantizing (preprocess_for_quantization / prepare_for_moe_quant)" +
                                  (fused_experts ? "; the checkpoint stores experts fused in 3-D tensors." : "."),
                              "Use transformers >= 5 with Quark's preprocess_for_quantization; calibrate with enough samples to reach every expert."));
  const Json& big = tc["large_model_gb"];
  if (gb > big["high"].get<double>())
    risks.push_back(make_risk("torch.intake.very_large", "high",
                              "The checkpoint is " + format_bytes(size_bytes) + ": it does not fit one accelerator for calibration.",
                              "Plan for --multi_gpu (or --multi_device, without algorithms) or " + f2f_flag + " for weight-only / dynamic schemes."));
  else if (gb > big["medium"].get<double>())
    risks.push_back(make_risk("torch.intake.large", "medium",
                              "The checkpoint is " + format_bytes(size_bytes) + ": calibration may not fit a single 48-80 GiB accelerator.",
                              "Check the fit estimate in the plan; --multi_gpu spreads the model over several GPUs."));
  if (is_moe && static_cast<int64_t>(sized.size()) > tc["huge_moe_linear_threshold"].get<int64_t>())
    risks.push_back(make_risk("torch.intake.huge_moe_loader", "medium",
                              std::to_string(sized.size()) + " Linear modules: Quark loads such MoE models with one HF loader worker and needs a large vm.max_map_count.",
                              "Check `sysctl vm.max_map_count` (>= 1048576; 4194304 recommended; changing it needs approval); QUARK_HF_LOADER_WORKERS overrides the worker count."));
}

// The --weight-stats scan of the weights themselves (null when not asked).
Json weight_stats_if_asked(const IntakeContext& ctx, const fs::path& dir, const WeightFacts& w, Json& risks) {
  Json weight_stats;
  if (ctx.weight_stats) {
    if (w.source != "safetensors") throw InputError(dir.string(), "--weight-stats needs the .safetensors weights in the folder");
    ScanOptions opt;
    opt.threads = ctx.weight_stats_threads;
    if (ctx.progress) opt.progress = [&](uint64_t done, uint64_t total) { ctx.progress("Scanning weights", done, total); };
    weight_stats = scan_weight_stats(w.shard_paths, opt);
    if (!weight_stats["outlier_modules"].empty())
      risks.push_back(make_risk("torch.intake.weight_outliers", "medium",
                                std::to_string(weight_stats["outlier_modules"].size()) +
                                    (weight_stats["outlier_modules"].size() == 1 ? " Linear module has" : " Linear modules have") +
                                    " weights beyond 50 standard deviations (e.g. " +
                                    weight_stats["outlier_modules"][0].get<std::string>() + "): per-tensor scales will waste range on them.",
                                "Keep them in higher precision (exclude or layer_quant_config), or use smoothquant / per-channel schemes."));
  }
  return weight_stats;
}

void add_tokenizer_risk(const fs::path& dir, const WeightFacts& w, Json& risks) {
  bool tokenizer = false;
  for (const char* f : {"tokenizer.json", "tokenizer.model", "tokenizer_config.json", "vocab.json", "tiktoken.model"})
    tokenizer = tokenizer || fs::exists(dir / f);
  if (!tokenizer && w.source != "none" && w.source != "index")
    risks.push_back(make_risk("torch.intake.tokenizer_missing", "medium",
                              "No tokenizer files next to the weights: calibration needs the tokenizer.",
                              "Download tokenizer.json / tokenizer_config.json with the model."));
}

class HfModelReader : public ModelReader {
 public:
  explicit HfModelReader(std::string dir) : dir_(std::move(dir)) {}
  std::string format() const override { return "hf"; }
  Json analyze(const IntakeContext& ctx) override;

 private:
  std::string dir_;
};


Json HfModelReader::analyze(const IntakeContext& ctx) {

  const Catalog& cat = ctx.catalog ? *ctx.catalog : Catalog::load();
  const Json& tc = cat.torch();
  fs::path dir = fs::absolute(dir_).lexically_normal();
  fs::path cfg_path = dir / "config.json";
  hf::Config cfg = read_config(cat, dir, cfg_path);

  Json risks = Json::array();
  std::vector<std::string> partial;
  const Json* tmpl = cat.torch_template(cfg.model_type);

  // The structure, built on its own thread while the shard headers are read.
  bool family_guessed = false;
  std::future<ModelStructure> structure_job = start_structure(cat, cfg, cfg_path, partial, family_guessed);

  // Template support (rule 32). Without a template, the hint's exclude list
  // gains the family's router pattern once the structure is built.
  size_t no_template_risk = add_template_risks(tc, cfg, tmpl, risks, partial);

  // Remote code (rule 37): auto_map means the repository ships its own code.
  bool needs_remote = add_remote_code_risks(ctx, tc, cfg, risks, partial);

  // Pre-quantized checkpoints.
  add_pre_quantized_risk(tc, cfg, risks);

  // Weights.
  WeightFacts w;
  try {
    scan_weights(dir, risks, partial, w);
  } catch (...) {
    if (structure_job.valid()) structure_job.get();  // a bad config.json is reported first, as before
    throw;
  }
  std::optional<ModelStructure> st;
  if (structure_job.valid()) {
    st = structure_job.get();
    if (family_guessed) add_structure_guessed_risk(cfg, risks, no_template_risk);
  }
  if (st && no_template_risk < risks.size()) add_exclusions_to_template_hint(*st, risks, no_template_risk);

  LinearModules modules = linear_modules(w, st, cfg, risks, partial);

  CheckpointSize size = checkpoint_size(w, st, cfg);

  bool is_moe = st ? st->is_moe : cfg.num_experts.has_value();
  int64_t num_experts = st ? st->num_experts : cfg.num_experts.value_or(0);
  double gb = static_cast<double>(size.size_bytes) / 1e9;
  add_moe_and_size_risks(tc, cat.file2file_flag_text(), is_moe, num_experts, modules, size.size_bytes, gb, risks);
  if (st) add_experts_not_linear_risk(*st, cfg, risks);
  Json weight_stats = weight_stats_if_asked(ctx, dir, w, risks);

  // Transformers version (rule 35).
  std::string tf_req = transformers_requirement(tc, tmpl, cfg, risks);

  // Tokenizer and modalities.
  add_tokenizer_risk(dir, w, risks);
  add_modality_and_hybrid_layer_risks(cfg, risks);
  // Only names that cover the whole model can show a pattern matches nothing: names estimated from
  // config.json leave out a non-text tower the structure does not describe (Llama 4's vision model).
  bool names_complete = modules.names_source != "config" || cfg.modalities.size() <= 1;
  for (const auto& m : modules.sized) names_complete = names_complete || m.role == "vision" || m.role == "audio" || m.role == "projector";
  const Json unmatched = names_complete ? unmatched_exclude_defaults(modules, tmpl, cfg.model_type,
                                                                     cat.exclude_covers_children() ? PatternMatch::kWithChildren : PatternMatch::kVerbatim, risks)
                                        : Json::array();

  // Loading class (rule 38 and the skill table).
  std::string loading = loading_class(tmpl, cfg);

  Json rv = sorted_risks(risks);

  Json a;
  a["analysis_status"] = partial.empty() ? "complete" : "partial";
  if (!partial.empty()) a["partial_reasons"] = partial;
  Json& m = a["model"];
  m["model_path"] = dir.string();
  write_model_facts(m, ctx, tc, cfg, tmpl, needs_remote, tf_req, loading, is_moe, num_experts);
  m["estimated_size_gb"] = round3(gb);
  m["size_bytes"] = size.size_bytes;
  m["total_params"] = size.total_params;
  if (w.exact) {
    Json by = Json::object();
    for (auto& [k, v] : w.params_by_dtype) by[k] = v;
    m["params_by_dtype"] = by;
  }
  m["params_method"] = size.params_method;
  Json arch;
  arch["family"] = st ? Json(st->family) : Json(nullptr);
  arch["family_guessed"] = family_guessed;
  write_config_architecture(arch, cfg);
  if (st) write_structure_architecture(arch, *st);
  m["architecture"] = arch;
  m["weights"] = {{"source", w.source}, {"files", w.files}, {"missing_shards", w.missing_shards}};
  write_quantization_targets(a["quantization_targets"], modules, cfg, tmpl, is_moe);
  a["quantization_targets"]["exclude_defaults_unmatched"] = unmatched;
  a["risks"] = rv;
  if (!weight_stats.is_null()) a["weight_stats"] = weight_stats;
  a["intake"] = {{"tool", "quarkplan"}, {"catalog_quark_version", tc["quark_version"]}, {"quark_release", cat.release()}, {"config_notes", cfg.sources}};
  if (ctx.keep_until_exit) {
    keep_until_exit(std::make_shared<WeightFacts>(std::move(w)));
    if (st) keep_until_exit(std::make_shared<ModelStructure>(std::move(*st)));
  }
  return a;
}

}  // namespace

std::unique_ptr<ModelReader> make_hf_reader(const std::string& directory) {
  return std::make_unique<HfModelReader>(directory);
}

}  // namespace quarkplan
