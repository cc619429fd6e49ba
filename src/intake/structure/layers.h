// The layers of a structure: the family's stacks run layer by layer, each
// layer's tags (attention kind, MoE or dense, Nemotron-NAS blocks), the layer
// kinds and the KV-cache facts.
#pragma once
#include "intake/structure/expand.h"

namespace quarkplan::structure_detail {

// Expands the family's globals and every layer of its stacks (one pass: the
// counting pass when c.count_only, else the one that materialises).
void run_stacks(Ctx& c);

}  // namespace quarkplan::structure_detail
