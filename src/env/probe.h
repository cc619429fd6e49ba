// `quarkplan env`: this machine's facts as env_context.json (Quark's schema),
// following the preflight rules: missing evidence is "unknown", never "cpu";
// conflicting evidence (CUDA and ROCm GPUs) is "unknown" with the conflict
// explained; Python outside 3.11-3.13 is flagged.
#pragma once
#include <functional>
#include <string>

#include "common/json.h"

namespace quarkplan {

struct ProbeSystem {
  // Runs a command line; returns false when the program is not on PATH or fails.
  std::function<bool(const std::string& program, const std::string& args, std::string& out)> run;
  std::function<bool(const std::string& path)> exists;
  std::function<std::string(const std::string& path)> read;  // "" when unreadable
  std::function<std::string(const std::string& name)> getenv;
};

// The real system (PATH lookup, 10 s limit per command).
ProbeSystem real_system();

// `npu_generations`: catalog onnx.json's, whose PCI ids name the Ryzen AI NPU
// the amdxdna driver reports (hardware.npu_generation); null to skip.
Json probe_environment(const ProbeSystem& sys, const Json& catalog_hardware, const Json& npu_generations = Json());

}  // namespace quarkplan
