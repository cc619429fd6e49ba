// The structure step against reality: every corpus config's parameter count
// within 1% of its published total, names equal to the real safetensors
// indexes, and hostile config values rejected as input errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <regex>
#include <set>

#include "catalog/catalog.h"
#include "common/error.h"
#include "common/files.h"
#include "intake/hf_config.h"
#include "intake/model_structure.h"
#include "support/test_support.h"

using namespace qp_test;
using quarkplan::Json;

namespace {

quarkplan::ModelStructure structure_of(const std::string& dir) {
  const auto& cat = quarkplan::Catalog::load();
  std::string path = testdata("hf/" + dir + "/config.json").string();
  quarkplan::hf::Config cfg = quarkplan::hf::parse_config(quarkplan::read_small_file(path), path);
  // The tied-embedding defaults of config classes (as intake applies them).
  if (!cfg.tie_word_embeddings_stated) {
    const Json& tied = cat.torch()["tied_embeddings_by_default"];
    std::string text_type = cfg.text_model_type.empty() ? cfg.model_type : cfg.text_model_type;
    cfg.tie_word_embeddings = std::count(tied.begin(), tied.end(), text_type) || std::count(tied.begin(), tied.end(), cfg.model_type);
  }
  const Json* fam = quarkplan::architecture_family(cat.architectures(), cfg);
  if (!fam) throw std::runtime_error("no family for " + dir);
  return quarkplan::build_structure(cfg, *fam, cat.architectures(), path);
}

}  // namespace

TEST(ModelStructure, EveryCorpusConfigWithinOnePercentOfItsPublishedTotal) {
  Json table = quarkplan::read_json_file(testdata("hf/published_params.json").string());
  std::set<std::string> covered;
  for (const auto& m : table["models"]) {
    std::string dir = m["dir"];
    covered.insert(dir);
    auto s = structure_of(dir);
    double published = m["total_params"].get<double>();
    double got = static_cast<double>(s.total_params);
    if (std::getenv("QP_VERBOSE")) std::fprintf(stderr, "%-45s %-14s %16.0f %16.0f %+.5f%%\n", dir.c_str(), s.family.c_str(), got, published, (got / published - 1) * 100);
    // Exact published integers must be met exactly (to 0.01%) unless the entry
    // says why config.json alone cannot; stated (rounded) figures within 1%.
    bool exact = m["confidence"] != "stated" && !m.contains("not_exact_because");
    EXPECT_NEAR(got / published, 1.0, exact ? 0.0001 : 0.01) << dir << " (" << s.family << "): " << s.total_params << " vs published "
                                             << m["total_params"] << " (" << m["source"].get<std::string>() << ")";
  }
  // Every config in the corpus has a published total in the table.
  for (const auto& e : fs::directory_iterator(testdata("hf")))
    if (e.is_directory()) {
      EXPECT_TRUE(covered.count(e.path().filename().string())) << e.path().filename() << " has no published total";
    }
}


// Names as transformers loads them: the structure generated from config.json
// holds exactly the tensors of every real safetensors index in the corpus.
TEST(ModelStructure, NamesEqualTheRealSafetensorsIndexes) {
  int checked = 0;
  for (const auto& e : fs::directory_iterator(testdata("hf"))) {
    fs::path index = e.path() / "model.safetensors.index.json";
    if (!fs::exists(index)) continue;
    std::string dir = e.path().filename().string();
    auto s = structure_of(dir);
    std::set<std::string> want, got;
    Json j = quarkplan::read_json_file(index.string());
    for (auto& [name, shard] : j["weight_map"].items()) {
      std::string n = name;
      if (n.size() > 7 && n.compare(n.size() - 7, 7, "_scales") == 0) continue;  // MXFP4 scales are not parameters
      if (n.size() > 7 && n.compare(n.size() - 7, 7, "_blocks") == 0) n.resize(n.size() - 7);
      want.insert(s.loaded_name(n));
    }
    for (const auto& t : s.tensors) got.insert(std::string(t.name));
    std::vector<std::string> missing, extra;
    std::set_difference(want.begin(), want.end(), got.begin(), got.end(), std::back_inserter(missing));
    std::set_difference(got.begin(), got.end(), want.begin(), want.end(), std::back_inserter(extra));
    EXPECT_TRUE(missing.empty()) << dir << ": the index has " << missing.size() << " tensors the structure lacks, e.g. " << (missing.empty() ? "" : missing[0]);
    EXPECT_TRUE(extra.empty()) << dir << ": the structure has " << extra.size() << " tensors the index lacks, e.g. " << (extra.empty() ? "" : extra[0]);
    ++checked;
  }
  EXPECT_GE(checked, 8);
}

