#!/bin/bash
# --num-sms on the device (docs/design.md, "Target GPU"): the tilings of num-sms.spec, compiled
# here by
#   bash bench/variants.sh compile bench/results/2026-11-27-num-sms/num-sms.spec .nsm
# each checked against cuDNN FP32 and timed (variants.sh run), then under compute-sanitizer
# (memcheck, racecheck, synccheck, initcheck); spconv-bench's device report now has the SM
# count ("sms") that bench/tuning_table.py writes into a table; and immconv.torch's target
# flags for this GPU.
# usage (device): bash bench/results/2026-11-27-num-sms/device-run.sh
set -u
mkdir -p .devbin && xz -dc .devbinx/spconv-bench.xz > .devbin/spconv-bench &&
  chmod +x .devbin/spconv-bench && cp .devbinx/commit .devbin/
export SPCONV_BENCH=$PWD/.devbin/spconv-bench PYTHONUNBUFFERED=1
R=$OUT/nsm; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,serial,clocks.max.sm --format=csv > $R/device.txt
cp .devbin/commit $R/bench-commit.txt
timeout 200 bash bench/variants.sh run .nsm $R/nsm.json > $R/variants.txt 2>&1
echo "rc=$?" >> $R/variants.txt
python3 - "$R/nsm.json" > $R/sms.txt <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
cases = doc if isinstance(doc, list) else doc.get("cases", doc)
seen = set()
def walk(o):
    if isinstance(o, dict):
        d = o.get("device")
        if isinstance(d, dict) and "name" in d:
            seen.add((d["name"], d.get("sms")))
        for v in o.values():
            walk(v)
    elif isinstance(o, list):
        for v in o:
            walk(v)
walk(doc)
print("spconv-bench device reports (name, sms):", sorted(seen))
PY
[ -f .nsm/commit.txt ] || cp .devbin/commit .nsm/commit.txt  # sanitize.sh writes it into sanitize.json
for d in .nsm/*/; do n=$(basename $d); echo "$n $n -"; done > .nsm/cases.txt
SPCONV_SANITIZE_JOBS=12 SPCONV_SANITIZE_TIMEOUT=200 \
  timeout 260 bash bench/sanitize.sh run .nsm $R/sanitize > $R/sanitize.log 2>&1
echo "rc=$?" >> $R/sanitize.log
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/site python/ \
    > /dev/null 2>&1 && export PYTHONPATH=/tmp/site
python3 - > $R/target.txt 2>&1 <<'PY'
import json, torch
from immconv.torch import kcache, pipeline
p = torch.cuda.get_device_properties(0)
x = torch.zeros(1, 3, 8, 8, device="cuda")
print(json.dumps({"device": p.name, "multi_processor_count": p.multi_processor_count,
                  "target_args": pipeline.target_args(x),
                  "target_args_with_a_114_sm_table": kcache.num_sms_args(
                      p.multi_processor_count, ["--tuning-table=/tmp/t114.json"])
                  if open("/tmp/t114.json", "w").write('{"sms": 114}') else None}))
PY
cat $R/sms.txt $R/target.txt; tail -4 $R/variants.txt; tail -3 $R/sanitize.log
