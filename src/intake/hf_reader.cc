// HfModelReader: the Torch flavour of model_analysis.json from a Hugging Face
// folder — config.json plus safetensors headers (or the index alone), never
// the weights (rules 29-42 of quark_contracts.md §4.3).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <unordered_set>

#include "catalog/catalog.h"
#include "common/error.h"
#include "common/files.h"
#include "intake/hf_config.h"
#include "intake/json_scan.h"
#include "intake/model_names_gen.h"
#include "intake/model_reader.h"
#include "intake/module_names.h"
#include "intake/safetensors_reader.h"
#include "intake/weight_stats.h"

namespace fs = std::filesystem;

namespace quarkplan {
namespace {

double round3(double v) { return std::round(v * 1000.0) / 1000.0; }

bool contains(const Json& arr, const std::string& v) {
  return std::find(arr.begin(), arr.end(), v) != arr.end();
}

// Weights as found on disk.
struct WeightFacts {
  std::string source = "none";  // safetensors | index | bin | none
  std::vector<LinearTensor> tensors;  // names (+ shapes when headers were read)
  std::map<std::string, uint64_t> params_by_dtype;  // exact, from headers
  uint64_t total_params = 0, total_bytes = 0;
  bool exact = false;           // every shard's header was read
  std::optional<uint64_t> index_total_size;
  std::vector<std::string> files, missing_shards;
  std::vector<std::string> shard_paths;  // resolved paths of the shards read
  uint64_t index_mismatches = 0;
  std::string first_mismatch;
};

// A shard named by the model must stay inside its folder. Hugging Face's own
// cache keeps snapshots as links into ../../blobs of the same repository;
// those are allowed, anything else that leaves the folder is refused.
fs::path shard_path(const fs::path& dir, const std::string& name) {
  std::string why;
  if (auto p = resolve_inside(dir, name, why)) return *p;
  fs::path d = fs::weakly_canonical(dir);
  if (d.parent_path().filename() == "snapshots" &&
      d.parent_path().parent_path().filename().string().rfind("models--", 0) == 0 &&
      why.find("link") != std::string::npos) {
    fs::path repo = d.parent_path().parent_path();
    fs::path real = fs::weakly_canonical(d / name);
    auto r = real.string(), b = repo.string() + "/";
    if (r.compare(0, b.size(), b) == 0) return d / name;
  }
  throw InputError((dir / name).string(), "weight file refused: " + why);
}

void add_header(WeightFacts& w, safetensors::Header&& h) {
  std::map<std::string, uint64_t> by_dtype;  // few dtypes: count first, name once
  for (auto& t : h.tensors) {
    by_dtype[t.dtype] += t.numel;
    w.total_params += t.numel;
    w.total_bytes += t.end - t.begin;
    w.tensors.push_back({std::move(t.name), std::move(t.shape), true});
  }
  for (auto& [d, n] : by_dtype) w.params_by_dtype[safetensors::dtype_display(d)] += n;
}

WeightFacts scan_weights(const fs::path& dir, Json& risks, std::vector<std::string>& partial) {
  WeightFacts w;
  std::error_code ec;
  fs::path index = dir / "model.safetensors.index.json";
  if (fs::exists(index, ec)) {
    // The index is read with the zero-copy scanner (see json_scan.h): DeepSeek's
    // weight_map alone has 92,000 entries.
    std::string text = read_small_file(index.string(), 256ull << 20);
    std::map<std::string, std::vector<std::string>> by_shard;
    bool have_map = false;
    try {
      json_scan::Scanner sc(text);
      std::string kb, vb;
      sc.expect('{');
      if (!sc.consume('}')) {
        do {
          std::string key(sc.string(kb));
          sc.expect(':');
          if (key == "weight_map") {
            have_map = true;
            sc.expect('{');
            if (!sc.consume('}')) {
              do {
                std::string tensor(sc.string(kb));
                sc.expect(':');
                if (sc.peek() != '"') sc.fail("weight_map entry '" + tensor + "' is not a file name");
                by_shard[std::string(sc.string(vb))].push_back(std::move(tensor));
              } while (sc.consume(','));
              sc.expect('}');
            }
          } else if (key == "metadata" && sc.peek() == '{') {
            sc.expect('{');
            if (!sc.consume('}')) {
              do {
                std::string mk(sc.string(kb));
                sc.expect(':');
                if (mk == "total_size" && sc.peek() != '"' && sc.peek() != 'n') w.index_total_size = sc.u64("total_size");
                else sc.skip();
              } while (sc.consume(','));
              sc.expect('}');
            }
          } else {
            sc.skip();
          }
        } while (sc.consume(','));
        sc.expect('}');
      }
      if (!sc.at_end()) sc.fail("trailing bytes");
    } catch (const std::runtime_error& e) {
      throw InputError(index.string(), std::string("invalid index: ") + e.what());
    }
    if (!have_map) throw InputError(index.string(), "has no weight_map object");
    size_t present = 0;
    for (auto& [shard, names] : by_shard) {
      fs::path p = shard_path(dir, shard);
      if (!fs::exists(p, ec)) {
        w.missing_shards.push_back(shard);
        for (auto& n : names) w.tensors.push_back({n, {}, false});
        continue;
      }
      ++present;
      w.files.push_back(shard);
      w.shard_paths.push_back(p.string());
      safetensors::Header h = safetensors::read_file(p.string());
      std::unordered_set<std::string_view> in_header;
      in_header.reserve(h.tensors.size());
      for (const auto& t : h.tensors) in_header.insert(t.name);
      for (auto& n : names)
        if (!in_header.count(n)) {
          if (!w.index_mismatches) w.first_mismatch = "'" + n + "' is listed for " + shard + " but not in its header";
          ++w.index_mismatches;
        }
      std::unordered_set<std::string_view> listed(names.begin(), names.end());
      for (const auto& t : h.tensors)
        if (!listed.count(t.name)) {
          if (!w.index_mismatches) w.first_mismatch = "'" + t.name + "' is in " + shard + " but not in the index";
          ++w.index_mismatches;
        }
      add_header(w, std::move(h));
    }
    if (present == 0) {
      w.source = "index";
      w.missing_shards.clear();  // an index without weights: names and total size only
      risks.push_back(make_risk("torch.intake.weights_missing", "medium",
                                "Only model.safetensors.index.json is here, no weight shards: tensor names and total size come from the index, shapes and parameter counts are estimated.",
                                "Download the .safetensors shards before running quantization (intake itself does not need them)."));
    } else {
      w.source = "safetensors";
      w.exact = w.missing_shards.empty();
      if (!w.missing_shards.empty()) {
        partial.push_back(std::to_string(w.missing_shards.size()) + " weight shard(s) named by the index are missing");
        risks.push_back(make_risk("torch.intake.missing_shards", "high",
                                  std::to_string(w.missing_shards.size()) + " of " + std::to_string(by_shard.size()) +
                                      " shards named by model.safetensors.index.json are missing (first: " + w.missing_shards.front() + ").",
                                  "Finish the download (all shards), then re-run intake."));
      }
    }
    if (w.index_mismatches) {
      partial.push_back("the index and the shard headers disagree");
      risks.push_back(make_risk("torch.intake.index_mismatch", "high",
                                std::to_string(w.index_mismatches) + " tensor(s) disagree between model.safetensors.index.json and the shard headers: " + w.first_mismatch + ".",
                                "The shards belong to another revision: re-download the model so the index and shards match."));
    }
    return w;
  }
  std::vector<fs::path> shards, bins;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    auto ext = e.path().extension();
    if (ext == ".safetensors") shards.push_back(e.path());
    else if (ext == ".bin" || ext == ".pth" || ext == ".pt") bins.push_back(e.path());
  }
  std::sort(shards.begin(), shards.end());
  if (!shards.empty()) {
    w.source = "safetensors";
    w.exact = true;
    for (const auto& s : shards) {
      fs::path p = shard_path(dir, s.filename().string());
      w.files.push_back(s.filename().string());
      w.shard_paths.push_back(p.string());
      add_header(w, safetensors::read_file(p.string()));
    }
    return w;
  }
  if (!bins.empty()) {
    w.source = "bin";
    for (auto& b : bins) w.files.push_back(b.filename().string());
    risks.push_back(make_risk("torch.intake.pickle_weights", "low",
                              "Weights are PyTorch .bin/.pth files (pickle): their headers cannot be read safely, so counts are estimated from config.json.",
                              "Prefer a safetensors export of the model; loading .bin files runs pickle code."));
    return w;
  }
  risks.push_back(make_risk("torch.intake.weights_missing", "medium",
                            "No weight files (.safetensors/.bin) in the folder: parameter counts and sizes are estimated from config.json.",
                            "Download the weights before running quantization (intake itself does not need them)."));
  return w;
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
  if (!fs::exists(cfg_path)) throw InputError(dir.string(), "no config.json: not a Hugging Face model folder");
  hf::Config cfg = hf::parse_config(read_small_file(cfg_path.string(), 16ull << 20), cfg_path.string());
  if (!cfg.tie_word_embeddings_stated) {
    const Json& tied = cat.torch()["tied_embeddings_by_default"];
    std::string text_type = cfg.text_model_type.empty() ? cfg.model_type : cfg.text_model_type;
    cfg.tie_word_embeddings = std::find(tied.begin(), tied.end(), text_type) != tied.end() ||
                              std::find(tied.begin(), tied.end(), cfg.model_type) != tied.end();
  }

