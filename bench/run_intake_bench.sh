#!/usr/bin/env bash
# ONNX intake benchmark (issue: "fast on huge ones"): quarkplan against
# onnx.load(path, load_external_data=False) + a Python op histogram, same files,
# same run. Prints wall time (median of N runs) and peak RSS for each.
#   bench/run_intake_bench.sh [RUNS]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
runs="${1:-5}"
build="$root/build"
models="$build/bench-models"
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
/usr/bin/python3 -c "import onnx" 2>/dev/null || { echo "needs python3-onnx (scripts/setup.sh --bench)" >&2; exit 1; }
[ -x "$build/bench/gen_bench_models" ] || { echo "build first (./quarkplan.sh build)" >&2; exit 1; }
[ -f "$models/big_embedded.onnx" ] || "$build/bench/gen_bench_models" "$models" >&2
[ -f "$models/deepseek-v3/model.safetensors.index.json" ] ||
  "$build/bench/gen_hf_shards" "$root/tests/data/hf/deepseek-v3/config.json" "$models/deepseek-v3" >&2

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# median wall seconds and max peak KB over $runs runs of "$@"
measure() {
  local times=() peaks=() out
  for _ in $(seq "$runs"); do
    /usr/bin/time -o "$tmp/time" -f "%e %M" "$@" >/dev/null 2>&1
    out=$(tail -n 1 "$tmp/time")
    times+=("${out% *}"); peaks+=("${out#* }")
  done
  local t p
  if command -v hyperfine >/dev/null; then  # finer timing than /usr/bin/time's 10 ms
    hyperfine -N -w 1 -r "$runs" --export-json "$tmp/h.json" -- "$(printf '%q ' "$@")" >/dev/null 2>&1
    t=$(grep -m1 '"median"' "$tmp/h.json" | sed 's/.*: *//; s/,.*//')
    t=$(awk -v x="$t" 'BEGIN{printf "%.4f", x}')
  else
  t=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  fi
  p=$(printf '%s\n' "${peaks[@]}" | sort -g | tail -n 1)
  echo "$t $p"
}

# The same for two commands run in turns (A, B, A, B, ...), 2 x $runs rounds:
# both meet the same machine, so a shared VM's drift does not favour either.
# Prints "medianA peakA medianB peakB" (wall from the clock, in seconds).
measure_pair() {
  local n=$1; shift
  local a=("${@:1:n}") b=("${@:n+1}")
  local ta=() tb=() pa=0 pb=0 s e k
  # Warm-up, and a check that both succeed (a failing command times nothing).
  "${a[@]}" >/dev/null 2>&1 || { echo "failed: ${a[*]}" >&2; exit 1; }
  "${b[@]}" >/dev/null 2>&1 || { echo "failed: ${b[*]}" >&2; exit 1; }
  for _ in $(seq $((2 * runs))); do
    s=$(date +%s%N); /usr/bin/time -o "$tmp/ta" -f "%M" "${a[@]}" >/dev/null 2>&1; e=$(date +%s%N)
    ta+=("$(( (e - s) / 1000 ))"); k=$(tail -n 1 "$tmp/ta"); (( k > pa )) && pa=$k
    s=$(date +%s%N); /usr/bin/time -o "$tmp/tb" -f "%M" "${b[@]}" >/dev/null 2>&1; e=$(date +%s%N)
    tb+=("$(( (e - s) / 1000 ))"); k=$(tail -n 1 "$tmp/tb"); (( k > pb )) && pb=$k
  done
  local ma mb
  ma=$(printf '%s\n' "${ta[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.4f", a[int((NR+1)/2)] / 1e6}')
  mb=$(printf '%s\n' "${tb[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.4f", a[int((NR+1)/2)] / 1e6}')
  echo "$ma $pa $mb $pb"
}

