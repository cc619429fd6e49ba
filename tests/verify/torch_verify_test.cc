// verify on Hugging Face exports: real corpus configs planned by the binary,
// exports written as Quark's exporter lays them out (quark_export_writer), and
// one broken promise per test, each checked by its message.
#include <gtest/gtest.h>

#include "support/test_support.h"
#include "verify/verify_test_support.h"
#include "export_sim/torch_export_writer.h"

namespace qp_test {
namespace {

using quarkplan::Json;

struct Planned {
  TempDir tmp;
  fs::path source, plan;
  Json plan_json, analysis;
};

// Copies a corpus config folder, adds tokenizer files, plans it with `args`.
std::unique_ptr<Planned> plan_for(const std::string& corpus, const std::vector<std::string>& args) {
  auto p = std::make_unique<Planned>();
  p->source = p->tmp / "source";
  fs::create_directories(p->source);
  fs::copy(testdata("hf/" + corpus), p->source, fs::copy_options::recursive);
  // A safetensors index of the corpus names shards that are not here: plan from the config.
  fs::remove(p->source / "model.safetensors.index.json");
  write_file(p->source / "tokenizer_config.json", "{\"model_max_length\": 131072}\n");
  write_file(p->source / "tokenizer.json", "{\"version\": \"1.0\", \"model\": {\"type\": \"BPE\"}}\n");
  write_file(p->source / "generation_config.json", "{\"temperature\": 0.6}\n");
  p->plan = p->tmp / "quant_plan.json";
  std::vector<std::string> a = {"plan", p->source.string(), "--yes", "-o", p->plan.string()};
  a.insert(a.end(), args.begin(), args.end());
  RunResult r = run_quarkplan(a, p->tmp.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  p->plan_json = quarkplan::parse_json(read_file(p->plan), "plan");
  p->analysis = quarkplan::parse_json(read_file(p->tmp / "model_analysis.json"), "analysis");
  return p;
}

RunResult verify(const Planned& p, const fs::path& out, std::vector<std::string> extra = {}) {
  std::vector<std::string> a = {"verify", p.plan.string(), out.string()};
  a.insert(a.end(), extra.begin(), extra.end());
  return run_quarkplan(a, p.tmp.path());
}

Json verify_json(const Planned& p, const fs::path& out, int want_exit, std::vector<std::string> extra = {}) {
  extra.push_back("--json");
  RunResult r = verify(p, out, extra);
  EXPECT_EQ(r.exit_code, want_exit) << r.out << r.err;
  return verification_of(r.out, want_exit);
}


// Every check kept or not applicable; the ones named must have run.
void expect_all_kept(const Json& v, const std::vector<std::string>& ran) {
  EXPECT_TRUE(v["verified"].get<bool>()) << quarkplan::dump_json(v);
  for (const auto& c : v["checks"]) EXPECT_NE(c["result"], "broken") << c.dump();
  for (const auto& id : ran) {
    EXPECT_EQ(check(v, id)["result"], "kept") << id << ": " << check(v, id).dump();
    EXPECT_GT(check(v, id)["checked"].get<uint64_t>(), 0u) << id;
  }
}

TEST(TorchVerify, Fp8WithFp8KvCacheOnLlamaKeepsThePlan) {
  auto p = plan_for("llama-3.1-8b-instruct", {"--hardware", "mi300x", "--kv-cache", "fp8"});
  ASSERT_EQ(p->plan_json["global_scheme"], "fp8");
  ASSERT_EQ(p->plan_json["kv_cache_scheme"], "fp8");
  write_quark_export(p->tmp / "out", p->plan_json, p->analysis, p->source);
  Json v = verify_json(*p, p->tmp / "out", 0);
  expect_all_kept(v, {"verify.plan.confirmed", "verify.torch.quant_method", "verify.torch.model", "verify.torch.global_scheme",
                      "verify.torch.exclusions_listed", "verify.torch.quantized_tensors", "verify.torch.excluded_untouched",
                      "verify.torch.kv_cache", "verify.size", "verify.torch.source_files", "verify.torch.quark_release"});
  // 32 layers x 7 projections quantized, lm_head excluded; KV scales on 64 projections (+ the config's group).
  EXPECT_EQ(check(v, "verify.torch.quantized_tensors")["checked"], 224);
  EXPECT_EQ(check(v, "verify.torch.excluded_untouched")["checked"], 1);
  // 64 k/v projections, the export's kv_cache_group and its two patterns' layer_quant_config entries.
  EXPECT_EQ(check(v, "verify.torch.kv_cache")["checked"], 67);
  // The text view says so too.
  RunResult r = verify(*p, p->tmp / "out");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Verified: "), std::string::npos) << r.out;
}

TEST(TorchVerify, Int4AwqGroup128OnLlamaKeepsThePlan) {
  auto p = plan_for("llama-3.1-8b-instruct", {"--hardware", "mi300x", "--goal", "size"});
  ASSERT_EQ(p->plan_json["global_scheme"], "int4_wo_128");
  ASSERT_EQ(p->plan_json["algorithm"], "awq");
  write_quark_export(p->tmp / "out", p->plan_json, p->analysis, p->source, {.shards = 4});
  expect_all_kept(verify_json(*p, p->tmp / "out", 0), {"verify.torch.quantized_tensors", "verify.torch.global_scheme", "verify.size"});
}

TEST(TorchVerify, Uint4AwqForRyzenAiKeepsThePlan) {
  auto p = plan_for("llama-3.2-1b-instruct", {"--hardware", "ryzen-ai"});
  ASSERT_EQ(p->plan_json["global_scheme"], "uint4_wo_128");
  write_quark_export(p->tmp / "out", p->plan_json, p->analysis, p->source, {.shards = 1});
  expect_all_kept(verify_json(*p, p->tmp / "out", 0), {"verify.torch.quantized_tensors", "verify.torch.global_scheme"});
}

TEST(TorchVerify, Mxfp4MoeWithExcludedRoutersKeepsThePlan) {
  auto p = plan_for("qwen3-30b-a3b", {"--hardware", "mi355x", "--scheme", "mxfp4"});
  ASSERT_EQ(p->plan_json["global_scheme"], "mxfp4");
  write_quark_export(p->tmp / "out", p->plan_json, p->analysis, p->source, {.shards = 8});
  Json v = verify_json(*p, p->tmp / "out", 0);
  expect_all_kept(v, {"verify.torch.quantized_tensors", "verify.torch.excluded_untouched", "verify.torch.exclusions_listed"});
  // 48 routers and lm_head stay in BF16; 48 x 128 experts x 3 + 48 x 4 attention projections are MXFP4.
  EXPECT_EQ(check(v, "verify.torch.excluded_untouched")["checked"], 49);
  EXPECT_EQ(check(v, "verify.torch.quantized_tensors")["checked"], 48 * 128 * 3 + 48 * 4);
}

// Real Quark (0.12.post1, a qwen3_moe export in tests/quark_real/run_torch.py) lists the modules it
// left out by name, and a router it replaced is listed as its Linear child NAME.linear. Quark 0.13's
// replaced router is itself a Linear: there NAME.linear lists another module, not the router.
TEST(TorchVerify, AnExportListingEachReplacedRouterByItsLinearChildKeepsThePlan) {
  {
    auto p13 = plan_for("qwen3-30b-a3b", {"--hardware", "mi355x", "--scheme", "mxfp4", "--quark-version", "0.13"});
    write_quark_export(p13->tmp / "out", p13->plan_json, p13->analysis, p13->source);
    fs::path cfg13 = p13->tmp / "out" / "config.json";
    Json c = quarkplan::parse_json(read_file(cfg13), "config");
    Json ex = Json::array({"lm_head"});
    for (int i = 0; i < 48; ++i) ex.push_back("model.layers." + std::to_string(i) + ".mlp.gate.linear");
    c["quantization_config"]["exclude"] = ex;
    write_file(cfg13, c.dump(2));
    std::string f = failures_of(verify_json(*p13, p13->tmp / "out", 2), "verify.torch.exclusions_listed");
    EXPECT_NE(f.find(".mlp.gate (48) | covered by quantization_config.exclude | not listed"), std::string::npos) << f;
  }
  auto p = plan_for("qwen3-30b-a3b", {"--hardware", "mi355x", "--scheme", "mxfp4", "--quark-version", "0.12.post1"});
  write_quark_export(p->tmp / "out", p->plan_json, p->analysis, p->source);
  fs::path cfg_path = p->tmp / "out" / "config.json";
  Json cfg = quarkplan::parse_json(read_file(cfg_path), "config");
  auto listing = [&](int skip) {
    Json ex = Json::array({"lm_head"});
    for (int i = 0; i < 48; ++i)
      if (i != skip) ex.push_back("model.layers." + std::to_string(i) + ".mlp.gate.linear");
    cfg["quantization_config"]["exclude"] = ex;
    write_file(cfg_path, cfg.dump(2));
  };
  listing(-1);
  expect_all_kept(verify_json(*p, p->tmp / "out", 0), {"verify.torch.exclusions_listed"});
  listing(5);
  std::string f = failures_of(verify_json(*p, p->tmp / "out", 2), "verify.torch.exclusions_listed");
  EXPECT_NE(f.find("model.layers.5.mlp.gate | covered by quantization_config.exclude | not listed"), std::string::npos) << f;
}

TEST(TorchVerify, PtpcFp8WithALayerOverrideKeepsThePlan) {
  auto p = plan_for("llama-3.1-8b-instruct", {"--hardware", "mi300x", "--scheme", "ptpc_fp8", "--layer-scheme", "*down_proj=fp8"});
  ASSERT_EQ(p->plan_json["layer_quant_config"]["*down_proj"], "fp8");
  write_quark_export(p->tmp / "out", p->plan_json, p->analysis, p->source);
  Json v = verify_json(*p, p->tmp / "out", 0);
  expect_all_kept(v, {"verify.torch.layer_overrides", "verify.torch.quantized_tensors"});
  bool fp8_group = false;
  for (const auto& g : v["modules"])
    if (g["promise"] == "fp8") fp8_group = g["kept"] == 32;
  EXPECT_TRUE(fp8_group) << v["modules"].dump();
}

// ---- one broken promise each

struct Broken {
  std::unique_ptr<Planned> p;
  Json v;
  std::string text;
};

Broken break_fp8(const std::function<void(std::vector<StTensor>&, Json&)>& edit, std::vector<std::string> plan_args = {"--hardware", "mi300x", "--kv-cache", "fp8"},
                 std::vector<std::string> verify_args = {}) {
  Broken b;
  b.p = plan_for("llama-3.1-8b-instruct", plan_args);
  ExportOptions o;
  o.edit = edit;
  write_quark_export(b.p->tmp / "out", b.p->plan_json, b.p->analysis, b.p->source, o);
  b.v = verify_json(*b.p, b.p->tmp / "out", 2, verify_args);
  RunResult r = verify(*b.p, b.p->tmp / "out", verify_args);
  EXPECT_EQ(r.exit_code, 2);
  b.text = r.err;
  return b;
}


void drop(std::vector<StTensor>& t, const std::string& name) {
  t.erase(std::remove_if(t.begin(), t.end(), [&](const StTensor& x) { return x.name == name; }), t.end());
}

TEST(TorchVerifyBroken, AQuantizedModuleLeftInFloatIsNamed) {
  auto b = break_fp8([](std::vector<StTensor>& t, Json&) {
    for (const char* s : {"weight_scale", "input_scale"}) drop(t, std::string("model.layers.3.mlp.down_proj.") + s);
    for (auto& x : t)
      if (x.name == "model.layers.3.mlp.down_proj.weight") x.dtype = "BF16";
  });
  std::string f = failures_of(b.v, "verify.torch.quantized_tensors");
  EXPECT_NE(f.find("model.layers.3.mlp.down_proj | fp8: weight F8_E4M3 [4096, 14336]"), std::string::npos) << f;
  EXPECT_NE(f.find("weight BF16 [4096, 14336]; no weight_scale; no input_scale"), std::string::npos) << f;
  EXPECT_EQ(b.v["broken_promises"], 1);
  EXPECT_NE(b.text.find("BROKEN"), std::string::npos) << b.text;
  EXPECT_NE(b.text.find("model.layers.3.mlp.down_proj"), std::string::npos) << b.text;
}

TEST(TorchVerifyBroken, AWrongGroupShapeIsNamed) {
  Broken b;
  b.p = plan_for("llama-3.1-8b-instruct", {"--hardware", "mi300x", "--goal", "size"});
  ExportOptions o;
  o.edit = [](std::vector<StTensor>& t, Json&) {
    // Group 64 written where the plan said 128, on every o_proj.
    for (auto& x : t)
      if (x.name.ends_with("self_attn.o_proj.weight_scale") || x.name.ends_with("self_attn.o_proj.weight_zero_point")) x.shape[0] *= 2;
  };
  write_quark_export(b.p->tmp / "out", b.p->plan_json, b.p->analysis, b.p->source, o);
  b.v = verify_json(*b.p, b.p->tmp / "out", 2);
  std::string f = failures_of(b.v, "verify.torch.quantized_tensors");
  // One grouped line for the 32 modules that broke it the same way.
  EXPECT_NE(f.find("model.layers.{0..31}.self_attn.o_proj (32) | int4_wo_128: weight_scale F32|BF16 [32, 4096]; weight_zero_point I32 [32, 512]"), std::string::npos) << f;
  EXPECT_NE(f.find("weight_scale BF16 [64, 4096]; weight_zero_point I32 [64, 512]"), std::string::npos) << f;
}

TEST(TorchVerifyBroken, AnExcludedModuleThatWasQuantizedIsNamed) {
  auto b = break_fp8([](std::vector<StTensor>& t, Json&) {
    for (auto& x : t)
      if (x.name == "lm_head.weight") x.dtype = "F8_E4M3";
    t.push_back({"lm_head.weight_scale", "F32", {}});
  });
  std::string f = failures_of(b.v, "verify.torch.excluded_untouched");
  EXPECT_NE(f.find("lm_head | weight BF16 [128256, 4096], no scales | weight F8_E4M3 [128256, 4096]; a weight_scale"), std::string::npos) << f;
}

TEST(TorchVerifyBroken, AnExclusionMissingFromTheExportConfigIsNamed) {
  auto b = break_fp8([](std::vector<StTensor>&, Json& c) { c["quantization_config"]["exclude"] = Json::array({"model.layers.0.mlp.gate_proj"}); });
  std::string f = failures_of(b.v, "verify.torch.exclusions_listed");
  EXPECT_NE(f.find("lm_head | covered by quantization_config.exclude | not listed"), std::string::npos) << f;
}

TEST(TorchVerifyBroken, MissingKvCacheScalesAreNamed) {
  auto b = break_fp8([](std::vector<StTensor>& t, Json& c) {
    t.erase(std::remove_if(t.begin(), t.end(), [](const StTensor& x) { return x.name.find("layers.7.") != std::string::npos && x.name.ends_with("output_scale"); }), t.end());
    c["quantization_config"]["export"]["kv_cache_group"] = Json::array();
  });
  std::string f = failures_of(b.v, "verify.torch.kv_cache");
  EXPECT_NE(f.find("model.layers.7.self_attn.k_proj, model.layers.7.self_attn.v_proj (2) | FP8 KV-cache scale output_scale"), std::string::npos) << f;
  EXPECT_NE(f.find("no output_scale"), std::string::npos) << f;
  EXPECT_NE(f.find("quantization_config.kv_cache_group"), std::string::npos) << f;
}

TEST(TorchVerifyBroken, KvCacheScalesThePlanDidNotAskForAreNamed) {
  auto b = break_fp8(
      [](std::vector<StTensor>& t, Json&) { t.push_back({"model.layers.0.self_attn.k_proj.output_scale", "F32", {}}); },
      {"--hardware", "mi300x", "--kv-cache", "none"});
  std::string f = failures_of(b.v, "verify.torch.kv_cache");
  EXPECT_NE(f.find("model.layers.0.self_attn.k_proj | no KV-cache scale (kv_cache_scheme null) | output_scale F32 []"), std::string::npos) << f;
}

TEST(TorchVerifyBroken, ADroppedLayerOverrideIsNamed) {
  Broken b;
  b.p = plan_for("llama-3.1-8b-instruct", {"--hardware", "mi300x", "--scheme", "ptpc_fp8", "--layer-scheme", "*down_proj=fp8"});
  ExportOptions o;
  o.edit = [](std::vector<StTensor>& t, Json& c) {
    c["quantization_config"]["layer_quant_config"] = Json::object();
    // down_proj written as the global PTPC-FP8: a per-channel scale, no input scale.
    t.erase(std::remove_if(t.begin(), t.end(), [](const StTensor& x) { return x.name.ends_with("down_proj.input_scale"); }), t.end());
    for (auto& x : t)
      if (x.name.ends_with("down_proj.weight_scale")) x.shape = {4096};
  };
  write_quark_export(b.p->tmp / "out", b.p->plan_json, b.p->analysis, b.p->source, o);
  b.v = verify_json(*b.p, b.p->tmp / "out", 2);
  EXPECT_NE(failures_of(b.v, "verify.torch.layer_overrides").find("*down_proj | layer_quant_config[\"*down_proj\"] = fp8 | no such entry"), std::string::npos)
      << failures_of(b.v, "verify.torch.layer_overrides");
  std::string f = failures_of(b.v, "verify.torch.quantized_tensors");
  EXPECT_NE(f.find("model.layers.{0..31}.mlp.down_proj (32) | fp8: weight_scale F32|BF16 [] or [1]; input_scale F32|BF16 [] or [1] | weight_scale F32 [4096]; no input_scale"), std::string::npos) << f;
}

TEST(TorchVerifyBroken, AGlobalConfigOfAnotherSchemeIsNamed) {
  auto b = break_fp8([](std::vector<StTensor>&, Json& c) { c["quantization_config"]["global_quant_config"] = quark_layer_config("int8"); });
  std::string f = failures_of(b.v, "verify.torch.global_scheme");
  EXPECT_NE(f.find("quantization_config.global_quant_config | fp8 | weight.dtype is \"int8\", not \"fp8_e4m3\"; input_tensors.dtype is \"int8\", not \"fp8_e4m3\""), std::string::npos) << f;
}

TEST(TorchVerifyBroken, ASizeFarFromTheEstimateIsNamed) {
  auto b = break_fp8([](std::vector<StTensor>& t, Json&) { t.push_back({"model.extra_float_copy.weight", "F32", {4096, 1024 * 1024}}); });
  std::string f = failures_of(b.v, "verify.size");
  EXPECT_NE(f.find("the exported weights | "), std::string::npos) << f;
  EXPECT_NE(f.find("% from the estimate"), std::string::npos) << f;
}

TEST(TorchVerifyBroken, AChangedOrMissingTokenizerIsNamedAgainstTheSource) {
  Broken b;
  b.p = plan_for("llama-3.1-8b-instruct", {"--hardware", "mi300x"});
  write_quark_export(b.p->tmp / "out", b.p->plan_json, b.p->analysis, b.p->source);
  write_file(b.p->tmp / "out" / "tokenizer.json", "{\"edited\": true}\n");
  fs::remove(b.p->tmp / "out" / "generation_config.json");
  b.v = verify_json(*b.p, b.p->tmp / "out", 2, {"--source", b.p->source.string()});
  std::string f = failures_of(b.v, "verify.torch.source_files");
  EXPECT_NE(f.find("tokenizer.json | the source's content | other values for version, model, edited"), std::string::npos) << f;
  EXPECT_NE(f.find("generation_config.json | copied from the source | missing from the export"), std::string::npos) << f;
}

// quantize_quark.py re-saves the tokenizer it calibrated with: transformers re-serialises
// tokenizer_config.json with padding_side "left", a pad token and is_local (seen on real Quark
// exports, tests/quark_real/run_torch.py). Those keys may change; any other may not.
TEST(TorchVerify, ATokenizerReSavedByQuantizeQuarkIsTheSourcesButAnotherValueIsNot) {
  auto p = plan_for("llama-3.1-8b-instruct", {"--hardware", "mi300x"});
  write_file(p->source / "tokenizer_config.json", "{\"model_max_length\": 131072, \"eos_token\": \"<|eot_id|>\"}\n");
  write_quark_export(p->tmp / "out", p->plan_json, p->analysis, p->source);
  write_file(p->tmp / "out" / "tokenizer_config.json",
             "{\n  \"eos_token\": \"<|eot_id|>\",\n  \"is_local\": true,\n  \"model_max_length\": 131072,\n"
             "  \"pad_token\": \"<|eot_id|>\",\n  \"padding_side\": \"left\"\n}\n");
  Json v = verify_json(*p, p->tmp / "out", 0, {"--source", p->source.string()});
  expect_all_kept(v, {"verify.torch.source_files"});
  write_file(p->tmp / "out" / "tokenizer_config.json", "{\"model_max_length\": 4096, \"eos_token\": \"<|eot_id|>\", \"padding_side\": \"left\"}\n");
  v = verify_json(*p, p->tmp / "out", 2, {"--source", p->source.string()});
  std::string f = failures_of(v, "verify.torch.source_files");
  EXPECT_NE(f.find("tokenizer_config.json | the source's content | other values for model_max_length"), std::string::npos) << f;
}

TEST(TorchVerifyBroken, AConfigFieldChangedFromTheSourceIsNamed) {
  auto b = break_fp8([](std::vector<StTensor>&, Json& c) { c["max_position_embeddings"] = 8192; });
  std::string f = failures_of(b.v, "verify.torch.source_files");
  EXPECT_NE(f.find("config.json max_position_embeddings | 131072 | 8192"), std::string::npos) << f;
}

TEST(TorchVerifyBroken, AnExportByAnotherQuarkReleaseIsNamed) {
  Broken b;
  b.p = plan_for("llama-3.1-8b-instruct", {"--hardware", "mi300x"});
  write_quark_export(b.p->tmp / "out", b.p->plan_json, b.p->analysis, b.p->source, {.quark_version = "0.11.1"});
  b.v = verify_json(*b.p, b.p->tmp / "out", 2);
  EXPECT_NE(failures_of(b.v, "verify.torch.quark_release").find("quantization_config.version | Quark 0.13 (the release whose facts the plan holds) | written by Quark 0.11.1"), std::string::npos);
}

TEST(TorchVerifyBroken, AnotherModelIsNamed) {
  auto b = break_fp8([](std::vector<StTensor>& t, Json& c) {
    c["model_type"] = "mistral";
    drop(t, "model.layers.31.mlp.up_proj.weight");
    drop(t, "model.layers.31.mlp.up_proj.weight_scale");
    drop(t, "model.layers.31.mlp.up_proj.input_scale");
  });
  std::string f = failures_of(b.v, "verify.torch.model");
  EXPECT_NE(f.find("config.json | model_type llama | model_type mistral"), std::string::npos) << f;
  EXPECT_NE(f.find("model.layers.31.mlp.up_proj | a Linear module of the plan's model | not in the export"), std::string::npos) << f;
}

TEST(TorchVerifyBroken, AnExportWithoutQuarksConfigIsNamed) {
  auto b = break_fp8([](std::vector<StTensor>&, Json& c) { c["quantization_config"].erase("export"); });
  EXPECT_NE(failures_of(b.v, "verify.torch.quant_method").find("the key export (Quark's exporter writes it) | absent"), std::string::npos);
  auto b2 = break_fp8([](std::vector<StTensor>&, Json& c) { c["quantization_config"] = {{"quant_method", "fp8"}, {"activation_scheme", "static"}}; });
  EXPECT_NE(failures_of(b2.v, "verify.torch.quant_method").find("quant_method \"quark\" | quant_method \"fp8\""), std::string::npos);
}

TEST(TorchVerifyBroken, ADraftPlanPromisesNothing) {
  auto p = std::make_unique<Planned>();
  p->source = p->tmp / "source";
  fs::copy(testdata("hf/llama-3.1-8b-instruct"), p->source, fs::copy_options::recursive);
  p->plan = p->tmp / "quant_plan.json";
  RunResult r = run_quarkplan({"plan", p->source.string(), "--hardware", "mi300x", "-o", p->plan.string()}, p->tmp.path());
  ASSERT_EQ(r.exit_code, 3) << r.err;
  p->plan_json = quarkplan::parse_json(read_file(p->plan), "plan");
  p->analysis = quarkplan::parse_json(read_file(p->tmp / "model_analysis.json"), "analysis");
  write_quark_export(p->tmp / "out", p->plan_json, p->analysis, p->source);
  Json v = verify_json(*p, p->tmp / "out", 2);
  EXPECT_NE(failures_of(v, "verify.plan.confirmed").find("a draft (requires_confirmation: true)"), std::string::npos);
}

TEST(TorchVerifyInput, UnreadableExportsAreOneLineErrors) {
  auto p = plan_for("llama-3.1-8b-instruct", {"--hardware", "mi300x"});
  // No such folder; no config.json; a corrupt shard; a shard the index names but that is missing.
  RunResult r = verify(*p, p->tmp / "nowhere");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nowhere: not a folder"), std::string::npos) << r.err;
  fs::create_directories(p->tmp / "empty");
  r = verify(*p, p->tmp / "empty");
  EXPECT_NE(r.err.find("config.json: missing"), std::string::npos) << r.err;
  write_quark_export(p->tmp / "out", p->plan_json, p->analysis, p->source);
  write_file(p->tmp / "out" / "model-00002-of-00002.safetensors", std::string("\x10\0\0\0\0\0\0\0{\"a\":", 13));
  r = verify(*p, p->tmp / "out", {"--json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("model-00002-of-00002.safetensors: "), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  Json e = quarkplan::parse_json(r.out, "json");
  EXPECT_EQ(e["error"]["code"], 2);
  fs::remove(p->tmp / "out" / "model-00002-of-00002.safetensors");
  r = verify(*p, p->tmp / "out");
  EXPECT_NE(r.err.find("model-00002-of-00002.safetensors: missing: the index names this shard"), std::string::npos) << r.err;
}

TEST(TorchVerifyInput, AnEditedPlanIsRefusedBeforeTheExportIsRead) {
  auto p = plan_for("llama-3.1-8b-instruct", {"--hardware", "mi300x"});
  Json plan = p->plan_json;
  plan["global_scheme"] = "int8";
  write_file(p->plan, quarkplan::dump_json(plan));
  RunResult r = verify(*p, p->tmp / "nowhere");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("quant_plan.json: "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("nowhere"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace qp_test

namespace qp_test {
namespace {

TEST(VerifyReport, ReportVerifyAddsTheChecksTheModulesAndTheBytes) {
  auto p = plan_for("llama-3.1-8b-instruct", {"--hardware", "mi300x", "--kv-cache", "fp8"});
  ExportOptions o;
  o.edit = [](std::vector<StTensor>& t, Json&) { drop(t, "model.layers.5.self_attn.v_proj.output_scale"); };
  write_quark_export(p->tmp / "out", p->plan_json, p->analysis, p->source, o);
  RunResult r = run_quarkplan({"report", p->plan.string(), "--verify", (p->tmp / "out").string(), "-o", "r.html", "--json"}, p->tmp.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j = quarkplan::parse_json(r.out, "report --json");
  EXPECT_FALSE(j["verification"]["verified"].get<bool>());
  EXPECT_EQ(j["verification"]["broken_promises"], 1);
  std::string html = read_file(p->tmp / "r.html");
  EXPECT_NE(html.find("<section id=\"verification\">"), std::string::npos);
  EXPECT_NE(html.find("1 BROKEN PROMISE"), std::string::npos);
  EXPECT_NE(html.find("<code>model.layers.5.self_attn.v_proj</code>: the plan says FP8 KV-cache scale output_scale"), std::string::npos);
  for (const char* id : {"verify.torch.quantized_tensors", "verify.torch.kv_cache", "verify.size"}) EXPECT_NE(html.find(id), std::string::npos) << id;
  EXPECT_NE(html.find("Modules and nodes by promise"), std::string::npos);
  EXPECT_NE(html.find("id=\"chart-verify-bytes\""), std::string::npos);
  // Without --verify the page has no such section.
  r = run_quarkplan({"report", p->plan.string(), "-o", "plain.html"}, p->tmp.path());
  EXPECT_EQ(read_file(p->tmp / "plain.html").find("id=\"verification\""), std::string::npos);
}

}  // namespace
}  // namespace qp_test

namespace qp_test {
namespace {

TEST(TorchVerifyBroken, AnExportPatternThatGivesModulesAnotherSchemeIsNamed) {
  // A stray layer_quant_config entry: vLLM would load every o_proj as INT8.
  auto b = break_fp8([](std::vector<StTensor>&, Json& c) {
    Json lqc = Json::object();
    lqc["*o_proj"] = quark_layer_config("int8");
    for (auto& [k, v] : c["quantization_config"]["layer_quant_config"].items()) lqc[k] = v;
    c["quantization_config"]["layer_quant_config"] = lqc;
  });
  std::string f = failures_of(b.v, "verify.torch.module_configs");
  EXPECT_NE(f.find("model.layers.{0..31}.self_attn.o_proj (32) | fp8 (the entry that applies: layer_quant_config[\"*o_proj\"]) | weight.dtype is \"int8\", not \"fp8_e4m3\""),
            std::string::npos)
      << f;
}

}  // namespace
}  // namespace qp_test

namespace qp_test {
namespace {

// The fuzz seeds of verify's Torch side (fuzz/corpus/verify_torch_export) as
// real export folders: hostile configs and tensor lists give check results or
// a one-line error, never a crash.
TEST(TorchVerifyInput, HostileExportsFromTheFuzzCorpusNeverCrash) {
  auto p = plan_for("llama-3.2-1b-instruct", {"--hardware", "mi300x"});
  int n = 0;
  for (const auto& e : fs::directory_iterator(source_dir() / "fuzz/corpus/verify_torch_export")) {
    Json in = quarkplan::parse_json(read_file(e.path()), e.path().string());
    fs::path out = p->tmp / ("export_" + std::to_string(n++));
    fs::create_directories(out);
    write_file(out / "config.json", quarkplan::dump_json(in.contains("config") ? in["config"] : in));
    std::vector<StTensor> tensors;
    if (in.contains("tensors") && in["tensors"].is_object())
      for (const auto& [name, t] : in["tensors"].items()) {
        if (!t.is_object() || !t.contains("dtype") || !t["dtype"].is_string() || !t.contains("shape") || !t["shape"].is_array()) continue;
        StTensor st{name, t["dtype"].get<std::string>(), {}};
        for (const auto& d : t["shape"]) st.shape.push_back(d.get<uint64_t>());
        tensors.push_back(st);
      }
    write_safetensors(out / "model.safetensors", tensors, true);
    RunResult r = verify(*p, out, {"--json"});
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 2) << e.path() << ": " << r.exit_code << r.err;
    Json j = quarkplan::parse_json(r.out, "verify --json");
    EXPECT_TRUE(j.contains("verified") || j["error"].contains("message")) << r.out;
  }
  EXPECT_GE(n, 4);
}

}  // namespace
}  // namespace qp_test

namespace qp_test {
namespace {

// AMD's own W4A8 release (the ROCm blog's config block and tensor table,
// tests/data/verify/torch/amd_configs/Kimi-K2.5-W4A8.rocm-blog.json) against an
// int4_fp8 plan of Kimi-K2: the catalog's layout and config must accept what
// AMD published.
TEST(TorchVerify, AmdsPublishedKimiW4A8LayoutKeepsAnInt4Fp8Plan) {
  Json amd = quarkplan::parse_json(read_file(testdata("verify/torch/amd_configs/Kimi-K2.5-W4A8.rocm-blog.json")), "blog");
  auto p = plan_for("kimi-k2-instruct", {"--hardware", "mi325x", "--gpus", "8", "--scheme", "int4_fp8", "--trust-remote-code", "--quark-version", "0.12"});  // AMD's export was written by Quark 0.12
  ASSERT_EQ(p->plan_json["global_scheme"], "int4_fp8");
  // The plan's exclusions are the ones AMD's script uses for the language model.
  for (const auto& e : p->plan_json["exclude_layers"])
    EXPECT_NE(std::find(amd["exclude_layers"].begin(), amd["exclude_layers"].end(), e), amd["exclude_layers"].end()) << e;
  ExportOptions o;
  o.shards = 4;
  o.edit = [&](std::vector<StTensor>& t, Json& c) {
    Json qc = amd["quantization_config"];
    qc["exclude"] = c["quantization_config"]["exclude"];
    qc["version"] = "0.12";
    c["quantization_config"] = qc;
    for (auto& x : t)
      for (const auto& [param, spec] : amd["expert_down_proj_tensors"].items())
        if (x.name.find(".mlp.experts.") != std::string::npos && x.name.ends_with(".down_proj." + param)) {
          x.dtype = spec["dtype"];
          x.shape = spec["shape"].get<std::vector<uint64_t>>();
        }
  };
  write_quark_export(p->tmp / "out", p->plan_json, p->analysis, p->source, o);
  Json v = verify_json(*p, p->tmp / "out", 0);
  expect_all_kept(v, {"verify.torch.global_scheme", "verify.torch.quantized_tensors", "verify.torch.module_configs"});
  EXPECT_EQ(check(v, "verify.torch.quantized_tensors")["checked"], 60 * 384 * 3);
}

}  // namespace
}  // namespace qp_test

namespace qp_test {
namespace {

// What vLLM's Quark loader needs of an FP8 KV cache beyond the scales: one
// layer_quant_config entry per kv_cache_group pattern with static FP8 output_tensors.
TEST(TorchVerifyBroken, KvCacheConfigEntriesVllmNeedsAreChecked) {
  auto missing = break_fp8([](std::vector<StTensor>&, Json& c) { c["quantization_config"]["layer_quant_config"].erase("*k_proj"); });
  std::string f = failures_of(missing.v, "verify.torch.kv_cache");
  EXPECT_NE(f.find("layer_quant_config[\"*k_proj\"] | an entry with FP8 output_tensors for the KV-cache group's pattern | no such entry"), std::string::npos) << f;
  auto null_out = break_fp8([](std::vector<StTensor>&, Json& c) { c["quantization_config"]["layer_quant_config"]["*v_proj"]["output_tensors"] = nullptr; });
  EXPECT_NE(failures_of(null_out.v, "verify.torch.kv_cache").find("layer_quant_config[\"*v_proj\"] | output_tensors"), std::string::npos);
  EXPECT_NE(failures_of(null_out.v, "verify.torch.kv_cache").find("output_tensors is absent"), std::string::npos) << failures_of(null_out.v, "verify.torch.kv_cache");
  auto int8 = break_fp8([](std::vector<StTensor>&, Json& c) { c["quantization_config"]["layer_quant_config"]["*v_proj"]["output_tensors"]["dtype"] = "int8"; });
  EXPECT_NE(failures_of(int8.v, "verify.torch.kv_cache").find("output_tensors.dtype is \"int8\", not \"fp8_e4m3\""), std::string::npos);
  auto group = break_fp8([](std::vector<StTensor>&, Json& c) { c["quantization_config"]["export"]["kv_cache_group"] = Json::array({"*k_proj"}); });
  EXPECT_NE(failures_of(group.v, "verify.torch.kv_cache").find("model.layers.{0..31}.self_attn.v_proj (32) | covered by a kv_cache_group pattern"), std::string::npos)
      << failures_of(group.v, "verify.torch.kv_cache");
}

TEST(TorchVerifyBroken, AQuantizedModuleTheExportExcludesIsNamedAndCountedPerModule) {
  auto b = break_fp8([](std::vector<StTensor>&, Json& c) { c["quantization_config"]["exclude"].push_back("*down_proj"); });
  std::string f = failures_of(b.v, "verify.torch.module_configs");
  EXPECT_NE(f.find("model.layers.{0..31}.mlp.down_proj (32) | fp8 | excluded by the export's exclude pattern *down_proj: a loader keeps it unquantized"), std::string::npos) << f;
  EXPECT_EQ(check(b.v, "verify.torch.module_configs")["broken"], 32);
  std::string flat;
  for (char c : b.text)
    if (c != '\n' && !(c == ' ' && !flat.empty() && flat.back() == ' ')) flat += c;
  EXPECT_NE(flat.find("(32 broken of 224 checked)"), std::string::npos) << b.text;
}

TEST(TorchVerifyBroken, ExportSettingsAlgorithmAndReleaseTypeAreChecked) {
  auto order = break_fp8([](std::vector<StTensor>&, Json& c) { c["quantization_config"]["export"]["pack_method"] = "order"; });
  EXPECT_NE(failures_of(order.v, "verify.torch.quant_method").find("quantization_config.export.pack_method | \"reorder\" (the plan's hf_format export) | \"order\""), std::string::npos);
  auto number = break_fp8([](std::vector<StTensor>&, Json& c) { c["quantization_config"]["version"] = 12; });
  EXPECT_NE(failures_of(number.v, "verify.torch.quark_release").find("a value of another type"), std::string::npos);
  auto stray = break_fp8([](std::vector<StTensor>&, Json& c) { c["quantization_config"]["algo_config"] = Json::array({{{"name", "awq"}}}); });
  EXPECT_NE(failures_of(stray.v, "verify.torch.algorithm").find("quantization_config.algo_config | no algorithm (round-to-nearest) | awq recorded"), std::string::npos)
      << failures_of(stray.v, "verify.torch.algorithm");
  // An AWQ plan whose export records no algorithm: a round-to-nearest export.
  Broken b;
  b.p = plan_for("llama-3.1-8b-instruct", {"--hardware", "mi300x", "--goal", "size"});
  ExportOptions o;
  o.edit = [](std::vector<StTensor>&, Json& c) { c["quantization_config"]["algo_config"] = nullptr; };
  write_quark_export(b.p->tmp / "out", b.p->plan_json, b.p->analysis, b.p->source, o);
  b.v = verify_json(*b.p, b.p->tmp / "out", 2);
  EXPECT_NE(failures_of(b.v, "verify.torch.algorithm").find("quantization_config.algo_config | awq | no awq"), std::string::npos) << failures_of(b.v, "verify.torch.algorithm");
}

// An excluded tied head is written once, as the embedding: not missing.
TEST(TorchVerify, AnExcludedTiedLmHeadIsTheEmbedding) {
  auto p = plan_for("llama-3.2-1b-instruct", {"--hardware", "mi300x", "--scheme", "int4_wo_128"});
  ASSERT_EQ(p->plan_json["exclude_layers"], Json::array({"lm_head"}));
  write_quark_export(p->tmp / "out", p->plan_json, p->analysis, p->source);
  Json v = verify_json(*p, p->tmp / "out", 0);
  expect_all_kept(v, {"verify.torch.model", "verify.size"});
  EXPECT_NE(v["notes"].dump().find("lm_head is tied to the embedding"), std::string::npos) << v["notes"];
}

}  // namespace
}  // namespace qp_test

namespace qp_test {
namespace {

// Overrides by layer type, a per-group weight on another axis, and --source
// folders without a config.json (the plan's model folder has one).
TEST(TorchVerifyBroken, LayerTypeOverridesAxesAndConfigFieldsWithoutASourceConfig) {
  auto ltq = break_fp8([](std::vector<StTensor>&, Json& c) { c["quantization_config"]["layer_type_quant_config"] = {{"Linear", quark_layer_config("int8")}}; });
  EXPECT_NE(failures_of(ltq.v, "verify.torch.layer_overrides").find("quantization_config.layer_type_quant_config | no per-layer-type overrides (the plan sets none) | overrides for Linear"),
            std::string::npos);
  Broken b;
  b.p = plan_for("llama-3.1-8b-instruct", {"--hardware", "mi300x", "--goal", "size"});
  ExportOptions o;
  o.edit = [](std::vector<StTensor>&, Json& c) {
    c["quantization_config"]["global_quant_config"]["weight"]["ch_axis"] = 0;
    c["eos_token_id"] = 2;
  };
  write_quark_export(b.p->tmp / "out", b.p->plan_json, b.p->analysis, b.p->source, o);
  fs::create_directories(b.p->tmp / "tok_only");
  write_file(b.p->tmp / "tok_only" / "tokenizer.json", read_file(b.p->source / "tokenizer.json"));
  b.v = verify_json(*b.p, b.p->tmp / "out", 2, {"--source", (b.p->tmp / "tok_only").string()});
  EXPECT_NE(failures_of(b.v, "verify.torch.global_scheme").find("weight.ch_axis is 0, not -1"), std::string::npos) << failures_of(b.v, "verify.torch.global_scheme");
  EXPECT_NE(failures_of(b.v, "verify.torch.source_files").find("config.json eos_token_id"), std::string::npos) << failures_of(b.v, "verify.torch.source_files");
}

}  // namespace
}  // namespace qp_test
