// What the user asked for: intent (target, hardware, goal, export) and every
// decision they set themselves. Command-line flags (--preset, --scheme, ...)
// and --set KEY=VALUE land in the same `choices` map, keyed by decision-table
// row, so the rules see one source of user choices, and an interactive edit is
// just another entry.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"

namespace quarkplan {

struct PlanRequest {
  std::string target;    // ONNX deployment target, "" when not given
  std::string hardware;  // accelerator name (catalog/hardware.json), "" when not given
  std::string goal;      // accuracy | balanced | size | experiment | mixed, "" when not given
  std::string export_format;  // hf | gguf | onnx
  std::map<std::string, Json> choices;  // decision row -> value the user chose
  std::string calib_data;      // path, "none", or "" when not said
  // What the ONNX calibration set at calib_data holds, as Quark's reader will
  // read it (intake/calibration_data.h); null when not inspected. Read from
  // disk by the command line, recorded here, so re-running the rules on a
  // recorded plan never reads the folder again.
  Json calib_data_check;
  bool insist = false;         // keep choices that break a hard gate, recording the risk
  bool trust_remote_code = false;
  bool confirmed = false;      // --yes, or confirmed at the prompt
  int64_t gpus = 0;            // accelerators available (--gpus), 0 when not given
  int64_t context = 0;         // KV-cache estimate context length; 0: 8192 or the model's maximum when smaller
  int64_t batch = 1;           // KV-cache estimate batch
  // Context files.
  Json env_context;            // null when not given
  std::optional<bool> custom_ops_compile_ok;
  std::optional<std::vector<std::string>> available_providers;  // from onnx_install_result.json
  std::string install_status;          // onnx_install_result.json status (ok | failed | skipped), "" when not given
  std::string install_failure_reason;  // its failure_reason, when it says one
  std::string install_accelerator_tag;  // its accelerator_tag (cpu, cuda-12, rocm-7.0, ...), "" when not given
  std::string install_onnxruntime_version;  // its onnxruntime_version, "" when not given
  std::string target_source;   // where the target came from
  std::string analysis_ref = "./model_analysis.json";
  std::string catalog_dir;
  // The Quark release the plan is for (catalog/releases.json; "" for the
  // newest) and where it came from ("--quark-version", a context file, the
  // analysis, or "" when it is the newest by default).
  std::string quark_release, quark_release_source;
  // The amd-quark an --install-result / --env file reports installed, and that file ("" when none).
  std::string installed_quark_version, installed_quark_source;
  // The command-line flag each choice came from (e.g. "calibration.num_calib_data"
  // -> "--num-calib"), so an error names what the user typed.
  std::map<std::string, std::string> choice_flags;

  const Json* choice(const std::string& key) const {
    auto it = choices.find(key);
    return it == choices.end() ? nullptr : &it->second;
  }
};

// The request as recorded in a plan (`request`), and back: explain and validate
// re-run the rules on a plan's own request to check its decisions still follow.
Json request_to_json(const PlanRequest& req);
PlanRequest request_from_json(const Json& j);  // throws InputError when malformed

// Decision rows a user may set, per flow (for --set and the interactive loop).
const std::vector<std::string>& onnx_decision_keys();
const std::vector<std::string>& torch_decision_keys();

}  // namespace quarkplan
