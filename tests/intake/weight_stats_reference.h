// A plain scalar model of the --weight-stats statistics, written independently
// of src/intake/weight_stats.cc: halves decoded with ldexp, per block of 16384
// weights a float sum / sum of squares in element order folded into doubles,
// the 6-sigma tail counted over every weight. The scan must match it bit for
// bit on every path (F16C or portable, one thread or two).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace qp_test {

// IEEE binary16 -> float by its definition.
inline float half_reference(uint16_t h) {
  int exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  float mag = exp == 0    ? std::ldexp(static_cast<float>(man), -24)
              : exp == 31 ? (man ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity())
                          : std::ldexp(static_cast<float>(1024 + man), exp - 25);
  return (h & 0x8000) ? -mag : mag;
}

struct ReferenceStats {
  double max_abs = 0, mean = 0, stddev = 0, outlier_ratio = 0;
};

inline ReferenceStats reference_stats(const std::vector<float>& v) {
  const size_t block = 16384;
  double sum = 0, sumsq = 0;
  float mx = 0;
  for (size_t b = 0; b < v.size(); b += block) {
    float s = 0, q = 0;
    for (size_t i = b; i < v.size() && i < b + block; ++i) {
      float x = v[i];
      s += x;
      float x2 = x * x;  // rounded to float before the add (no FMA)
      q += x2;
      float a = std::fabs(x);
      mx = a > mx ? a : mx;  // NaN never wins
    }
    sum += s;
    sumsq += q;
  }
  ReferenceStats r;
  if (v.empty()) return r;
  double n = static_cast<double>(v.size());
  r.max_abs = mx;
  r.mean = sum / n;
  double var = sumsq / n - r.mean * r.mean;
  r.stddev = var > 0 ? std::sqrt(var) : 0;
  float thr = static_cast<float>(6.0 * std::sqrt(var > 0 ? var : 0));
  uint64_t tail = 0;
  if (thr > 0)
    for (float x : v) tail += std::fabs(x) >= thr ? 1 : 0;
  r.outlier_ratio = static_cast<double>(tail) / n;
  return r;
}

// The same bits, NaN included.
inline bool same_bits(double a, double b) { return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0; }

// FP16 weights that exercise every class: a bell of normals around +-0.02,
// zeros of both signs, subnormals, the largest finite half, and one outlier.
inline std::vector<uint16_t> f16_sample(size_t n, uint32_t seed) {
  std::vector<uint16_t> h(n);
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    uint16_t sign = static_cast<uint16_t>((seed >> 31) << 15);
    switch ((seed >> 8) % 16) {
      case 0: h[i] = sign; break;                                              // +-0
      case 1: h[i] = static_cast<uint16_t>(sign | ((seed >> 12) & 0x3ff)); break;  // subnormal
      default: h[i] = static_cast<uint16_t>(sign | ((8u + ((seed >> 12) & 3)) << 10) | ((seed >> 14) & 0x3ff));  // ~2^-7..2^-4
    }
  }
  if (n > 100) {
    h[n / 3] = 0x7bff;  // 65504, the largest half: far beyond 6 sigma
    h[n / 2] = 0x4880;  // 9.0
  }
  return h;
}

inline std::string f16_raw(const std::vector<uint16_t>& h) { return std::string(reinterpret_cast<const char*>(h.data()), h.size() * 2); }

inline std::vector<float> f16_decode(const std::vector<uint16_t>& h) {
  std::vector<float> v(h.size());
  for (size_t i = 0; i < h.size(); ++i) v[i] = half_reference(h[i]);
  return v;
}

}  // namespace qp_test