// The Linear-module view: counts and roles that the planner relies on.
TEST(ModelStructure, ModulesRolesAndKvFactsPerFamily) {
  auto ds = structure_of("deepseek-v3");
  size_t routers = 0, experts = 0, mtp = 0;
  for (const auto& m : ds.modules) {
    routers += m.role == "router";
    experts += m.role == "expert";
    mtp += m.part == quarkplan::Part::kMtp;
  }
  EXPECT_EQ(routers, 58u + 1u);        // 58 MoE layers + the MTP layer
  EXPECT_EQ(experts, (58u + 1u) * 256u * 3u);
  EXPECT_GT(mtp, 768u);
  EXPECT_EQ(ds.mtp_layers, 1);
  EXPECT_EQ(ds.kv.kind, "mla");
  EXPECT_EQ(ds.kv.elements_full, 61u * (512u + 64u));
  // Llama 4: the router is feed_forward.router, the shared expert is counted.
  auto scout = structure_of("llama4-scout-17b-16e-instruct");
  EXPECT_EQ(scout.classify("language_model.model.layers.7.feed_forward.router").first, "router");
  EXPECT_EQ(scout.classify("language_model.model.layers.7.feed_forward.shared_expert.down_proj").first, "shared_expert");
  EXPECT_TRUE(scout.fused_experts);
  // DBRX: an MoE with fused experts, 40 routers.
  auto dbrx = structure_of("dbrx-base");
  EXPECT_TRUE(dbrx.is_moe);
  EXPECT_EQ(dbrx.num_experts, 16);
  size_t dbrx_routers = 0;
  for (const auto& m : dbrx.modules) dbrx_routers += m.role == "router";
  EXPECT_EQ(dbrx_routers, 40u);
  // Nemotron-H: only the attention layers keep a KV cache.
  auto nh = structure_of("nemotron-3-nano-30b-a3b-bf16");
  EXPECT_EQ(nh.kv.full_layers, 6);
  EXPECT_EQ(nh.kv.elements_full, 6u * 2u * 2u * 128u);
  // Gemma 3: sliding layers keep only their window.
  auto g3 = structure_of("gemma-3-27b-it-resaved");
  EXPECT_GT(g3.kv.sliding_layers, 0);
  EXPECT_EQ(g3.kv.sliding_window, 1024);
}

