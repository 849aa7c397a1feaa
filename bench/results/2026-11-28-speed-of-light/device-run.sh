#!/bin/bash
# Speed of light without staging (docs/tuning-log.md): on the GPU machine, from the repository
# root, with the cases of bench/speed_of_light.py carried:
#   bash bench/results/2026-11-28-speed-of-light/device-run.sh STEP CASES_DIR [NCU_CASES]
# CASES_DIR/CASE/{compiled,as-is,no-loads,no-bars,no-stage}: compiled is the case as
# spconv-translate assembled it, the others bench/speed_of_light.py's variants.
# STEP time: every variant of every case timed twice by spconv-bench --unverified (compiled
#   also against legacy cuDNN FP16 in the same process, once), a table in $OUT/summary.txt.
# STEP ncu: bench/ncu_case.sh on compiled, no-loads and no-stage of the cases in NCU_CASES
#   (comma-separated).
# Everything else under $OUT/STEP.tgz.
# Round 44 (loads ahead), with the compiler's cases:
# STEP gpu DIR: bench/gpu_tests.sh run on DIR (the la-* GPU tests, compiled here).
# STEP round DIR [NCU_CASES]: bench/variants.sh run on DIR (round44.spec, compiled here).
# STEP paper10 DIR: paper10 (bench/compile_suite.sh's cases) by bench/run_device.sh, then
#   PyTorch FP16 channels-last (bench/torch_baseline.py) and the per-layer table.
# STEP vgg16 - NAME...: VGG-16's 13 convs (bench/run_network.sh) for each bundle
#   .net/carry/NAME (net.json, manifest.json, gen.args, compile.json, net.cubin.xz).
# STEP clocks -: VGG-16 end to end, 50 and 15 replays, with nvidia-smi sampling the clocks.
# STEP sanitize DIR: compute-sanitizer (memcheck, racecheck, synccheck, initcheck;
#   bench/sanitize.sh run) on every case of DIR.
set -u
source bench/device_env.sh
export SPCONV_BENCH=$PWD/build/bin/spconv-bench
step=$1 cases=$2 R=$OUT/$1
mkdir -p $R
case $step in
  gpu)
    for f in "$cases"/*/*.xz; do [ -f "$f" ] && xz -d -f "$f"; done
    SPCONV_GPU_TESTS_ONLY='^la-' timeout 300 bash bench/gpu_tests.sh run "$cases" > $R/gpu-tests.log 2>&1
    echo "gpu rc=$?" >> $LOG; cp "$cases"/gpu-tests.txt $R/ 2>/dev/null; tail -4 $R/gpu-tests.log
    tar czf $OUT/$step.tgz -C $OUT $step && rm -rf $R; exit 0 ;;
  round)
    timeout 420 bash bench/variants.sh run "$cases" $R/round.json "${3:-}" > $R/round.txt 2> $R/round.err
    echo "round rc=$?" >> $LOG; mkdir -p $R/ncu && cp "$cases"/ncu-*.txt $R/ncu/ 2>/dev/null
    cut -c1-70,400- $R/round.txt | sed 's/tiling=.*regs/regs/' | tail -30
    tar czf $OUT/$step.tgz -C $OUT $step && rm -rf $R; exit 0 ;;
  paper10)  # CASES_DIR from bench/compile_suite.sh; COMMIT names the compiler
    SPCONV_COMMIT=${COMMIT:-unknown} timeout 240 bash bench/run_device.sh "$cases" $R/p10 > $R/p10.log 2>&1
    timeout 150 python3 bench/torch_baseline.py $R/p10/suite.json --modes fp16 \
      --out $R/p10/torch-fp16.json > $R/torch16.log 2>&1
    python3 bench/results/2026-11-26-half-tuned3/summarize.py $R/p10 > $R/p10/summary.md 2>&1  # (call 5 ran without that folder, moved out for the carry: the table was made here)
    echo "paper10 done" >> $LOG; tail -2 $R/p10.log; cat $R/p10/summary.md
    tar czf $OUT/$step.tgz -C $OUT $step && rm -rf $R; exit 0 ;;
  vgg16)  # DIR unused; the bundles .net/carry/NAME given after it, PyTorch timed with the first
    export SPCONV_BENCH_ARGS="--no-cusparse"
    for b in "${@:3}"; do
      B=/tmp/$b; rm -rf $B; cp -r .net/carry/$b $B; xz -d $B/net.cubin.xz
      timeout 200 bash bench/run_network.sh $B $R/$b > $R/$b.log 2>&1
      echo "$b rc=$?" >> $LOG; tail -4 $R/$b.log
      export SPCONV_TORCH_BASELINE=0
    done
    tar czf $OUT/$step.tgz -C $OUT $step && rm -rf $R; exit 0 ;;
  clocks)  # DIR unused. VGG-16 FP16 b64, default policy (bench/torch_backend.py, the kept-pools
    # cache .cache/carry-ip-vgg16), timed with 50 and with 15 replays, while nvidia-smi samples
    # the SM clock, power, temperature and throttle reasons every 50 ms: does the longer timing
    # run our plan at a lower clock? (last session's call10: 3-5% slower over 50 replays)
    c=$(cache ip-vgg16)
    # The cache was compiled with the table before round 44: with today's its plan would miss
    # the cache on conv2_2 and conv3_1 and ask for a compiler the GPU machine does not have.
    export SPCONV_TUNING_TABLE=$PWD/bench/results/2026-11-28-speed-of-light/table-281b08d.json
    F=clocks_throttle_reasons.active  # renamed clocks_event_reasons in newer drivers
    nvidia-smi --query-gpu=$F --format=csv,noheader > /dev/null 2>&1 || F=clocks_event_reasons.active
    for v in "long" "short --warmup 3 --repeats 15"; do
      n=${v%% *}; extra=${v#$n}
      nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,$F \
        --format=csv,noheader -lms 50 > $R/clocks-$n.csv 2>&1 & smi=$!
      timeout 200 python3 bench/torch_backend.py --phase run --sparsity 0.9 --input-scale 0.1 \
        --batch 64 --dtype f16 --layout image_pairs --net vgg16 --policy default --cache "$c" \
        --out $R/vgg16-$n.json $extra > $R/vgg16-$n.log 2>&1
      echo "clocks $n rc=$?" >> $LOG; kill $smi; sleep 1
      python3 - $R/clocks-$n.csv <<'PY' | tee -a $LOG
import sys
rows = [l.split(", ") for l in open(sys.argv[1]) if l.count(",") >= 5]
sm = [float(r[1].split()[0]) for r in rows]
pw = [float(r[3].split()[0]) for r in rows if r[3].split()[0].replace(".", "").isdigit()]
busy = [s for s, r in zip(sm, rows) if float(r[3].split()[0]) > 200] if pw else []
reasons = sorted({r[5].strip() for r in rows})
print(f"{len(rows)} samples; SM clock min {min(sm):.0f} max {max(sm):.0f} MHz; "
      f"while over 200 W: {len(busy)} samples, mean {sum(busy) / max(1, len(busy)):.0f} MHz, "
      f"min {min(busy) if busy else 0:.0f}; power max {max(pw) if pw else 0:.0f} W; "
      f"throttle reasons seen {reasons}")
PY
    done
    tail -5 $R/vgg16-long.log; tail -5 $R/vgg16-short.log
    tar czf $OUT/$step.tgz -C $OUT $step && rm -rf $R; exit 0 ;;
  sanitize)
    for f in "$cases"/*/*.xz; do [ -f "$f" ] && xz -d -f "$f"; done
    for d in "$cases"/*/; do n=$(basename $d); echo "$n $n -"; done > "$cases"/cases.txt
    SPCONV_SANITIZE_JOBS=14 SPCONV_SANITIZE_TIMEOUT=200 \
      timeout 460 bash bench/sanitize.sh run "$cases" $R/sanitize > $R/sanitize.log 2>&1
    echo "sanitize rc=$?" >> $LOG; tail -6 $R/sanitize.log
    tar czf $OUT/$step.tgz -C $OUT $step && rm -rf $R; exit 0 ;;
esac
for f in "$cases"/*/*/*.xz; do [ -f "$f" ] && xz -d -f "$f"; done  # carried compressed
if [ $step = time ]; then  # spconv-bench --unverified on a kernel that skips an output
  python3 bench/make_fake_case.py /tmp/fake-broken --layer broken --shape 2,6,11,11,10,3,3,1,1 \
    --bias --relu --broken > /dev/null
  for flag in "" --unverified; do
    $SPCONV_BENCH --launch /tmp/fake-broken/kernels.json --module /tmp/fake-broken/kernels.cubin \
      --weights /tmp/fake-broken/weights.bin --bias /tmp/fake-broken/bias.bin --no-cusparse \
      --no-tf32 --batches 5 --target-ms 2 $flag --out $R/fake-broken$flag.json > /dev/null 2>&1
    echo "fake broken kernel $flag: rc=$? status=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['status'])" $R/fake-broken$flag.json)" >> $LOG
  done
fi
for c in "$cases"/*/; do
  c=${c%/}; name=$(basename $c)
  for v in compiled as-is no-loads no-bars no-stage pf-L2 pf-L1 hoist8 hoist16 hoist32; do
    d=$c/$v
    [ -d $d ] || continue
    args=(--launch $d/kernels.json --module $d/kernels.cubin --weights $d/weights.bin
          --no-cusparse --no-tf32 --batches 5 --unverified --layer $name-$v)
    if [ $step = time ]; then
      for rep in 1 2; do
        half=--no-half-baselines
        [ $v = compiled ] && [ $rep = 1 ] && half=
        timeout 120 $SPCONV_BENCH "${args[@]}" $half --out $R/$name-$v.r$rep.json \
          > $R/$name-$v.r$rep.log 2>&1
        echo "$name $v r$rep rc=$?" >> $LOG
      done
    elif [[ ",${3:-}," == *",$name,"* ]] && [[ ",${NCU_VARIANTS:-compiled,no-loads,no-stage,pf-L2,pf-L1}," == *",$v,"* ]]; then
      timeout 150 bash bench/ncu_case.sh $d $R/ncu-$name-$v.txt --unverified >> $LOG 2>&1
      echo "$name $v ncu rc=$?" >> $LOG
    fi
  done
