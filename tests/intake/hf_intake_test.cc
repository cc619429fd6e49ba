// Hugging Face intake: every corpus config checked against stated facts,
// generated safetensors checkpoints for exact counts, and hostile inputs.
#include <map>
#include <gtest/gtest.h>

#include <fnmatch.h>

#include <cmath>
#include <tuple>

#include "common/error.h"
#include "intake/intake.h"
#include "intake/module_names.h"
#include "intake/safetensors_reader.h"
#include "export_sim/safetensors_writer.h"
#include "support/test_support.h"

using namespace qp_test;
using quarkplan::Json;

namespace {

Json intake(const fs::path& dir, bool trust = false, const std::string& release = "") {
  quarkplan::IntakeRequest req;
  req.model = dir.string();
  req.trust_remote_code = trust;
  req.quark_version = release;
  return quarkplan::run_intake(req);
}

bool has_rule(const Json& a, const std::string& rule) {
  for (const auto& r : a["risks"])
    if (r["rule"] == rule) return true;
  return false;
}

struct CorpusFact {
  const char* dir;
  const char* model_type;
  int64_t layers;
  int64_t experts;  // 0: dense
  bool remote_code;
  const char* pre_quantized;
  bool template_supported;
  const char* status;
};
void PrintTo(const CorpusFact& f, std::ostream* os) { *os << f.dir; }

class HfCorpus : public ::testing::TestWithParam<CorpusFact> {};

}  // namespace

TEST_P(HfCorpus, FactsMatch) {
  const CorpusFact& f = GetParam();
  Json a = intake(testdata(std::string("hf/") + f.dir));
  const Json& m = a["model"];
  EXPECT_EQ(m["model_type"], f.model_type);
  EXPECT_EQ(m["num_hidden_layers"], f.layers);
  EXPECT_EQ(m["is_moe"].get<bool>(), f.experts > 0);
  if (f.experts) EXPECT_EQ(m["num_experts"], f.experts);
  else EXPECT_TRUE(m["num_experts"].is_null());
  EXPECT_EQ(m["trust_remote_code"].get<bool>(), f.remote_code);
  EXPECT_EQ(has_rule(a, "torch.intake.trust_remote_code"), f.remote_code);
  if (f.pre_quantized) {
    EXPECT_EQ(m["pre_quantized"], f.pre_quantized);
    EXPECT_TRUE(has_rule(a, "torch.intake.pre_quantized"));
  } else {
    EXPECT_TRUE(m["pre_quantized"].is_null());
  }
  EXPECT_EQ(m["template_supported"].get<bool>(), f.template_supported);
  EXPECT_EQ(a["analysis_status"], f.status);
  EXPECT_EQ(a["quantization_targets"]["needs_moe_preparation"].get<bool>(), f.experts > 0);
  EXPECT_GT(a["quantization_targets"]["linear_layer_count"].get<int64_t>(), 0);
  EXPECT_GT(m["estimated_size_gb"].get<double>(), 0.0);
  EXPECT_FALSE(a["quantization_targets"]["exclude_defaults"].empty());
}

