#!/usr/bin/env bash
# Configures build-san/: clang, ASan+UBSan on everything, libFuzzer coverage on
# the library, so one instrumented library serves the whole test suite, the CLI
# and every fuzz target (quarkplan.sh test, scripts/run_fuzzers.sh).
# -O1 is what the sanitizers' documentation asks for; the project's -g1 keeps file:line in reports.
#   scripts/configure_san.sh [ON|OFF]   build the test suite there too (default ON)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang++ >/dev/null || { echo "clang++ missing: scripts/setup.sh --fuzz" >&2; exit 1; }
# libFuzzer and the sanitizer runtimes come in libclang-rt-dev, not with clang itself.
[ -f "$(clang++ -print-file-name=libclang_rt.fuzzer-x86_64.a)" ] ||
  [ -n "$(find "$(clang++ -print-resource-dir)" -name 'libclang_rt.fuzzer*.a' 2>/dev/null | head -1)" ] ||
  { echo "libFuzzer's runtime missing: scripts/setup.sh --fuzz (libclang-rt-dev)" >&2; exit 1; }
cmake -S . -B build-san -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -DNDEBUG" \
  -DQUARKPLAN_SANITIZE=ON -DQUARKPLAN_FUZZ=ON -DQUARKPLAN_TESTS="${1:-ON}" -DQUARKPLAN_BENCH=OFF >/dev/null
