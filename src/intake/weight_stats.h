// --weight-stats: an opt-in streaming scan of the Linear weights of a
// safetensors checkpoint. Each tensor is read once, straight from the memory
// map, and its pages are released right after (peak memory stays flat whatever
// the model size). Per module: max |w|, mean, standard deviation, and the share
// of weights beyond 6 sigma (recounted exactly, only in the blocks that reach it).
#pragma once
#include <cstdint>
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

// Scans the 2-D weights of the given .safetensors files; returns
// {scanned_bytes, tensors, seconds, modules:[...], outlier_modules:[...]}.
Json scan_weight_stats(const std::vector<std::string>& files, size_t top = 20);

}  // namespace quarkplan
