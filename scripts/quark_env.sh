#!/usr/bin/env bash
# The pinned AMD Quark environments the Quark tests run (tests/quark_real): test and
# verification tooling only, quarkplan itself never runs Python.
#   scripts/quark_env.sh            create or update them (a second run installs nothing)
#   scripts/quark_env.sh --python RELEASE
#                                   print the command that runs Python with that release
#
# Layout, under ${QUARKPLAN_CACHE:-~/.cache/quarkplan}/quark (outside the source tree):
#   base/            a venv with what both releases import (tests/quark_real/lock/base.txt),
#                    torch among them: quark.onnx builds its custom ops with torch at import
#   RELEASE/         amd-quark RELEASE and its onnxruntime (lock/amd-quark-RELEASE.txt),
#                    installed with pip --target and put first on PYTHONPATH
#   RELEASE-ext/     the custom-op library Quark compiles on first import (TORCH_EXTENSIONS_DIR)
# Every file is pinned by sha256 (pip --require-hashes); a folder's copy of its lock file
# says it is complete, so an interrupted install is redone.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
lock="$root/tests/quark_real/lock"
cache="${QUARKPLAN_CACHE:-$HOME/.cache/quarkplan}/quark"
releases=(0.13 0.12.post1)

runner() {  # the command line that runs Python with release $1
  echo "env PYTHONPATH=$cache/$1 TORCH_EXTENSIONS_DIR=$cache/$1-ext PYTHONDONTWRITEBYTECODE=1 $cache/base/bin/python"
}
if [ "${1:-}" = --python ]; then runner "$2"; exit 0; fi

py="${QUARKPLAN_PYTHON:-python3}"
"$py" -c 'import sys, venv; sys.exit(0 if (3, 11) <= sys.version_info[:2] < (3, 14) else 1)' 2>/dev/null || {
  echo "quark_env: amd-quark needs CPython 3.11 to 3.13 with venv ($py is not); set QUARKPLAN_PYTHON" >&2; exit 2; }
mkdir -p "$cache"
pipi() { "$cache/base/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --require-hashes "$@"; }
if ! cmp -s "$lock/base.txt" "$cache/base/quarkplan-lock.txt"; then
  echo "quark_env: installing the base environment (torch and Quark's requirements, about 3 GB to download, 7.7 GB on disk)" >&2
  # A base from an older lock is brought up to this one in place (pip replaces what changed) rather
  # than downloaded again; what a newer lock dropped stays installed and unused.
  [ -x "$cache/base/bin/python" ] || { rm -rf "$cache/base"; "$py" -m venv "$cache/base"; }
  pipi -r "$lock/base.txt"
  cp "$lock/base.txt" "$cache/base/quarkplan-lock.txt"
  for r in "${releases[@]}"; do rm -f "$cache/$r/quarkplan-lock.txt"; done  # compiled against the old base
fi
for r in "${releases[@]}"; do
  if ! cmp -s "$lock/amd-quark-$r.txt" "$cache/$r/quarkplan-lock.txt"; then
    echo "quark_env: installing amd-quark $r" >&2
    rm -rf "$cache/$r" "$cache/$r-ext"
    pipi --target "$cache/$r" -r "$lock/amd-quark-$r.txt"
    # Quark compiles its custom-op library on first import: do it here, once.
    $(runner "$r") -c 'import quark.onnx' >/dev/null 2>&1 || {
      echo "quark_env: amd-quark $r does not import:" >&2; $(runner "$r") -c 'import quark.onnx' >&2 || true; exit 1; }
    cp "$lock/amd-quark-$r.txt" "$cache/$r/quarkplan-lock.txt"
  fi
done
