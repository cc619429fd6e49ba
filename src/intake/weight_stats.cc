#include "intake/weight_stats.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "common/mapped_file.h"
#include "intake/model_names_gen.h"
#include "intake/safetensors_reader.h"

namespace quarkplan {

namespace {

// Hands the pages of [from, to) back to the kernel (whole pages only).
void release_range(const char* from, const char* to) {
  const uintptr_t page = 4096;
  uintptr_t lo = (reinterpret_cast<uintptr_t>(from) + page - 1) & ~(page - 1);
  uintptr_t hi = reinterpret_cast<uintptr_t>(to) & ~(page - 1);
  if (hi > lo) ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
}

constexpr uint64_t kBlock = 65536;                // elements per block
constexpr uint64_t kReleaseEvery = 16ull << 20;   // bytes between page releases

struct Sums {
  double sum = 0, sumsq = 0;
  float max_abs = 0;
  uint64_t n = 0, tail = 0;
};

// Two passes, both vectorisable: (1) per block sum, sum of squares and max|w|
// (the block maxima are kept); (2) once sigma is known, only the blocks whose
// maximum reaches 6 sigma are counted again — rare, so the exact tail costs
// almost nothing. Float partial sums per block, folded into doubles.
template <typename Load>
void run(const char* p, uint64_t n, size_t width, Sums& out, Load load, bool release) {
  std::vector<float> block_max;
  block_max.reserve(n / kBlock + 1);
  const char* released = p;
  for (uint64_t start = 0; start < n; start += kBlock) {
    uint64_t end = std::min(n, start + kBlock);
    float s = 0, q = 0, m = 0;
    for (uint64_t i = start; i < end; ++i) {
      float v = load(p + i * width);
      float av = std::fabs(v);
      m = av > m ? av : m;
      s += v;
      q += v * v;
    }
    out.sum += s;
    out.sumsq += q;
    out.max_abs = m > out.max_abs ? m : out.max_abs;
    block_max.push_back(m);
    const char* done = p + end * width;
    if (release && static_cast<uint64_t>(done - released) >= kReleaseEvery) {
      release_range(released, done);
      released = done;
    }
  }
  out.n = n;
  if (n == 0) return;
  double mean = out.sum / static_cast<double>(n);
  double var = out.sumsq / static_cast<double>(n) - mean * mean;
  float thr = static_cast<float>(6.0 * std::sqrt(var > 0 ? var : 0));
  if (thr <= 0) return;
  for (size_t b = 0; b < block_max.size(); ++b) {
    if (block_max[b] < thr) continue;
    uint64_t start = b * kBlock, end = std::min(n, start + kBlock), c = 0;
    for (uint64_t i = start; i < end; ++i) c += std::fabs(load(p + i * width)) >= thr ? 1 : 0;
    out.tail += c;
  }
}

inline float bf16_at(const char* q) {
  uint16_t h;
  std::memcpy(&h, q, 2);
  uint32_t b = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

inline float f16_at(const char* q) {
  uint16_t h;
  std::memcpy(&h, q, 2);
  // IEEE half -> float (normal and subnormal; inf/nan kept as large values).
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ffu;
  if (exp == 0) {
    float f = static_cast<float>(man) * (1.0f / 16777216.0f);
    return sign ? -f : f;
  }
  uint32_t b = sign | ((exp + 112) << 23) | (man << 13);
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

inline float f32_at(const char* q) {
  float f;
  std::memcpy(&f, q, 4);
  return f;
}

}  // namespace

bool tensor_stats(std::string_view data, std::string_view dtype, TensorStats& out, bool release) {
  Sums a;
  const char* p = data.data();
  // Lambdas (not function pointers) so each loader inlines into its loop.
  if (dtype == "BF16") run(p, data.size() / 2, 2, a, [](const char* q) { return bf16_at(q); }, release);
  else if (dtype == "F16") run(p, data.size() / 2, 2, a, [](const char* q) { return f16_at(q); }, release);
  else if (dtype == "F32") run(p, data.size() / 4, 4, a, [](const char* q) { return f32_at(q); }, release);
  else return false;
  out.numel = a.n;
  if (a.n == 0) return true;
  out.max_abs = a.max_abs;
  out.mean = a.sum / static_cast<double>(a.n);
  double var = a.sumsq / static_cast<double>(a.n) - out.mean * out.mean;
  out.stddev = var > 0 ? std::sqrt(var) : 0;
  out.outlier_ratio = static_cast<double>(a.tail) / static_cast<double>(a.n);
  return true;
}

Json scan_weight_stats(const std::vector<std::string>& files, size_t top) {
  auto t0 = std::chrono::steady_clock::now();
  std::vector<TensorStats> all;
  uint64_t scanned = 0;
  for (const auto& f : files) {
    safetensors::Header h = safetensors::read_file(f);
    MappedFile map(f);
    const char* base = map.bytes().data() + 8 + h.header_bytes;
    ::madvise(const_cast<char*>(map.bytes().data()), map.size(), MADV_SEQUENTIAL);
    for (const auto& t : h.tensors) {
      if (t.shape.size() != 2 || t.name.size() < 7 || t.name.compare(t.name.size() - 7, 7, ".weight") != 0) continue;
      TensorStats s;
      s.name = t.name.substr(0, t.name.size() - 7);
      if (is_non_linear_module(s.name)) continue;  // embeddings and norms are never quantized
      std::string_view data(base + t.begin, t.end - t.begin);
      if (!tensor_stats(data, t.dtype, s, /*release=*/true)) continue;
      scanned += data.size();
      all.push_back(std::move(s));
      release_range(data.data(), data.data() + data.size() + 4095);  // the tail pages
    }
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  auto ratio = [](const TensorStats& s) { return s.stddev > 0 ? s.max_abs / s.stddev : 0.0; };
  std::vector<const TensorStats*> order;
  for (const auto& s : all) order.push_back(&s);
  std::sort(order.begin(), order.end(), [&](auto* a, auto* b) { return ratio(*a) > ratio(*b); });
  Json mods = Json::array(), outliers = Json::array();
  for (size_t i = 0; i < order.size() && i < top; ++i) {
    const auto& s = *order[i];
    mods.push_back({{"module", s.name}, {"max_abs", s.max_abs}, {"std", s.stddev}, {"max_over_std", std::round(ratio(s) * 10) / 10},
                    {"outlier_ratio_6sigma", s.outlier_ratio}});
  }
  // Modules whose largest weight sits far beyond the bulk: candidates to keep
  // in higher precision (or to smooth) — a heavy tail hurts per-tensor scales.
  for (const auto* s : order)
    if (ratio(*s) > 50) outliers.push_back(s->name);
  return {{"scanned_bytes", scanned},
          {"tensors", all.size()},
          {"seconds", std::round(secs * 1000) / 1000},
          {"gb_per_second", secs > 0 ? std::round(static_cast<double>(scanned) / 1e9 / secs * 100) / 100 : 0.0},
          {"top_modules", mods},
          {"outlier_modules", outliers},
          {"method", "one streaming pass per Linear weight (BF16/F16/F32): max|w|/std; the share beyond 6 sigma recounted exactly in the few blocks that reach it"}};
}

}  // namespace quarkplan
