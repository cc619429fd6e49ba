// The whole runnable Python script of an ONNX plan (`explain --python FILE`):
// imports, the plan's Quark config, the quantize call over the plan's
// calibration set, and a check that loads the quantized model the way it will
// be served (custom-op library where the format needs it, the Vitis AI EP
// session for an NPU) and runs one calibration sample through it.
#pragma once
#include <string>

#include "common/json.h"

namespace quarkplan {

class Catalog;

// `plan_path` and `script_path` are only named in the script's header. Throws std::logic_error
// for a Torch plan (its invocation is a shell command).
std::string onnx_python_script(const Json& plan, const Json& analysis, const Catalog& cat, const std::string& plan_path,
                               const std::string& script_path);

}  // namespace quarkplan
