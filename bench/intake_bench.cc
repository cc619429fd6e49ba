// Google Benchmark of the intake step on the generated benchmark models
// (QUARKPLAN_BENCH_DIR, written by gen_bench_models). run_intake_bench.sh runs
// the whole comparison against Python; this isolates quarkplan's own time.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>

#include "intake/intake.h"
#include "plan/planner.h"

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

// `plan --analysis FILE` budget (SPEC §5): under 50 ms for any model. The
// DeepSeek-V3 analysis (91,991 tensors, 45,870 Linear modules) is the worst case.
void plan_from(benchmark::State& state, const std::string& model, const std::string& hardware, const std::string& target) {
  if (model.empty() || !std::filesystem::exists(model)) {
    state.SkipWithError("benchmark model missing: run bench/run_intake_bench.sh");
    return;
  }
  quarkplan::IntakeRequest ir;
  ir.model = model;
  quarkplan::Json analysis = quarkplan::run_intake(ir);
  quarkplan::PlanRequest req;
  req.hardware = hardware;
  req.target = target;
  req.confirmed = true;
  for (auto _ : state) benchmark::DoNotOptimize(quarkplan::make_plan(analysis, req));
}
void BM_PlanFromAnalysis_DeepSeekV3_163Shards(benchmark::State& s) { plan_from(s, bench_file("deepseek-v3"), "mi355x", ""); }
void BM_PlanFromAnalysis_Decoder7kNodes(benchmark::State& s) { plan_from(s, bench_file("decoder/model.onnx"), "", "cpu"); }
BENCHMARK(BM_PlanFromAnalysis_DeepSeekV3_163Shards)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlanFromAnalysis_Decoder7kNodes)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