// Linear-attention and Mamba layers keep a fixed state per sequence, with the shapes vLLM
// allocates (mamba_utils.py MambaStateShapeCalculator) and the SSM dtype the config fixes.
TEST(ModelStructure, RecurrentLayersKeepAStatePerSequence) {
  // Nemotron-H: 23 Mamba-2 layers; conv (heads*head_dim + 2*groups*state) x (kernel-1),
  // SSM heads x head_dim x state, in float32 (config.json's mamba_ssm_cache_dtype).
  auto nh = structure_of("nemotron-3-nano-30b-a3b-bf16");
  EXPECT_EQ(nh.kv.recurrent_layers, 23);
  EXPECT_EQ(nh.kv.state_conv_elements, 23u * (64u * 64u + 2u * 8u * 128u) * 3u);
  EXPECT_EQ(nh.kv.state_ssm_elements, 23u * 64u * 64u * 128u);
  EXPECT_EQ(nh.kv.state_ssm_dtype, "float32");
  // Qwen3-Next: 36 Gated DeltaNet layers; conv (2*k_heads*k_dim + v_heads*v_dim) x (kernel-1),
  // recurrent v_heads x v_dim x k_dim, in the model's dtype (no config key).
  auto qn = structure_of("qwen3-next-80b-a3b-thinking");
  EXPECT_EQ(qn.kv.recurrent_layers, 36);
  EXPECT_EQ(qn.kv.full_layers, 12);
  EXPECT_EQ(qn.kv.state_conv_elements, 36u * (2u * 16u * 128u + 32u * 128u) * 3u);
  EXPECT_EQ(qn.kv.state_ssm_elements, 36u * 32u * 128u * 128u);
  EXPECT_EQ(qn.kv.state_ssm_dtype, "");
  // Qwen3.5: the config's mamba_ssm_dtype where it has one, the model's dtype where not.
  auto q35 = structure_of("qwen3.5-35b-a3b");
  EXPECT_EQ(q35.kv.recurrent_layers, 30);
  EXPECT_EQ(q35.kv.state_ssm_dtype, "float32");
  auto q35d = structure_of("qwen3.5-9b-transformers-default");
  EXPECT_GT(q35d.kv.recurrent_layers, 0);
  EXPECT_EQ(q35d.kv.state_ssm_dtype, "");
  // Attention-only families keep none.
  EXPECT_EQ(structure_of("llama-3.1-8b").kv.recurrent_layers, 0);
  EXPECT_EQ(structure_of("deepseek-v3").kv.state_ssm_elements, 0u);
}

// config.json values are checked before anything is built: a bad value is an
// input error naming the key, never an allocation proportional to it.
TEST(ModelStructure, HostileConfigValuesAreInputErrors) {
  const auto& cat = quarkplan::Catalog::load();
  std::string base = quarkplan::read_small_file(testdata("hf/llama-3.1-8b/config.json").string());
  struct Case {
    const char* key;
    Json value;
    const char* expect;
  };
  for (const Case& c : std::vector<Case>{{"num_hidden_layers", 100000000, "num_hidden_layers"},
                                         {"hidden_size", -4096, "hidden_size"},
                                         {"hidden_size", "4096", "hidden_size"},
                                         {"num_attention_heads", 0, "num_attention_heads"},
                                         {"num_attention_heads", 3, "num_attention_heads"},
                                         {"num_key_value_heads", 5, "num_key_value_heads"},
                                         {"vocab_size", 1.5, "vocab_size"},
                                         {"intermediate_size", Json::array({1}), "intermediate_size"},
                                         {"hidden_size", 18446744073709551615ull, "hidden_size"},
                                         {"num_hidden_layers", 2.0e300, "num_hidden_layers"},
                                         // 4 x hidden_size (the default intermediate size) beyond int64
                                         {"hidden_size", 4000000000000000000ll, "hidden_size"}}) {
    Json j = Json::parse(base);
    j[c.key] = c.value;
    try {
      auto cfg = quarkplan::hf::parse_config(j.dump(), "config.json");
      const Json* fam = quarkplan::architecture_family(cat.architectures(), cfg);
      ASSERT_NE(fam, nullptr);
      quarkplan::build_structure(cfg, *fam, cat.architectures(), "config.json");
      ADD_FAILURE() << c.key << "=" << c.value.dump() << " was accepted";
    } catch (const quarkplan::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(c.expect), std::string::npos) << c.key << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("config.json"), std::string::npos) << e.what();
    }
  }
  // Experts beyond any real model: bounded before allocation.
  Json j = Json::parse(quarkplan::read_small_file(testdata("hf/qwen3-30b-a3b/config.json").string()));
  j["num_experts"] = 8000;
  j["num_hidden_layers"] = 1000;
  auto cfg = quarkplan::hf::parse_config(j.dump(), "config.json");
  EXPECT_THROW(quarkplan::build_structure(cfg, *quarkplan::architecture_family(cat.architectures(), cfg), cat.architectures(), "config.json"),
               quarkplan::InputError);
}