INSTANTIATE_TEST_SUITE_P(
    Corpus, HfCorpus,
    ::testing::Values(
        CorpusFact{"chatglm2-6b", "chatglm", 28, 0, true, nullptr, true, "partial"},
        CorpusFact{"deepseek-r1", "deepseek_v3", 61, 256, false, "fp8", true, "complete"},
        CorpusFact{"deepseek-v3", "deepseek_v3", 61, 256, false, "fp8", true, "complete"},
        CorpusFact{"deepseek-v3.2", "deepseek_v32", 61, 256, false, "fp8", true, "complete"},
        CorpusFact{"falcon-180b-chat", "falcon", 80, 0, false, nullptr, false, "partial"},
        CorpusFact{"falcon-40b", "RefinedWeb", 60, 0, true, nullptr, false, "partial"},
        CorpusFact{"gemma-2b", "gemma", 18, 0, false, nullptr, false, "partial"},
        CorpusFact{"gemma-3-27b-it-resaved", "gemma3", 62, 0, false, nullptr, true, "complete"},
        CorpusFact{"gemma-4-26b-a4b", "gemma4", 30, 128, false, nullptr, true, "complete"},  // a template from Quark 0.13 on (a draft under 0.12: HfIntake.ReleasesDifferInTemplates)
        CorpusFact{"glm-4.7-fp8-trimmed-derivative", "glm4_moe", 92, 160, false, nullptr, true, "complete"},
        CorpusFact{"glm-5", "glm_moe_dsa", 78, 256, false, nullptr, true, "complete"},
        CorpusFact{"gpt-j-6b", "gptj", 28, 0, false, nullptr, true, "complete"},
        CorpusFact{"gpt-oss-120b", "gpt_oss", 36, 128, false, "mxfp4", true, "complete"},
        CorpusFact{"gpt-oss-20b", "gpt_oss", 24, 32, false, "mxfp4", true, "complete"},
        CorpusFact{"granite-3.1-1b-a400m-instruct", "granitemoe", 24, 32, false, nullptr, false, "partial"},
        CorpusFact{"internlm-20b", "internlm", 60, 0, true, nullptr, false, "partial"},
        CorpusFact{"kimi-k2-instruct", "kimi_k2", 61, 384, true, "fp8", true, "partial"},
        CorpusFact{"llama-2-7b-chat-hf", "llama", 32, 0, false, nullptr, true, "complete"},
        CorpusFact{"llama-3.1-70b", "llama", 80, 0, false, nullptr, true, "complete"},
        CorpusFact{"llama-3.1-8b", "llama", 32, 0, false, nullptr, true, "complete"},
        CorpusFact{"llama-3.1-8b-instruct", "llama", 32, 0, false, nullptr, true, "complete"},
        CorpusFact{"llama-3.2-1b-instruct", "llama", 16, 0, false, nullptr, true, "complete"},
        CorpusFact{"llama-3.2-3b-instruct", "llama", 28, 0, false, nullptr, true, "complete"},
        CorpusFact{"llama-3.2-90b-vision-instruct", "mllama", 100, 0, false, nullptr, true, "complete"},
        CorpusFact{"llama-3.3-nemotron-super-49b-v1", "nemotron-nas", 80, 0, true, nullptr, false, "partial"},
        CorpusFact{"llama4-maverick-17b-128e-instruct", "llama4", 48, 128, false, nullptr, true, "complete"},
        CorpusFact{"llama4-scout-17b-16e-instruct", "llama4", 48, 16, false, nullptr, true, "complete"},
        CorpusFact{"medgemma-27b-it", "gemma3", 62, 0, false, nullptr, true, "complete"},
        CorpusFact{"mimo-7b-base", "mimo", 36, 0, false, nullptr, false, "partial"},
        CorpusFact{"minimax-m2.7", "minimax_m2", 62, 256, false, "fp8", true, "complete"},
        CorpusFact{"mistral-7b-instruct-v0.3-todict-derivative", "mistral", 32, 0, false, nullptr, true, "complete"},
        CorpusFact{"mistral-7b-v0.3", "mistral", 32, 0, false, nullptr, true, "complete"},
        CorpusFact{"mixtral-8x7b-v0.1", "mixtral", 32, 8, false, nullptr, true, "complete"},
        CorpusFact{"nemotron-3-nano-30b-a3b-bf16", "nemotron_h", 52, 128, false, nullptr, false, "partial"},
        CorpusFact{"olmo-3.1-32b-instruct", "olmo3", 64, 0, false, nullptr, false, "partial"},
        CorpusFact{"opt-1.3b", "opt", 24, 0, false, nullptr, true, "complete"},
        CorpusFact{"phi-2-mixformer-legacy", "mixformer-sequential", 32, 0, true, nullptr, false, "partial"},
        CorpusFact{"phi-3-mini-128k-instruct", "phi3", 32, 0, false, nullptr, true, "complete"},
        CorpusFact{"phi-3.5-vision-instruct-text-derivative", "phi3", 32, 0, false, nullptr, true, "complete"},
        CorpusFact{"phi-4", "phi3", 40, 0, false, nullptr, true, "complete"},
        CorpusFact{"phi-mini-moe-instruct", "phimoe", 32, 16, false, nullptr, false, "partial"},
        CorpusFact{"qwen-72b", "qwen", 80, 0, true, nullptr, true, "partial"},
        CorpusFact{"qwen2.5-7b-instruct", "qwen2", 28, 0, false, nullptr, true, "complete"},
        CorpusFact{"qwen3-0.6b", "qwen3", 28, 0, false, nullptr, true, "complete"},
        CorpusFact{"qwen3-235b-a22b", "qwen3_moe", 94, 128, false, nullptr, true, "complete"},
        CorpusFact{"qwen3-30b-a3b", "qwen3_moe", 48, 128, false, nullptr, true, "complete"},
        CorpusFact{"qwen3-30b-a3b-fp8", "qwen3_moe", 48, 128, false, "fp8", true, "complete"},
        CorpusFact{"qwen3-30b-a3b-instruct-2507", "qwen3_moe", 48, 128, false, nullptr, true, "complete"},
        CorpusFact{"qwen3-8b", "qwen3", 36, 0, false, nullptr, true, "complete"},
        CorpusFact{"qwen3-next-80b-a3b-thinking", "qwen3_next", 48, 512, false, nullptr, true, "complete"},
        CorpusFact{"qwen3-vl-235b-a22b-instruct", "qwen3_vl_moe", 94, 128, false, nullptr, true, "complete"},
        CorpusFact{"qwen3-vl-30b-a3b-instruct", "qwen3_vl_moe", 48, 128, false, nullptr, true, "complete"},
        CorpusFact{"qwen3.5-35b-a3b", "qwen3_5_moe", 40, 256, false, nullptr, true, "complete"}));

