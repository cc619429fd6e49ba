#!/usr/bin/env bash
# Builds the libFuzzer targets with clang in build-san/ (the sanitized build the
# test suite also runs in; configured here if it is not yet) and runs each for a
# short time on its seed corpus (fuzz/corpus/<name>/). A crash fails the run.
#   scripts/run_fuzzers.sh [SECONDS_PER_TARGET]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
secs="${1:-20}"
dir=build-san
[ -f "$dir/build.ninja" ] || scripts/configure_san.sh OFF
targets=$(for f in fuzz/*_fuzz.cc; do basename "$f" .cc; done)
# shellcheck disable=SC2086
ninja -C "$dir" -j "${JOBS:-2}" $targets > "$dir/fuzz-build.log" ||
  { tail -n 60 "$dir/fuzz-build.log"; echo "building the fuzz targets failed (whole log: $dir/fuzz-build.log)" >&2; exit 1; }
for bin in "$dir"/fuzz/*_fuzz; do
  name="$(basename "$bin" _fuzz)"
  corpus="fuzz/corpus/${name%_reader}"
  [ "$name" = onnx_reader ] || corpus="fuzz/corpus/$name"
  [ -d "$corpus" ] || corpus="fuzz/corpus/$name"
  work="$(mktemp -d)"
  echo "fuzzing $name for ${secs}s (seeds: $corpus)"
  "$bin" -artifact_prefix="$work/" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 "$work" "$corpus" 2>"$work.log" \
    || { tail -n 40 "$work.log"; ls "$work"/crash-* "$work"/leak-* "$work"/oom-* 2>/dev/null; echo "fuzzer $name found a failure" >&2; exit 1; }
  grep -E "stat::number_of_executed_units" "$work.log" || true
  rm -rf "$work" "$work.log"
done
echo "fuzzers: 0 failures"
