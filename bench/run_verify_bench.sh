#!/usr/bin/env bash
# verify benchmark: `quarkplan verify` on a DeepSeek-V3-sized Hugging Face
# export (MXFP4 plan for MI355X: 163 sparse shards, ~92,000 tensors of
# ~45,000 quantized modules, written by tools/export_sim as Quark lays them
# out), against the least any Python verifier must do on the same folder:
# read every shard header (bench/python_safetensors_baseline.py, json + struct).
# Same run, turns A/B; prints the median wall time and peak RSS of each.
#   bench/run_verify_bench.sh [RUNS]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
runs="${1:-5}"
build="$root/build"
work="$build/bench-models/verify"
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
[ -x "$build/quarkplan-export-sim" ] || { echo "build quarkplan-export-sim first (./quarkplan.sh bench)" >&2; exit 1; }
mkdir -p "$work"
if [ ! -f "$work/export/model.safetensors.index.json" ]; then
  rm -rf "$work/export" "$work/source"; mkdir -p "$work/source"
  cp "$root/tests/data/hf/deepseek-v3/config.json" "$work/source/"
  "$build/quarkplan" plan "$work/source" --hardware mi355x --gpus 8 --yes -o "$work/quant_plan.json" >/dev/null 2>&1
  "$build/quarkplan-export-sim" "$work/quant_plan.json" "$work/export" --shards=163 >&2
fi
tensors=$(grep -o '"model\.' "$work/export/model.safetensors.index.json" | wc -l)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
run_ok() { "$@" >/dev/null 2>&1 || { echo "benchmark command failed: $*" >&2; exit 1; }; }
median() { sort -n | awk '{a[NR]=$1} END {m = NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "%.4f", m / 1e6}'; }
: > "$tmp/ta"; : > "$tmp/tb"
a=("$build/quarkplan" verify "$work/quant_plan.json" "$work/export")
b=(/usr/bin/python3 "$root/bench/python_safetensors_baseline.py" "$work/export")
run_ok "${a[@]}"; run_ok "${b[@]}"
for _ in $(seq $((2 * runs))); do
  s=$(date +%s%N); run_ok "${a[@]}"; e=$(date +%s%N); echo $(( (e - s) / 1000 )) >> "$tmp/ta"
  s=$(date +%s%N); run_ok "${b[@]}"; e=$(date +%s%N); echo $(( (e - s) / 1000 )) >> "$tmp/tb"
done
pa=0; pb=0
for _ in 1 2 3; do
  run_ok /usr/bin/time -o "$tmp/pa" -f "%M" "${a[@]}"; k=$(tail -n 1 "$tmp/pa"); (( k > pa )) && pa=$k
  run_ok /usr/bin/time -o "$tmp/pb" -f "%M" "${b[@]}"; k=$(tail -n 1 "$tmp/pb"); (( k > pb )) && pb=$k
done
qa=$(median < "$tmp/ta"); qb=$(median < "$tmp/tb")
printf '%-44s %10s %10s\n' "DeepSeek-V3 MXFP4 export (163 shards, $tensors tensors)" "median s" "peak MiB"
printf '%-44s %10s %10.1f\n' "quarkplan verify (every check)" "$qa" "$(awk -v k="$pa" 'BEGIN{print k/1024}')"
printf '%-44s %10s %10.1f\n' "python: read every shard header only" "$qb" "$(awk -v k="$pb" 'BEGIN{print k/1024}')"
printf 'verify is %.1fx the speed of the Python header read alone\n' "$(awk -v a="$qb" -v b="$qa" 'BEGIN{print a / b}')"