TEST(HfIntake, TemplateDetailsAndRemoteCodeApproval) {
  Json ds = intake(testdata("hf/deepseek-v3"));
  EXPECT_EQ(ds["quantization_targets"]["exclude_defaults"], Json::parse(R"(["lm_head","*self_attn*","*mlp.gate"])"));  // Quark 0.13
  EXPECT_EQ(ds["intake"]["quark_release"], "0.13");
  Json ds12 = intake(testdata("hf/deepseek-v3"), false, "0.12");
  EXPECT_EQ(ds12["quantization_targets"]["exclude_defaults"], Json::parse(R"(["lm_head","*self_attn*","*mlp.gate","*mlp.gate.linear"])"));
  EXPECT_EQ(ds12["intake"]["quark_release"], "0.12.post1");
  EXPECT_EQ(intake(testdata("hf/llama4-scout-17b-16e-instruct"), false, "0.12.post1")["model"]["transformers_version_required"], ">=4.51.0,<5.3");
  EXPECT_TRUE(has_rule(ds, "torch.intake.auto_map_not_needed"));
  // An MLA head: qk_nope_head_dim + qk_rope_head_dim, not hidden_size / heads (56).
  EXPECT_EQ(ds["model"]["architecture"]["head_dim"], 128 + 64);
  EXPECT_EQ(intake(testdata("hf/qwen3-8b"))["model"]["architecture"]["head_dim"], 128);
  Json glm = intake(testdata("hf/chatglm2-6b"));
  EXPECT_EQ(glm["quantization_targets"]["exclude_defaults"], Json::array({"transformer.output_layer"}));
  Json approved = intake(testdata("hf/chatglm2-6b"), true);
  EXPECT_EQ(approved["analysis_status"], "complete");
  EXPECT_TRUE(approved["model"]["trust_remote_code_approved"].get<bool>());
  Json l4 = intake(testdata("hf/llama4-scout-17b-16e-instruct"));
  EXPECT_EQ(l4["model"]["transformers_version_required"], ">=4.51.0,<5.17");
  EXPECT_EQ(l4["model"]["loading_class"], "Llama4ForConditionalGeneration");
  Json oss = intake(testdata("hf/gpt-oss-20b"));
  EXPECT_EQ(oss["model"]["loading_class"], "AutoModelForCausalLM with Mxfp4Config(dequantize=True)");
  EXPECT_EQ(oss["model"]["transformers_version_required"], ">=4.55.1,<5.17");
  Json gem = intake(testdata("hf/medgemma-27b-it"));
  EXPECT_EQ(gem["model"]["modalities"], Json::parse(R"(["text","vision"])"));
  EXPECT_TRUE(has_rule(gem, "torch.intake.multimodal"));
  // Template patterns that match no module are named (Quark's mllama template names the projector as
  // transformers 4 did); a text model's lm_head matches, so nothing is said.
  Json ml = intake(testdata("hf/llama-3.2-90b-vision-instruct"));
  EXPECT_EQ(ml["quantization_targets"]["exclude_defaults_unmatched"], Json::parse(R"(["*patch_embedding","multi_modal_projector"])"));
  bool named = false;
  for (const auto& r : ml["risks"])
    named = named || (r["rule"] == "torch.intake.template_patterns" &&
                      r["message"].get<std::string>().find("'multi_modal_projector' matches no Linear module config.json describes (its modules are named model.multi_modal_projector)") !=
                          std::string::npos);
  EXPECT_TRUE(named) << ml["risks"];
  Json dense = intake(testdata("hf/llama-3.1-8b"));
  EXPECT_TRUE(dense["quantization_targets"]["exclude_defaults_unmatched"].empty());
  // Granite MoE's experts are GraniteMoeParallelExperts, which Quark neither quantizes nor replaces:
  // no expert Linear modules, and the share of the parameters they are is said.
  Json granite = intake(testdata("hf/granite-3.1-1b-a400m-instruct"));
  for (const auto& role : granite["quantization_targets"]["module_roles"]) EXPECT_NE(role, "expert");
  bool experts_said = false;
  for (const auto& r : granite["risks"])
    experts_said = experts_said || (r["rule"] == "torch.intake.experts_not_linear" && r["severity"] == "high" &&
                                    r["message"].get<std::string>().find("(91% of the parameters) are GraniteMoeParallelExperts modules") != std::string::npos);
  EXPECT_TRUE(experts_said) << granite["risks"];
  // Every other MoE family's experts are Linear to Quark (or replaced by it): nothing said.
  for (const char* moe : {"qwen3-30b-a3b", "deepseek-v3", "mixtral-8x7b-v0.1", "dbrx-base", "gpt-oss-20b", "llama4-scout-17b-16e-instruct", "nemotron-3-nano-30b-a3b-bf16"})
    EXPECT_FALSE(has_rule(intake(testdata(std::string("hf/") + moe)), "torch.intake.experts_not_linear")) << moe;
  EXPECT_FALSE(has_rule(dense, "torch.intake.template_patterns"));
  Json unk = intake(testdata("hf/olmo-3.1-32b-instruct"));
  EXPECT_TRUE(has_rule(unk, "torch.intake.no_template"));
  Json next = intake(testdata("hf/qwen3-next-80b-a3b-thinking"));
  EXPECT_TRUE(has_rule(next, "torch.intake.hybrid_layers"));
  EXPECT_EQ(next["model"]["architecture"]["layer_types"].size(), 48u);
}

TEST(HfIntake, ConfigEstimatesMatchPublishedSizes) {
  // Published parameter counts (model cards / safetensors metadata).
  struct Known {
    const char* dir;
    double params;
  };
  for (const Known& k : {Known{"llama-3.1-8b", 8030261248.0}, Known{"llama-3.2-1b-instruct", 1235814400.0},
                         Known{"qwen3-8b", 8190735360.0}, Known{"mixtral-8x7b-v0.1", 46702792704.0},
                         Known{"deepseek-v3", 684489845504.0 /* incl. its MTP layer */}, Known{"llama-3.1-70b", 70553706496.0},
                         Known{"qwen3-30b-a3b", 30532122624.0}}) {
    Json a = intake(testdata(std::string("hf/") + k.dir));
    double got = a["model"]["total_params"].get<double>();
    EXPECT_NEAR(got / k.params, 1.0, 0.01) << k.dir << " estimated " << got;
    EXPECT_NE(a["model"]["params_method"].get<std::string>().find("estimated"), std::string::npos);
  }
  Json q = intake(testdata("hf/qwen3-8b"));
  EXPECT_EQ(q["quantization_targets"]["linear_layer_count"], 36 * 7 + 1);
  EXPECT_EQ(q["quantization_targets"]["module_names_source"], "config");
}

TEST(HfIntake, IndexAloneGivesNamesAndTotalSize) {
  struct Known {
    const char* dir;
    int64_t linears;  // layers x linears per layer + lm_head (tied or not: transformers builds it)
    double total_size;
  };
  for (const Known& k : {Known{"llama-3.2-3b-instruct", 28 * 7 + 1, 6425499648.0}, Known{"gemma-2b", 18 * 7 + 1, 5012344832.0},
                         Known{"mistral-7b-v0.3", 32 * 7 + 1, 14496047104.0},
                         Known{"phi-3-mini-128k-instruct", 32 * 4 + 1, 7642159104.0},
                         Known{"qwen-72b", 80 * 5 + 1, 144575840256.0},
                         Known{"falcon-180b-chat", 80 * 4 + 1, 359045130240.0},
                         Known{"medgemma-27b-it", 62 * 7 + 27 * 6 + 1, 54864813280.0},
                         Known{"gpt-oss-20b", 24 * (4 + 1 + 32 * 3) + 1, 13761264768.0}}) {
    Json a = intake(testdata(std::string("hf/") + k.dir));
    EXPECT_EQ(a["quantization_targets"]["linear_layer_count"], k.linears) << k.dir;
    EXPECT_EQ(a["quantization_targets"]["module_names_source"], "safetensors_index") << k.dir;
    EXPECT_NEAR(a["model"]["estimated_size_gb"].get<double>(), k.total_size / 1e9, 0.001) << k.dir;
    EXPECT_EQ(a["model"]["weights"]["source"], "index");
  }
  Json oss = intake(testdata("hf/gpt-oss-20b"));
  EXPECT_TRUE(oss["quantization_targets"]["has_non_linear_experts"].get<bool>());
  auto names = quarkplan::expand_module_names(oss["quantization_targets"]["module_names"].get<std::vector<std::string>>());
  EXPECT_NE(std::find(names.begin(), names.end(), "model.layers.23.mlp.experts.31.down_proj"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "model.layers.0.mlp.experts.0.gate_proj"), names.end());
}