  Json risks = Json::array();
  std::vector<std::string> partial;
  const Json* tmpl = cat.torch_template(cfg.model_type);
  const std::string& mt = cfg.model_type;

  // Template support (rule 32).
  if (tc["unsupported_model_types"].contains(mt)) {
    partial.push_back("Quark cannot quantize model type '" + mt + "'");
    risks.push_back(make_risk("torch.intake.unsupported_model_type", "high",
                              tc["unsupported_model_types"][mt].get<std::string>() + ".",
                              "Use a supported variant of the model, or register your own template with LLMTemplate.register_template()."));
  } else if (!tmpl) {
    partial.push_back("no Quark template for model type '" + mt + "'");
    risks.push_back(make_risk("torch.intake.no_template", "high",
                              "Model type '" + mt + "' has no Quark LLM template: quantize_quark.py rejects it (ValueError listing the supported types).",
                              "Register a template with LLMTemplate.register_template(LLMTemplate(model_type='" + mt +
                                  "', kv_layers_name=[...], q_layer_name=[...], exclude_layers_name=['lm_head'])) and re-run intake, or pick a supported model."));
  }

  // Remote code (rule 37): auto_map means the repository ships its own code.
  bool native = contains(tc["transformers_native_model_types"], mt);
  bool needs_remote = cfg.has_auto_map && !native;
  if (needs_remote) {
    if (!ctx.trust_remote_code) partial.push_back("the model needs trust_remote_code, not approved");
    risks.push_back(make_risk("torch.intake.trust_remote_code", "high",
                              "config.json has an auto_map: loading the model runs Python code from the model repository (trust_remote_code=True)" +
                                  std::string(ctx.trust_remote_code ? "; approved with --trust-remote-code." : ", which is not approved."),
                              "Read the repository's modeling code, then approve with --trust-remote-code; otherwise the plan stays a draft and the command keeps --no_trust_remote_code."));
  } else if (cfg.has_auto_map) {
    risks.push_back(make_risk("torch.intake.auto_map_not_needed", "low",
                              "config.json has an auto_map, but transformers implements '" + mt + "' itself: remote code is not needed.",
                              "Keep --no_trust_remote_code (needs a transformers version that includes '" + mt + "')."));
  }

