#!/bin/bash
# What every device script (bench/results/*/device-run.sh) starts with; source it from the
# repository root on the GPU machine, with $OUT set (the run tool's output folder):
# - python/ installed into /tmp/site, on PYTHONPATH; the H200 tuning table;
# - $LOG ($OUT/steps.txt unless set) begun with the date and the card (name, driver,
#   serial, clock), so that every figure names the card it came from;
# - cache NAME: the carried kernel cache .cache/carry-NAME, copied once to /tmp/cache-NAME
#   (kcache reads it there, writes measurements beside it); prints that path;
# - prev_tree DIR PATCH: a copy of bench/, python/ and tuning/ at DIR with PATCH reversed,
#   the tree before a change, for an A/B in the same call (bench/torch_backend.py puts its
#   own tree's python/ first on sys.path, so an A/B needs a tree, not a PYTHONPATH).
export PYTHONUNBUFFERED=1 SPCONV_TUNING_TABLE=$PWD/tuning/nvidia-h200.json
python3 -m pip install -q --upgrade --no-deps --no-build-isolation --no-index --target /tmp/site python/ \
    > /dev/null 2>&1 && export PYTHONPATH=/tmp/site
LOG=${LOG:-$OUT/steps.txt}
{ date -u; nvidia-smi --query-gpu=name,driver_version,serial,clocks.max.sm --format=csv; } >> "$LOG"

cache() {
  [ -d "/tmp/cache-$1" ] || { mkdir -p "/tmp/cache-$1" && cp -r ".cache/carry-$1/." "/tmp/cache-$1/"; }
  echo "/tmp/cache-$1"
}

prev_tree() {
  [ -d "$1" ] || { mkdir -p "$1" && cp -r bench python tuning "$1/" && patch -s -R -p1 -d "$1" < "$2"; }
}
