// Writes a 1 GiB BF16 checkpoint with real (pseudo-random) bytes for the
// --weight-stats throughput benchmark: config.json + model.safetensors holding
// 8 Linear weights of 4096 x 16384.
// usage: gen_weight_file OUT_DIR
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  std::filesystem::path out = argv[1];
  std::filesystem::create_directories(out);
  std::ofstream(out / "config.json") << R"({"model_type":"llama","num_hidden_layers":8,"hidden_size":4096,"intermediate_size":16384,)"
                                     << R"("num_attention_heads":32,"num_key_value_heads":8,"vocab_size":32000,"tie_word_embeddings":false})";
  std::ofstream(out / "tokenizer.json") << "{}";
  const uint64_t rows = 4096, cols = 16384, bytes = rows * cols * 2;
  std::string header = "{";
  for (int i = 0; i < 8; ++i)
    header += (i ? "," : "") + std::string("\"model.layers.") + std::to_string(i) + ".mlp.up_proj.weight\":{\"dtype\":\"BF16\",\"shape\":[" +
              std::to_string(rows) + "," + std::to_string(cols) + "],\"data_offsets\":[" + std::to_string(i * bytes) + "," +
              std::to_string((i + 1) * bytes) + "]}";
  header += "}";
  while (header.size() % 8) header += ' ';
  std::ofstream f(out / "model.safetensors", std::ios::binary);
  uint64_t n = header.size();
  f.write(reinterpret_cast<const char*>(&n), 8);
  f << header;
  std::vector<uint16_t> chunk(1 << 20);
  uint32_t x = 12345;
  for (uint64_t written = 0; written < 8 * bytes; written += chunk.size() * 2) {
    for (auto& v : chunk) {
      x = x * 1664525u + 1013904223u;
      // bf16 of a small value around +-0.02 (exponent 121-122), random mantissa and sign
      v = static_cast<uint16_t>(((x >> 31) << 15) | ((121u + ((x >> 20) & 1)) << 7) | ((x >> 8) & 0x7f));
    }
    f.write(reinterpret_cast<const char*>(chunk.data()), static_cast<std::streamsize>(chunk.size() * 2));
  }
  std::printf("wrote %s (%llu bytes of weights)\n", (out / "model.safetensors").c_str(), static_cast<unsigned long long>(8 * bytes));
  return 0;
}
