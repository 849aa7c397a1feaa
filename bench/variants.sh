#!/usr/bin/env bash
# usage: bench/variants.sh compile SPEC OUTDIR   (here: spconv-gen-conv + spconv-translate)
#        bench/variants.sh run OUTDIR RESULT.json [NCU_CASES]   (GPU machine: spconv-bench)
#
# Tiling A/B experiments: SPEC has one case a line, "name|spconv-gen-conv flags|
# spconv-translate flags" ('#' starts a comment). Every case is generated with --seed 1 at
# the sparsity in its flags (default 0.9), compiled cold, and its weights kept, so that
# cases of the same shape fold the same weights. "run" checks each kernel against cuDNN
# FP32 and times it (spconv-bench --no-cusparse --no-tf32 --batches 5, twice), writes every
# case's spconv-bench JSON into RESULT.json, prints one line per case, and profiles the
# cases named in NCU_CASES (comma-separated) with bench/ncu_case.sh into OUTDIR/ncu-NAME.txt.
# VARIANTS_REPS: repetitions per case (default 2); VARIANTS_BENCH_ARGS: more spconv-bench
# flags (a screening sweep: --no-half-baselines, the FP16 baselines being the same per shape;
# --cold-l2: each line adds spconv_cold_l2_ms, which bench/tuning_table.py --objective cold_l2
# chooses by).
# Cubins and weights are stored xz-compressed (a 3x3 512-channel layer is ~8 MB of cubin and
# 9 MB of weights, 90% zeros), unpacked by "run".
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
mode="${1:-}"

compile() {
  local spec="$1" out="$2" bin="${SPCONV_BIN:-$root/build/bin}" status=0
  mkdir -p "$out"
  local line name gflags tflags dir
  while IFS= read -r line; do
    line="${line%%#*}"
    [ -z "${line// }" ] && continue
    IFS='|' read -r name gflags tflags <<< "$line"
    dir="$out/$name"
    rm -rf "$dir"
    local t0=$SECONDS
    # shellcheck disable=SC2086
    if "$bin/spconv-gen-conv" $gflags --seed 1 -o "$dir" > /dev/null &&
       "$bin/spconv-translate" --spconv-compile "$dir/conv.mlir" --cache-dir=none \
         --artifact-prefix="$dir/kernels" -o "$dir/kernels.json" $tflags; then
      rm -f "$dir/conv.mlir" "$dir/kernels.ptx"
      xz -T1 -6 "$dir/kernels.cubin" "$dir/weights.bin"
      [ -f "$dir/bias.bin" ] && xz -T1 -6 "$dir/bias.bin"
      echo "variants.sh: $name compiled in $((SECONDS - t0)) s (generation included)"
    else
      echo "variants.sh: $name failed to compile" >&2
      status=1
    fi
  done < "$spec"
  exit $status
}

run() {
  local out="$1" result="$2" ncu_cases="${3:-}"
  local bench="${SPCONV_BENCH:-$root/build/bin/spconv-bench}" status=0 dir name rep args
  [ -x "$bench" ] || { echo "variants.sh: no spconv-bench at $bench" >&2; exit 2; }
  for dir in "$out"/*/; do
    dir="${dir%/}"; name="$(basename "$dir")"
    for f in "$dir"/*.xz; do [ -f "$f" ] && xz -d -f "$f"; done
    args=(--launch "$dir/kernels.json" --module "$dir/kernels.cubin" --weights "$dir/weights.bin"
          --no-cusparse --no-tf32 --batches 5)
    # shellcheck disable=SC2206
    args+=(${VARIANTS_BENCH_ARGS:-})
    [ -f "$dir/bias.bin" ] && args+=(--bias "$dir/bias.bin")
    for rep in $(seq 1 "${VARIANTS_REPS:-2}"); do
      "$bench" "${args[@]}" --out "$out/$name.r$rep.json" > "$out/$name.r$rep.log" 2>&1 ||
        { status=1; echo "variants.sh: $name failed (see $name.r$rep.log)" >&2; }
    done
    if [[ ",$ncu_cases," == *",$name,"* ]]; then
      bash "$here/ncu_case.sh" "$dir" "$out/ncu-$name.txt" || status=1
    fi
  done
  python3 - "$out" "$result" <<'PY'
import glob, json, os, re, sys
out, result = sys.argv[1], sys.argv[2]
cases = {}
# Every repetition (VARIANTS_REPS may exceed 9), in the order they ran.
for path in glob.glob(os.path.join(out, "*.r*.json")):
    m = re.fullmatch(r"(.+)\.r([0-9]+)\.json", os.path.basename(path))
    if m:
        cases.setdefault(m.group(1), {})[int(m.group(2))] = json.load(open(path))
cases = {name: {"run%d" % rep: runs[rep] for rep in sorted(runs)}
         for name, runs in sorted(cases.items())}
for name, runs in cases.items():
    ms = [runs[k]["contenders"]["spconv"]["time_ms"] if "contenders" in runs[k] else None
          for k in runs]
    r = runs[next(iter(runs))]
    cold = [runs[k]["contenders"]["spconv"].get("time_ms_cold_l2") if "contenders" in runs[k]
            else None for k in runs]
    print("%-28s status=%s err=%s tiling=%s block=%s grid=%s regs=%s spconv_ms=%s cudnn_fp32_ms=%s%s" % (
        name, r.get("status"), r.get("max_rel_err"), r.get("tiling"), r.get("block"), r.get("grid"),
        r.get("kernel_attributes", {}).get("registers"), ms,
        r.get("contenders", {}).get("cudnn_fp32", {}).get("time_ms"),
        " spconv_cold_l2_ms=%s" % cold if any(c is not None for c in cold) else ""))
json.dump(cases, open(result, "w"), indent=1)
PY
  exit $status
}

case "$mode" in
  compile) [ $# -eq 3 ] || { sed -n '2,12p' "$0"; exit 2; }; compile "$2" "$3" ;;
  run) [ $# -ge 3 ] || { sed -n '2,12p' "$0"; exit 2; }; run "$2" "$3" "${4:-}" ;;
  *) sed -n '2,12p' "$0"; exit 2 ;;
esac
