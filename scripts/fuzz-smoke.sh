#!/usr/bin/env bash
# Fuzz smoke test (scripts/test.sh runs it; docs/reliability.md): builds the libFuzzer
# targets in their own build directory with clang-22 (only the libraries they link), replays
# each target's seed corpus and regression inputs, then fuzzes each from its seeds. Any
# crash, sanitizer report, timeout or out-of-memory fails the script; what libFuzzer found
# is left under the printed artifact directory.
#
# By default the fuzzing is reproducible: a fixed seed, a fixed number of inputs per target
# (about 8 s each on the 2-core machine) and no address randomisation, so the same binary
# tries the same inputs every run and CI fails only on a change to the code or the committed
# inputs, never on the luck of a random seed (CI failed that way on 2026-11-25: an 8 s
# random run found a new upstream parser crash). Exploring is a separate mode:
# SPCONV_FUZZ_SECONDS runs each target for that long from a random seed.
#
#   bash scripts/fuzz-smoke.sh                     # build-fuzz/, seed 1, fixed input counts
#   SPCONV_FUZZ_SEED=7 bash scripts/fuzz-smoke.sh  # another fixed seed
#   SPCONV_FUZZ_SECONDS=60 bash scripts/fuzz-smoke.sh   # 60 s per target, random seed
#   SPCONV_FUZZ_BUILD_DIR=build-asan bash scripts/fuzz-smoke.sh   # reuse a sanitizer build
#   SPCONV_FUZZ_TARGETS="launch-json" bash scripts/fuzz-smoke.sh  # only these (and their build)
set -euo pipefail
# LLVM's BumpPtrAllocator poisons a slab's free memory when compiled with ASan: our
# instrumented copies of its inline code poison, Debian's uninstrumented libMLIR then hands
# out that memory (attribute storage) without unpoisoning it, and the next instrumented read
# reports use-after-poison on memory that was allocated properly (seen from the onnx-import
# target's seeds on 2026-11-26: docs/reliability.md). Manual poisoning is off; ASan's own
# redzones (overflows, use-after-free of our allocations) still report.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allow_user_poisoning=0"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
build="${SPCONV_FUZZ_BUILD_DIR:-build-fuzz}"
seconds="${SPCONV_FUZZ_SECONDS:-}"
seed="${SPCONV_FUZZ_SEED:-1}"
only="${SPCONV_FUZZ_TARGETS:-}"

if [ ! -f "$build/build.ninja" ]; then
  # -O1 as upstream's fuzzers: fast enough to fuzz, quicker to build than -O3. No CUDA
  # runtime: the launch-json fuzzer compiles the runtime's readers itself.
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    "-DCMAKE_C_FLAGS_RELEASE=-O1 -DNDEBUG" "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" \
    -DSPCONV_ENABLE_FUZZERS=ON -DSPCONV_BUILD_RUNTIME=OFF \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DSPCONV_WERROR="${SPCONV_WERROR:-OFF}" >/dev/null
fi
if [ -n "$only" ]; then
  ninja -C "$build" $(for t in $only; do echo "spconv-$t-fuzzer"; done)
else
  ninja -C "$build" spconv-fuzzers
fi

artifacts="$(mktemp -d /tmp/spconv-fuzz-smoke.XXXXXX)"
# Address randomisation off for the reproducible mode: MLIR and LLVM hash pointers, so with
# ASLR the same seed reaches slightly different coverage from run to run and the inputs
# tried drift apart (seed 1, 8000 inputs: cov 1369 and 1367; without ASLR 1346 both times).
# Where the personality call is refused (some containers) the runs only drift.
norandom=()
if [ -z "$seconds" ] && setarch "$(uname -m)" -R true 2>/dev/null; then
  norandom=(setarch "$(uname -m)" -R)
fi
status=0
# target  dictionary  max input bytes  inputs fuzzed in the reproducible mode  [more flags]
# onnx-import: libonnx's statics look like leaks, and LeakSanitizer's scan of them takes
# minutes (fuzz/README.md).
while read -r target dict maxlen runs extra; do
  [ -z "$only" ] || [[ " $only " == *" $target "* ]] || continue
  bin="$build/bin/spconv-$target-fuzzer"
  inputs=("fuzz/$target/corpus")
  [ -d "fuzz/$target/regression" ] && inputs+=("fuzz/$target/regression")
  mkdir -p "$artifacts/$target/new"
  flags=(-timeout=30 -rss_limit_mb=4096 -max_len="$maxlen" -dict="fuzz/dicts/$dict"
         -artifact_prefix="$artifacts/$target/")
  [ -n "$extra" ] && flags+=($extra)
  echo "fuzz-smoke: $target: replaying ${inputs[*]}"
  if ! "$bin" "${flags[@]}" -runs=0 "${inputs[@]}" >"$artifacts/$target/replay.log" 2>&1; then
    tail -n 40 "$artifacts/$target/replay.log"
    echo "fuzz-smoke: $target: FAILED on a committed input (log and input under $artifacts/$target)"
    status=1
    continue
  fi
  if [ -n "$seconds" ]; then
    mode=(-max_total_time="$seconds")
    echo "fuzz-smoke: $target: fuzzing for ${seconds}s from a random seed"
  else
    mode=(-seed="$seed" -runs="$runs")
    echo "fuzz-smoke: $target: fuzzing $runs inputs from seed $seed"
  fi
  if ! "${norandom[@]}" "$bin" "${flags[@]}" "${mode[@]}" -print_final_stats=1 \
       "$artifacts/$target/new" "${inputs[@]}" >"$artifacts/$target/fuzz.log" 2>&1; then
    tail -n 40 "$artifacts/$target/fuzz.log"
    echo "fuzz-smoke: $target: FAILED (reproducer under $artifacts/$target; see fuzz/README.md)"
    status=1
    continue
  fi
  fuzz_stat() { awk -v key="stat::$1:" '$1 == key { print $2 }' "$artifacts/$target/fuzz.log"; }
  echo "fuzz-smoke: $target: $(fuzz_stat number_of_executed_units) inputs, $(fuzz_stat average_exec_per_sec) exec/s"
done <<'TARGETS'
mlir mlir.dict 8192 8000
translate mlir.dict 8192 10000
ptx-template ptx.dict 65536 30000
launch-json json.dict 16384 80000
template-cache ptx.dict 65536 8000
onnx-import onnx.dict 32768 25000 -detect_leaks=0
TARGETS
[ "$status" -eq 0 ] && { rm -rf "$artifacts"; echo "fuzz-smoke: all targets passed"; }
exit "$status"
