#!/usr/bin/env bash
# Here (no GPU): the carry folder for run.sh. spconv-bench built from a clean export of the
# commit (git archive HEAD, -DSPCONV_BUILD_COMPILER=OFF -DSPCONV_WERROR=ON).
set -e
C=.halfcarry
rm -rf /tmp/hb-src "$C" && mkdir -p /tmp/hb-src "$C/lib"
git archive HEAD | tar -x -C /tmp/hb-src
(cd /tmp/hb-src && cmake -S . -B build -G Ninja -DSPCONV_BUILD_COMPILER=OFF -DSPCONV_WERROR=ON \
   -DCMAKE_BUILD_TYPE=Release > /dev/null && flock /tmp/spconv-build.lock ninja -C build spconv-bench)
cp /tmp/hb-src/build/bin/spconv-bench "$C/"
cp /usr/lib/llvm-22/bin/FileCheck /usr/lib/llvm-22/bin/not "$C/"
cp -L /lib/x86_64-linux-gnu/libz3.so.4 "$C/lib/"
rm -rf /tmp/hb-src
SPCONV_GPU_TESTS_ONLY='^half' bench/gpu_tests.sh compile "$C/gt"
for sh in "resnet-conv2|128,28,28,128,3,3,1,1" "vgg-conv3|128,112,112,128,3,3,1,1"; do
  name=${sh%%|*}; s=${sh#*|}
  for n in 1 64; do
    for d in f16 bf16; do
      python3 bench/make_fake_half_case.py "$C/p10/$name-n$n-$d" --layer "$name" --shape "$n,$s" \
        --dtype "$d" --sparsity 0.9 --seed 1
      for b in skip perturb; do
        python3 bench/make_fake_half_case.py "$C/p10broken/$name-n$n-$d-$b" --layer "$name" \
          --shape "$n,$s" --dtype "$d" --sparsity 0.9 --seed 1 --broken "$b"
      done
    done
  done
done
find "$C" \( -name kernels.ptx -o -name kernels.cu \) -delete
