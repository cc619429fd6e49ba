// One unit convention for every size quarkplan shows (decision table, risks,
// summaries, explain, report): bytes are kept exact as integers and formatted
// once, here, in binary IEC units (1 GiB = 2^30 bytes) — the units rocm-smi and
// nvidia-smi report accelerator memory in, so "fits in 192 GiB" compares like
// with like. JSON artifacts carry the exact byte counts.
#pragma once
#include <cstdint>
#include <string>

namespace quarkplan {

// "512 B", "204 KiB", "15.0 MiB", "14.96 GiB", "1.22 TiB": three significant
// digits at most, never rounding a non-zero size down to "0".
std::string format_bytes(uint64_t bytes);

// Parameter counts: "1.24 B", "671 B", "22.0 M", "5,440".
std::string format_params(uint64_t params);

// Exact counts with thousands separators: "684,489,845,504".
std::string with_commas(uint64_t v);

constexpr uint64_t kGiB = 1ull << 30;

}  // namespace quarkplan
