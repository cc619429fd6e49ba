// Google Benchmark of the intake step on the generated benchmark models
// (QUARKPLAN_BENCH_DIR, written by gen_bench_models). run_intake_bench.sh runs
// the whole comparison against Python; this isolates quarkplan's own time.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>

#include "intake/intake.h"

namespace {

std::string bench_file(const char* rel) {
  const char* dir = std::getenv("QUARKPLAN_BENCH_DIR");
  std::filesystem::path p = std::filesystem::path(dir ? dir : "build/bench-models") / rel;
  return std::filesystem::exists(p) ? p.string() : "";
}

void run(benchmark::State& state, const char* rel) {
  std::string file = bench_file(rel);
  if (file.empty()) {
    state.SkipWithError("benchmark model missing: run bench/run_intake_bench.sh");
    return;
  }
  quarkplan::IntakeRequest req;
  req.model = file;
  for (auto _ : state) benchmark::DoNotOptimize(quarkplan::run_intake(req));
}

void BM_OnnxIntake_Embedded1_9GB(benchmark::State& s) { run(s, "big_embedded.onnx"); }
void BM_OnnxIntake_Decoder7kNodes(benchmark::State& s) { run(s, "decoder/model.onnx"); }
BENCHMARK(BM_OnnxIntake_Embedded1_9GB)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_OnnxIntake_Decoder7kNodes)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
