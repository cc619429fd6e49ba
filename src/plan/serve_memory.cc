#include "plan/serve_memory.h"

#include <algorithm>
#include <cmath>

#include "common/units.h"

namespace quarkplan {

namespace {

// A whole number of the analysis's architecture (0 when absent): a named copy, never operator[]
// on a key that may be missing.
double arch_number(const Json& arch, const char* key) {
  const Json v = arch.is_object() ? arch.value(key, Json(nullptr)) : Json(nullptr);
  return v.is_number() ? std::max(0.0, v.get<double>()) : 0.0;
}

double number(const Json& j, const char* key, double fallback = 0) {
  const Json v = j.is_object() ? j.value(key, Json(nullptr)) : Json(nullptr);
  return v.is_number() ? v.get<double>() : fallback;
}

}  // namespace

double ServeMemory::reserve(int64_t tp, int64_t pp) const {
  const double t = static_cast<double>(std::max<int64_t>(tp, 1)), p = static_cast<double>(std::max<int64_t>(pp, 1));
  const double r = reserve_fixed + static_cast<double>(tokens) * (per_token + per_token_split / t) + static_cast<double>(sequences) * per_sequence +
                   t * p / 8 * per_8_ranks;
  return std::max(r, reserve_floor);
}

double ServeMemory::kv_per_accelerator(int64_t tp, int64_t pp) const {
  const int64_t split = std::max<int64_t>(1, std::min(tp, kv_split_max));
  const double stages = static_cast<double>(std::max<int64_t>(pp, 1));
  return kv_sequence / stages / static_cast<double>(split) + state_sequence / stages / static_cast<double>(std::max<int64_t>(tp, 1));
}

double ServeMemory::kv_room(int64_t tp, int64_t pp) const {
  return usable - weights / static_cast<double>(std::max<int64_t>(tp * pp, 1)) - reserve(tp, pp);
}

int64_t ServeMemory::sequences_held(int64_t tp, int64_t pp) const {
  const double room = kv_room(tp, pp), per = kv_per_accelerator(tp, pp);
  if (room <= 0) return 0;
  if (per <= 0) return 1 << 30;  // no KV cache to hold (the estimate has none)
  return static_cast<int64_t>(std::min(room / per, 1e9));
}

int64_t ServeMemory::fewest_accelerators(int64_t batch) const {
  for (int64_t n = 1; n <= 4096; ++n)
    if (sequences_held(n, 1) >= std::max<int64_t>(batch, 1)) return n;
  return 4096;
}

ServeMemory serve_memory(const PlanState& s, double weights_bytes, double kv_sequence_bytes, double state_sequence_bytes) {
  ServeMemory m;
  m.weights = weights_bytes;
  m.kv_sequence = std::max(0.0, kv_sequence_bytes);
  m.state_sequence = std::max(0.0, state_sequence_bytes);
  if (!s.accelerator || !(*s.accelerator)["memory_gib"].is_number()) return m;
  m.memory = (*s.accelerator)["memory_gib"].get<double>() * static_cast<double>(kGiB);
  const Json& a = s.analysis["model"];
  const Json arch = a.value("architecture", Json::object());
  const Json kv = arch.is_object() ? arch.value("kv_cache", Json(nullptr)) : Json(nullptr);
  const bool mla = kv.is_object() && kv.value("kind", std::string()) == "mla";
  const double kv_heads = arch_number(arch, "num_key_value_heads") > 0 ? arch_number(arch, "num_key_value_heads") : arch_number(arch, "num_attention_heads");
  m.kv_split_max = mla ? 1 : std::max<int64_t>(1, static_cast<int64_t>(kv_heads));
  const Json mem = s.runtime && (*s.runtime).contains("serve") ? (*s.runtime)["serve"].value("memory", Json(nullptr)) : Json(nullptr);
  if (!mem.is_object()) {
    // No runtime facts: the device catalog's usable fraction and no reserve (the older fit).
    m.usable = m.memory * s.cat.torch()["device_facts"].value("usable_memory_fraction", 0.9);
    m.method = "weights + KV cache in " + std::to_string(static_cast<int>(m.usable / m.memory * 100 + 0.5)) + "% of each accelerator's memory";
    return m;
  }
  m.known = true;
  m.usable = m.memory * number(mem, "usable_fraction", 0.9);
  const double gib = m.memory / static_cast<double>(kGiB);
  const std::string name = (*s.accelerator).value("name", std::string());
  Json tier = Json::object();
  for (const auto& t : mem.value("tiers", Json::array())) {
    const Json except = t.value("except", Json::array());
    if ((t.contains("min_memory_gib") && gib < number(t, "min_memory_gib")) || (t.contains("max_memory_gib") && gib >= number(t, "max_memory_gib")) ||
        std::count(except.begin(), except.end(), name))
      continue;
    tier = t;
    break;
  }
  m.tokens = static_cast<uint64_t>(number(tier, "tokens"));
  m.sequences = static_cast<uint64_t>(number(tier, "sequences"));
  const Json r = mem.value("reserve", Json::object());
  constexpr double kMiB = 1 << 20;
  m.reserve_fixed = number(r, "fixed_gib") * static_cast<double>(kGiB) + number(r, "fixed_mib") * kMiB;
  m.per_8_ranks = number(r, "per_8_ranks_mib") * kMiB;
  if (gib > number(r, "floor_above_gib", 1e18)) m.reserve_floor = number(r, "floor_gib") * static_cast<double>(kGiB);
  std::string how;
  if (r.value("activations", std::string()) == "shapes") {
    // The profile run's peak, from the model's widths: a few hidden-size buffers per batched token
    // (residual, normed input, attention output, all-reduce), the widest MLP's intermediate
    // (split over tensor ranks; for MoE the routed experts' gate/up output for every chosen
    // expert), and FP32 logits plus probabilities for every batched sequence.
    const double hidden = arch_number(arch, "hidden_size") > 0 ? arch_number(arch, "hidden_size") : number(a, "hidden_size");
    const double mlp = std::max(arch_number(arch, "intermediate_size"), 2 * arch_number(arch, "num_experts_per_tok") * arch_number(arch, "moe_intermediate_size"));
    m.per_token = 2.0 * 6 * hidden;
    m.per_token_split = 2.0 * 3 * mlp;
    m.per_sequence = 8.0 * arch_number(arch, "vocab_size");
    how = "the profile run's peak at " + std::to_string(m.tokens) + " batched tokens and " + std::to_string(m.sequences) + " sequences' logits";
  } else {
    // The runtime's own formula (SGLang: a reserve per prefill token and per captured graph batch).
    const double tokens = std::max(static_cast<double>(m.tokens), number(r, "min_tokens"));
    m.reserve_fixed += tokens * number(r, "per_token_mib") * kMiB + number(tier, "graph_batch") * number(r, "per_graph_batch_mib") * kMiB;
    how = "its reserve for " + std::to_string(m.tokens) + " prefill tokens and graphs up to batch " + std::to_string(static_cast<int64_t>(number(tier, "graph_batch")));
  }
  m.target = std::max<int64_t>(1, static_cast<int64_t>(number(mem, "concurrency_target", 1)));
  m.target_note = mem.value("concurrency_note", std::string());
  m.method = "weights, " + how + (m.reserve_fixed > 0 && r.value("activations", std::string()) == "shapes" ? " and " + format_bytes(static_cast<uint64_t>(m.reserve_fixed)) + " of graphs and buffers" : std::string()) +
             ", and the KV cache (" + (mla ? "MLA's latent cache is whole on every tensor rank" : "split over at most " + std::to_string(m.kv_split_max) + " KV heads") +
             (m.state_sequence > 0 ? "; the linear-attention/Mamba state split over every rank" : "") + ") in " +
             std::to_string(static_cast<int>(number(mem, "usable_fraction", 0.9) * 100 + 0.5)) + "% of each accelerator's memory";
  return m;
}

}  // namespace quarkplan
