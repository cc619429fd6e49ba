// libFuzzer target for verify's Torch side: a hostile export (any
// quantization_config, any tensor names, dtypes and shapes) held to a fixed
// two-layer Llama plan, and hostile plan fields merged over that plan. It must
// never crash: bad input is an InputError, everything else a check result.
// Input: a JSON object {"config": {...}, "tensors": {name: {dtype, shape}},
// "plan": {fields to merge}} (any part may be missing or of another type).
#include <cstddef>
#include <cstdint>
#include <string>

#include "catalog/catalog.h"
#include "common/error.h"
#include "common/json.h"
#include "verify/torch_export.h"
#include "verify/verify.h"

namespace {
using quarkplan::Json;

const Json& base_plan() {
  static const Json p = quarkplan::parse_json(R"J({
    "model": {"model_type": "llama", "analysis_ref": "./model_analysis.json"}, "backend": "torch",
    "global_scheme": "int4_wo_128", "kv_cache_scheme": "fp8", "exclude_layers": ["lm_head"],
    "layer_quant_config": {"*down_proj": "fp8"}, "requires_confirmation": false,
    "catalog_quark_version": "0.12.post1 (amd/Quark)",
    "estimates": {"weights": [{"scheme": "int4_wo_128", "bytes": 1000000}]}})J", "plan");
  return p;
}

const Json& analysis() {
  static const Json a = quarkplan::parse_json(R"J({
    "model": {"model_type": "llama", "dtype": "bfloat16", "hidden_size": 256},
    "quantization_targets": {
      "module_names": ["lm_head", "model.layers.{0..1}.mlp.down_proj", "model.layers.{0..1}.self_attn.k_proj", "model.layers.{0..1}.self_attn.v_proj"],
      "module_shapes": [[8192, 256], [131072, 512], [16384, 256], [16384, 256]],
      "module_roles": ["lm_head", "mlp", "attention", "attention"]}})J", "analysis");
  return a;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace quarkplan;
  Json in;
  try {
    in = parse_json(std::string(reinterpret_cast<const char*>(data), size), "export.json");
  } catch (const InputError&) {
    return 0;
  }
  verify::TorchExport ex;
  ex.dir = "fuzz-export";
  ex.config = in.is_object() && in.contains("config") ? in["config"] : in;
  if (ex.config.is_object() && ex.config.contains("quantization_config")) ex.quantization_config = ex.config["quantization_config"];
  if (in.is_object() && in.contains("tensors") && in["tensors"].is_object())
    for (const auto& [name, t] : in["tensors"].items()) {
      verify::ExportTensor et;
      if (t.is_object() && t.contains("dtype") && t["dtype"].is_string()) et.dtype = t["dtype"].get<std::string>();
      if (t.is_object() && t.contains("shape") && t["shape"].is_array())
        for (const auto& d : t["shape"])
          if (d.is_number_unsigned()) et.shape.push_back(d.get<uint64_t>());
      auto [module, param] = verify::split_tensor_name(name);
      ex.modules[std::string(module)].add(param, et);
    }
  Json plan = base_plan();
  if (in.is_object() && in.contains("plan") && in["plan"].is_object())
    for (const auto& [k, v] : in["plan"].items()) plan[k] = v;
  try {
    verify::Options o;
    verify::Result r = verify::detail::verify_torch_export(plan, analysis(), ex, o, Catalog::load());
    dump_json(verify::to_json(r));  // as the CLI prints it (invalid UTF-8 in names replaced)
  } catch (const InputError&) {
  }
  return 0;
}
