# usage (device): B2=64|32 bash device-run-batch.sh  (carry .ncrx .ncr16 .ncr$B2 .devbinx; see batch.txt)
set -u
mkdir -p /tmp/bin && xz -dc .devbinx/spconv-bench.xz > /tmp/bin/spconv-bench && chmod +x /tmp/bin/spconv-bench
for D in .ncrx .ncr16 .ncr${B2:-32}; do find $D -name "*.xz" -exec xz -d {} \; ; done
for rep in 1 2; do
for c in l1-conv3 l2-conv3 l3-conv3 l4-conv3; do
  for D in .ncrx .ncr16 .ncr${B2:-32}; do
    [ "$D" = .ncrx ] && [ $rep = 1 ] && /tmp/bin/spconv-bench --launch $D/$c/kernels.json --module $D/$c/kernels.cubin --weights $D/$c/weights.bin --bias $D/$c/bias.bin --layer $c-nores --sparsity 0.9 --no-half-baselines --no-cusparse --no-tf32 2>/dev/null | grep -o "^[^ ]* .*status=[a-z]*\|ours=[0-9.]* ms" | tr '\n' ' '; [ "$D" = .ncrx ] && [ $rep = 1 ] && echo
    /tmp/bin/spconv-bench --launch $D/$c-res/kernels.json --module $D/$c-res/kernels.cubin --weights $D/$c-res/weights.bin --bias $D/$c-res/bias.bin --layer $c-res${D#.ncr} --sparsity 0.9 --no-half-baselines --no-cusparse --no-tf32 2>/dev/null | grep -o "^[^ ]* .*status=[a-z]*\|ours=[0-9.]* ms" | tr '\n' ' '; echo
  done
done
done