  // Pre-quantized checkpoints.
  if (cfg.quant_method) {
    const Json& rec = tc["pre_quantized_recovery"];
    std::string hint = rec.contains(*cfg.quant_method) ? rec[*cfg.quant_method].get<std::string>() : rec["*"].get<std::string>();
    risks.push_back(make_risk("torch.intake.pre_quantized", "high",
                              "The checkpoint is already quantized (quantization_config.quant_method = '" + *cfg.quant_method + "').",
                              hint));
  }

  // Weights.
  WeightFacts w = scan_weights(dir, risks, partial);
  const int64_t layers = cfg.num_hidden_layers.value_or(0);
  if (!cfg.num_hidden_layers || !cfg.hidden_size) partial.push_back("config.json lacks the layer count or hidden size");

  // Module names and linear count: exact from tensor names when known (rule 39).
  std::vector<LinearModule> modules;
  std::string names_source;
  bool fused_experts = false;
  if (!w.tensors.empty()) {
    modules = linear_modules_from_tensors(w.tensors, cfg, fused_experts);
    names_source = w.source == "index" ? "safetensors_index" : "safetensors";
  } else {
    modules = linear_modules_from_config(cfg, tmpl);
    names_source = "config";
  }
  std::vector<SizedName> sized;
  uint64_t linear_params = 0;
  for (const auto& lm : modules) {
    sized.push_back({lm.name, lm.params, lm.in_features});
    linear_params += lm.params;
  }
  std::vector<SizedName> collapsed = collapse_sized(sized);
  Json names_json = Json::array(), shapes_json = Json::array();
  for (const auto& c : collapsed) {
    names_json.push_back(c.name);
    shapes_json.push_back({c.params, c.in_features});
  }