done
if [ $step = time ]; then
  python3 - $R > $OUT/summary.txt <<'PY'
import glob, json, os, sys
R = sys.argv[1]
rows = {}
for p in sorted(glob.glob(os.path.join(R, "*.r[12].json"))):
    r = json.load(open(p))
    case = variant = None
    for v in ("compiled", "as-is", "no-loads", "no-bars", "no-stage", "pf-L2", "pf-L1", "hoist8", "hoist16", "hoist32"):
        if r["layer"].endswith("-" + v):
            case, variant = r["layer"][:-len(v) - 1], v
    t = r.get("times_ms", {}).get("spconv")
    e = rows.setdefault(case, {})
    if t:
        e[variant] = min(t, e.get(variant, t))
    if variant == "compiled" and r.get("times_ms", {}).get("best_cudnn_half"):
        e["cudnn_fp16"] = r["times_ms"]["best_cudnn_half"]
    e.setdefault("status", {})[variant] = r.get("status")
print("case | compiled | as-is | no-loads | no-bars | no-stage | pf-L2 | pf-L1 | hoist8 | hoist16 | hoist32 | as-is/no-loads | as-is/no-stage | best legacy cuDNN FP16 | statuses")
for case, e in rows.items():
    f = lambda k: f"{e[k]:.4f}" if k in e else "-"
    ratio = lambda k: f"{e['as-is'] / e[k]:.2f}x" if "as-is" in e and k in e else "-"
    print(f"{case} | {f('compiled')} | {f('as-is')} | {f('no-loads')} | {f('no-bars')} | {f('no-stage')} | {f('pf-L2')} | {f('pf-L1')} | {f('hoist8')} | {f('hoist16')} | {f('hoist32')} | {ratio('no-loads')} | {ratio('no-stage')} | {f('cudnn_fp16')} | {' '.join(f'{k}:{v}' for k, v in e['status'].items())}")
PY
  cat $OUT/summary.txt
fi
tar czf $OUT/$step.tgz -C $OUT $step && rm -rf $R
exit 0
