// Writes Hugging Face exports laid out the way Quark's exporter writes them
// (quark/torch/export@1d27b558; see tests/data/verify/torch/QUARK_EXPORT_FACTS.md),
// for verify's tests and the demo (it is not Quark: no weight is quantized, the
// data is a hole): config.json with its quantization_config, and sparse
// safetensors shards (headers real, data a hole) with an index. The layouts
// here are transcribed from the facts file independently of catalog/torch.json,
// so the tests check the catalog rather than agree with it by construction.
#pragma once
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/json.h"
#include "export_sim/safetensors_writer.h"

namespace qp_test {

struct ExportOptions {
  int shards = 2;
  std::string model_dtype = "BF16";
  std::string quark_version;  // the release Quark writes as its version; "" for the plan's quark_release
  // Called with every tensor and the config before anything is written: a
  // test breaks one promise here.
  std::function<void(std::vector<StTensor>&, quarkplan::Json& config)> edit;
};

// The tensors one quantized Linear `name` [out, in] gets under `scheme`.
std::vector<StTensor> quark_linear_tensors(const std::string& name, const std::string& scheme, uint64_t out, uint64_t in,
                                           const std::string& model_dtype);
// The spec object quantization_config records for a scheme ({weight, input_tensors, output_tensors, bias}).
quarkplan::Json quark_layer_config(const std::string& scheme);

// Writes the export of `plan` (made from `analysis`) into `dir`, copying the
// source's config.json and tokenizer files from `source` when given.
void write_quark_export(const std::filesystem::path& dir, const quarkplan::Json& plan, const quarkplan::Json& analysis,
                        const std::filesystem::path& source, const ExportOptions& options = {});

}  // namespace qp_test
