// The Quark knowledge quarkplan plans with — presets, schemes, algorithms,
// calibration methods, gates, model templates, hardware — held as data
// (catalog/*.json, embedded at build time, overridable with --catalog DIR) and
// validated against schemas/catalog_*.schema.json when loaded.
#pragma once
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"

namespace quarkplan {

class Catalog {
 public:
  // The embedded catalog, or the files of `dir` when given (each file there
  // replaces the embedded one of the same name), holding the facts of Quark
  // `release` (a version catalog/releases.json lists, or one it names as
  // equivalent; "" for the newest). Throws InputError.
  static const Catalog& load(const std::string& dir = "", const std::string& release = "");
  // The catalog of the release a plan (or analysis) was made for: its
  // quark_release, else the release its catalog_quark_version starts with
  // (plans written before releases were recorded), else the newest.
  static const Catalog& for_plan(const Json& plan, const std::string& dir = "");
  // The release version a name stands for ("0.12" -> "0.12.post1"), or "" when
  // the catalog at `dir` describes no such release.
  static std::string canonical_release(const std::string& name, const std::string& dir = "");
  // The releases catalog/releases.json lists, oldest first.
  static std::vector<std::string> release_versions(const std::string& dir = "");

  // The release whose facts this catalog holds, and the release list itself.
  const std::string& release() const { return release_; }
  const Json& releases() const { return get(releases_); }

  // Each part is parsed on first use, once, from any thread: a Hugging Face
  // intake never needs onnx.json (100 KB), an ONNX one never architectures.json.
  const Json& onnx() const { return get(onnx_); }
  const Json& torch() const { return get(torch_); }
  const Json& hardware() const { return get(hardware_); }
  // Model structures per architecture family (catalog/architectures.json).
  const Json& architectures() const { return get(architectures_); }
  // The runtimes that serve Quark's output and what each loader accepts (catalog/runtimes.json).
  const Json& runtimes() const { return get(runtimes_); }

  // ONNX helpers.
  const Json* onnx_preset(const std::string& name) const;  // exact name, or nullptr
  // Whether an ONNX extra option does what it says in the Quark this catalog describes
  // (fp16_models.broken_extra_options lists the ones that do not: ConvertFP16ToFP32).
  bool onnx_extra_option_works(const std::string& name) const { return !onnx()["fp16_models"]["broken_extra_options"].contains(name); }
  std::string canonical_preset(const std::string& name) const;  // resolves aliases and case
  const Json* onnx_target(const std::string& name) const;
  std::string canonical_calibration(const std::string& name) const;  // "" when unknown
  const Json* onnx_calibration(const std::string& name) const;
  const Json* onnx_algorithm(const std::string& name) const;
  std::vector<std::string> onnx_preset_names() const;
  // Ordered candidates for target ("unknown" when not known) x architecture.
  std::vector<std::string> onnx_preset_candidates(const std::string& target,
                                                  const std::string& architecture) const;
  bool preset_allowed_on(const Json& preset, const std::string& target) const;
  // A Ryzen AI NPU generation (catalog onnx.json npu_generations) by name or
  // alias, case and separators ignored; nullptr for an unknown or generic name.
  const Json* npu_generation(const std::string& name) const;
  bool npu_generic_name(const std::string& name) const;  // "ryzen-ai", "npu": a Ryzen AI NPU of no known generation
  // The documented group of `generation` x `target` that lists `preset`
  // (its scales, source and quote), or nullptr.
  const Json* npu_group(const Json& generation, const std::string& target, const std::string& preset) const;
  // On an NPU target of a known generation, the presets Ryzen AI documents
  // for it; otherwise the target's families (Quark's planning guide's gate).
  bool preset_allowed_on(const Json& preset, const std::string& target, const Json* generation) const;

  // Torch helpers.
  const Json* torch_scheme(const std::string& name) const;  // resolves aliases
  const Json* torch_template(const std::string& model_type) const;
  const Json* torch_algorithm(const std::string& name) const;
  const Json* accelerator(const std::string& name) const;
  // A serving runtime by name or alias (case ignored), or nullptr.
  const Json* runtime(const std::string& name) const;
  // The runtimes catalog's platform of an accelerator entry (rocm-gfx950, cuda-sm89, cpu, ...), "" when none fits.
  std::string runtime_platform(const Json& accelerator) const;
  // The quantize_quark.py words that select the file-to-file flow in this
  // release (0.12: --file2file_quantization; 0.13: --quant_flow file2file).
  std::vector<std::string> file2file_flag() const;
  std::string file2file_flag_text() const;
  // Whether this release's exclude patterns also exclude the modules under
  // what they name (0.12: p is also p.*) or match verbatim (0.13).
  bool exclude_covers_children() const {
    return torch().value("exclude_matching", Json::object()).value("mode", "pattern_and_children") == "pattern_and_children";
  }

  std::string version_stamp() const;

 private:
  struct Part {
    explicit Part(const char* f) : file(f) {}
    const char* file;
    std::once_flag once;
    Json value;
  };
  const Json& get(Part& p) const;
  std::string dir_, release_;
  mutable Part releases_{"releases.json"};
  mutable Part onnx_{"onnx.json"}, torch_{"torch.json"}, hardware_{"hardware.json"}, architectures_{"architectures.json"}, runtimes_{"runtimes.json"};
};

// Validates `doc` against the embedded schema `schema_path` (e.g.
// "schemas/quant_plan.schema.json"). Returns one line per error, each with
// the JSON path it concerns; empty when valid.
std::vector<std::string> validate_against_schema(const Json& doc, const std::string& schema_path);

}  // namespace quarkplan