// ---- generated checkpoints ---------------------------------------------------

namespace {

const char* kTinyLlamaConfig = R"({"model_type":"llama","architectures":["LlamaForCausalLM"],"num_hidden_layers":2,
  "hidden_size":64,"intermediate_size":128,"num_attention_heads":4,"num_key_value_heads":2,"vocab_size":256,
  "torch_dtype":"bfloat16","tie_word_embeddings":false,"transformers_version":"4.51.0"})";

std::vector<StTensor> tiny_llama_tensors() {
  std::vector<StTensor> t = {{"model.embed_tokens.weight", "BF16", {256, 64}}, {"model.norm.weight", "BF16", {64}},
                             {"lm_head.weight", "BF16", {256, 64}}};
  for (int l = 0; l < 2; ++l) {
    std::string p = "model.layers." + std::to_string(l) + ".";
    t.push_back({p + "input_layernorm.weight", "BF16", {64}});
    t.push_back({p + "post_attention_layernorm.weight", "BF16", {64}});
    t.push_back({p + "self_attn.q_proj.weight", "BF16", {64, 64}});
    t.push_back({p + "self_attn.k_proj.weight", "BF16", {32, 64}});
    t.push_back({p + "self_attn.v_proj.weight", "BF16", {32, 64}});
    t.push_back({p + "self_attn.o_proj.weight", "BF16", {64, 64}});
    t.push_back({p + "mlp.gate_proj.weight", "BF16", {128, 64}});
    t.push_back({p + "mlp.up_proj.weight", "BF16", {128, 64}});
    t.push_back({p + "mlp.down_proj.weight", "F32", {64, 128}});
  }
  return t;
}

uint64_t numel_sum(const std::vector<StTensor>& ts, const std::string& dtype) {
  uint64_t n = 0;
  for (const auto& t : ts) {
    if (t.dtype != dtype) continue;
    uint64_t e = 1;
    for (auto d : t.shape) e *= d;
    n += e;
  }
  return n;
}

}  // namespace

TEST(HfSafetensors, SingleFileGivesExactCounts) {
  TempDir d;
  write_file(d / "config.json", kTinyLlamaConfig);
  write_file(d / "tokenizer.json", "{}");
  auto ts = tiny_llama_tensors();
  write_safetensors(d / "model.safetensors", ts);
  Json a = intake(d.path());
  EXPECT_EQ(a["analysis_status"], "complete");
  EXPECT_EQ(a["model"]["params_by_dtype"]["bfloat16"], numel_sum(ts, "BF16"));
  EXPECT_EQ(a["model"]["params_by_dtype"]["float32"], numel_sum(ts, "F32"));
  EXPECT_EQ(a["model"]["total_params"], numel_sum(ts, "BF16") + numel_sum(ts, "F32"));
  EXPECT_EQ(a["quantization_targets"]["linear_layer_count"], 2 * 7 + 1);
  EXPECT_EQ(a["quantization_targets"]["module_names_source"], "safetensors");
  EXPECT_EQ(a["quantization_targets"]["module_names"],
            Json::parse(R"(["lm_head","model.layers.{0..1}.mlp.down_proj","model.layers.{0..1}.mlp.gate_proj","model.layers.{0..1}.mlp.up_proj",
              "model.layers.{0..1}.self_attn.k_proj","model.layers.{0..1}.self_attn.o_proj","model.layers.{0..1}.self_attn.q_proj","model.layers.{0..1}.self_attn.v_proj"])"));
  EXPECT_FALSE(has_rule(a, "torch.intake.tokenizer_missing"));
}

