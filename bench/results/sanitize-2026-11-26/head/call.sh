# Device run 3: compute-sanitizer (memcheck, racecheck, synccheck, initcheck) over the GPU
# test cases compiled at HEAD (.sanhead: the first 171 of bench/gpu_tests.sh's cases,
# sparsities 0, 0.5, 0.9, 1.0, FP32 and half).
set -u
export SPCONV_BENCH=$PWD/.devbin/spconv-bench
R=$OUT/res; mkdir -p $R
SPCONV_SANITIZE_JOBS=14 SPCONV_SANITIZE_TIMEOUT=90 SPCONV_SANITIZE_DEADLINE=$(( $(date +%s) + 420 )) timeout 530 bash bench/sanitize.sh run .sanhead $R/san > $R/san.log 2>&1
rm -rf $R/san/work
tar czf $OUT/res.tgz -C $OUT res
