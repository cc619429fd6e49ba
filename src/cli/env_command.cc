// `quarkplan env [-o FILE]`: probe this machine into env_context.json.
#include <cstdio>

#include "catalog/catalog.h"
#include "cli/commands.h"
#include "cli/guarded.h"
#include "common/files.h"
#include "env/probe.h"

namespace quarkplan {

int run_env_command(const EnvArgs& a) {
  return guarded(a.json, [&] {
    check_output_path(a.output);
    Json env = probe_environment(real_system(), Catalog::load().hardware(), Catalog::load().onnx()["npu_generations"]);
    auto errors = validate_against_schema(env, "schemas/env_context.schema.json");
    if (!errors.empty()) throw std::runtime_error("the probed env_context does not match its schema: " + errors.front());
    write_file_atomic(a.output, dump_json(env));
    FILE* human = a.json ? stderr : stdout;
    const Json& h = env["hardware"];
    std::fprintf(human, "OS %s, Python %s%s; accelerator %s", env["environment"]["os"].get<std::string>().c_str(),
                 env["environment"]["python"].get<std::string>().c_str(),
                 env["environment"]["containerized"].get<bool>() ? (", container " + env["environment"]["container_runtime"].get<std::string>()).c_str() : "",
                 h["accelerator"].get<std::string>().c_str());
    if (h["gpu_model"].is_string()) std::fprintf(human, " (%d x %s)", h["gpu_count"].get<int>(), h["gpu_model"].get<std::string>().c_str());
    std::fprintf(human, "\n");
    for (const auto& n : h["detection_notes"]) std::fprintf(human, "  note: %s\n", n.get<std::string>().c_str());
    std::fprintf(human, "Wrote %s\n", a.output.c_str());
    if (a.json) std::fputs(dump_json(env).c_str(), stdout);
    return kExitOk;
  });
}

}  // namespace quarkplan