// Tied embeddings (Llama-3.2-1B/3B, Qwen3-0.6B, Gemma): transformers builds
// lm_head as an nn.Linear sharing the embedding's weight, so Quark sees it and
// quantizes it unless excluded. It is a module of the analysis -- from
// config.json alone, from the index, from the headers -- while the parameter
// count and the size count the shared weight once.
TEST(HfIntake, TiedLmHeadIsListedButCountedOnce) {
  auto head_of = [](const Json& a) {
    const Json& q = a["quantization_targets"];
    for (size_t i = 0; i < q["module_names"].size(); ++i)
      if (q["module_names"][i] == "lm_head") return std::make_pair(q["module_roles"][i].get<std::string>(), q["module_shapes"][i]);
    return std::make_pair(std::string("missing"), Json());
  };
  // config.json alone, with the published parameter counts unchanged.
  for (const auto& [dir, params, vocab, hidden] : std::vector<std::tuple<std::string, double, uint64_t, uint64_t>>{
           {"llama-3.2-1b-instruct", 1235814400.0, 128256, 2048}, {"qwen3-0.6b", 596049920.0, 151936, 1024}}) {
    Json a = intake(testdata("hf/" + dir));
    EXPECT_TRUE(a["model"]["architecture"]["tie_word_embeddings"].get<bool>()) << dir;
    auto [role, shape] = head_of(a);
    EXPECT_EQ(role, "lm_head") << dir;
    EXPECT_EQ(shape, Json::array({vocab * hidden, hidden})) << dir;
    EXPECT_EQ(a["quantization_targets"]["tied_modules"], Json::array({"lm_head"})) << dir;
    EXPECT_NEAR(a["model"]["total_params"].get<double>() / params, 1.0, 0.0001) << dir;
  }
  // The index (Gemma-2B, Llama-3.2-3B): the checkpoint has no lm_head.weight.
  for (const char* dir : {"gemma-2b", "llama-3.2-3b-instruct"}) {
    Json a = intake(testdata(std::string("hf/") + dir));
    EXPECT_EQ(head_of(a).first, "lm_head") << dir;
    EXPECT_EQ(a["quantization_targets"]["tied_modules"], Json::array({"lm_head"})) << dir;
  }
  // The headers: a tied checkpoint stores the embedding only; exact counts stay exact.
  TempDir d;
  Json c = Json::parse(kTinyLlamaConfig);
  c["tie_word_embeddings"] = true;
  write_file(d / "config.json", c.dump());
  write_file(d / "tokenizer.json", "{}");
  auto ts = tiny_llama_tensors();
  ts.erase(std::remove_if(ts.begin(), ts.end(), [](const StTensor& t) { return t.name == "lm_head.weight"; }), ts.end());
  write_safetensors(d / "model.safetensors", ts);
  Json a = intake(d.path());
  EXPECT_EQ(a["model"]["total_params"], numel_sum(ts, "BF16") + numel_sum(ts, "F32"));
  EXPECT_EQ(a["quantization_targets"]["linear_layer_count"], 2 * 7 + 1);
  EXPECT_EQ(head_of(a).second, Json::array({256 * 64, 64}));
  EXPECT_EQ(a["quantization_targets"]["tied_modules"], Json::array({"lm_head"}));
  EXPECT_EQ(a["quantization_targets"]["linear_params"], 2u * (64 * 64 * 2 + 32 * 64 * 2 + 128 * 64 * 3) + 256u * 64u);
  // A tied config whose checkpoint stores lm_head anyway: an ordinary stored Linear.
  TempDir s;
  write_file(s / "config.json", c.dump());
  write_file(s / "tokenizer.json", "{}");
  write_safetensors(s / "model.safetensors", tiny_llama_tensors());
  Json stored = intake(s.path());
  EXPECT_EQ(stored["quantization_targets"]["linear_layer_count"], 2 * 7 + 1);
  EXPECT_EQ(stored["quantization_targets"]["tied_modules"], Json::array());
}

// config.json and the checkpoint must describe the same layers: transformers
// fills missing layers at random and drops extra ones, both with a warning only.
TEST(HfSafetensors, LayerCountThatDisagreesWithTheCheckpointIsAHighRisk) {
  auto with_layers = [](int declared) {
    TempDir d;
    Json c = Json::parse(kTinyLlamaConfig);
    c["num_hidden_layers"] = declared;
    write_file(d / "config.json", c.dump());
    write_file(d / "tokenizer.json", "{}");
    write_safetensors(d / "model.safetensors", tiny_llama_tensors());  // layers 0 and 1
    return intake(d.path());
  };
  auto risk_text = [](const Json& a) {
    std::string t;
    for (const auto& r : a["risks"])
      if (r["rule"] == "torch.intake.layer_count") {
        EXPECT_EQ(r["severity"], "high");
        t += r["message"].get<std::string>() + "\n";
      }
    return t;
  };
  EXPECT_EQ(risk_text(with_layers(2)), "");
  EXPECT_EQ(with_layers(2)["analysis_status"], "complete");
  EXPECT_EQ(with_layers(5)["analysis_status"], "partial");  // the plan stays a draft until resolved
  EXPECT_EQ(risk_text(with_layers(5)),
            "config.json declares 5 decoder layers (num_hidden_layers) but the checkpoint holds weights for 2 (none for layers 2-4): "
            "transformers would initialise the missing layers at random.\n");
  EXPECT_EQ(risk_text(with_layers(1)),
            "The checkpoint holds weights for layer 1 beyond the 1 decoder layer config.json declares (num_hidden_layers): "
            "transformers would drop them, so the model quantized is not the model saved.\n");
  // Every real index of the corpus agrees with its config, MTP layers included
  // (DeepSeek-V3 stores its MTP layer as model.layers.61).
  int indexes = 0;
  for (const auto& e : fs::directory_iterator(testdata("hf")))
    if (fs::exists(e.path() / "model.safetensors.index.json")) {
      ++indexes;
      EXPECT_EQ(risk_text(intake(e.path(), true)), "") << e.path();
    }
  EXPECT_GE(indexes, 5);
}

