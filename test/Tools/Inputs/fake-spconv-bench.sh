#!/bin/sh
# Stands in for spconv-bench in tests of bench/variants.sh run: writes, to the path after
# --out, a result whose spconv time counts the calls in $FAKE_BENCH_COUNTER (0.001 ms, 0.002, ...).
out=
while [ $# -gt 0 ]; do
  [ "$1" = --out ] && out=$2
  shift
done
n=$(($(cat "$FAKE_BENCH_COUNTER" 2>/dev/null || echo 0) + 1))
echo $n > "$FAKE_BENCH_COUNTER"
printf '{"status": "ok", "contenders": {"spconv": {"time_ms": 0.%03d}}}\n' $n > "$out"
