"""The Driver API launch path without a GPU: fake libcuda / cuda-python bindings record the
calls, and the test reads back the kernel parameter array as cuLaunchKernel would."""
import ctypes
import sys
import types

import pytest

from immconv.torch import driver as drv  # noqa: E402  (imports no torch itself)

KERNEL = {"entry": "spconv_conv2d_3", "grid": [4, 2, 8], "block": [128, 1, 1],
          "dynamic_shared_bytes": 0}


def read_params(addr, n):
    arr = (ctypes.c_void_p * n).from_address(addr)
    return [ctypes.cast(arr[i], ctypes.POINTER(ctypes.c_uint64)).contents.value for i in range(n)]


class FakeLib:
    def __init__(self):
        self.calls = []

        def fn(name, ret=0):
            def f(*a):
                self.calls.append((name, a))
                if name == "cuLaunchKernel":
                    # a[9] is the void*[] handed to cuLaunchKernel
                    self.params = read_params(ctypes.addressof(a[9]), 2)
                return ret
            return f
        for name in ("cuInit", "cuModuleLoad", "cuModuleGetFunction", "cuLaunchKernel",
                     "cuFuncSetAttribute", "cuGetErrorName"):
            setattr(self, name, fn(name))


def test_ctypes_launch_packs_pointers(monkeypatch):
    lib = FakeLib()
    monkeypatch.setattr(drv.ctypes, "CDLL", lambda name: lib)
    d = drv._CtypesDriver()
    d.launch(ctypes.c_void_p(1234), KERNEL["grid"], KERNEL["block"], 0, 77,
             [0x7F0000001000, 0x7F0000002000])
    name, a = lib.calls[-1]
    assert name == "cuLaunchKernel"
    assert a[1:7] == (4, 2, 8, 128, 1, 1) and a[7] == 0
    assert a[8].value == 77 and a[10] is None and len(a) == 11
    assert lib.params == [0x7F0000001000, 0x7F0000002000]


def test_ctypes_errors_are_named(monkeypatch):
    lib = FakeLib()
    lib.cuModuleLoad = lambda *a: 218  # CUDA_ERROR_INVALID_PTX

    def name(code, out):
        out._obj.value = b"CUDA_ERROR_INVALID_PTX"
        return 0
    lib.cuGetErrorName = name
    monkeypatch.setattr(drv.ctypes, "CDLL", lambda n: lib)
    d = drv._CtypesDriver()
    with pytest.raises(drv.DriverError, match="cuModuleLoad failed: CUDA_ERROR_INVALID_PTX"):
        d.load_module("/x.cubin")


def test_cuda_python_launch(monkeypatch):
    seen = {}
    fake = types.ModuleType("cuda.bindings.driver")
    fake.cuInit = lambda flags: (0,)
    fake.CUstream = lambda h: ("stream", h)

    def launch(fn, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        seen.update(grid=(gx, gy, gz), block=(bx, by, bz), stream=stream,
                    params=read_params(params, 2), extra=extra)
        return (0,)
    fake.cuLaunchKernel = launch
    pkg = types.ModuleType("cuda")
    bindings = types.ModuleType("cuda.bindings")
    bindings.driver = fake
    pkg.bindings = bindings
    monkeypatch.setitem(sys.modules, "cuda", pkg)
    monkeypatch.setitem(sys.modules, "cuda.bindings", bindings)
    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", fake)
    d = drv._CudaPythonDriver()
    d.launch("fn", [4, 2, 8], [128, 1, 1], 0, 99, [11, 22])
    assert seen == {"grid": (4, 2, 8), "block": (128, 1, 1), "stream": ("stream", 99),
                    "params": [11, 22], "extra": 0}


def test_adjacent_pairs_need_aligned_pointers(monkeypatch):
    # A kernel of adjacent half pairs moves whole 32-bit words: a pointer at an odd element
    # offset is refused, naming the param, before anything reaches the driver.
    launched = []

    class Fake:
        def launch(self, *a):
            launched.append(a)
    monkeypatch.setattr(drv, "driver", lambda: Fake())
    k = dict(KERNEL, numerics={"pairing": "adjacent"},
             params=[{"name": "input"}, {"name": "output"}])
    assert drv.pointer_alignment(k) == 4 and drv.pointer_alignment(KERNEL) == 1
    with pytest.raises(ValueError, match=r"param 'input' at 0x1002 is not 4-byte aligned"):
        drv.launch("fn", k, 0, [0x1002, 0x2000])
    assert launched == []
    drv.launch("fn", k, 0, [0x1000, 0x2000])
    drv.launch("fn", KERNEL, 0, [0x1002, 0x2002])
    assert len(launched) == 2
    # So does a kernel whose tensors are stored as image pairs (whole words of two images).
    ip = dict(KERNEL, params=[{"name": "input", "layout": "image_pairs"},
                              {"name": "output", "layout": "image_pairs"}])
    assert drv.pointer_alignment(ip) == 4
    with pytest.raises(ValueError, match=r"param 'output' at 0x2006 is not 4-byte aligned"):
        drv.launch("fn", ip, 0, [0x1000, 0x2006])
    assert len(launched) == 2