TEST(HfSafetensors, ShardsWithIndexAndSparseLargeShards) {
  TempDir d;
  write_file(d / "config.json", R"({"model_type":"qwen3","num_hidden_layers":40,"hidden_size":5120,"intermediate_size":17408,
     "num_attention_heads":40,"num_key_value_heads":8,"head_dim":128,"vocab_size":151936,"torch_dtype":"bfloat16","tie_word_embeddings":false})");
  // A Qwen3-14B-shaped checkpoint in 4 sparse shards (~29.5 GB of holes).
  std::vector<std::vector<StTensor>> shards(4);
  shards[0].push_back({"model.embed_tokens.weight", "BF16", {151936, 5120}});
  shards[3].push_back({"lm_head.weight", "BF16", {151936, 5120}});
  shards[3].push_back({"model.norm.weight", "BF16", {5120}});
  for (int l = 0; l < 40; ++l) {
    auto& s = shards[l / 14];
    std::string p = "model.layers." + std::to_string(l) + ".";
    s.push_back({p + "self_attn.q_proj.weight", "BF16", {5120, 5120}});
    s.push_back({p + "self_attn.k_proj.weight", "BF16", {1024, 5120}});
    s.push_back({p + "self_attn.v_proj.weight", "BF16", {1024, 5120}});
    s.push_back({p + "self_attn.o_proj.weight", "BF16", {5120, 5120}});
    s.push_back({p + "self_attn.q_norm.weight", "BF16", {128}});
    s.push_back({p + "self_attn.k_norm.weight", "BF16", {128}});
    s.push_back({p + "mlp.gate_proj.weight", "BF16", {17408, 5120}});
    s.push_back({p + "mlp.up_proj.weight", "BF16", {17408, 5120}});
    s.push_back({p + "mlp.down_proj.weight", "BF16", {5120, 17408}});
    s.push_back({p + "input_layernorm.weight", "BF16", {5120}});
    s.push_back({p + "post_attention_layernorm.weight", "BF16", {5120}});
  }
  Json index;
  uint64_t total = 0, params = 0;
  for (size_t i = 0; i < shards.size(); ++i) {
    std::string name = "model-0000" + std::to_string(i + 1) + "-of-00004.safetensors";
    total += write_safetensors(d / name, shards[i], /*sparse=*/true);
    for (auto& t : shards[i]) {
      index["weight_map"][t.name] = name;
      uint64_t e = 1;
      for (auto x : t.shape) e *= x;
      params += e;
    }
  }
  index["metadata"]["total_size"] = total;
  write_file(d / "model.safetensors.index.json", index.dump());
  Json a = intake(d.path());
  EXPECT_EQ(a["analysis_status"], "complete");
  EXPECT_EQ(a["model"]["total_params"], params);
  EXPECT_NEAR(params / 1e9, 14.77, 0.01);  // Qwen3-14B
  {
    // The command line leaves the working set to the process exit: the same
    // analysis (the views were all used before the move).
    quarkplan::IntakeRequest req;
    req.model = d.path().string();
    quarkplan::IntakeContext ctx = quarkplan::resolve_intake_context(req);
    ctx.keep_until_exit = true;
    EXPECT_EQ(quarkplan::run_intake(req, ctx), a);
  }
  EXPECT_EQ(a["model"]["params_method"], "exact from safetensors headers");
  EXPECT_EQ(a["quantization_targets"]["linear_layer_count"], 40 * 7 + 1);
  EXPECT_EQ(a["model"]["weights"]["files"].size(), 4u);
  EXPECT_TRUE(has_rule(a, "torch.intake.tokenizer_missing"));

  // A missing shard: partial, with the reason; its modules still come from
  // the names the index lists for it.
  fs::rename(d / "model-00002-of-00004.safetensors", d / "moved.bin.tmp");
  Json p = intake(d.path());
  EXPECT_EQ(p["analysis_status"], "partial");
  EXPECT_TRUE(has_rule(p, "torch.intake.missing_shards"));
  EXPECT_EQ(p["quantization_targets"]["linear_layer_count"], 40 * 7 + 1);
  fs::rename(d / "moved.bin.tmp", d / "model-00002-of-00004.safetensors");

  // An index that names a tensor the shard does not hold: the shard's records
  // are laid out again from its header (not the index's count), and every
  // other shard keeps its own.
  Json good_index = index;
  index["weight_map"]["model.layers.99.mlp.up_proj.weight"] = "model-00001-of-00004.safetensors";
  write_file(d / "model.safetensors.index.json", index.dump());
  Json mm = intake(d.path());
  EXPECT_EQ(mm["analysis_status"], "partial");
  EXPECT_TRUE(has_rule(mm, "torch.intake.index_mismatch"));
  EXPECT_EQ(mm["quantization_targets"]["linear_layer_count"], 40 * 7 + 1);
  EXPECT_EQ(mm["model"]["total_params"], params);

  // A header with a tensor the index does not list: it is found all the same.
  write_file(d / "model.safetensors.index.json", good_index.dump());
  shards[1].push_back({"model.layers.20.mlp.extra_proj.weight", "BF16", {16, 5120}});
  write_safetensors(d / "model-00002-of-00004.safetensors", shards[1], /*sparse=*/true);
  Json extra = intake(d.path());
  EXPECT_TRUE(has_rule(extra, "torch.intake.index_mismatch"));
  EXPECT_EQ(extra["quantization_targets"]["linear_layer_count"], 40 * 7 + 2);
  EXPECT_EQ(extra["model"]["total_params"], params + 16 * 5120);
  bool named = false;
  for (const auto& n : extra["quantization_targets"]["module_names"]) named = named || n == "model.layers.20.mlp.extra_proj";
  EXPECT_TRUE(named);
}

TEST(HfSafetensors, FusedExpertsAreCountedPerExpert) {
  TempDir d;
  write_file(d / "config.json", R"({"model_type":"llama4","num_hidden_layers":1,"hidden_size":32,"num_local_experts":4,
     "intermediate_size":64,"num_attention_heads":4,"vocab_size":100})");
  std::vector<StTensor> ts = {{"language_model.model.layers.0.feed_forward.experts.gate_up_proj", "BF16", {4, 32, 128}},
                              {"language_model.model.layers.0.feed_forward.experts.down_proj", "BF16", {4, 64, 32}},
                              {"language_model.model.layers.0.feed_forward.router.weight", "BF16", {4, 32}},
                              {"language_model.lm_head.weight", "BF16", {100, 32}}};
  write_safetensors(d / "model.safetensors", ts);
  Json a = intake(d.path());
  EXPECT_EQ(a["quantization_targets"]["linear_layer_count"], 4 * 3 + 1 + 1);
  EXPECT_TRUE(a["quantization_targets"]["has_non_linear_experts"].get<bool>());
  auto names = quarkplan::expand_module_names(a["quantization_targets"]["module_names"].get<std::vector<std::string>>());
  EXPECT_NE(std::find(names.begin(), names.end(), "language_model.model.layers.0.feed_forward.experts.3.up_proj"), names.end());
}

// ---- hostile inputs -------------------------------------------------------------

TEST(HfHostile, CorruptShardsAreOneLineErrors) {
  int seen = 0;
  for (const auto& e : fs::directory_iterator(testdata("corrupt_safetensors"))) {
    ++seen;
    TempDir d;
    write_file(d / "m" / "config.json", kTinyLlamaConfig);
    fs::copy_file(e.path(), d / "m" / "model.safetensors");
    RunResult r = run_quarkplan({"intake", "m", "-o", "out.json"}, d.path());
    EXPECT_EQ(r.exit_code, 2) << e.path().filename() << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("model.safetensors"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(d / "out.json"));
  }
  EXPECT_GE(seen, 8);
}

