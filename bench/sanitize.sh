#!/usr/bin/env bash
# usage: bench/sanitize.sh compile DIR        (here: needs the MLIR-built compiler and nvcc)
#        bench/sanitize.sh run DIR OUTDIR     (on the GPU machine: compute-sanitizer, spconv-bench)
#
# The generated GPU code under compute-sanitizer (docs/reliability.md, "GPU code"): memcheck,
# racecheck, synccheck and initcheck over
#   gpu/<case>         every GPU test case (bench/gpu_tests.sh compile: every shape at
#                      sparsities 0, 0.5, 0.9 and 1.0, and its half-precision cases, whose
#                      deliberately broken kernels must be rejected)
#   paper10/<layer>-n<N>-p0.9   every paper10 layer at batch 1 and 64, sparsity 0.9; where it
#                      has more than 250,000 outputs, the same tiling at a smaller batch
#                      (4 for 64) and image: <layer>-n<N>-p0.9@n<N'>h<H'>
#   net/<network>-b1-<NN>-<layer>  the first conv of each distinct tiling of the ResNet-50 and
#                      MobileNetV2 bundles (bench/networks.py, batch 1, sparsity 0.9, seed 1),
#                      compiled alone with the bundle's tiling
#   checker/{good,broken}      the result checker itself (bench/make_fake_case.py): a kernel
#                      that writes every output must pass with no report, one that skips an
#                      output must fail verification (non-finite output) with no report
# each case run by spconv-bench with --kernel-name kns=spconv (the generated kernel and the
# bench's own fill and compare kernels; cuDNN's are not instrumented), --no-graph --iters 1
# --batches 5 --no-cusparse --no-tf32 --no-half-baselines (a half kernel is checked against
# cuDNN FP32 either way; cuDNN's own FP16 kernels for the larger half shapes made racecheck
# fail with "Internal Sanitizer Error ... failed to handle a hardware exception", see
# docs/reliability.md). compile writes DIR/cases.txt (name, directory, extra
# flags) and DIR/commit.txt. run prints and writes OUTDIR/sanitize.txt, one line per case
# and tool:
#   PASS|FAIL|TIMEOUT|SKIP <tool> <case> errors=N bench=<status> secs=S [why]
# (errors: the tool's error count; racecheck's counts every hazard, reported or not) and
# OUTDIR/sanitize.json (date, device, driver, compute-sanitizer version, commit, every
# line), keeps the logs of every line that is not a PASS in OUTDIR/logs/, and exits 1 unless
# every line is a PASS. A TIMEOUT or a SKIP is not a pass.
# Environment:
#   SPCONV_BIN               compile: the compiler's bin directory (default build/bin)
#   SPCONV_SANITIZE_COMMIT   compile: the commit SPCONV_BIN was built from (default this
#                            checkout's HEAD, "dirty" if it has uncommitted changes); run:
#                            the same, for a DIR without commit.txt (cases compiled otherwise)
#   SPCONV_BENCH             run: spconv-bench (default build/bin/spconv-bench)
#   SPCONV_SANITIZE_ONLY     run: only the cases whose name matches this regex
#   SPCONV_SANITIZE_TOOLS    run: default "memcheck racecheck synccheck initcheck"
#   SPCONV_SANITIZE_JOBS     run: processes at once on the one GPU (default 8)
#   SPCONV_SANITIZE_TIMEOUT  run: seconds per case and tool (default 120)
#   SPCONV_SANITIZE_DEADLINE run: seconds since the epoch; jobs not started by then are SKIPs
#   SPCONV_SANITIZE_PREVIOUS run: an earlier run's sanitize.txt: its lines are kept and their
#                            jobs not run again, except its SKIPs (a run split over calls)
#   SPCONV_SANITIZER         compute-sanitizer (default: on PATH, then /usr/local/cuda/bin)
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
[ $# -ge 2 ] || { sed -n '2,41p' "$0"; exit 2; }
mode="$1"; dir="$2"

compile() {
  local bin="${SPCONV_BIN:-$root/build/bin}" status=0
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  local cache="${SPCONV_CACHE_DIR:-$dir/cache}" cases="$dir/cases.txt"
  : > "$cases.tmp"
  if [ -n "${SPCONV_SANITIZE_COMMIT:-}" ]; then
    echo "$SPCONV_SANITIZE_COMMIT" > "$dir/commit.txt"
  else
    git -C "$root" rev-parse HEAD > "$dir/commit.txt"
    git -C "$root" status --porcelain --untracked-files=no | grep -q . &&
      echo "dirty" >> "$dir/commit.txt"
  fi

  # The checker: a hand-written kernel that writes every output, and one that skips one.
  local shape="2,6,11,11,10,3,3,1,1"
  python3 "$here/make_fake_case.py" "$dir/checker/good" --layer checker-good --shape "$shape" \
    --bias --relu > /dev/null || status=1
  python3 "$here/make_fake_case.py" "$dir/checker/broken" --layer checker-broken \
    --shape "$shape" --bias --relu --broken > /dev/null || status=1
  rm -f "$dir"/checker/*/kernels.cu "$dir"/checker/*/kernels.ptx
  echo "checker-good checker/good -" >> "$cases.tmp"
  echo "checker-broken checker/broken expect-unwritten" >> "$cases.tmp"

  # Every GPU test case (once: a later compile into the same DIR keeps them).
  if [ ! -f "$dir/gpu/.complete" ]; then
    SPCONV_BIN="$bin" "$here/gpu_tests.sh" compile "$dir/gpu" && touch "$dir/gpu/.complete" ||
      status=1
  fi
  local c
  for c in "$dir"/gpu/*/; do
    c="$(basename "$c")"
    [ -f "$dir/gpu/$c/kernels.json" ] || continue
    # gpu_tests.sh's deliberately broken kernels (half-*-broken-*) must be rejected.
    case "$c" in
      *-broken-*) echo "gpu/$c gpu/$c expect-failed" >> "$cases.tmp" ;;
      *) echo "gpu/$c gpu/$c -" >> "$cases.tmp" ;;
    esac
  done

  # paper10 at batch 1 and 64, sparsity 0.9, one template cache for all. Each case is
  # compiled as it is; the tools then run it as it is where it has at most 250,000 outputs,
  # else (vgg at batch 1, every layer at batch 64) a smaller case with the same tiling (the
  # flags below force it, and the sidecars must agree): batch 64 at batch 4, and the image
  # made smaller until the outputs fit, named <layer>-n<N>-p0.9@n<N'>h<H'>.
  local layer n cdir small
  for layer in lenet-conv1 lenet-conv2 alexnet-conv1 alexnet-conv2 vgg-conv1 vgg-conv2 \
               vgg-conv3 resnet-conv1 resnet-conv2 googlenet-1x1; do
    for n in 1 64; do
      cdir="$dir/paper10/$layer-n$n-p0.9"
      if [ ! -f "$cdir/kernels.json" ]; then
        mkdir -p "$cdir"
        "$bin/spconv-gen-conv" --layer "$layer" --batch "$n" --sparsity 0.9 --seed 1 \
          -o "$cdir" > /dev/null &&
          "$bin/spconv-translate" --spconv-compile "$cdir/conv.mlir" --cache-dir="$cache" \
            --artifact-prefix="$cdir/kernels" -o "$cdir/kernels.json" ||
          { echo "sanitize.sh: compiling $layer N=$n failed" >&2; status=1; continue; }
        rm -f "$cdir/conv.mlir" "$cdir/kernels.ptx"
      fi
      # "-" (small enough), or: name gen-conv-flags translate-flags (one line, ';'-separated).
      small="$(python3 - "$layer" "$n" "$cdir/kernels.json" <<'PY'
import json, sys
layer, n, side = sys.argv[1], int(sys.argv[2]), sys.argv[3]
# C, H(=W), K, R(=S), stride, pad: docs/design.md's paper10 table.
L = {"lenet-conv1": (1, 28, 20, 5, 1, 0), "lenet-conv2": (20, 12, 50, 5, 1, 0),
     "alexnet-conv1": (3, 224, 64, 11, 4, 2), "alexnet-conv2": (64, 27, 192, 5, 1, 2),
     "vgg-conv1": (3, 224, 64, 3, 1, 1), "vgg-conv2": (64, 224, 64, 3, 1, 1),
     "vgg-conv3": (128, 112, 128, 3, 1, 1), "resnet-conv1": (64, 56, 64, 3, 1, 1),
     "resnet-conv2": (128, 28, 128, 3, 1, 1), "googlenet-1x1": (192, 28, 64, 1, 1, 0)}
C, H, K, R, st, pad = L[layer]
out = lambda n, h: n * K * ((h + 2 * pad - R) // st + 1) ** 2
limit = 250000
if out(n, H) <= limit:
    print("-"); sys.exit(0)
n2 = 1 if n == 1 else 4
h = H
while h > R and out(n2, h) > limit:
    h -= 1
t = json.load(open(side))["kernels"][0]["tiling"]
b = lambda v: 2 if v else 1
flags = ["--block-k=%d" % t["block_k"], "--split-c=%d" % t["split_c"], "--tile-p=%d" % t["tile_p"],
         "--threads-q=%d" % t["threads_q"], "--chunk-c=%d" % t["chunk_c"],
         "--chunk-loop=%d" % b(t["chunk_loop"]), "--images-per-block=%d" % t["images_per_block"],
         "--sm-affinity=%d" % b(t["sm_affine"]), "--block-order=%d" % b(t["channel_block_major"]),
         "--async-staging=%d" % b(t["async_staging"]), "--column-order=%d" % b(t["adjacent_columns"]),
         "--direct-inputs=%d" % b(t["direct_inputs"]),
         "--outputs-per-thread=%d" % t["outputs_per_thread"],
         "--min-blocks-per-sm=%d" % t["min_blocks_per_sm"]]
gen = "--shape %d,%d,%d,%d,%d,%d,%d --stride %d,%d --pad %d,%d,%d,%d" % (
    n2, C, h, h, K, R, R, st, st, pad, pad, pad, pad)
print("%s-n%d-p0.9@n%dh%d;%s;%s" % (layer, n, n2, h, gen, " ".join(flags)))
PY
)" || { status=1; continue; }
      if [ "$small" = "-" ]; then
        echo "paper10/$layer-n$n-p0.9 paper10/$layer-n$n-p0.9 -" >> "$cases.tmp"
        continue
      fi
      local sname sgen sflags sdir
      IFS=';' read -r sname sgen sflags <<< "$small"
      sdir="$dir/paper10/$sname"
      if [ ! -f "$sdir/kernels.json" ]; then
        mkdir -p "$sdir"
        # shellcheck disable=SC2086
        "$bin/spconv-gen-conv" $sgen --sparsity 0.9 --seed 1 -o "$sdir" > /dev/null &&
          "$bin/spconv-translate" --spconv-compile "$sdir/conv.mlir" --cache-dir="$cache" \
            --artifact-prefix="$sdir/kernels" -o "$sdir/kernels.json" $sflags ||
          { echo "sanitize.sh: compiling $sname failed" >&2; status=1; continue; }
        rm -f "$sdir/conv.mlir" "$sdir/kernels.ptx"
        python3 - "$cdir/kernels.json" "$sdir/kernels.json" <<'PY' ||
import json, sys
a, b = (json.load(open(p))["kernels"][0]["tiling"] for p in sys.argv[1:])
sys.exit(0 if a == b else "tiling %s != %s" % (b, a))
PY
          { echo "sanitize.sh: $sname has another tiling than $layer N=$n" >&2; status=1; continue; }
      fi
      echo "paper10/$sname paper10/$sname -" >> "$cases.tmp"
    done
  done

  # One conv per distinct tiling of a ResNet-50 and a MobileNetV2 bundle: the bundle's
  # sidecar (--spconv-to-launch-json, no ptxas) gives every conv's tiling; the first conv of
  # each tiling is compiled alone (bench/networks.py --split), and its tiling must be the
  # bundle's.
  local net scratch picks i lname
  scratch="$(mktemp -d)"
  for net in resnet50 mobilenetv2; do
    rm -rf "${scratch:?}"/*
    python3 "$here/networks.py" "$net" --batch 1 --sparsity 0.9 --seed 1 -o "$scratch/net.mlir" \
      > /dev/null &&
      python3 "$here/networks.py" "$net" --batch 1 --sparsity 0.9 --seed 1 \
        --split "$scratch/split" > /dev/null &&
      "$bin/spconv-translate" --spconv-to-launch-json "$scratch/net.mlir" --cache-dir="$cache" \
        -o "$scratch/net.json" ||
      { echo "sanitize.sh: $net: no bundle sidecar" >&2; status=1; continue; }
    picks="$(python3 - "$scratch" <<'PY'
import json, sys
d = sys.argv[1]
kernels = json.load(open(d + "/net.json"))["kernels"]
layers = json.load(open(d + "/split/manifest.json"))["layers"]
seen = set()
for i, k in enumerate(kernels):
    key = json.dumps(k.get("tiling"), sort_keys=True)
    if key not in seen:
        seen.add(key)
        print(i, layers[i]["name"])
PY
)" || { status=1; continue; }
    while read -r i lname; do
      local tag
      tag="$(printf '%s-b1-%02d-%s' "$net" "$i" "$lname")"
      cdir="$dir/net/$tag"
      if [ ! -f "$cdir/kernels.json" ]; then
        local src
        src="$(ls "$scratch/split/$(printf '%02d' "$i")"-*.mlir)"
        mkdir -p "$cdir"
        "$bin/spconv-translate" --spconv-compile "$src" --cache-dir="$cache" \
          --artifact-prefix="$cdir/kernels" -o "$cdir/kernels.json" ||
          { echo "sanitize.sh: compiling $tag failed" >&2; status=1; continue; }
        cp "$scratch/split/weights/$(basename "$src" .mlir).bin" "$cdir/weights.bin"
        [ -f "$scratch/split/weights/$(basename "$src" .mlir).bias.bin" ] &&
          cp "$scratch/split/weights/$(basename "$src" .mlir).bias.bin" "$cdir/bias.bin"
        rm -f "$cdir/kernels.ptx"
        python3 - "$scratch/net.json" "$i" "$cdir/kernels.json" <<'PY' ||
import json, sys
bundle = json.load(open(sys.argv[1]))["kernels"][int(sys.argv[2])]["tiling"]
alone = json.load(open(sys.argv[3]))["kernels"][0]["tiling"]
sys.exit(0 if bundle == alone else "tiling alone %s != in the bundle %s" % (alone, bundle))
PY
          { echo "sanitize.sh: $tag compiled alone has another tiling" >&2; status=1; continue; }
      fi
      echo "net/$tag net/$tag -" >> "$cases.tmp"
    done <<< "$picks"
  done
  rm -rf "$scratch"
  mv "$cases.tmp" "$cases"
  echo "sanitize.sh: $(wc -l < "$cases") cases in $cases"
  exit $status
}

# One case under one tool: prints its line. Arguments: tool name casedir flags.
run_one() {
  local tool="$1" name="$2" cdir="$dir/$3" flags="$4" safe log json args rc t0 t1
  safe="$(echo "$name" | tr '/' '_')"
  log="$out/work/$safe.$tool.log"; json="$out/work/$safe.$tool.json"
  args=(--launch "$cdir/kernels.json" --module "$cdir/kernels.cubin" --out "$json"
        --layer "$name" --no-graph --iters 1 --batches 5 --no-cusparse --no-tf32
        --no-half-baselines)
  args+=(--weights "$cdir/weights.bin")
  [ -f "$cdir/bias.bin" ] && args+=(--bias "$cdir/bias.bin")
  local f
  if [ "$flags" != "-" ] && [ "${flags#expect-}" = "$flags" ]; then
    IFS=',' read -r -a extra <<< "$flags"
    for f in "${extra[@]}"; do
      case "$f" in
        --weights=*|--bias=*) args+=("${f%%=*}" "$cdir/${f#*=}") ;;
        *) args+=("${f%%=*}" "${f#*=}") ;;
      esac
    done
  fi
  if [ -n "${deadline:-}" ] && [ "$(date +%s)" -ge "$deadline" ]; then
    echo "SKIP $tool $name errors=- bench=- secs=0 (not run: SPCONV_SANITIZE_DEADLINE passed)"
    return
  fi
  local topt=()
  [ "$tool" = racecheck ] && topt=(--racecheck-report all)
  t0=$(date +%s.%N)
  timeout -k 10 "$timeout_s" "$sanitizer" --tool "$tool" "${topt[@]}" --kernel-name kns=spconv \
    --print-limit 20 "$bench" "${args[@]}" > "$log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  python3 - "$tool" "$name" "$rc" "$log" "$json" "$t0" "$t1" "$flags" <<'PY'
import json, re, sys
tool, name, rc, log, path, t0, t1, flags = sys.argv[1:]
rc = int(rc)
text = open(log, errors="replace").read()
secs = float(t1) - float(t0)
# memcheck, synccheck, initcheck: "ERROR SUMMARY: N errors"; racecheck: "RACECHECK SUMMARY:
# N hazards displayed (E errors, W warnings)", where E + W counts every hazard found.
m = re.findall(r"ERROR SUMMARY: (\d+) error", text)
errors = int(m[-1]) if m else None
h = re.findall(r"RACECHECK SUMMARY: \d+ hazards? displayed \((\d+) errors?, (\d+) warnings?\)", text)
hazards = 0
if tool == "racecheck":
    errors = sum(int(e) for e, w in h) if h else None
    hazards = sum(int(w) for e, w in h) if h else 0
try:
    r = json.load(open(path))
except Exception:
    r = {}
status = r.get("status", "none")
nonfinite = (r.get("errors", {}).get("spconv") or {}).get("non_finite")
extra = ""
if rc in (124, 137):
    verdict, why = "TIMEOUT", "timed out"
elif errors is None:
    verdict, why = "FAIL", "no summary from the tool (exit %d)" % rc
elif errors or hazards:
    verdict, why = "FAIL", "%d errors, %d warnings" % (errors, hazards)
elif flags == "expect-unwritten":
    # The checker must reject the kernel for its unwritten (NaN-poisoned) element.
    ok = status == "failed" and nonfinite == 1
    verdict = "PASS" if ok else "FAIL"
    why = "" if ok else "expected status failed with non_finite=1, got %s, %s" % (status, nonfinite)
elif flags == "expect-failed":
    # A deliberately broken kernel: the checker must reject it.
    ok = status == "failed"
    verdict = "PASS" if ok else "FAIL"
    why = "" if ok else "expected status failed, got %s" % status
else:
    ok = status == "ok"
    verdict = "PASS" if ok else "FAIL"
    why = "" if ok else "bench %s: %s" % (status, str(r.get("error", ""))[:160])
line = "%s %s %s errors=%s bench=%s secs=%.1f" % (
    verdict, tool, name, "-" if errors is None else errors, status, secs)
if nonfinite:
    line += " non_finite=%d" % nonfinite
if hazards:
    line += " warnings=%d" % hazards
print(line + (" (%s)" % why if why else ""))
PY
}

run() {
  [ $# -eq 3 ] || { sed -n '2,41p' "$0"; exit 2; }
  out="$3"
  bench="${SPCONV_BENCH:-$root/build/bin/spconv-bench}"
  [ -x "$bench" ] || { echo "sanitize.sh: no spconv-bench at $bench (set SPCONV_BENCH)" >&2; exit 2; }
  sanitizer="${SPCONV_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}"
  [ -x "$sanitizer" ] || { echo "sanitize.sh: no compute-sanitizer" >&2; exit 2; }
  [ -f "$dir/cases.txt" ] || { echo "sanitize.sh: no $dir/cases.txt (run 'compile' first)" >&2; exit 2; }
  timeout_s="${SPCONV_SANITIZE_TIMEOUT:-120}"
  mkdir -p "$out/work" "$out/logs"
  deadline="${SPCONV_SANITIZE_DEADLINE:-}"
  export dir out bench sanitizer timeout_s deadline
  export -f run_one
  # Lines of an earlier run (SPCONV_SANITIZE_PREVIOUS=its sanitize.txt) are kept, and their
  # jobs not run again, except its SKIPs.
  local previous="${SPCONV_SANITIZE_PREVIOUS:-}"
  : > "$out/work/previous.txt"
  [ -n "$previous" ] && grep -v '^SKIP' "$previous" > "$out/work/previous.txt"
  local tool name cdir flags
  while read -r name cdir flags; do
    [ -n "${SPCONV_SANITIZE_ONLY:-}" ] && ! [[ "$name" =~ $SPCONV_SANITIZE_ONLY ]] && continue
    for tool in ${SPCONV_SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}; do
      awk -v t="$tool" -v n="$name" '$2 == t && $3 == n {f = 1} END {exit !f}' \
        "$out/work/previous.txt" && continue
      printf '%s\t%s\t%s\t%s\n' "$tool" "$name" "$cdir" "$flags"
    done
  done < "$dir/cases.txt" > "$out/work/jobs.txt"
  # The checker first, then the slow jobs (the paper10 layers and the networks), so that they
  # overlap the rest, then the GPU test cases by sparsity: 0.9, 0, 0.5, 1.0. With a deadline
  # (SPCONV_SANITIZE_DEADLINE, seconds since the epoch) the jobs not started by then are
  # written as SKIP lines.
  awk -F'\t' '{k = 6; if ($2 ~ /^checker/) k = 0; else if ($2 ~ /^(paper10|net)\//) k = 1;
                else if ($2 ~ /-p0\.9$/) k = 2; else if ($2 ~ /-p0$/) k = 3;
                else if ($2 ~ /-p0\.5$/) k = 4; else if ($2 ~ /-p1\.0$/) k = 5;
                print k "\t" $0}' "$out/work/jobs.txt" |
    sort -t$'\t' -k1,1n -s | cut -f2- > "$out/work/jobs.sorted"
  xargs -a "$out/work/jobs.sorted" -d '\n' -P "${SPCONV_SANITIZE_JOBS:-8}" -I{} \
    bash -c 'IFS=$'"'"'\t'"'"' read -r t n c f <<< "$1"; run_one "$t" "$n" "$c" "$f"' _ {} \
    | tee "$out/work/lines.txt"
  cat "$out/work/previous.txt" "$out/work/lines.txt" | sort -k3,3 -k2,2 > "$out/sanitize.txt"
  # Logs of every line that is not a PASS.
  local l safe
  while read -r l; do
    set -- $l
    safe="$(echo "$3" | tr '/' '_')"
    cp "$out/work/$safe.$2.log" "$out/logs/" 2>/dev/null
  done < <(grep -v '^PASS' "$out/sanitize.txt")
  python3 - "$out" "$dir" "$sanitizer" "$timeout_s" "${SPCONV_SANITIZE_JOBS:-8}" "$previous" <<'PY'
import datetime, json, os, subprocess, sys
out, d, sanitizer, timeout_s, jobs, previous = sys.argv[1:]
def sh(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True).stdout.strip()
    except Exception:
        return ""
# The compiler's commit: compile writes commit.txt; cases compiled otherwise (variants.sh,
# gpu_tests.sh) name it by $SPCONV_SANITIZE_COMMIT, else the record says it is unknown.
try:
    commit = open(d + "/commit.txt").read().split()
except OSError:
    commit = (os.environ.get("SPCONV_SANITIZE_COMMIT") or "unknown").split()
    if commit == ["unknown"]:
        print("sanitize.sh: no %s/commit.txt and no $SPCONV_SANITIZE_COMMIT: the record's "
              "commit is unknown" % d, file=sys.stderr)
lines = [l.rstrip("\n") for l in open(out + "/sanitize.txt")]
counts = {}
for l in lines:
    counts[l.split()[0]] = counts.get(l.split()[0], 0) + 1
rec = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
       "device": sh("nvidia-smi", "--query-gpu=name", "--format=csv,noheader"),
       "driver": sh("nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"),
       "compute_sanitizer": sh(sanitizer, "--version").splitlines()[-1:],
       "commit": commit[0], "tree": "dirty" if "dirty" in commit else "clean",
       "per_case_timeout_s": int(timeout_s), "parallel_jobs": int(jobs),
       "bench_flags": "--kernel-name kns=spconv; spconv-bench --no-graph --iters 1 --batches 5 --no-cusparse --no-tf32 --no-half-baselines",
       "counts": counts, "lines": lines}
if previous:
    # The earlier run whose lines were kept (its own sanitize.json, beside its sanitize.txt).
    try:
        p = json.load(open(os.path.join(os.path.dirname(previous), "sanitize.json")))
        rec["previous_run"] = {k: p.get(k) for k in ("date", "device", "driver", "commit", "counts")}
    except Exception:
        rec["previous_run"] = {"lines_from": previous}
    rec["lines_kept_from_previous"] = sum(1 for _ in open(out + "/work/previous.txt"))
json.dump(rec, open(out + "/sanitize.json", "w"), indent=1)
print("sanitize.sh: " + ", ".join("%d %s" % (v, k) for k, v in sorted(counts.items())))
PY
  rm -rf "$out/work"
  grep -qv '^PASS' "$out/sanitize.txt" && exit 1
  exit 0
}

case "$mode" in
  compile) compile ;;
  run) run "$@" ;;
  *) sed -n '2,41p' "$0"; exit 2 ;;
esac
