// The calibration set an ONNX plan points to (--calib-data PATH), checked the
// way Quark's PathDataReader will read it (quark/onnx/calibration/
// data_readers.py@647cedc, amd-quark 0.13; the same reader in 0.12):
//   - .npy files right in PATH feed every model input (so only a one-input
//     model may use that layout); otherwise PATH/<input name>/*.npy per input,
//     files of the same name across inputs forming one sample;
//   - each array has the input's rank, or one less (a batch of one is added),
//     or is 1-D with exactly the input's element count (reshaped); every fixed
//     dimension of the input must match; any dtype is cast to the input's.
// Only .npy headers are read. Problems Quark would raise on are errors (the
// plan is refused, exit 2, naming the layout expected); the rest are facts the
// plan records (layout, sample count, dtype casts).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/json.h"

namespace quarkplan {

// Reads the set at `path` against the model inputs of `analysis`
// (model.onnx_specific.inputs). Returns the record the plan keeps:
// {path, layout ("shared"|"per_input"), samples, inputs: [{name, folder,
// files, dtypes, casts_to}]}. Throws InputError naming the file or folder and
// the layout Quark expects.
// `fixed`: the plan's FixShapes (input name -> dimensions), which Quark applies
// before it runs the model on the set, so the arrays must fit those shapes.
Json inspect_calibration_data(const std::string& path, const Json& analysis,
                              const std::map<std::string, std::vector<int64_t>>& fixed = {});

}  // namespace quarkplan