TEST(HfHostile, HeaderLimitsAndOverlaps) {
  using quarkplan::safetensors::parse;
  std::string big(8, '\0');
  uint64_t n = 200ull << 20;
  for (int i = 0; i < 8; ++i) big[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  EXPECT_THROW(parse(big + std::string(16, ' ')), std::runtime_error);  // > 100 MB header
  auto file = [](const std::string& header, size_t data) {
    std::string len(8, '\0');
    for (int i = 0; i < 8; ++i) len[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
    return len + header + std::string(data, '\0');
  };
  EXPECT_NO_THROW(parse(file(R"({"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})", 4)));
  EXPECT_THROW(parse(file(R"({"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]},"b":{"dtype":"F16","shape":[2],"data_offsets":[2,6]}})", 6)), std::runtime_error);
  EXPECT_THROW(parse(file(R"({"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})", 3)), std::runtime_error);
  EXPECT_THROW(parse(file(R"({"a":{"dtype":"Q7","shape":[2],"data_offsets":[0,4]}})", 4)), std::runtime_error);
  EXPECT_THROW(parse(file(R"({"a":{"dtype":"F16","shape":[3],"data_offsets":[0,4]}})", 6)), std::runtime_error);
  EXPECT_THROW(parse(file(R"({"a":{"dtype":"F16","shape":[-2],"data_offsets":[0,4]}})", 4)), std::runtime_error);
  EXPECT_THROW(parse(file(R"([1,2])", 0)), std::runtime_error);
}

TEST(HfHostile, MissingOrMalformedConfigAndEscapingShards) {
  TempDir d;
  write_file(d / "bad" / "config.json", "{\"model_type\": \"llama\",");
  RunResult r = run_quarkplan({"intake", "bad"}, d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("config.json: invalid JSON"), std::string::npos) << r.err;
  write_file(d / "huge" / "config.json", "{\"model_type\": \"llama\", \"hidden_size\": 1e406}");  // found by the fuzzer
  r = run_quarkplan({"intake", "huge"}, d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("huge/config.json: invalid JSON"), std::string::npos) << r.err;
  write_file(d / "empty" / "config.json", "{}");
  r = run_quarkplan({"intake", "empty"}, d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no model_type"), std::string::npos) << r.err;
  // A shard symlinked to a file outside the model folder is refused.
  write_file(d / "esc" / "config.json", kTinyLlamaConfig);
  write_safetensors(d / "outside.safetensors", tiny_llama_tensors());
  fs::create_symlink(d / "outside.safetensors", d / "esc" / "model.safetensors");
  r = run_quarkplan({"intake", "esc"}, d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("refused"), std::string::npos) << r.err;
  // An index naming a shard outside the folder is refused too.
  write_file(d / "esc2" / "config.json", kTinyLlamaConfig);
  write_file(d / "esc2" / "model.safetensors.index.json", R"({"weight_map":{"lm_head.weight":"../outside.safetensors"}})");
  r = run_quarkplan({"intake", "esc2"}, d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("refused"), std::string::npos) << r.err;
  // Hugging Face's cache layout (snapshot links into ../../blobs) is accepted.
  fs::path repo = d / "hub" / "models--org--tiny";
  write_file(repo / "snapshots" / "abc" / "config.json", kTinyLlamaConfig);
  write_safetensors(repo / "blobs" / "deadbeef", tiny_llama_tensors());
  fs::create_symlink("../../blobs/deadbeef", repo / "snapshots" / "abc" / "model.safetensors");
  Json a = intake(repo / "snapshots" / "abc");
  EXPECT_EQ(a["model"]["weights"]["source"], "safetensors");
}

TEST(ModuleNames, CollapseExpandRoundTripAndQuarkMatching) {
  std::vector<std::string> names;
  for (int l = 0; l < 61; ++l) {
    names.push_back("model.layers." + std::to_string(l) + ".self_attn.o_proj");
    if (l >= 3)
      for (int e = 0; e < 256; ++e) names.push_back("model.layers." + std::to_string(l) + ".mlp.experts." + std::to_string(e) + ".down_proj");
  }
  names.push_back("model.layers.7.mlp.shared_experts.down_proj");
  names.push_back("lm_head");
  auto c = quarkplan::collapse_module_names(names);
  EXPECT_EQ(c, (std::vector<std::string>{"lm_head", "model.layers.{3..60}.mlp.experts.{0..255}.down_proj",
                                         "model.layers.7.mlp.shared_experts.down_proj", "model.layers.{0..60}.self_attn.o_proj"}));
  auto e = quarkplan::expand_module_names(c);
  std::sort(e.begin(), e.end());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(e, names);
  // Non-contiguous sets stay exact.
  auto c2 = quarkplan::collapse_module_names({"a.1.x", "a.3.x", "a.4.x"});
  auto e2 = quarkplan::expand_module_names(c2);
  EXPECT_EQ(e2.size(), 3u);
  using quarkplan::PatternMatch;
  EXPECT_TRUE(quarkplan::quark_pattern_matches("*self_attn*", "model.layers.0.self_attn.q_proj", PatternMatch::kWithChildren));
  EXPECT_TRUE(quarkplan::quark_pattern_matches("model.layers.61", "model.layers.61.mlp.down_proj", PatternMatch::kWithChildren));  // 0.12: p -> p.*
  EXPECT_FALSE(quarkplan::quark_pattern_matches("model.layers.61", "model.layers.61.mlp.down_proj", PatternMatch::kVerbatim));     // 0.13: verbatim
  EXPECT_TRUE(quarkplan::quark_pattern_matches("*mlp.gate", "model.layers.3.mlp.gate", PatternMatch::kWithChildren));
  EXPECT_TRUE(quarkplan::quark_pattern_matches("*mlp.gate", "model.layers.3.mlp.gate.linear", PatternMatch::kWithChildren));
  EXPECT_FALSE(quarkplan::quark_pattern_matches("*mlp.gate", "model.layers.3.mlp.gate.linear", PatternMatch::kVerbatim));
  for (auto how : {PatternMatch::kWithChildren, PatternMatch::kVerbatim}) {
    EXPECT_FALSE(quarkplan::quark_pattern_matches("*mlp.gate", "model.layers.3.mlp.gate_proj", how));
    EXPECT_FALSE(quarkplan::quark_pattern_matches("lm_head", "model.lm_head_extra", how));
  }
}

TEST(ModuleNames, InterleavedGroupsCollapseAsEachGroupAlone) {
  // An expert's projections alternate (gate, up, down, ...) while new groups
  // keep appearing (here a one-off module every third expert): each group must
  // collapse to its own ranges, exactly as when collapsed alone.
  std::vector<std::string> names;
  std::map<std::string, std::vector<std::string>> by_kind;
  int extra = 0;
  for (int l = 0; l < 5; ++l)
    for (int e = 0; e < 64; ++e) {
      const std::string p = "model.layers." + std::to_string(l) + ".mlp.experts." + std::to_string(e) + ".";
      std::vector<std::string> kinds = {"gate_proj", "up_proj", "down_proj"};
      if (e % 3 == 0) kinds.push_back("extra_" + std::string(1, static_cast<char>('a' + extra++ % 26)) + std::to_string(extra));
      if ((l + e) % 5 == 0) kinds.erase(kinds.begin() + 1);  // holes: up_proj is not a full product
      for (const auto& k : kinds) {
        names.push_back(p + k);
        by_kind[k].push_back(p + k);
      }
    }
  std::vector<std::string> expected;
  for (auto& [k, list] : by_kind)
    for (auto& c : quarkplan::collapse_module_names(list)) expected.push_back(c);
  std::vector<std::string> got = quarkplan::collapse_module_names(names);
  std::sort(expected.begin(), expected.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, expected);
  EXPECT_EQ(std::count(got.begin(), got.end(), "model.layers.{0..4}.mlp.experts.{0..63}.gate_proj"), 1);
  auto round = quarkplan::expand_module_names(got, 1u << 20);
  std::sort(round.begin(), round.end());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(round, names);
}

TEST(ModuleNames, NumbersFarApartCollapseExactly) {
  // Index parts far apart (0 and 1,000,000, 20 of them per name): each set of
  // distinct values is sorted rather than marked in a table the size of the span.
  std::vector<std::string> names;
  for (int i = 0; i < 300; ++i) {
    std::string n = "foo";
    for (int k = 0; k < 20; ++k) n += ((i >> (k % 9)) & 1) ? ".1000000" : ".0";
    names.push_back(n + ".proj");
  }
  auto c = quarkplan::collapse_module_names(names);
  auto e = quarkplan::expand_module_names(c, 1u << 20);
  std::sort(e.begin(), e.end());
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  EXPECT_EQ(e, names);
}

TEST(ModuleNames, FastMatcherAgreesWithFnmatch) {
  // The prepared matcher must give fnmatch's answer (plus Quark's p -> p.* rule).
  const std::vector<std::string> patterns = {"*", "lm_head", "*lm_head", "*self_attn*", "*mlp.gate", "*mlp.gate.linear",
                                             "model.layers.61.*", "model.layers.61", "*experts*", "*.gate", "a*b*c", "*a*a",
                                             "model.*.mlp.*_proj", "*shared_expert_gate*", "mtp.*", "*.visual.*", "", "x?y", "[ab]*"};
  const std::vector<std::string> names = {"lm_head", "model.lm_head", "model.layers.0.self_attn.q_proj", "model.layers.3.mlp.gate",
                                          "model.layers.3.mlp.gate_proj", "model.layers.3.mlp.gate.linear", "model.layers.61.mlp.down_proj",
                                          "model.layers.61", "model.layers.610.x", "model.layers.3.mlp.experts.7.up_proj", "abc", "aXbYc",
                                          "aa", "a", "mtp.fc", "model.visual.blocks.0", "", "xzy", "bq", "model.layers.1.mlp.down_proj"};
  for (const auto& p : patterns) {
    quarkplan::QuarkPattern qp(p, quarkplan::PatternMatch::kWithChildren), verbatim(p, quarkplan::PatternMatch::kVerbatim);
    for (const auto& n : names) {
      bool exact = ::fnmatch(p.c_str(), n.c_str(), 0) == 0;
      bool expected = exact || (!(p.size() >= 2 && p.compare(p.size() - 2, 2, ".*") == 0) && ::fnmatch((p + ".*").c_str(), n.c_str(), 0) == 0);
      EXPECT_EQ(qp.matches(n), expected) << "pattern '" << p << "' name '" << n << "'";
      EXPECT_EQ(verbatim.matches(n), exact) << "verbatim pattern '" << p << "' name '" << n << "'";
    }
  }
}

// Quark 0.13 added templates (gemma4, qwen3_5, ...): the same folders are drafts for 0.12.post1.
TEST(HfIntake, ReleasesDifferInTemplates) {
  for (const char* dir : {"hf/gemma-4-26b-a4b", "hf/qwen3.5-9b-transformers-default", "docs/qwen3_5-dense"}) {
    Json now = intake(testdata(dir)), old = intake(testdata(dir), false, "0.12.post1");
    EXPECT_TRUE(now["model"]["template_supported"].get<bool>()) << dir;
    EXPECT_FALSE(old["model"]["template_supported"].get<bool>()) << dir;
    EXPECT_EQ(old["analysis_status"], "partial") << dir;
    EXPECT_FALSE(has_rule(now, "torch.intake.unsupported_model_type")) << dir;
  }
  Json g = intake(testdata("hf/gemma-4-26b-a4b"));
  EXPECT_EQ(g["quantization_targets"]["exclude_defaults"],
            Json::parse(R"(["*vision_tower*","*embed_vision*","*audio_tower*","*embed_audio*","*multi_modal_projector*","*lm_head","*router.proj"])"));
  EXPECT_TRUE(has_rule(intake(testdata("docs/qwen3_5-dense"), false, "0.12.post1"), "torch.intake.unsupported_model_type"));
}
