#!/usr/bin/env bash
# One device call: unpack the carried cases, run bench/sanitize.sh over them (main: the
# cases at the commit; fix: racecheck + synccheck over kernels of the proposed race fix),
# the hand-written racecheck repro, and pack the results into $OUT.
# usage: call.sh TARBALL DEADLINE_SECONDS [PREVIOUS_MAIN_TXT]
set -u
tarball=$1; budget=$2; prev=${3:-}
t0=$(date +%s); deadline=$((t0 + budget))
mkdir -p /tmp/c /tmp/res /tmp/repro && tar -C /tmp/c -xJf "$tarball" || exit 2
# The fix cases' weights and biases are the main cases' (same generator and seed: checked by
# cmp before packing), so they travel once.
for d in /tmp/c/fix/*/*/; do d=${d%/}; b=/tmp/c/main/${d#/tmp/c/fix/}; b=${b%-entry}
  for f in weights.bin bias.bin; do [ -f $b/$f ] && cp $b/$f $d/$f; done; done
export SPCONV_BENCH=$PWD/.sanitize/spconv-bench SPCONV_SANITIZE_TIMEOUT=${TMO:-120} SPCONV_SANITIZE_DEADLINE=$deadline
if [ -x .sanitize/split_reduce_repro ] && [ -z "${NOREPRO:-}" ]; then
  ( for v in inline noinline extern full uneven uneven-extern reader-more padded; do
      timeout 90 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --racecheck-report all \
        --print-limit 4 .sanitize/split_reduce_repro $v > /tmp/repro/$v.log 2>&1
      echo "== $v exit $?"; grep -E "RACECHECK SUMMARY|outputs wrong|Error:|Write Thread|Read Thread" /tmp/repro/$v.log | head -6
    done > $OUT/repro.txt 2>&1 ) &
fi
if [ -d /tmp/c/fix ]; then
  ( SPCONV_SANITIZE_JOBS=${FIXJOBS:-4} SPCONV_SANITIZE_TOOLS="racecheck synccheck" \
      bash bench/sanitize.sh run /tmp/c/fix /tmp/res/fix > /tmp/res/fix.log 2>&1 ) &
fi
if [ -d /tmp/c/main ]; then
  env SPCONV_SANITIZE_JOBS=${JOBS:-12} ${prev:+SPCONV_SANITIZE_PREVIOUS=$prev} \
    bash bench/sanitize.sh run /tmp/c/main /tmp/res/main > /tmp/res/main.log 2>&1
fi
wait
tar -C /tmp/res -czf $OUT/results.tgz . ; tar -C /tmp -czf $OUT/repro-logs.tgz repro
echo "call took $(( $(date +%s) - t0 )) s"
tail -3 /tmp/res/main.log /tmp/res/fix.log 2>/dev/null; cat $OUT/repro.txt 2>/dev/null | head -60
