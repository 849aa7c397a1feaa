#!/bin/bash
# spconv-bench --cold-l2 on compiled case folders (bench/variants.sh layout), one call:
#   bash bench/results/2026-11-27-cold-l2/device-run.sh DIR...
# Each case once (VARIANTS_REPS=1): checked against cuDNN FP32, then every contender timed
# warm (graph replays, as always) and from a cold L2. Everything under $OUT/cold-l2.tgz.
set -u
mkdir -p .devbin && xz -dc .devbinx/spconv-bench.xz > .devbin/spconv-bench &&
  chmod +x .devbin/spconv-bench && cp .devbinx/commit .devbin/
export SPCONV_BENCH=$PWD/.devbin/spconv-bench
R=$OUT/cold-l2
mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,serial --format=csv > $R/device.txt
cp .devbin/commit $R/bench-commit.txt
for D in "$@"; do
  N=$(basename $D); N=${N#.}
  VARIANTS_REPS=1 VARIANTS_BENCH_ARGS="--cold-l2 --batches 5" timeout 280 \
    bash bench/variants.sh run $D $R/$N.json > $R/$N.txt 2> $R/$N.err
  echo "rc=$?" >> $R/$N.txt
done
python3 - $R "$@" <<'PY'
import json, os, sys
R = sys.argv[1]
for d in sys.argv[2:]:
    n = os.path.basename(d).lstrip(".")
    for case, runs in sorted(json.load(open(os.path.join(R, n + ".json"))).items()):
        r = runs["run1"]
        c, cold = r.get("contenders", {}), r.get("cold_l2", {})
        best = r.get("best_cudnn_half") or {}
        bc = cold.get("best_cudnn_half") or {}
        if not best or not bc:
            print(case, r.get("status")); continue
        sw, sc = c["spconv"]["time_ms"], cold["spconv"]
        hw, hc = best["time_ms"], bc["time_ms"]
        print("%-28s spconv %.4f -> %.4f (x%.2f)  cudnn half %.4f -> %.4f (x%.2f)  ratio %.2f -> %.2f"
              % (case, sw, sc, sc / sw, hw, hc, hc / hw, hw / sw, hc / sc))
PY
tar czf $OUT/cold-l2.tgz -C $OUT cold-l2 && rm -rf $R
