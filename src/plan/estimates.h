// Estimates before anything runs (SPEC §4): weight size per scheme summed per
// Linear module (scales and zero points included, excluded layers at their
// stored dtype), KV cache at a context length, and the fit on the accelerator.
#pragma once
#include "plan/plan_state.h"

namespace quarkplan {

// Fills plan["estimates"] = {weights: [...], kv_cache: {...}, fit: {...}} for
// the Torch flow, recording a risk when the plan does not fit.
void add_estimates(PlanState& s);

// The ONNX flavour: the model as stored, then the chosen preset and up to two
// other candidates, with the weights of Conv/Gemm/MatMul at the preset's bits.
void add_onnx_estimates(PlanState& s);

// Bits per weight of `scheme` for a Linear with `in_features` inputs.
double scheme_bits(const Json& scheme, uint64_t in_features);

}  // namespace quarkplan
