#!/usr/bin/env bash
# One command on a fresh Debian 12 machine: installs every dependency, builds spconv into
# build/, and compiles the bundled example (examples/small-cnn.mlir) to PTX, a cubin and the
# launch sidecar under out/. Safe to run again: installed packages and an existing build are
# reused.
#
#   bash scripts/setup.sh            # CUDA's ptxas is required for the cubin
#   SPCONV_PTXAS=/path/to/ptxas bash scripts/setup.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

packages=(libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools cmake ninja-build g++ python3
          python3-numpy python3-pytest libonnx-dev libprotobuf-dev protobuf-compiler python3-onnx
          python3-torch python3-torchvision python3-matplotlib clang-22 libfuzzer-22-dev
          nlohmann-json3-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
[ -f /usr/lib/llvm-22/lib/cmake/mlir/MLIRConfig.cmake ] || {
  echo "setup: error: MLIR 22 not found under /usr/lib/llvm-22 after installing libmlir-22-dev" >&2
  exit 1
}

ptxas="${SPCONV_PTXAS:-${CUDA_PATH:-/usr/local/cuda}/bin/ptxas}"
if [ ! -x "$ptxas" ]; then
  echo "setup: error: CUDA's ptxas not found at $ptxas." >&2
  echo "  Install the CUDA toolkit (13.x) under /usr/local/cuda, or set SPCONV_PTXAS or CUDA_PATH." >&2
  exit 1
fi

# SPCONV_WERROR=ON (what .ci/run sets) makes a warning in spconv's own code an error.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit -DSPCONV_WERROR="${SPCONV_WERROR:-OFF}" >/dev/null
ninja -C build

mkdir -p out
SPCONV_PTXAS="$ptxas" build/bin/spconv-translate --spconv-compile examples/small-cnn.mlir \
  --artifact-prefix=out/small-cnn -o out/small-cnn.json
echo "setup: built build/bin/{spconv-opt,spconv-translate,...}; the example compiled to:"
ls -l out/small-cnn.ptx out/small-cnn.cubin out/small-cnn.json
/usr/bin/python3 -m pip install -q --no-deps --no-build-isolation --break-system-packages -e python/ 2>/dev/null || { d="$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_path("purelib"))')"; mkdir -p "$d" && echo "$root/python" > "$d/immconv-src.pth"; }  # the immconv Python package (python/immconv): offline editable install, else a .pth (no pip); docs/python.md