// The class of hostile values, in every family that reads them: counts used as
// steps, divisors or router widths, nulls where a size is needed, layer kinds
// and patterns. Each is exit 2 naming the key as config.json spells it.
TEST(ModelStructure, HostileValuesInEveryFamilyNameTheKeyAsWritten) {
  const auto& cat = quarkplan::Catalog::load();
  struct Case {
    const char* dir;
    const char* path;  // dotted path into config.json
    Json value;
    const char* expect;
  };
  const Json null;
  std::vector<Case> cases = {
      {"mixtral-8x7b-v0.1", "num_local_experts", -8, "'num_local_experts' is -8"},
      {"mixtral-8x7b-v0.1", "num_local_experts", 0, "'num_local_experts' is 0"},
      {"mixtral-8x7b-v0.1", "num_local_experts", 1, "'num_local_experts' is 1"},
      {"mixtral-8x7b-v0.1", "num_experts_per_tok", -2, "'num_experts_per_tok' is -2"},
      {"dbrx-base", "ffn_config.moe_num_experts", 0, "'ffn_config.moe_num_experts'"},
      {"dbrx-base", "ffn_config.moe_top_k", "8", "'ffn_config.moe_top_k'"},
      {"dbrx-base", "ffn_config.moe_top_k", 8.5, "'ffn_config.moe_top_k'"},
      {"deepseek-v3", "n_routed_experts", 0, "'n_routed_experts' is 0"},
      {"deepseek-v3", "n_routed_experts", -8, "'n_routed_experts' is -8"},
      {"deepseek-v3", "moe_layer_freq", 0, "'moe_layer_freq' is 0"},
      {"deepseek-v3", "moe_layer_freq", -8, "'moe_layer_freq' is -8"},
      {"deepseek-v3", "moe_intermediate_size", null, "'moe_intermediate_size' is null"},
      {"deepseek-v3", "n_shared_experts", 100000000, "'n_shared_experts' is 100000000"},
      {"qwen3-next-80b-a3b-thinking", "decoder_sparse_step", 0, "'decoder_sparse_step' is 0"},
      {"qwen3-next-80b-a3b-thinking", "full_attention_interval", -4, "'full_attention_interval' is -4"},
      {"qwen3-next-80b-a3b-thinking", "num_experts", -4, "'num_experts' is -4"},
      {"llama4-scout-17b-16e-instruct", "text_config.interleave_moe_layer_step", 0, "'interleave_moe_layer_step' is 0"},
      {"llama4-scout-17b-16e-instruct", "text_config.num_local_experts", -2, "'num_local_experts' is -2"},
      {"llama4-scout-17b-16e-instruct", "text_config.attention_chunk_size", 0, "'attention_chunk_size' is 0"},
      {"llama-3.1-8b", "head_dim", -4096, "'head_dim' is -4096"},
      {"llama-3.1-8b", "head_dim", 0, "'head_dim' is 0"},
      {"llama-3.1-8b", "max_position_embeddings", -4096, "'max_position_embeddings' is -4096"},
      {"llama-3.1-8b", "max_position_embeddings", 1e18, "'max_position_embeddings' is 1000000000000000000"},
      {"llama-3.1-8b", "layer_types", Json(std::vector<std::string>(32, "bogus")), "unknown layer kind 'bogus'"},
      {"llama-3.1-8b", "hidden_size", null, "'hidden_size' is null"},
      {"llama-3.1-8b", "num_hidden_layers", null, "'num_hidden_layers' is null"},
      {"gpt-j-6b", "n_head", 0, "'n_head'"},
      {"gpt-j-6b", "n_head", 7, "n_head (7) does not divide n_embd"},
      {"opt-1.3b", "ffn_dim", -1, "'ffn_dim'"},
      {"chatglm2-6b", "kv_channels", -4, "'kv_channels' is -4"},
      {"chatglm2-6b", "multi_query_group_num", 0, "'multi_query_group_num'"},
      {"nemotron-3-nano-30b-a3b-bf16", "hybrid_override_pattern", "", "'hybrid_override_pattern' is empty"},
      {"nemotron-3-nano-30b-a3b-bf16", "hybrid_override_pattern", "M*", "'hybrid_override_pattern' gives 2 layers"},
      {"nemotron-3-nano-30b-a3b-bf16", "ssm_state_size", 100000, "'ssm_state_size' is 100000"},
  };
  for (const Case& c : cases) {
    Json j = Json::parse(quarkplan::read_small_file(testdata(std::string("hf/") + c.dir + "/config.json").string()));
    Json* at = &j;
    std::string path = c.path;
    for (size_t dot; (dot = path.find('.')) != std::string::npos; path = path.substr(dot + 1)) at = &(*at)[path.substr(0, dot)];
    (*at)[path] = c.value;
    const std::string label = std::string(c.dir) + " " + c.path + "=" + c.value.dump();
    try {
      auto cfg = quarkplan::hf::parse_config(j.dump(), "config.json");
      const Json* fam = quarkplan::architecture_family(cat.architectures(), cfg);
      ASSERT_NE(fam, nullptr) << label;
      quarkplan::build_structure(cfg, *fam, cat.architectures(), "config.json");
      ADD_FAILURE() << label << " was accepted";
    } catch (const quarkplan::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(c.expect), std::string::npos) << label << ": " << e.what();
      EXPECT_EQ(std::string(e.what()).find("largest real model has 232 attention heads"), std::string::npos) << label << ": " << e.what();
    }
  }
}

