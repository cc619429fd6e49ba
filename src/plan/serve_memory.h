// What one accelerator holds when a runtime serves the model split `tp` ways (tensor parallel)
// and `pp` ways (pipeline stages): its share of the weights, the runtime's reserve for
// activations and graphs, and the KV cache in what is left. The runtime's own numbers (its
// memory fraction, batch budget, reserve) come from catalog/runtimes.json serve.memory; the
// model's widths from the analysis. Used by the fit (estimates) and the serve commands' sizes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "plan/plan_state.h"

namespace quarkplan {

struct ServeMemory {
  bool known = false;           // false: no runtime memory facts (CPU, NPU, no accelerator)
  double memory = 0;            // bytes per accelerator
  double usable = 0;            // what the runtime may use of it (its memory fraction)
  double weights = 0;           // the served weights, all ranks together
  double kv_sequence = 0;       // KV cache of one sequence at the planned context, unsplit
  double state_sequence = 0;    // linear-attention/Mamba state of one sequence, unsplit (splits over every tensor rank)
  int64_t kv_split_max = 1;     // the most ways the KV cache splits: the KV heads (1 for MLA's latent cache)
  uint64_t tokens = 0;          // the runtime's batch budget per step (its profile run)
  uint64_t sequences = 0;       // the most sequences it batches
  int64_t target = 1;           // full-context sequences the KV cache should hold for serving
  std::string target_note;
  // The reserve: fixed bytes, bytes per token of the batch budget (the part split tp ways
  // separately), logits per batched sequence, and a runtime's own formula where it has one.
  double reserve_fixed = 0, per_token = 0, per_token_split = 0, per_sequence = 0, per_8_ranks = 0, reserve_floor = 0;
  std::string method;

  double reserve(int64_t tp, int64_t pp) const;
  // One sequence's KV bytes on one accelerator: layers split over the stages, heads over tensor
  // ranks up to the KV heads (beyond that they are replicated; MLA's latent cache never splits);
  // a recurrent state's heads split over every rank.
  double kv_per_accelerator(int64_t tp, int64_t pp) const;
  // Bytes left for the KV cache on each accelerator (negative: the weights do not fit).
  double kv_room(int64_t tp, int64_t pp) const;
  // Full-context sequences the KV cache holds (0 when not even one).
  int64_t sequences_held(int64_t tp, int64_t pp) const;
  // The fewest accelerators (any count, tensor-parallel split) that hold `batch` sequences; 4096 when none do.
  int64_t fewest_accelerators(int64_t batch) const;
};

// The memory model of the plan's runtime on its accelerator for `weights_bytes` of served
// weights, `kv_sequence_bytes` of attention KV cache and `state_sequence_bytes` of recurrent state per sequence.
ServeMemory serve_memory(const PlanState& s, double weights_bytes, double kv_sequence_bytes, double state_sequence_bytes = 0);

}  // namespace quarkplan

namespace quarkplan {

// The serve command's parallel sizes: the fewest tensor ranks (a size `valid` accepts, within one
// node of `per_node`) whose accelerators hold the weights, the reserve and `batch` sequences; then,
// within `limit` accelerators (0: a node), the fewest that hold the serving target of sequences
// (more ranks, more KV room). Past a node: the largest valid size with pipeline stages.
struct ParallelChoice {
  int64_t tp = 1, pp = 1;
  int64_t fewest = 0;        // the fewest tensor ranks that hold the batch (0: none within a node)
  bool target_met = false;   // the chosen size holds the serving target
};
template <typename Valid>
ParallelChoice choose_parallel(const ServeMemory& m, Valid valid, int64_t batch, int64_t limit, int64_t per_node) {
  ParallelChoice c;
  const int64_t need = std::max<int64_t>(batch, 1), target = std::max<int64_t>(need, m.target);
  for (int64_t t = 1; t <= per_node && !c.fewest; ++t)
    if (valid(t) && m.sequences_held(t, 1) >= need) c.fewest = t;
  if (c.fewest) {
    c.tp = c.fewest;
    c.target_met = m.sequences_held(c.fewest, 1) >= target;
    const int64_t upper = limit > 0 ? std::min(limit, per_node) : per_node;
    for (int64_t t = c.fewest; t <= upper && !c.target_met; ++t)
      if (valid(t) && m.sequences_held(t, 1) >= target) c.tp = t, c.target_met = true;
    // Still short within a node, with more accelerators given: pipeline stages over more nodes.
    if (!c.target_met && limit > per_node) {
      int64_t best = c.tp;
      for (int64_t t = per_node; t >= c.tp; --t)
        if (valid(t)) {
          best = t;
          break;
        }
      for (int64_t p = 2; best * p <= limit && !c.target_met; ++p)
        if (m.sequences_held(best, p) >= target) c.tp = best, c.pp = p, c.target_met = true;
    }
    return c;
  }
  c.tp = 1;
  for (int64_t t = per_node; t >= 1; --t)
    if (valid(t)) {
      c.tp = t;
      break;
    }
  c.pp = 1;
  while (c.pp < 4096 && m.sequences_held(c.tp, c.pp) < need) ++c.pp;
  return c;
}

}  // namespace quarkplan
