// libFuzzer target for config.json normalisation (intake/hf_config) with the
// model-structure step: whatever the numbers say, a bad value is an InputError
// and memory stays bounded (the structure counts tensors before it allocates).
#include <cstddef>
#include <cstdint>
#include <string>

#include "catalog/catalog.h"
#include "common/error.h"
#include "intake/hf_config.h"
#include "intake/model_structure.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const quarkplan::Catalog& cat = quarkplan::Catalog::load();
  try {
    quarkplan::hf::Config cfg = quarkplan::hf::parse_config(std::string(reinterpret_cast<const char*>(data), size), "config.json");
    if (!cfg.num_hidden_layers || !cfg.hidden_size) return 0;
    const quarkplan::Json* family = quarkplan::architecture_family(cat.architectures(), cfg);
    if (!family)
      for (const auto& f : cat.architectures()["families"])
        if (f["family"] == "llama") family = &f;
    if (family) quarkplan::build_structure(cfg, *family, cat.architectures(), "config.json");
  } catch (const quarkplan::InputError&) {
  }
  return 0;
}
