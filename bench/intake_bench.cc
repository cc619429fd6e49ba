// Google Benchmark of the intake step on the generated benchmark models
// (QUARKPLAN_BENCH_DIR, written by gen_bench_models). run_intake_bench.sh runs
// the whole comparison against Python; this isolates quarkplan's own time.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "intake/intake.h"
#include "intake/weight_stats.h"
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

// --weight-stats pass per dtype on one core, in memory (no I/O): 64 MiB of
// weights around +-0.02 with random mantissas. The CPU-time rate is the
// per-core figure of SPEC §5 (>= 1 GB/s) even on a shared machine.
void weight_pass(benchmark::State& state, const char* dtype) {
  const size_t bytes = 64u << 20;
  std::string data(bytes, '\0');
  uint32_t x = 12345;
  for (size_t i = 0; i + 4 <= bytes; i += 4) {
    x = x * 1664525u + 1013904223u;
    uint32_t v;
    if (std::string(dtype) == "F32") {
      float f = (static_cast<float>(x >> 8) / 16777216.0f - 0.5f) * 0.04f;
      std::memcpy(&v, &f, 4);
    } else {
      // sign, an exponent for ~0.01-0.04 (half: 9-10, bfloat16: 121-122), random mantissa
      bool f16 = std::string(dtype) == "F16";
      uint32_t shift = f16 ? 10 : 7, exp = (f16 ? 9u : 121u) + ((x >> 20) & 1), man = (x >> 8) & ((1u << shift) - 1);
      uint16_t h = static_cast<uint16_t>(((x >> 31) << 15) | (exp << shift) | man);
      v = h | (static_cast<uint32_t>(h ^ 0x8000u) << 16);
    }
    std::memcpy(&data[i], &v, 4);
  }
  for (auto _ : state) {
    quarkplan::TensorStats s;
    benchmark::DoNotOptimize(quarkplan::tensor_stats(data, dtype, s));
    benchmark::DoNotOptimize(s.stddev);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}
void BM_WeightPass_F16(benchmark::State& s) { weight_pass(s, "F16"); }
void BM_WeightPass_BF16(benchmark::State& s) { weight_pass(s, "BF16"); }
void BM_WeightPass_F32(benchmark::State& s) { weight_pass(s, "F32"); }
BENCHMARK(BM_WeightPass_F16)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_WeightPass_BF16)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_WeightPass_F32)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
