// quarkplan-export-sim PLAN OUT: writes what Quark would export for a
// confirmed plan — a Hugging Face folder (sparse safetensors shards, headers
// as Quark's exporter writes them) or a quantized .onnx (Q/DQ as quark.onnx
// lays them out) — so `quarkplan verify` can be shown and tested without a
// GPU. Development tooling for the demo and the tests; it runs no Quark and
// its weights are zeros.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/json.h"
#include "export_sim/torch_export_writer.h"
#ifdef QUARKPLAN_HAVE_ONNX_PROTO
#include "export_sim/onnx_qdq_writer.h"
#endif

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  qp_test::ExportOptions opt;
  if (argc == 4 && std::string(argv[3]).rfind("--shards=", 0) == 0) {
    opt.shards = std::atoi(argv[3] + 9);
    argc = 3;
  }
  if (argc != 3 || opt.shards < 1) {
    std::fprintf(stderr, "usage: quarkplan-export-sim PLAN OUT [--shards=N]   (OUT: a folder for Torch plans, a .onnx file for ONNX plans)\n");
    return 2;
  }
  try {
    fs::path plan_path(argv[1]);
    quarkplan::Json plan = quarkplan::read_json_file(plan_path.string());
    fs::path analysis_path = plan_path.parent_path() / plan["model"].value("analysis_ref", "model_analysis.json");
    quarkplan::Json analysis = quarkplan::read_json_file(analysis_path.string());
    std::string model = plan["model"].value("model_path", "");
    if (plan.value("backend", "") == "onnx") {
#ifdef QUARKPLAN_HAVE_ONNX_PROTO
      fs::path src = fs::is_directory(model) ? fs::path(model) / "model.onnx" : fs::path(model);
      std::ifstream in(src, std::ios::binary);
      std::stringstream bytes;
      bytes << in.rdbuf();
      if (!in) throw std::runtime_error(src.string() + ": cannot read the plan's model");
      std::string out = qp_test::quark_onnx_export(bytes.str(), plan);
      std::ofstream o(argv[2], std::ios::binary | std::ios::trunc);
      o << out;
      if (!o) throw std::runtime_error(std::string(argv[2]) + ": cannot write");
#else
      throw std::runtime_error("built without the ONNX protobuf types (libonnx-dev)");
#endif
    } else {
      qp_test::write_quark_export(argv[2], plan, analysis, fs::is_directory(model) ? fs::path(model) : fs::path(), opt);
    }
    std::printf("Wrote a simulated Quark export of %s to %s (generated: laid out as Quark writes it, zero weights)\n", argv[1], argv[2]);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "quarkplan-export-sim: %s\n", e.what());
    return 2;
  }
}