  // Parameters and size.
  ParamEstimate est = estimate_params(cfg, tc);
  uint64_t total_params = w.exact ? w.total_params : est.total;
  double size_bytes;
  std::string params_method;
  if (w.exact) {
    size_bytes = static_cast<double>(w.total_bytes);
    params_method = "exact from safetensors headers";
  } else if (w.index_total_size) {
    size_bytes = static_cast<double>(*w.index_total_size);
    params_method = "size from the index's metadata.total_size; parameters estimated from config.json (" + est.method + ")";
  } else {
    size_bytes = static_cast<double>(est.bytes);
    params_method = "estimated from config.json (" + est.method + ")";
  }

  bool is_moe = cfg.num_experts.has_value();
  if (is_moe)
    risks.push_back(make_risk("torch.intake.moe_preparation", "medium",
                              "Mixture-of-experts model (" + std::to_string(*cfg.num_experts) +
                                  " experts): Quark replaces the expert modules with per-expert Linear layers before quantizing (preprocess_for_quantization / prepare_for_moe_quant)" +
                                  (fused_experts ? "; the checkpoint stores experts fused in 3-D tensors." : "."),
                              "Use transformers >= 5 with Quark's preprocess_for_quantization; calibrate with enough samples to reach every expert."));
  double gb = size_bytes / 1e9;
  const Json& big = tc["large_model_gb"];
  if (gb > big["high"].get<double>())
    risks.push_back(make_risk("torch.intake.very_large", "high",
                              "The model is about " + std::to_string(static_cast<int>(gb)) + " GB: it does not fit one accelerator for calibration.",
                              "Plan for --multi_gpu (or --multi_device, without algorithms) or --file2file_quantization for weight-only / dynamic schemes."));
  else if (gb > big["medium"].get<double>())
    risks.push_back(make_risk("torch.intake.large", "medium",
                              "The model is about " + std::to_string(static_cast<int>(gb)) + " GB: calibration may not fit a single 48-80 GB accelerator.",
                              "Check the fit estimate in the plan; --multi_gpu spreads the model over several GPUs."));
  if (is_moe) {
    int64_t dense = cfg.first_k_dense.value_or(0);
    int64_t quark_est = dense * 7 + (layers - dense) * (5 + *cfg.num_experts * 3);
    if (quark_est > tc["huge_moe_linear_threshold"].get<int64_t>())
      risks.push_back(make_risk("torch.intake.huge_moe_loader", "medium",
                                "About " + std::to_string(quark_est) + " Linear modules: Quark loads such MoE models with one HF loader worker and needs a large vm.max_map_count.",
                                "Check `sysctl vm.max_map_count` (>= 1048576; 4194304 recommended; changing it needs approval); QUARK_HF_LOADER_WORKERS overrides the worker count."));
  }

