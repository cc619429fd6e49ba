// Writes a DeepSeek-V3-shaped Hugging Face folder for the intake benchmark:
// the real config.json, 163 sparse .safetensors shards with real-sized headers
// (~92,000 tensors: FP8 weights + weight_scale_inv, 256 routed experts per MoE
// layer, the MTP layer 61) and model.safetensors.index.json.
// usage: gen_hf_shards CONFIG_JSON OUT_DIR
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

struct T {
  std::string name, dtype;
  std::vector<uint64_t> shape;
};

static uint64_t bytes_of(const T& t) {
  uint64_t n = 1;
  for (auto d : t.shape) n *= d;
  return n * (t.dtype == "F8_E4M3" ? 1 : t.dtype == "F32" ? 4 : 2);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s CONFIG_JSON OUT_DIR\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1]);
  nlohmann::json cfg = nlohmann::json::parse(in);
  const uint64_t H = cfg["hidden_size"], I = cfg["intermediate_size"], Im = cfg["moe_intermediate_size"];
  const uint64_t E = cfg["n_routed_experts"], V = cfg["vocab_size"], heads = cfg["num_attention_heads"];
  const uint64_t qr = cfg["q_lora_rank"], kvr = cfg["kv_lora_rank"], rope = cfg["qk_rope_head_dim"],
                 nope = cfg["qk_nope_head_dim"], vd = cfg["v_head_dim"];
  const int layers = cfg["num_hidden_layers"], dense = cfg["first_k_dense_replace"];
  std::vector<T> ts;
  auto fp8 = [&](const std::string& n, uint64_t out, uint64_t in_) {
    ts.push_back({n + ".weight", "F8_E4M3", {out, in_}});
    ts.push_back({n + ".weight_scale_inv", "F32", {(out + 127) / 128, (in_ + 127) / 128}});
  };
  auto bf = [&](const std::string& n, std::vector<uint64_t> s) { ts.push_back({n, "BF16", s}); };
  bf("model.embed_tokens.weight", {V, H});
  for (int l = 0; l <= layers; ++l) {  // layer `layers` is the MTP module
    std::string p = "model.layers." + std::to_string(l) + ".";
    bf(p + "input_layernorm.weight", {H});
    bf(p + "post_attention_layernorm.weight", {H});
    fp8(p + "self_attn.q_a_proj", qr, H);
    bf(p + "self_attn.q_a_layernorm.weight", {qr});
    fp8(p + "self_attn.q_b_proj", heads * (nope + rope), qr);
    fp8(p + "self_attn.kv_a_proj_with_mqa", kvr + rope, H);
    bf(p + "self_attn.kv_a_layernorm.weight", {kvr});
    fp8(p + "self_attn.kv_b_proj", heads * (nope + vd), kvr);
    fp8(p + "self_attn.o_proj", H, heads * vd);
    if (l < dense) {
      fp8(p + "mlp.gate_proj", I, H);
      fp8(p + "mlp.up_proj", I, H);
      fp8(p + "mlp.down_proj", H, I);
    } else {
      bf(p + "mlp.gate.weight", {E, H});
      ts.push_back({p + "mlp.gate.e_score_correction_bias", "F32", {E}});
      for (uint64_t e = 0; e < E; ++e) {
        std::string x = p + "mlp.experts." + std::to_string(e) + ".";
        fp8(x + "gate_proj", Im, H);
        fp8(x + "up_proj", Im, H);
        fp8(x + "down_proj", H, Im);
      }
      fp8(p + "mlp.shared_experts.gate_proj", Im, H);
      fp8(p + "mlp.shared_experts.up_proj", Im, H);
      fp8(p + "mlp.shared_experts.down_proj", H, Im);
    }
    if (l == layers) {
      bf(p + "enorm.weight", {H});
      bf(p + "hnorm.weight", {H});
      bf(p + "eh_proj.weight", {H, 2 * H});
      bf(p + "embed_tokens.weight", {V, H});
      bf(p + "shared_head.norm.weight", {H});
      bf(p + "shared_head.head.weight", {V, H});
    }
  }
  bf("model.norm.weight", {H});
  bf("lm_head.weight", {V, H});
  fs::path out = argv[2];
  fs::create_directories(out);
  std::ofstream(out / "config.json") << cfg.dump(2);
  const size_t shards = 163;
  nlohmann::json index;
  uint64_t total = 0;
  for (size_t s = 0; s < shards; ++s) {
    size_t from = ts.size() * s / shards, to = ts.size() * (s + 1) / shards;
    char name[64];
    std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", s + 1, shards);
    std::ostringstream h;
    h << "{\"__metadata__\":{\"format\":\"pt\"}";
    uint64_t off = 0;
    for (size_t i = from; i < to; ++i) {
      uint64_t b = bytes_of(ts[i]);
      h << ",\"" << ts[i].name << "\":{\"dtype\":\"" << ts[i].dtype << "\",\"shape\":[";
      for (size_t k = 0; k < ts[i].shape.size(); ++k) h << (k ? "," : "") << ts[i].shape[k];
      h << "],\"data_offsets\":[" << off << "," << off + b << "]}";
      off += b;
      index["weight_map"][ts[i].name] = name;
    }
    h << "}";
    std::string header = h.str();
    while (header.size() % 8) header += ' ';
    std::string len(8, '\0');
    for (int i = 0; i < 8; ++i) len[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
    fs::path p = out / name;
    std::ofstream(p, std::ios::binary) << len << header;
    if (::truncate(p.c_str(), static_cast<off_t>(8 + header.size() + off)) != 0) std::perror("truncate");
    total += off;
  }
  index["metadata"]["total_size"] = total;
  std::ofstream(out / "model.safetensors.index.json") << index.dump(2);
  std::ofstream(out / "tokenizer_config.json") << "{}";
  std::printf("%zu tensors in %zu shards, %llu bytes of weights\n", ts.size(), shards, static_cast<unsigned long long>(total));
  return 0;
}