// Llama 4: three of four layers use chunked attention (attention_chunk_size
// tokens), so only the NoPE layers cache the whole context.
TEST(ModelStructure, Llama4ChunkedLayersCacheOneChunk) {
  for (const char* dir : {"llama4-scout-17b-16e-instruct", "llama4-maverick-17b-128e-instruct"}) {
    quarkplan::ModelStructure s = structure_of(dir);
    EXPECT_EQ(s.kv.full_layers, 12) << dir;
    EXPECT_EQ(s.kv.sliding_layers, 36) << dir;
    EXPECT_EQ(s.kv.sliding_window, 8192) << dir;
  }
}

namespace {

// Builds the structure of corpus config `dir` after `edit` changes its JSON.
quarkplan::ModelStructure structure_edited(const std::string& dir, const std::function<void(Json&)>& edit) {
  const auto& cat = quarkplan::Catalog::load();
  Json j = Json::parse(quarkplan::read_small_file(testdata("hf/" + dir + "/config.json").string()));
  edit(j);
  auto cfg = quarkplan::hf::parse_config(j.dump(), "config.json");
  const Json* fam = quarkplan::architecture_family(cat.architectures(), cfg);
  if (!fam) throw std::runtime_error("no family for " + dir);
  return quarkplan::build_structure(cfg, *fam, cat.architectures(), "config.json");
}

// The InputError text of building `dir` edited by `edit` ("" when accepted).
std::string structure_error(const std::string& dir, const std::function<void(Json&)>& edit) {
  try {
    structure_edited(dir, edit);
  } catch (const quarkplan::InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// transformers builds lm_head as an nn.Linear whatever tie_word_embeddings
// says (its weight is then the embedding's), so Quark sees it: every family's
// structure lists it, tied or not, while the tied weight is stored (and
// counted) once.
TEST(ModelStructure, TiedLmHeadIsALinearInEveryFamilyButStoredOnce) {
  const auto& cat = quarkplan::Catalog::load();
  std::set<std::string> families_seen;
  // Families the corpus lacks get a small config of their own (Phi-1/1.5/2 in transformers naming).
  std::vector<std::pair<std::string, Json>> configs = {
      {"phi (generated)", Json::parse(R"({"model_type":"phi","architectures":["PhiForCausalLM"],"num_hidden_layers":2,"hidden_size":64,
         "intermediate_size":256,"num_attention_heads":4,"vocab_size":512,"partial_rotary_factor":0.5})")}};
  for (const auto& e : fs::directory_iterator(testdata("hf")))
    if (e.is_directory())
      configs.emplace_back(e.path().filename().string(),
                           Json::parse(quarkplan::read_small_file((e.path() / "config.json").string())));
  for (const auto& [dir, config] : configs) {
    auto structure_edited = [&config = config](const std::string&, const std::function<void(Json&)>& edit) {
      const auto& cat = quarkplan::Catalog::load();
      Json j = config;
      edit(j);
      auto cfg = quarkplan::hf::parse_config(j.dump(), "config.json");
      const Json* fam = quarkplan::architecture_family(cat.architectures(), cfg);
      if (!fam) throw std::runtime_error("no family");
      return quarkplan::build_structure(cfg, *fam, cat.architectures(), "config.json");
    };
    auto heads = [](const quarkplan::ModelStructure& s) {
      std::vector<const quarkplan::StructModule*> h;
      for (const auto& m : s.modules)
        if (m.role == "lm_head" && m.part == quarkplan::Part::kLanguage) h.push_back(&m);
      return h;
    };
    auto set_tied = [](bool tied) {
      return [tied](Json& j) {
        for (const char* k : {"text_config", "llm_config", "language_config", "thinker_config"})
          if (j.contains(k) && j[k].is_object()) j[k]["tie_word_embeddings"] = tied;
        j["tie_word_embeddings"] = tied;
      };
    };
    auto tied = structure_edited(dir, set_tied(true));
    auto untied = structure_edited(dir, set_tied(false));
    families_seen.insert(tied.family);
    auto th = heads(tied), uh = heads(untied);
    ASSERT_EQ(uh.size(), 1u) << dir;
    ASSERT_EQ(th.size(), 1u) << dir << " (" << tied.family << "): a tied lm_head is still a Linear module";
    EXPECT_EQ(th[0]->name, uh[0]->name) << dir;
    EXPECT_EQ(th[0]->out * th[0]->in, uh[0]->out * uh[0]->in) << dir;
    EXPECT_EQ(tied.modules.size(), untied.modules.size()) << dir;
    // Stored once: the tied structure has no lm_head weight tensor (unless the
    // family stores it anyway, as Falcon does) and fewer parameters by V x H.
    bool stored = false;
    for (const auto& t : tied.tensors) stored = stored || t.name == std::string(th[0]->name) + ".weight";
    if (!stored) {
      EXPECT_TRUE(th[0]->tied) << dir;
      EXPECT_EQ(untied.total_params - tied.total_params, th[0]->out * th[0]->in) << dir;
      // Its source is the embedding it shares: a weight without a Linear role, at least V x H.
      const auto& src = tied.tensors[th[0]->source];
      EXPECT_TRUE(src.role.empty()) << dir << ": " << src.name;
      EXPECT_GE(src.numel, th[0]->out * th[0]->in) << dir << ": " << src.name;
    } else {
      EXPECT_FALSE(th[0]->tied) << dir;
    }
    EXPECT_FALSE(uh[0]->tied) << dir;
  }
  // Every family with an lm_head item in the catalog is covered by the corpus.
  for (const auto& f : cat.architectures()["families"])
    if (f.dump().find("\"lm_head\"") != std::string::npos) {
      EXPECT_TRUE(families_seen.count(f["family"].get<std::string>())) << f["family"];
    }
}

// Every nested object the parser or a family reads: a string, a list or a
// number there is exit 2 naming the key as written and its value.
TEST(ModelStructure, NestedConfigsOfTheWrongTypeNameTheKey) {
  struct Case {
    const char* dir;
    const char* key;  // dotted path into config.json
    Json value;
    const char* expect;
  };
  const Json null;
  for (const Case& c : std::vector<Case>{
           {"llama4-scout-17b-16e-instruct", "text_config", "abc", "'text_config' must be an object, not \"abc\""},
           {"llama4-scout-17b-16e-instruct", "text_config", Json::array({1}), "'text_config' must be an object, not [1]"},
           {"llama4-scout-17b-16e-instruct", "text_config", null, "'text_config' is null"},
           {"llama4-scout-17b-16e-instruct", "vision_config", 7, "'vision_config' must be an object, not 7"},
           {"qwen3-vl-30b-a3b-instruct", "text_config", "abc", "'text_config' must be an object, not \"abc\""},
           {"qwen3-vl-30b-a3b-instruct", "text_config", null, "'text_config' is null"},
           {"qwen3-vl-30b-a3b-instruct", "vision_config", Json::array({1}), "'vision_config' must be an object, not [1]"},
           {"qwen3-vl-30b-a3b-instruct", "text_config.rope_scaling", "yarn", "'text_config.rope_scaling' must be an object, not \"yarn\""},
           {"dbrx-base", "ffn_config", "x", "'ffn_config' must be an object, not \"x\""},
           {"dbrx-base", "attn_config", 3, "'attn_config' must be an object, not 3"},
           {"llama-3.1-8b", "rope_scaling", "llama3", "'rope_scaling' must be an object, not \"llama3\""},
           {"qwen3-30b-a3b-fp8", "quantization_config", "fp8", "'quantization_config' must be an object, not \"fp8\""},
           {"gemma-3-27b-it-resaved", "text_config", true, "'text_config' must be an object, not true"},
           {"gemma-3-27b-it-resaved", "vision_config", "siglip", "'vision_config' must be an object, not \"siglip\""},
       }) {
    std::string err = structure_error(c.dir, [&](Json& j) {
      Json* at = &j;
      std::string path = c.key;
      for (size_t dot; (dot = path.find('.')) != std::string::npos; path = path.substr(dot + 1)) at = &(*at)[path.substr(0, dot)];
      (*at)[path] = c.value;
    });
    EXPECT_NE(err.find(c.expect), std::string::npos) << c.dir << " " << c.key << "=" << c.value.dump() << ": " << (err.empty() ? "accepted" : err);
    EXPECT_EQ(err.find("num_local_experts"), std::string::npos) << err;  // never a key the file does not have
  }
  // A null vision tower is no tower (as transformers reads it), not an error.
  EXPECT_EQ(structure_error("gemma-3-27b-it-resaved", [](Json& j) { j["vision_config"] = nullptr; }), "");
  // The family's own nested reads are checked too (not only the parser's list).
  EXPECT_NE(structure_error("dbrx-base", [](Json& j) { j["ffn_config"] = Json::array({1, 2}); }).find("'ffn_config' must be an object"), std::string::npos);
}

// Per-layer lists and strings are checked against the layer count before
// anything proportional to them is built: a hostile pattern whose bad
// character comes last is refused by the length check, never by the per-
// character walk that would first copy millions of entries.
TEST(ModelStructure, PerLayerListsAreBoundedBeforeTheyAreBuilt) {
  std::string huge(10'000'000, 'M');
  huge.back() = 'X';
  std::string err = structure_error("nemotron-3-nano-30b-a3b-bf16", [&](Json& j) { j["hybrid_override_pattern"] = huge; });
  EXPECT_NE(err.find("'hybrid_override_pattern' gives 10000000 layers, more than the 65536"), std::string::npos) << err;
  std::string longer(100, '-');
  longer.back() = 'X';
  err = structure_error("nemotron-3-nano-30b-a3b-bf16", [&](Json& j) { j["hybrid_override_pattern"] = longer; });
  EXPECT_NE(err.find("'hybrid_override_pattern' gives 100 layers but 'num_hidden_layers' is 52"), std::string::npos) << err;
  // Lists: layer kinds (the bad kind last), layer indices, NoPE flags, cross-attention layers.
  std::vector<std::string> kinds(100000, "full_attention");
  kinds.back() = "bogus";
  err = structure_error("qwen3-8b", [&](Json& j) { j["layer_types"] = kinds; });
  EXPECT_NE(err.find("'layer_types' gives 100000 layers, more than the 65536"), std::string::npos) << err;
  kinds.resize(40);
  err = structure_error("qwen3-8b", [&](Json& j) { j["layer_types"] = kinds; });
  EXPECT_NE(err.find("'layer_types' gives 40 layers but 'num_hidden_layers' is 36"), std::string::npos) << err;
  err = structure_error("qwen3-30b-a3b", [&](Json& j) { j["mlp_only_layers"] = std::vector<int>(1'000'000, 1); });
  EXPECT_NE(err.find("'mlp_only_layers' gives 1000000 layers, more than the 65536"), std::string::npos) << err;
  err = structure_error("qwen3-30b-a3b", [&](Json& j) { j["mlp_only_layers"] = std::vector<int>(49, 1); });
  EXPECT_NE(err.find("'mlp_only_layers' gives 49 layers but 'num_hidden_layers' is 48"), std::string::npos) << err;
  err = structure_error("llama4-scout-17b-16e-instruct", [&](Json& j) { j["text_config"]["no_rope_layers"] = "1111"; });
  EXPECT_NE(err.find("'no_rope_layers' must be a list"), std::string::npos) << err;
  err = structure_error("llama-3.2-90b-vision-instruct", [&](Json& j) { j["text_config"]["cross_attention_layers"] = std::vector<int>(500, 3); });
  EXPECT_NE(err.find("'cross_attention_layers' lists 500 layers but 'num_hidden_layers' is 100"), std::string::npos) << err;
}

// Sizes transformers cannot build from: MLA dimensions of 0 (q_lora_rank may
// be null, never 0), and a null MLP width where the family has no default.
TEST(ModelStructure, ZeroMlaDimsAndNullWidthsAreInputErrors) {
  struct Case {
    const char* dir;
    const char* key;
    Json value;
    const char* expect;  // "" : accepted
  };
  const Json null;
  for (const Case& c : std::vector<Case>{
           {"deepseek-v3", "v_head_dim", 0, "'v_head_dim' must be a positive integer (got 0)"},
           {"deepseek-v3", "kv_lora_rank", 0, "'kv_lora_rank' must be a positive integer (got 0)"},
           {"deepseek-v3", "qk_rope_head_dim", 0, "'qk_rope_head_dim' must be a positive integer (got 0)"},
           {"deepseek-v3", "qk_nope_head_dim", 0, "'qk_nope_head_dim' must be a positive integer (got 0)"},
           {"glm-5", "qk_nope_head_dim", -1, "'qk_nope_head_dim' must be a positive integer (got -1)"},
           {"deepseek-v3", "q_lora_rank", 0, "'q_lora_rank' is 0: it must be a positive integer, or null for none"},
           {"deepseek-v3", "q_lora_rank", -5, "'q_lora_rank' is -5"},
           {"deepseek-v3.2", "kv_lora_rank", 0, "'kv_lora_rank' must be a positive integer (got 0)"},
           {"glm-5", "v_head_dim", 0, "'v_head_dim' must be a positive integer (got 0)"},
           {"kimi-k2-instruct", "q_lora_rank", 0, "'q_lora_rank' is 0"},
           {"deepseek-v3", "q_lora_rank", null, ""},  // DeepSeek-V2-Lite: no query compression
           {"llama-3.1-8b", "intermediate_size", null, "'intermediate_size' is null: the llama architecture needs the MLP width"},
           {"mixtral-8x7b-v0.1", "intermediate_size", null, "'intermediate_size' is null"},  // its experts' width
           {"qwen3-30b-a3b", "intermediate_size", null, ""},  // every layer is MoE: transformers never reads it
           {"opt-1.3b", "ffn_dim", null, "'ffn_dim' is null"},
           {"gpt-j-6b", "n_inner", null, ""},              // GPT-J: null means 4 x n_embd
           {"phi-2-mixformer-legacy", "n_inner", null, ""},  // likewise
           {"falcon-40b", "ffn_hidden_size", null, ""},     // Falcon: null means 4 x hidden_size
       }) {
    std::string err = structure_error(c.dir, [&](Json& j) { j[c.key] = c.value; });
    if (*c.expect == 0) {
      EXPECT_EQ(err, "") << c.dir << " " << c.key << "=" << c.value.dump();
    } else {
      EXPECT_NE(err.find(c.expect), std::string::npos) << c.dir << " " << c.key << "=" << c.value.dump() << ": " << (err.empty() ? "accepted" : err);
    }
  }
  // With a dense layer (mlp_only_layers) the width is needed again.
  EXPECT_NE(structure_error("qwen3-30b-a3b", [](Json& j) {
              j["intermediate_size"] = nullptr;
              j["mlp_only_layers"] = Json::array({0});
            }).find("'intermediate_size' is null"),
            std::string::npos);
  // GPT-J's null n_inner sizes the MLP at 4 x n_embd, as transformers does.
  auto gptj = structure_edited("gpt-j-6b", [](Json& j) { j["n_inner"] = nullptr; });
  for (const auto& m : gptj.modules)
    if (m.name == "transformer.h.0.mlp.fc_in") {
      EXPECT_EQ(m.out, 4u * 4096u);
    }
}