printf '%-34s %12s %12s %12s %12s %9s\n' "model" "quarkplan s" "peak MiB" "python s" "peak MiB" "speed-up"
for m in big_embedded.onnx decoder/model.onnx; do
  read -r qt qp < <(measure "$build/quarkplan" intake "$models/$m" -o "$tmp/a.json")
  read -r pt pp < <(measure /usr/bin/python3 "$root/bench/python_onnx_baseline.py" "$models/$m")
  ratio=$(awk -v a="$pt" -v b="$qt" 'BEGIN { if (b < 0.0005) b = 0.0005; printf "%.0fx", a / b }')
  printf '%-34s %12s %12.1f %12s %12.1f %9s\n' "$m ($(du -h --apparent-size "$models/$m" | cut -f1))" "$qt" "$(awk -v k="$qp" 'BEGIN{print k/1024}')" "$pt" "$(awk -v k="$pp" 'BEGIN{print k/1024}')" "$ratio"
done
m=deepseek-v3
# In turns with its peer (see measure_pair): Python's time on this kind of VM
# varies by a factor of two from one minute to the next.
read -r qt qp pt pp < <(measure_pair 5 "$build/quarkplan" intake "$models/$m" -o "$tmp/hf.json" \
                                       /usr/bin/python3 "$root/bench/python_safetensors_baseline.py" "$models/$m")
ratio=$(awk -v a="$pt" -v b="$qt" 'BEGIN { printf "%.1fx", a / b }')
printf '%-34s %12s %12.1f %12s %12.1f %9s\n' "$m (163 shards, HF)" "$qt" "$(awk -v k="$qp" 'BEGIN{print k/1024}')" "$pt" "$(awk -v k="$pp" 'BEGIN{print k/1024}')" "$ratio"
# --weight-stats throughput on hot cache (SPEC §5: >= 1 GB/s per core, using every core),
# every dtype (BF16 safetensors, FP32 and FP16 ONNX), on 1 thread and on 2 (QUARKPLAN_SCAN_THREADS pins the scan's thread count).
[ -f "$models/weights-1g/model.safetensors" ] || "$build/bench/gen_weight_file" "$models/weights-1g" >&2
[ -f "$models/weights-onnx-1g/model.onnx_data" ] || "$build/bench/gen_weight_onnx" "$models/weights-onnx-1g" >&2
[ -f "$models/weights-onnx-f16-1g/model.onnx_data" ] || "$build/bench/gen_weight_onnx" "$models/weights-onnx-f16-1g" --fp16 >&2
# BF16 safetensors, FP32 ONNX, FP16 ONNX (external data).
for m in weights-1g weights-onnx-1g weights-onnx-f16-1g; do
  input="$models/$m"; [ "$m" != weights-1g ] && input="$models/$m/model.onnx"
  cat "$models/$m"/model.* > /dev/null   # warm the page cache
  for threads in 1 2; do
    rates=()
    for _ in 1 2 3; do
      # The whole output first: `grep -m1` on the pipe would close it early and
      # the SIGPIPE would end this script under pipefail.
      out=$(QUARKPLAN_SCAN_THREADS=$threads "$build/quarkplan" intake "$input" --weight-stats --json -o "$tmp/w.json" 2>/dev/null)
      rates+=("$(printf '%s\n' "$out" | sed -n 's/.*"gb_per_second": *\([0-9.eE+-]*\).*/\1/p;T;q')")
    done
    # CPU seconds (user + sys) per run give the per-core rate even on a shared machine.
    read -r peak cpu < <( { QUARKPLAN_SCAN_THREADS=$threads /usr/bin/time -f "%M %U %S" "$build/quarkplan" intake "$input" --weight-stats -o "$tmp/w.json" >/dev/null; } 2>&1 |
                          tail -n 1 | awk '{print $1, $2 + $3}')
    printf 'weight-stats %-20s %d thread(s): %s GB/s wall (3 runs), %s CPU-s for the whole intake, peak RSS %s KB\n' "$m" "$threads" "${rates[*]}" "$cpu" "$peak"
  done
done
echo "(times: median wall seconds, hyperfine when installed, else /usr/bin/time; peak: max RSS over the runs)"
