#!/usr/bin/env bash
# ctest's entry for the Quark tests: tests/quark_real/run.sh RELEASE BUILD_DIR
# Runs run_quark.py with the pinned environment of amd-quark RELEASE (scripts/quark_env.sh).
# Without that environment the test says why and is skipped (exit 77), unless
# QUARKPLAN_REQUIRE_QUARK=1 (./quarkplan.sh test sets it: there it must run).
# The summary line is also left in BUILD_DIR/quark_real_RELEASE.txt for quarkplan.sh to print.
set -uo pipefail
release="$1"; build="$(cd "$2" && pwd)"
root="$(cd "$(dirname "$0")/../.." && pwd)"
py="$("$root/scripts/quark_env.sh" --python "$release")"
cache="${QUARKPLAN_CACHE:-$HOME/.cache/quarkplan}/quark"
if [ ! -f "$cache/$release/quarkplan-lock.txt" ] || ! cmp -s "$cache/$release/quarkplan-lock.txt" "$root/tests/quark_real/lock/amd-quark-$release.txt"; then
  echo "amd-quark $release's pinned environment is not set up ($cache/$release): run scripts/setup.sh --quark" >&2
  [ "${QUARKPLAN_REQUIRE_QUARK:-0}" = 1 ] && exit 1
  exit 77
fi
work="$build/quark_real/$release"; mkdir -p "$build/quark_real"
models="${QUARKPLAN_MODEL_CACHE:-$HOME/.cache/quarkplan/models}"
# One ONNX Runtime / torch thread per process: ctest runs two tests at a time on two cores (and a
# forked child with more threads than cores runs a 0.2 s quantization in 13 s).
export OMP_NUM_THREADS=1
# The Torch catalog against Quark's own template registry (item 5 of issue #23).
$py "$root/tests/quark_real/compare_torch_catalog.py" "$build/quarkplan" "$release" 2>"$work.torch.stderr" | tee "$work.torch.log"
trc=${PIPESTATUS[0]}
# Every printed quantize_quark.py command through argparse and Quark's get_config, and tiny random
# checkpoints quantized as planned by quark.torch and checked by verify (item 5).
$py "$root/tests/quark_real/run_torch.py" --quarkplan "$build/quarkplan" --release "$release" --corpus "$root/tests/data/hf" \
  --facts "$root/tests/data/quark/quantize_quark_facts.json" --work "$work.torch" 2>"$work.torch-run.stderr" | tee "$work.torch-run.log"
prc=${PIPESTATUS[0]}
$py "$root/tests/quark_real/run_quark.py" --quarkplan "$build/quarkplan" --release "$release" \
  --models "$models" --work "$work" 2>"$work.stderr" | tee "$work.log"
rc=${PIPESTATUS[0]}
{ tail -n 1 "$work.torch.log"; grep -E '^MISMATCH ' "$work.torch.log"; grep -E '^(quantize_quark|quark.torch)' "$work.torch-run.log"
  grep -E '^FAIL ' "$work.torch-run.log"; tail -n 1 "$work.log"; grep -E '^(FAIL|KNOWN|NOT RUN) ' "$work.log"; } > "$build/quark_real_$release.txt"
[ "$trc" = 0 ] || exit "$trc"
[ "$prc" = 0 ] || exit "$prc"
exit "$rc"