  Json weight_stats;
  if (ctx.weight_stats) {
    if (w.source != "safetensors") throw InputError(dir.string(), "--weight-stats needs the .safetensors weights in the folder");
    weight_stats = scan_weight_stats(w.shard_paths);
    if (!weight_stats["outlier_modules"].empty())
      risks.push_back(make_risk("torch.intake.weight_outliers", "medium",
                                std::to_string(weight_stats["outlier_modules"].size()) +
                                    " Linear modules have weights beyond 50 standard deviations (e.g. " +
                                    weight_stats["outlier_modules"][0].get<std::string>() + "): per-tensor scales will waste range on them.",
                                "Keep them in higher precision (exclude or layer_quant_config), or use smoothquant / per-channel schemes."));
  }

  // Transformers version (rule 35).
  std::string min_tf = tc["transformers_default_minimum"];
  if (tmpl && (*tmpl)["transformers_min"].is_string()) min_tf = (*tmpl)["transformers_min"];
  std::string tf_req = ">=" + min_tf + "," + tc["transformers_upper_bound"].get<std::string>();
  if (tmpl && (*tmpl)["transformers_min"].is_string())
    risks.push_back(make_risk("torch.intake.transformers_version", "medium",
                              "Model type '" + mt + "' needs transformers >= " + min_tf + "; Quark's LLM PTQ supports transformers " +
                                  tc["transformers_upper_bound"].get<std::string>() + ".",
                              "pip install 'transformers" + tf_req + "' in the Quark environment (ask the router to record it in open_questions)."));
  if (!cfg.transformers_version.empty() && cfg.transformers_version.rfind("5.", 0) == 0) {
    int minor = std::atoi(cfg.transformers_version.c_str() + 2);
    if (minor >= 16)
      risks.push_back(make_risk("torch.intake.transformers_declared_newer", "medium",
                                "The checkpoint was saved with transformers " + cfg.transformers_version + ", newer than Quark's supported range.",
                                "Check the model loads with a transformers version inside " + tf_req + "."));
  }

  // Tokenizer and modalities.
  bool tokenizer = false;
  for (const char* f : {"tokenizer.json", "tokenizer.model", "tokenizer_config.json", "vocab.json", "tiktoken.model"})
    tokenizer = tokenizer || fs::exists(dir / f);
  if (!tokenizer && w.source != "none" && w.source != "index")
    risks.push_back(make_risk("torch.intake.tokenizer_missing", "medium",
                              "No tokenizer files next to the weights: calibration needs the tokenizer.",
                              "Download tokenizer.json / tokenizer_config.json with the model."));
  if (cfg.modalities.size() > 1)
    risks.push_back(make_risk("torch.intake.multimodal", "low",
                              "Multimodal model (" + std::to_string(cfg.modalities.size() - 1) + " non-text tower(s)): only the language model is calibrated with text.",
                              "Keep the vision/audio towers excluded (the template's defaults do) unless you calibrate them separately."));
  size_t linear_attention = 0;
  for (const auto& lt : cfg.layer_types)
    if (lt != "full_attention" && lt != "sliding_attention" && lt != "attention" && lt != "mlp") ++linear_attention;
  if (linear_attention)
    risks.push_back(make_risk("torch.intake.hybrid_layers", "low",
                              std::to_string(linear_attention) + " of " + std::to_string(cfg.layer_types.size()) +
                                  " layers are linear-attention/state-space layers: they keep no KV cache and their projections are often excluded by the template.",
                              "Check exclude_defaults before overriding the exclusions."));

  // Loading class (rule 38 and the skill table).
  std::string loading = tmpl ? (*tmpl)["loading_class"].get<std::string>() : "AutoModelForCausalLM";
  if (!tmpl && !cfg.architectures.empty() && cfg.architectures[0].find("ForConditionalGeneration") != std::string::npos)
    loading = cfg.architectures[0];
  if (mt == "gpt_oss") loading = "AutoModelForCausalLM with Mxfp4Config(dequantize=True)";
  else if (cfg.quant_method == std::string("compressed-tensors")) loading += " (compressed-tensors loader)";

  Json rv = sorted_risks(risks);

