// --weight-stats: an opt-in streaming scan of the weights a quantizer would
// touch — the Linear weights of a safetensors checkpoint, or the constant
// weights of an ONNX model's Conv/Gemm/MatMul (initializers, Constant nodes,
// external data). Each tensor is read once with pread into a 64 KiB buffer per
// thread (peak memory stays flat whatever the model size; no page faults or
// page-table locks shared between threads). Large tensors are cut into chunks
// so every core is busy.
// Per module: max |w|, mean, standard deviation, and the share of weights
// beyond 6 sigma (recounted exactly, only in the blocks that reach it).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"

namespace quarkplan {

struct TensorStats {
  std::string name;
  uint64_t numel = 0;
  double max_abs = 0, mean = 0, stddev = 0, outlier_ratio = 0;  // share of |w| > 6 sigma
};

// Statistics of one tensor's raw little-endian data; dtype is a safetensors
// dtype ("BF16", "F16", "F32"); false for other dtypes.
// When `release` is set, the pages already read are handed back to the kernel
// every 16 MiB (file-backed map), so a multi-GB embedding never sits in memory.
bool tensor_stats(std::string_view data, std::string_view dtype, TensorStats& out, bool release = false);

// IEEE half -> float, the portable conversion (CPUs without F16C); exact for
// every half, inf and NaN included. Exposed for its exhaustive test.
float half_to_float(uint16_t h);

// One weight to scan: `length` bytes at `offset` of `file` (read with pread
// into a small per-thread buffer: no page faults, no page-table contention
// between threads, memory bounded by the buffers), or, when `file` is empty,
// the bytes of `data`.
struct WeightTensor {
  std::string module;   // layer: Linear module (safetensors) or consuming node (ONNX)
  std::string tensor;   // tensor name
  std::string op_type;  // ONNX op type, "" for safetensors
  std::string_view data;
  std::string dtype;    // "F32" | "F16" | "BF16"
  std::string file;
  uint64_t offset = 0, length = 0;
  uint64_t size() const { return file.empty() ? data.size() : length; }
};

// Called on the calling thread about every 100 ms while a scan runs.
using ScanProgress = std::function<void(uint64_t done_bytes, uint64_t total_bytes)>;

struct ScanOptions {
  unsigned threads = 0;  // 0: every core
  ScanProgress progress;
  size_t top = 20;
  double outlier_max_over_std = 50;  // a module whose max |w| / std exceeds this is an outlier module
  // ... or whose share of weights beyond 6 sigma reaches this while its max
  // |w| / std reaches outlier_tail_max_over_std: a heavy tail (a Gaussian puts
  // 2e-9 beyond 6 sigma, a Laplace 2e-4) inflates the std itself, so a far
  // tail holding 0.1% of the weights is an outlier layer before any single
  // weight reaches outlier_max_over_std.
  double outlier_tail_share = 1e-3;
  double outlier_tail_max_over_std = 20;
};

// Scans `tensors` on `threads` workers; returns {scanned_bytes, tensors,
// seconds, gb_per_second, threads, top_modules:[...], outlier_modules:[...], method}.
Json scan_weight_tensors(const std::vector<WeightTensor>& tensors, const ScanOptions& opt = {});

// The 2-D Linear weights of the given .safetensors files.
Json scan_weight_stats(const std::vector<std::string>& files, const ScanOptions& opt = {});

}  // namespace quarkplan
