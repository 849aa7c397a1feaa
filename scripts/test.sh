#!/usr/bin/env bash
# Runs the whole test suite (lit + FileCheck, CPU numeric checks, pytest; GPU tests only where a
# CUDA device answers). Builds first if needed (scripts/setup.sh must have run once).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
[ -f build/build.ninja ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit >/dev/null
ninja -C build check-spconv
# Python tests (network generator) with Debian's python3, where python3-numpy installs.
/usr/bin/python3 -m pytest -q bench/test_networks.py
/usr/bin/python3 -m pytest -q python/tests  # the immconv Python package (CPU only; skips what needs torch, matplotlib or ptxas when absent)
# Every fuzz target on its seeds and regression inputs plus a few seconds of fuzzing
# (its own clang-22 build in build-fuzz/; docs/reliability.md).
bash scripts/fuzz-smoke.sh
