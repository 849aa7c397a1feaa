#!/usr/bin/env python3
"""Whether the driver sees a kernel's compiled cluster shape: for each CASE_DIR (a
kernels.json + kernels.cubin, bench/gpu_tests.sh's layout), loads the cubin and prints its
entry's CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH/HEIGHT/DEPTH next to the sidecar's
"cluster". A cluster the driver does not see would launch as plain blocks.
usage: cluster_attr.py CASE_DIR..."""
import json
import os
import sys

try:
    from cuda.bindings import driver as cu
except ImportError:  # cuda-python before 12.6
    from cuda import cuda as cu


def ok(res):
    err, *rest = res
    if int(err) != 0:
        raise RuntimeError(str(err))
    return rest[0] if len(rest) == 1 else rest


ok(cu.cuInit(0))
ctx = ok(cu.cuDevicePrimaryCtxRetain(ok(cu.cuDeviceGet(0))))
ok(cu.cuCtxSetCurrent(ctx))
A = cu.CUfunction_attribute
for d in sys.argv[1:]:
    k = json.load(open(os.path.join(d, "kernels.json")))["kernels"][0]
    mod = ok(cu.cuModuleLoad(os.path.join(d, "kernels.cubin").encode()))
    fn = ok(cu.cuModuleGetFunction(mod, k["entry"].encode()))
    dims = [ok(cu.cuFuncGetAttribute(getattr(A, "CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_" + a), fn))
            for a in ("WIDTH", "HEIGHT", "DEPTH")]
    print("%-40s sidecar %-12s driver %s" % (os.path.basename(d.rstrip("/")), k.get("cluster"),
                                             dims))
    ok(cu.cuModuleUnload(mod))
