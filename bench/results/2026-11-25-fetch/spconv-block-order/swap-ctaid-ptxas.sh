#!/bin/bash
# ptxas with %ctaid.y and %ctaid.z (and %nctaid) swapped in its PTX input: an experiment.
args=(); tmp=""
for a in "$@"; do
  case "$a" in
    *.ptx) tmp="${a%.ptx}.sw.ptx"
           sed -e 's/%ctaid\.y/%CTAIDTMP/g; s/%ctaid\.z/%ctaid.y/g; s/%CTAIDTMP/%ctaid.z/g; s/%nctaid\.y/%NCTAIDTMP/g; s/%nctaid\.z/%nctaid.y/g; s/%NCTAIDTMP/%nctaid.z/g' "$a" > "$tmp"
           args+=("$tmp");;
    *) args+=("$a");;
  esac
done
/usr/local/cuda/bin/ptxas "${args[@]}"; rc=$?
[ -n "$tmp" ] && rm -f "$tmp"
exit $rc
