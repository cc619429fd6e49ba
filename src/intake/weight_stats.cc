#include "intake/weight_stats.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "common/mapped_file.h"
#include "intake/safetensors_reader.h"

namespace quarkplan {

namespace {

// Accumulates over float values; the exponent histogram (bucket = floor(log2|w|)+150)
// lets the 6-sigma tail be counted after the fact, in the same pass.
struct Acc {
  double sum = 0, sumsq = 0;
  float max_abs = 0;
  uint64_t hist[4][300] = {};
  uint64_t n = 0;
};

template <typename Load>
void run(const char* p, uint64_t n, size_t width, Acc& a, Load load) {
  // Blocks of floats summed in float (vectorisable), folded into doubles.
  const uint64_t block = 4096;
  for (uint64_t start = 0; start < n; start += block) {
    uint64_t end = std::min(n, start + block);
    float s = 0, sq = 0, mx = a.max_abs;
    for (uint64_t i = start; i < end; ++i) {
      float v = load(p + i * width);
      float av = std::fabs(v);
      mx = av > mx ? av : mx;
      s += v;
      sq += v * v;
    }
    a.max_abs = mx;
    a.sum += s;
    a.sumsq += sq;
    for (uint64_t i = start; i < end; ++i) {
      float av = std::fabs(load(p + i * width));
      uint32_t bits;
      std::memcpy(&bits, &av, 4);
      ++a.hist[i & 3][(bits >> 23) & 0xff];
    }
  }
  a.n += n;
}

// BF16, the common case, with eight independent lanes so the compiler can
// vectorise the reductions, and the exponent histogram taken on the raw bits.
void run_bf16(const char* p, uint64_t n, Acc& a) {
  const uint64_t block = 65536;
  for (uint64_t start = 0; start < n; start += block) {
    uint64_t end = std::min(n, start + block);
    float s[8] = {}, q[8] = {}, m[8] = {};
    uint64_t i = start;
    for (; i + 8 <= end; i += 8) {
      uint16_t h[8];
      std::memcpy(h, p + i * 2, 16);
      for (int l = 0; l < 8; ++l) {
        uint32_t b = static_cast<uint32_t>(h[l]) << 16;
        float v;
        std::memcpy(&v, &b, 4);
        float av = std::fabs(v);
        m[l] = av > m[l] ? av : m[l];
        s[l] += v;
        q[l] += v * v;
      }
    }
    for (; i < end; ++i) {
      uint16_t h;
      std::memcpy(&h, p + i * 2, 2);
      uint32_t b = static_cast<uint32_t>(h) << 16;
      float v;
      std::memcpy(&v, &b, 4);
      m[0] = std::fabs(v) > m[0] ? std::fabs(v) : m[0];
      s[0] += v;
      q[0] += v * v;
    }
    for (int l = 0; l < 8; ++l) {
      a.max_abs = m[l] > a.max_abs ? m[l] : a.max_abs;
      a.sum += s[l];
      a.sumsq += q[l];
    }
    // 16 interleaved 32-bit histograms: neighbouring weights share an exponent,
    // and one counter would serialise every increment on its predecessor.
    uint32_t local[16 * 256] = {};
    for (uint64_t k = start; k < end; ++k) {
      uint16_t h;
      std::memcpy(&h, p + k * 2, 2);
      ++local[((k & 15) << 8) | ((h >> 7) & 0xff)];
    }
    for (int l = 0; l < 16; ++l)
      for (int e = 0; e < 256; ++e) a.hist[l & 3][e] += local[(l << 8) | e];
  }
  a.n += n;
}

}  // namespace

bool tensor_stats(std::string_view data, std::string_view dtype, TensorStats& out) {
  Acc a;
  const char* p = data.data();
  if (dtype == "BF16") {
    run_bf16(p, data.size() / 2, a);
  } else if (dtype == "F16") {
    run(p, data.size() / 2, 2, a, [](const char* q) {
      uint16_t h;
      std::memcpy(&h, q, 2);
      // IEEE half -> float (normal and subnormal; inf/nan kept as large values).
      uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ffu, b;
      if (exp == 0) {
        float f = std::ldexp(static_cast<float>(man), -24);
        return sign ? -f : f;
      }
      b = sign | ((exp + 112) << 23) | (man << 13);
      float f;
      std::memcpy(&f, &b, 4);
      return f;
    });
  } else if (dtype == "F32") {
    run(p, data.size() / 4, 4, a, [](const char* q) {
      float f;
      std::memcpy(&f, q, 4);
      return f;
    });
  } else {
    return false;
  }
  out.numel = a.n;
  if (a.n == 0) return true;
  out.max_abs = a.max_abs;
  out.mean = a.sum / static_cast<double>(a.n);
  double var = a.sumsq / static_cast<double>(a.n) - out.mean * out.mean;
  out.stddev = var > 0 ? std::sqrt(var) : 0;
  // Weights beyond 6 sigma: the buckets whose lower edge (2^e) is at or above it.
  uint64_t tail = 0;
  if (out.stddev > 0) {
    int cut = static_cast<int>(std::ceil(std::log2(6 * out.stddev))) + 127;
    for (int e = std::max(cut, 0); e < 256; ++e)
      for (int l = 0; l < 4; ++l) tail += a.hist[l][e];
  }
  out.outlier_ratio = static_cast<double>(tail) / static_cast<double>(a.n);
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
      std::string_view data(base + t.begin, t.end - t.begin);
      if (!tensor_stats(data, t.dtype, s)) continue;
      scanned += data.size();
      all.push_back(std::move(s));
      // Release the pages just read: memory stays flat across the model.
      uintptr_t page = 4096, lo = reinterpret_cast<uintptr_t>(data.data()) & ~(page - 1);
      ::madvise(reinterpret_cast<void*>(lo), reinterpret_cast<uintptr_t>(data.data()) + data.size() - lo, MADV_DONTNEED);
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
          {"method", "one streaming pass per 2-D .weight tensor (BF16/F16/F32): max|w|/std, share beyond 6 sigma from an exponent histogram"}};
}

}  // namespace quarkplan
