#include "ui/estimates_view.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/units.h"

namespace quarkplan::ui {

namespace {
uint64_t u64(const Json& j, const char* k) { return j.contains(k) && j[k].is_number_unsigned() ? j[k].get<uint64_t>() : 0; }
int64_t i64(const Json& j, const char* k) { return j.contains(k) && j[k].is_number_integer() ? j[k].get<int64_t>() : 0; }
}  // namespace

std::string render_estimates(const Json& est, const Style& st) {
  std::string out;
  if (!est.is_object()) return out;
  if (est.contains("weights") && est["weights"].is_array() && !est["weights"].empty()) {
    out += st.bold("Weight size per scheme:") + "\n";
    // The name column fits the longest name (ONNX presets like INT16_TRANSFORMER_ACCURATE).
    size_t name_w = 14;
    for (const auto& w : est["weights"]) name_w = std::max(name_w, w.value("scheme", "?").size());
    for (const auto& w : est["weights"])
      out += fmt::format("  {:<{}} {:>10}  {:6.3f} bits/weight  ({})\n", w.value("scheme", "?"), name_w, format_bytes(u64(w, "bytes")),
                         w.value("bits_per_weight_effective", 0.0), w.value("method", ""));
  }
  if (est.contains("kv_cache") && est["kv_cache"].is_object()) {
    const Json& kv = est["kv_cache"];
    out += fmt::format("{} {}, {} per token, {} at {} tokens x batch {}\n", st.bold("KV cache:"), kv.value("dtype", "?"),
                       format_bytes(u64(kv, "bytes_per_token")), format_bytes(u64(kv, "bytes")), i64(kv, "context_length"), i64(kv, "batch"));
  }
  if (est.contains("fit") && est["fit"].is_object()) {
    const Json& f = est["fit"];
    std::string hw = f.value("accelerator", "?");
    std::string have = f.contains("accelerators_available") && f["accelerators_available"].is_number_integer()
                           ? std::to_string(f["accelerators_available"].get<int64_t>()) + " available"
                           : "count not given";
    out += fmt::format("{} {} x {} each ({}): calibration {} -> {} accelerator(s); serving {} -> {} accelerator(s); {}\n", st.bold("Fit:"),
                       hw, format_bytes(u64(f, "memory_bytes")), have, format_bytes(u64(f, "calibration_bytes")), i64(f, "calibration_accelerators"),
                       format_bytes(u64(f, "deployment_bytes")), i64(f, "deployment_accelerators"),
                       f.value("fits", false) ? "fits" : "DOES NOT FIT the accelerators available");
  }
  return out;
}

}  // namespace quarkplan::ui
