#include "export_sim/torch_export_writer.h"

#include <fstream>

#include "catalog/catalog.h"
#include "intake/module_names.h"

namespace qp_test {

using quarkplan::Json;

namespace {

namespace fs = std::filesystem;

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f << text;
  if (!f) throw std::runtime_error("cannot write " + p.string());
}

uint64_t up(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

int group_of(const std::string& scheme) {
  for (int g : {32, 64, 128})
    if (scheme.ends_with("_" + std::to_string(g))) return g;
  return 0;
}

Json tensor_spec(const std::string& dtype, const std::string& qscheme, Json group, Json symmetric, bool dynamic, int ch_axis = -1) {
  return {{"dtype", dtype}, {"is_dynamic", dynamic}, {"qscheme", qscheme}, {"ch_axis", ch_axis}, {"group_size", group}, {"block_size", nullptr},
          {"symmetric", symmetric}, {"round_method", "half_even"}, {"scale_type", "float"}, {"scale_format", nullptr},
          {"scale_calculation_mode", nullptr}, {"mx_element_dtype", nullptr}, {"observer_cls", "PerTensorMinMaxObserver"},
          {"is_scale_quant", false}, {"enable_buffer_reuse", false}, {"max_input_numel", 4194304}};
}

}  // namespace

std::vector<StTensor> quark_linear_tensors(const std::string& n, const std::string& scheme, uint64_t o, uint64_t i, const std::string& dt) {
  std::vector<StTensor> t;
  if (scheme == "fp8") {
    t = {{n + ".weight", "F8_E4M3", {o, i}}, {n + ".weight_scale", "F32", {}}, {n + ".input_scale", "F32", {}}};
  } else if (scheme == "ptpc_fp8") {
    t = {{n + ".weight", "F8_E4M3", {o, i}}, {n + ".weight_scale", "F32", {o}}};
  } else if (scheme == "int8") {
    t = {{n + ".weight", "I8", {o, i}}, {n + ".weight_scale", "F32", {}}, {n + ".weight_zero_point", "I8", {}},
         {n + ".input_scale", "F32", {}}, {n + ".input_zero_point", "I8", {}}};
  } else if ((scheme.starts_with("int4_wo_") || scheme.starts_with("uint4_wo_")) && group_of(scheme)) {
    uint64_t g = static_cast<uint64_t>(group_of(scheme));
    t = {{n + ".weight", "I32", {i, up(o, 8)}}, {n + ".weight_scale", dt, {up(i, g), o}}, {n + ".weight_zero_point", "I32", {up(i, g), up(o, 8)}}};
  } else if (scheme.ends_with("_per_channel")) {
    t = {{n + ".weight", "I32", {o, up(i, 8)}}, {n + ".weight_scale", dt, {o}}, {n + ".weight_zero_point", "I32", {up(o, 8)}}};
  } else if (scheme == "mxfp4" || scheme == "mxfp4_weight_only") {
    t = {{n + ".weight", "U8", {o, up(i, 2)}}, {n + ".weight_scale", "U8", {o, up(i, 32)}}};
  } else if (scheme == "int4_fp8") {
    t = {{n + ".weight", "I32", {o, up(i, 8)}}, {n + ".weight_scale", "F32", {}}, {n + ".weight_scale_2", "F32", {o}}};
  } else {
    throw std::runtime_error("quark_export_writer: no layout for " + scheme);
  }
  return t;
}

Json quark_layer_config(const std::string& scheme) {
  Json w, in = nullptr;
  if (scheme == "fp8") {
    w = tensor_spec("fp8_e4m3", "per_tensor", nullptr, true, false);
    in = w;
  } else if (scheme == "ptpc_fp8") {
    w = tensor_spec("fp8_e4m3", "per_channel", nullptr, true, false, 0);
    in = tensor_spec("fp8_e4m3", "per_channel", nullptr, true, true, 1);
  } else if (scheme == "int8") {
    w = tensor_spec("int8", "per_tensor", nullptr, true, false);
    in = w;
  } else if (group_of(scheme)) {
    w = tensor_spec(scheme.starts_with("u") ? "uint4" : "int4", "per_group", group_of(scheme), !scheme.starts_with("u"), false);
  } else if (scheme.ends_with("_per_channel")) {
    w = tensor_spec(scheme.starts_with("u") ? "uint4" : "int4", "per_channel", nullptr, !scheme.starts_with("u"), false, 0);
  } else if (scheme == "mxfp4" || scheme == "mxfp4_weight_only") {
    w = tensor_spec("fp4", "per_group", 32, nullptr, false);
    w["scale_format"] = "e8m0";
    if (scheme == "mxfp4") {
      in = w;
      in["is_dynamic"] = true;
    }
  } else if (scheme == "int4_fp8") {
    w = Json::array({tensor_spec("fp8_e4m3", "per_tensor", nullptr, true, false), tensor_spec("int4", "per_channel", nullptr, true, false, 0)});
    in = tensor_spec("fp8_e4m3", "per_tensor", nullptr, true, true);
  }
  return {{"input_tensors", in}, {"output_tensors", nullptr}, {"weight", w}, {"bias", nullptr}, {"target_device", nullptr}};
}

void write_quark_export(const fs::path& dir, const Json& plan, const Json& analysis, const fs::path& source, const ExportOptions& opt) {
  fs::create_directories(dir);
  const Json& q = analysis["quantization_targets"];
  std::vector<quarkplan::QuarkPattern> excl;
  // Quark matches exclusions as the plan's release does, overrides verbatim.
  const auto how = quarkplan::Catalog::for_plan(plan).exclude_covers_children() ? quarkplan::PatternMatch::kWithChildren : quarkplan::PatternMatch::kVerbatim;
  for (const auto& p : plan["exclude_layers"]) excl.emplace_back(p.get<std::string>(), how);
  std::vector<std::pair<quarkplan::QuarkPattern, std::string>> overrides;
  for (const auto& [p, s] : plan["layer_quant_config"].items()) overrides.emplace_back(quarkplan::QuarkPattern(p, quarkplan::PatternMatch::kVerbatim), s.get<std::string>());
  const bool kv = plan["kv_cache_scheme"].is_string();
  const Json& arch_facts = analysis["model"]["architecture"];
  const bool tied = arch_facts.is_object() && arch_facts.value("tie_word_embeddings", false);
  std::vector<StTensor> tensors;
  std::vector<std::string> excluded_names;
  for (size_t k = 0; k < q["module_names"].size(); ++k) {
    uint64_t params = q["module_shapes"][k][0], in = q["module_shapes"][k][1];
    uint64_t out = params / in;
    for (const auto& name : quarkplan::expand_module_names({q["module_names"][k].get<std::string>()})) {
      bool ex = false;
      for (const auto& p : excl) ex = ex || p.matches(name);
      // An excluded tied head is saved once, as the embedding (save_pretrained
      // drops lm_head.weight); a quantized one is a module of its own.
      if (tied && ex && name == "lm_head") continue;
      if (ex) {
        tensors.push_back({name + ".weight", opt.model_dtype, {out, in}});
        excluded_names.push_back(name);
      } else {
        std::string scheme = plan["global_scheme"];
        for (const auto& [p, s] : overrides)
          if (p.matches(name)) {
            scheme = s;
            break;
          }
        for (auto& t : quark_linear_tensors(name, scheme, out, in, opt.model_dtype)) tensors.push_back(t);
      }
      if (kv && (name.ends_with(".k_proj") || name.ends_with(".v_proj"))) tensors.push_back({name + ".output_scale", "F32", {}});
    }
  }
  // Non-Linear tensors: the embedding and the norms.
  const Json& arch = analysis["model"]["architecture"];
  uint64_t hidden = analysis["model"]["hidden_size"], vocab = arch.value("vocab_size", 32000);
  tensors.push_back({"model.embed_tokens.weight", opt.model_dtype, {vocab, hidden}});
  tensors.push_back({"model.norm.weight", opt.model_dtype, {hidden}});

  Json config = source.empty() ? Json::object() : quarkplan::read_json_file((source / "config.json").string());
  if (config.empty()) config["model_type"] = plan["model"]["model_type"];
  Json exclude = Json::array();
  for (const auto& p : plan["exclude_layers"]) {
    // Quark saves each exclusion with its ".*" expansion (QuarkSafetensorsExporter).
    std::string s = p.get<std::string>();
    if (!s.ends_with(".*")) exclude.push_back(s + ".*");
    exclude.push_back(s);
  }
  Json lqc = Json::object();
  for (const auto& [p, s] : plan["layer_quant_config"].items()) lqc[p] = quark_layer_config(s.get<std::string>());
  Json kv_group = Json::array(), kv_config = Json::object();
  if (kv) {
    for (const char* p : {"*k_proj", "*v_proj"}) {
      Json c = quark_layer_config(plan["global_scheme"]);
      c["output_tensors"] = tensor_spec("fp8_e4m3", "per_tensor", nullptr, true, false);
      lqc[p] = c;
      kv_config[p] = c;
      kv_group.push_back(p);
    }
  }
  // Each algorithm the plan runs, as QConfig.to_dict lists them (the name is what loaders and verify read).
  Json algo = nullptr;
  if (plan["algorithm"].is_string()) {
    algo = Json::array();
    std::string all = plan["algorithm"];
    for (size_t pos = 0; pos <= all.size();) {
      size_t comma = all.find(',', pos);
      std::string one = all.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      if (one == "smoothquant") one = "smooth";
      if (!one.empty()) algo.push_back({{"name", one}});
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
  }
  config["quantization_config"] = {{"global_quant_config", quark_layer_config(plan["global_scheme"])},
                                   {"exclude", exclude},
                                   {"algo_config", algo},
                                   {"softmax_quant_spec", nullptr},
                                   {"quant_method", "quark"},
                                   {"layer_type_quant_config", Json::object()},
                                   {"layer_quant_config", lqc},
                                   {"kv_cache_quant_config", kv_config},
                                   {"kv_cache_post_rope", false},
                                   {"quant_mode", "eager_mode"},
                                   {"version", opt.quark_version.empty() ? plan.value("quark_release", std::string("0.12.post1")) : opt.quark_version},
                                   {"export",
                                    {{"kv_cache_group", kv_group},
                                     {"min_kv_scale", 0.0},
                                     {"pack_method", "reorder"},
                                     {"weight_format", "real_quantized"},
                                     {"weight_merge_groups", nullptr}}}};
  if (opt.edit) opt.edit(tensors, config);
  write_text(dir / "config.json", quarkplan::dump_json(config));
  for (const char* f : {"tokenizer.json", "tokenizer_config.json", "generation_config.json", "special_tokens_map.json"}) {
    if (!source.empty() && fs::exists(source / f)) fs::copy_file(source / f, dir / f, fs::copy_options::overwrite_existing);
  }
  int shards = std::max(1, opt.shards);
  std::vector<std::vector<StTensor>> parts(static_cast<size_t>(shards));
  for (size_t k = 0; k < tensors.size(); ++k) parts[k * static_cast<size_t>(shards) / tensors.size()].push_back(tensors[k]);
  // The index is written as text: an insertion-ordered JSON object looks keys
  // up linearly, which is quadratic over a MoE model's 200,000 tensors.
  std::string index = "{\n  \"metadata\": {\"total_size\": ";
  std::string entries;
  uint64_t total = 0;
  for (int s = 0; s < shards; ++s) {
    char name[64];
    std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", s + 1, shards);
    total += write_safetensors(dir / name, parts[static_cast<size_t>(s)], true, "{\"format\":\"pt\"}");
    for (const auto& t : parts[static_cast<size_t>(s)]) entries += std::string(entries.empty() ? "" : ",\n") + "    " + Json(t.name).dump() + ": \"" + name + "\"";
  }
  index += std::to_string(total) + "},\n  \"weight_map\": {\n" + entries + "\n  }\n}\n";
  write_text(dir / "model.safetensors.index.json", index);
}

}  // namespace qp_test
