#!/usr/bin/env bash
# A ptxas that times itself: give it to spconv-translate as SPCONV_PTXAS (or --ptxas-path)
# to profile a compile's ptxas processes one by one. Each run appends a line
#   <copy of its input>.ptx <wall seconds> <exit code> <arguments>
# to $SPCONV_PTXAS_LOG/log and keeps a copy of its PTX input there, then
# `python3 bench/ptxas/units.py $SPCONV_PTXAS_LOG` summarises them (docs/compile-time.md,
# "What a warm compile costs"). nvlink is looked for next to the ptxas spconv-translate
# runs, so link this script's directory's nvlink to the real one:
#
#   mkdir -p /tmp/pt && ln -sf "$PWD/bench/ptxas/time-ptxas.sh" /tmp/pt/ptxas &&
#     ln -sf /usr/local/cuda/bin/nvlink /tmp/pt/nvlink
#   SPCONV_PTXAS_LOG=/tmp/ptxlog SPCONV_PTXAS=/tmp/pt/ptxas bash bench/compile_network.sh ...
set -u
real="${SPCONV_REAL_PTXAS:-/usr/local/cuda/bin/ptxas}"
log="${SPCONV_PTXAS_LOG:?set SPCONV_PTXAS_LOG to a directory}"
mkdir -p "$log"
src=""
for a in "$@"; do case "$a" in *.ptx) src="$a" ;; esac; done
copy=""
if [ -n "$src" ]; then
  copy="$(mktemp -p "$log" unit.XXXXXX)"
  mv "$copy" "$copy.ptx"; copy="$copy.ptx"
  cp "$src" "$copy"
fi
start=$(date +%s.%N)
"$real" "$@"; rc=$?
end=$(date +%s.%N)
[ -n "$copy" ] && echo "$copy $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.4f", b - a }') $rc $*" >> "$log/log"
exit $rc