  Json a;
  a["analysis_status"] = partial.empty() ? "complete" : "partial";
  if (!partial.empty()) a["partial_reasons"] = partial;
  Json& m = a["model"];
  m["model_path"] = dir.string();
  m["model_type"] = mt;
  m["trust_remote_code"] = needs_remote;
  m["trust_remote_code_approved"] = needs_remote && ctx.trust_remote_code;
  m["transformers_version_required"] = tf_req;
  m["transformers_version_declared"] = cfg.transformers_version.empty() ? Json(nullptr) : Json(cfg.transformers_version);
  m["loading_class"] = loading;
  m["architectures"] = cfg.architectures;
  m["is_moe"] = is_moe;
  m["num_experts"] = cfg.num_experts ? Json(*cfg.num_experts) : Json(nullptr);
  m["num_hidden_layers"] = cfg.num_hidden_layers ? Json(*cfg.num_hidden_layers) : Json(nullptr);
  m["hidden_size"] = cfg.hidden_size ? Json(*cfg.hidden_size) : Json(nullptr);
  m["template_supported"] = tmpl != nullptr && !tc["unsupported_model_types"].contains(mt);
  m["pre_quantized"] = cfg.quant_method ? Json(*cfg.quant_method) : Json(nullptr);
  m["modalities"] = cfg.modalities;
  m["dtype"] = cfg.dtype.empty() ? Json(nullptr) : Json(cfg.dtype);
  m["estimated_size_gb"] = round3(gb);
  m["total_params"] = total_params;
  if (w.exact) {
    Json by = Json::object();
    for (auto& [k, v] : w.params_by_dtype) by[k] = v;
    m["params_by_dtype"] = by;
  }
  m["params_method"] = params_method;
  Json arch;
  auto opt = [](const std::optional<int64_t>& v) { return v ? Json(*v) : Json(nullptr); };
  arch["num_attention_heads"] = opt(cfg.num_attention_heads);
  arch["num_key_value_heads"] = opt(cfg.num_key_value_heads ? cfg.num_key_value_heads : cfg.num_attention_heads);
  arch["head_dim"] = opt(cfg.head_dim);
  arch["intermediate_size"] = opt(cfg.intermediate_size);
  arch["vocab_size"] = opt(cfg.vocab_size);
  arch["max_position_embeddings"] = opt(cfg.max_position_embeddings);
  arch["tie_word_embeddings"] = cfg.tie_word_embeddings;
  arch["num_experts_per_tok"] = opt(cfg.num_experts_per_tok);
  arch["moe_intermediate_size"] = opt(cfg.moe_intermediate_size);
  arch["shared_experts"] = opt(cfg.shared_experts);
  arch["first_k_dense_replace"] = opt(cfg.first_k_dense);
  arch["kv_lora_rank"] = opt(cfg.kv_lora_rank);
  arch["q_lora_rank"] = opt(cfg.q_lora_rank);
  arch["qk_rope_head_dim"] = opt(cfg.qk_rope_head_dim);
  arch["layer_types"] = cfg.layer_types;
  m["architecture"] = arch;
  m["weights"] = {{"source", w.source}, {"files", w.files}, {"missing_shards", w.missing_shards}};
  Json& q = a["quantization_targets"];
  q["linear_layer_count"] = modules.size();
  q["linear_layer_count_method"] = names_source == "config" ? "estimated from config.json with the " + mt + " naming" : "counted from tensor names (2-D .weight of Linear modules, fused experts expanded)";
  q["exclude_defaults"] = tmpl ? (*tmpl)["exclude_defaults"] : Json::array({"lm_head"});
  q["has_non_linear_experts"] = fused_experts;
  q["needs_moe_preparation"] = is_moe;
  q["module_names_source"] = names_source;
  q["module_names"] = names_json;
  q["module_shapes"] = shapes_json;  // [params, in_features] per module of each entry
  q["linear_params"] = linear_params;
  a["risks"] = rv;
  if (!weight_stats.is_null()) a["weight_stats"] = weight_stats;
  a["intake"] = {{"tool", "quarkplan"}, {"catalog_quark_version", tc["quark_version"]}, {"config_notes", cfg.sources}};
  return a;
}

}  // namespace

std::unique_ptr<ModelReader> make_hf_reader(const std::string& directory) {
  return std::make_unique<HfModelReader>(directory);
}

}  // namespace quarkplan
