"""Reads and checks spconv launch sidecars (docs/launch-abi.md).

    python3 -m immconv.launch kernels.json      # prints one line per kernel, exit 1 if invalid

Deployment code can use `load(path)` to get the kernels with their grid, block, shared memory
and parameter shapes, validated against the ABI, without any MLIR or CUDA dependency.
"""
import json
import sys
from math import prod


class SidecarError(ValueError):
    pass


def _ints(kernel, key, n):
    v = kernel.get(key)
    if not (isinstance(v, list) and len(v) == n and all(isinstance(x, int) and x > 0 for x in v)):
        raise SidecarError("%s: '%s' must be %d positive integers" % (kernel.get("entry"), key, n))
    return v


def check_kernel(k):
    if not isinstance(k.get("entry"), str) or not k["entry"]:
        raise SidecarError("kernel without an entry name")
    grid, block = _ints(k, "grid", 3), _ints(k, "block", 3)
    if prod(block) > 1024:
        raise SidecarError("%s: %d threads per block" % (k["entry"], prod(block)))
    params = k.get("params", [])
    # a conv with a residual (docs/launch-abi.md) takes it between input and output
    roles = [p.get("role") for p in params]
    if roles not in (["input", "output"], ["input", "residual", "output"]) or \
            (len(roles) == 3) != bool(k.get("conv", {}).get("has_residual", False)):
        raise SidecarError("%s: params must be (input, output), or (input, residual, "
                           "output) for a conv with has_residual" % k["entry"])
    dtypes = {p.get("dtype", "f32") for p in params}
    if len(dtypes) != 1 or not dtypes <= {"f32", "f16", "bf16"}:
        raise SidecarError("%s: params must share one dtype of f32, f16, bf16" % k["entry"])
    # How each tensor is stored: "nchw" (the default) or "image_pairs" (a half-precision
    # kernel's images n and n + N/2 in one 32-bit word; docs/launch-abi.md).
    layouts = {p.get("layout", "nchw") for p in params}
    if not layouts <= {"nchw", "image_pairs"} or (
            "image_pairs" in layouts and (dtypes == {"f32"} or k["conv"]["N"] % 2)):
        raise SidecarError("%s: params' layouts must be nchw, or image_pairs of a half "
                           "dtype and an even batch" % k["entry"])
    numerics = k.get("numerics")
    if (numerics is None) != (dtypes == {"f32"}) or (
            numerics is not None and numerics.get("dtype") not in dtypes):
        raise SidecarError("%s: a half-precision kernel (and only one) states its numerics "
                           "in its dtype" % k["entry"])
    c = k["conv"]
    if params[0]["shape"] != [c["N"], c["C"], c["H"], c["W"]]:
        raise SidecarError("%s: input shape does not match conv" % k["entry"])
    if any(p["shape"] != [c["N"], c["K"], c["P"], c["Q"]] for p in params[1:]):
        raise SidecarError("%s: output (and residual) shape does not match conv" % k["entry"])
    # grid.z runs over the batch, images_per_block images per block (1 when absent); grid.y
    # does with a channel-block-major grid (tiling.channel_block_major). A half kernel that
    # pairs images runs over ceil(N / 2) words of two images.
    tiling = k.get("tiling", {})
    images = tiling.get("images_per_block", 1)
    major = tiling.get("channel_block_major", False)
    batch = c["N"]
    if numerics is not None and numerics.get("pairing") == "images":
        batch = -(-batch // 2)
    axis, name = (1, "grid.y") if major is True else (2, "grid.z")
    if not isinstance(major, bool) or not isinstance(images, int) or images < 1 or \
            grid[axis] != -(-batch // images):
        raise SidecarError("%s: %s must be the batch over images_per_block" % (k["entry"], name))
    # sm_affine: the kernel keeps work queues in its module; launches of it must not overlap
    # (docs/launch-abi.md). Nothing else about the launch changes.
    if not isinstance(tiling.get("sm_affine", False), bool):
        raise SidecarError("%s: tiling.sm_affine must be true or false" % k["entry"])
    return k


def load(path):
    with open(path) as f:
        doc = json.load(f)
    if doc.get("format") != "spconv-launch" or doc.get("version") != 1:
        raise SidecarError("not an spconv-launch v1 sidecar")
    return [check_kernel(k) for k in doc.get("kernels", [])]


def main(argv):
    try:
        kernels = load(argv[1])
    except (OSError, ValueError, KeyError) as e:
        print("error: %s" % e, file=sys.stderr)
        return 1
    for k in kernels:
        c = k["conv"]
        print("%s grid=%s block=%s shared=%d nnz=%d/%d conv=%dx%dx%dx%d->%dx%dx%dx%d" % (
            # The staged tiles are static or, with dynamic shared memory, sized by the launch.
            k["entry"], k["grid"], k["block"],
            k.get("static_shared_bytes", 0) + k.get("dynamic_shared_bytes", 0),
            k["weights_nnz"], k["weights_total"], c["N"], c["C"], c["H"], c["W"],
            c["N"], c["K"], c["P"], c["Q"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
