#!/usr/bin/env bash
# usage: bench/run_device.sh CASES_DIR OUTDIR
#
# Runs spconv-bench on every case directory under CASES_DIR (any depth) holding
#   kernels.json kernels.cubin|kernels.ptx weights.bin [bias.bin] case.json
# where case.json = {"layer": ..., "batch": ..., "sparsity": ..., "compile": {...}}.
# Writes OUTDIR/<case>.json per case and the merged OUTDIR/suite.json. A failing case
# is recorded (its JSON says why) and the run goes on; the exit status is 1 if any
# case failed (or, where cuobjdump is on PATH, if a case's SASS holds a suspect spill reload:
# OUTDIR/sass-check.txt). Runs on the GPU machine: needs python3 and the spconv-bench binary,
# found at $SPCONV_BENCH, else build/bin/spconv-bench or build-bench/bin/spconv-bench.
# Extra spconv-bench flags can be given in $SPCONV_BENCH_ARGS (e.g. "--batches 5").
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
[ $# -eq 2 ] || { sed -n '2,12p' "$0"; exit 2; }
cases="$1"; out="$2"
mkdir -p "$out"

bench="${SPCONV_BENCH:-}"
for cand in "$root/build/bin/spconv-bench" "$root/build-bench/bin/spconv-bench"; do
  [ -z "$bench" ] && [ -x "$cand" ] && bench="$cand"
done
[ -n "$bench" ] && [ -x "$bench" ] || { echo "run_device.sh: no spconv-bench (set SPCONV_BENCH)" >&2; exit 2; }

commit="${SPCONV_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}"
status=0
n=0
while IFS= read -r casejson; do
  dir="$(dirname "$casejson")"
  name="$(realpath --relative-to="$cases" "$dir" | tr '/' '_')"
  [ "$name" = "." ] && name="$(basename "$dir")"
  module="$dir/kernels.cubin"; [ -f "$module" ] || module="$dir/kernels.ptx"
  # Labels and compile times from case.json; the compile object goes in via a file.
  eval "$(python3 - "$casejson" "$out/$name.compile.json" <<'PY'
import json, shlex, sys
c = json.load(open(sys.argv[1]))
json.dump(c.get("compile", {}), open(sys.argv[2], "w"))
print("layer=%s sparsity=%s" % (shlex.quote(str(c.get("layer", ""))), shlex.quote(str(c.get("sparsity", "")))))
PY
)"
  args=(--launch "$dir/kernels.json" --module "$module" --weights "$dir/weights.bin"
        --out "$out/$name.json" --layer "$layer" --compile-json "$out/$name.compile.json"
        --commit "$commit")
  [ -n "$sparsity" ] && args+=(--sparsity "$sparsity")
  [ -f "$dir/bias.bin" ] && args+=(--bias "$dir/bias.bin")
  # shellcheck disable=SC2086
  timeout "${SPCONV_CASE_TIMEOUT:-600}" "$bench" "${args[@]}" ${SPCONV_BENCH_ARGS:-} \
    2> "$out/$name.log"
  rc=$?
  if [ $rc -ne 0 ]; then
    status=1
    echo "run_device.sh: case $name failed (exit $rc), see $out/$name.log" >&2
    tail -n 3 "$out/$name.log" >&2
    # A crash or timeout leaves no JSON: write one that says so.
    python3 - "$out/$name.json" "$name" "$rc" "$out/$name.log" "$layer" "$sparsity" <<'PY'
import json, os, sys
path, name, rc, log, layer, sp = sys.argv[1:]
try:
    r = json.load(open(path))
except Exception:
    r = {"tool": "spconv-bench", "layer": layer, "sparsity": float(sp) if sp else None,
         "status": "crashed" if rc != "124" else "timeout"}
r["exit_code"] = int(rc)
if "error" not in r:
    r["error"] = open(log, errors="replace").read()[-2000:] if os.path.exists(log) else ""
json.dump(r, open(path, "w"), indent=2)
PY
  fi
  rm -f "$out/$name.compile.json"
  # A kernel that passed can still be one of ptxas 13.0's partial spill reloads, wrong on
  # some runs only (bench/sass_spill_check.py): its SASS is checked where cuobjdump runs.
  if [ "$module" = "$dir/kernels.cubin" ] && command -v cuobjdump > /dev/null &&
     ! python3 "$here/sass_spill_check.py" --name "$name" "$module" >> "$out/sass-check.txt" 2>&1; then
    status=1
    echo "run_device.sh: case $name: suspect spill reloads in its SASS, see $out/sass-check.txt" >&2
  fi
  n=$((n + 1))
done < <(find "$cases" -name case.json | sort)

python3 "$here/merge.py" "$out" "$out/suite.json"
echo "run_device.sh: $n cases, results in $out/suite.json"
exit $status
