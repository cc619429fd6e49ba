#!/usr/bin/env bash
# Intake benchmark: quarkplan against its Python peers on the same files in the
# same run -- onnx.load(path, load_external_data=False) + an op histogram for
# ONNX, json + struct over every shard header for Hugging Face -- then the
# --weight-stats scan rate. Prints wall time (median) and peak RSS for each.
#   bench/run_intake_bench.sh [RUNS]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
runs="${1:-5}"
build="$root/build"
models="$build/bench-models"
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
/usr/bin/python3 -c "import onnx" 2>/dev/null || { echo "needs python3-onnx (scripts/setup.sh --bench)" >&2; exit 1; }
[ -x "$build/bench/gen_bench_models" ] || { echo "build the benchmarks first (./quarkplan.sh bench)" >&2; exit 1; }
[ -f "$models/big_embedded.onnx" ] || "$build/bench/gen_bench_models" "$models" >&2
[ -f "$models/deepseek-v3/model.safetensors.index.json" ] ||
  "$build/bench/gen_hf_shards" "$root/tests/data/hf/deepseek-v3/config.json" "$models/deepseek-v3" >&2

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# Times two commands in turns (A, B, A, B, ...), 2 x $runs rounds each: both
# meet the same machine, so a shared VM's drift (Python's time here moves by a
# factor of two from one minute to the next) favours neither. Wall time is the
# clock around the command alone; peak memory (max RSS) comes from three more
# runs of each under /usr/bin/time. Every run must succeed: a failing command
# stops the benchmark with its name. Prints "medianA peakA medianB peakB"
# (seconds, KB).
#   measure_pair N_WORDS_OF_A A... B...
run_ok() { "$@" >/dev/null 2>&1 || { echo "benchmark command failed: $*" >&2; exit 1; }; }
median() { sort -n | awk '{a[NR]=$1} END {m = NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "%.4f", m / 1e6}'; }
measure_pair() {
  local n=$1; shift
  local a=("${@:1:n}") b=("${@:n+1}")
  local s e k pa=0 pb=0
  : > "$tmp/ta"; : > "$tmp/tb"
  run_ok "${a[@]}"; run_ok "${b[@]}"  # warm-up
  for _ in $(seq $((2 * runs))); do
    s=$(date +%s%N); run_ok "${a[@]}"; e=$(date +%s%N); echo $(( (e - s) / 1000 )) >> "$tmp/ta"
    s=$(date +%s%N); run_ok "${b[@]}"; e=$(date +%s%N); echo $(( (e - s) / 1000 )) >> "$tmp/tb"
  done
  for _ in 1 2 3; do
    run_ok /usr/bin/time -o "$tmp/pa" -f "%M" "${a[@]}"; k=$(tail -n 1 "$tmp/pa"); if (( k > pa )); then pa=$k; fi
    run_ok /usr/bin/time -o "$tmp/pb" -f "%M" "${b[@]}"; k=$(tail -n 1 "$tmp/pb"); if (( k > pb )); then pb=$k; fi
  done
  echo "$(median < "$tmp/ta") $pa $(median < "$tmp/tb") $pb"
}
row() {  # label, then measure_pair's four numbers
  printf '%-34s %12s %12.1f %12s %12.1f %8.1fx\n' "$1" "$2" "$(awk -v k="$3" 'BEGIN{print k/1024}')" "$4" \
    "$(awk -v k="$5" 'BEGIN{print k/1024}')" "$(awk -v a="$4" -v b="$2" 'BEGIN{print a / b}')"
}

printf '%-34s %12s %12s %12s %12s %9s\n' "model" "quarkplan s" "peak MiB" "python s" "peak MiB" "speed-up"
for m in big_embedded.onnx decoder/model.onnx; do
  measure_pair 5 "$build/quarkplan" intake "$models/$m" -o "$tmp/a.json" \
                 /usr/bin/python3 "$root/bench/python_onnx_baseline.py" "$models/$m" > "$tmp/pair"
  read -r qt qp pt pp < "$tmp/pair"
  row "$m ($(du -h --apparent-size "$models/$m" | cut -f1))" "$qt" "$qp" "$pt" "$pp"
done
m=deepseek-v3
measure_pair 5 "$build/quarkplan" intake "$models/$m" -o "$tmp/hf.json" \
               /usr/bin/python3 "$root/bench/python_safetensors_baseline.py" "$models/$m" > "$tmp/pair"
read -r qt qp pt pp < "$tmp/pair"
row "$m (163 shards, HF)" "$qt" "$qp" "$pt" "$pp"
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
echo "(times: median wall seconds of 2 x $runs runs in turns with the peer; peak: max RSS of 3 runs under /usr/bin/time)"
