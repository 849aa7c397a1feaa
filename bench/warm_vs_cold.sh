#!/usr/bin/env bash
# usage: bench/warm_vs_cold.sh LAYER BATCH SPARSITY REPS OUT.json [extra spconv-translate flags]
#
# Whole-process wall clock of `spconv-translate --spconv-to-ptx` (process start, parsing,
# template, fold, PTX written; no ptxas): cold = empty template cache, warm = another weight
# pattern of the same shape (seed 2) against the cache the cold run filled. REPS pairs, each
# with a fresh cache; both folds (--fold-at=ptx and --fold-at=llvm). Writes OUT.json and
# prints one line per pair. Binaries from $SPCONV_BIN (default build/bin).
set -euo pipefail
[ $# -ge 5 ] || { sed -n '2,9p' "$0"; exit 2; }
layer=$1 batch=$2 sparsity=$3 reps=$4 out=$5; shift 5
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${SPCONV_BIN:-$root/build/bin}"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
for seed in 1 2; do
  "$bin/spconv-gen-conv" --layer "$layer" --batch "$batch" --sparsity "$sparsity" \
    --seed "$seed" -o "$work/s$seed" > /dev/null
done
now() { date +%s.%N; }
rows=()
for fold in ptx llvm; do
  for rep in $(seq "$reps"); do
    rm -rf "$work/cache"
    t0=$(now)
    "$bin/spconv-translate" --spconv-to-ptx --fold-at=$fold --cache-dir="$work/cache" \
      "$work/s1/conv.mlir" -o /dev/null "$@"
    t1=$(now)
    "$bin/spconv-translate" --spconv-to-ptx --fold-at=$fold --cache-dir="$work/cache" \
      "$work/s2/conv.mlir" -o /dev/null "$@"
    t2=$(now)
    rows+=("$fold $rep $t0 $t1 $t2")
  done
done
printf '%s\n' "${rows[@]}" > "$work/rows"
python3 - "$work/rows" "$out" "$layer" "$batch" "$sparsity" \
  "$(git -C "$root" rev-parse --short HEAD)" "$(nproc)" "$*" <<'PY'
import datetime, json, statistics, sys
rows, out, layer, batch, sp, commit, cores, flags = sys.argv[1:]
runs = []
for line in open(rows):
    fold, rep, t0, t1, t2 = line.split()
    cold, warm = float(t1) - float(t0), float(t2) - float(t1)
    runs.append({"fold_at": fold, "rep": int(rep), "cold_to_ptx_s": cold, "warm_to_ptx_s": warm})
    print("%s rep %s: cold %.3f s, warm %.3f s, cold/warm %.1fx" % (fold, rep, cold, warm, cold / warm))
summary = {}
for fold in ("ptx", "llvm"):
    r = [x for x in runs if x["fold_at"] == fold]
    c = statistics.median(x["cold_to_ptx_s"] for x in r)
    w = statistics.median(x["warm_to_ptx_s"] for x in r)
    summary[fold] = {"median_cold_to_ptx_s": c, "median_warm_to_ptx_s": w, "cold_over_warm": c / w}
    print("%s median: cold %.3f s, warm %.3f s, cold/warm %.1fx" % (fold, c, w, c / w))
json.dump({"what": "spconv-translate --spconv-to-ptx wall clock, whole process",
           "layer": layer, "batch": int(batch), "sparsity": float(sp), "extra_flags": flags,
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "commit": commit, "machine": "%s cores, no GPU (compile machine)" % cores,
           "runs": runs, "summary": summary}, open(out, "w"), indent=1)
PY
