"""Loads cubins and launches spconv kernels through the CUDA Driver API, from Python.

No C++ extension: cuda-python (`cuda.bindings.driver`, or the older `cuda.cuda`) is used when
importable, otherwise ctypes on libcuda.so.1. `SPCONV_CUDA_DRIVER=ctypes|cuda-python` forces
one. Kernels are launched into PyTorch's current stream in the context PyTorch made current
(the device's primary context), so they order correctly with the surrounding torch ops.

Launch ABI (docs/launch-abi.md): parameters are bare 64-bit device pointers in the order of
the sidecar's `params` (input, output); grid, block and dynamic shared memory come from the
sidecar.
"""
import ctypes
import os


class DriverError(RuntimeError):
    pass


class _CtypesDriver:
    name = "ctypes"

    def __init__(self):
        try:
            self.lib = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise DriverError("libcuda.so.1 not loadable: %s" % e)
        L = self.lib
        L.cuInit.argtypes = [ctypes.c_uint]
        L.cuModuleLoad.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p]
        L.cuModuleGetFunction.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p,
                                          ctypes.c_char_p]
        L.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [
            ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p)]
        L.cuFuncSetAttribute.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
        L.cuGetErrorName.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        self.check(L.cuInit(0), "cuInit")

    def check(self, r, what):
        if r != 0:
            s = ctypes.c_char_p()
            self.lib.cuGetErrorName(r, ctypes.byref(s))
            raise DriverError("%s failed: %s (%d)" % (what, (s.value or b"?").decode(), r))

    def load_module(self, path):
        m = ctypes.c_void_p()
        self.check(self.lib.cuModuleLoad(ctypes.byref(m), os.fsencode(path)), "cuModuleLoad")
        return m

    def get_function(self, module, entry):
        f = ctypes.c_void_p()
        self.check(self.lib.cuModuleGetFunction(ctypes.byref(f), module, entry.encode()),
                   "cuModuleGetFunction(%s)" % entry)
        return f

    def set_max_dynamic_shared(self, fn, nbytes):
        # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
        self.check(self.lib.cuFuncSetAttribute(fn, 8, int(nbytes)), "cuFuncSetAttribute")

    def launch(self, fn, grid, block, shared, stream, pointers):
        vals = [ctypes.c_uint64(p) for p in pointers]
        args = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.byref(v), ctypes.c_void_p)
                                               for v in vals])
        self.check(self.lib.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1],
                                           block[2], shared, ctypes.c_void_p(stream), args, None),
                   "cuLaunchKernel")


class _CudaPythonDriver:
    name = "cuda-python"

    def __init__(self):
        try:
            from cuda.bindings import driver as drv
        except ImportError:
            from cuda import cuda as drv  # cuda-python < 12.6
        self.drv = drv
        self.check(drv.cuInit(0), "cuInit")

    def check(self, result, what):
        err = result[0] if isinstance(result, tuple) else result
        if int(err) != 0:
            raise DriverError("%s failed: %s" % (what, err))
        if isinstance(result, tuple):
            return result[1] if len(result) == 2 else result[1:]
        return None

    def load_module(self, path):
        return self.check(self.drv.cuModuleLoad(os.fsencode(path)), "cuModuleLoad")

    def get_function(self, module, entry):
        return self.check(self.drv.cuModuleGetFunction(module, entry.encode()),
                          "cuModuleGetFunction(%s)" % entry)

    def set_max_dynamic_shared(self, fn, nbytes):
        attr = self.drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        self.check(self.drv.cuFuncSetAttribute(fn, attr, int(nbytes)), "cuFuncSetAttribute")

    def launch(self, fn, grid, block, shared, stream, pointers):
        # The address of a void*[] of pointers to the 8-byte values, as cuLaunchKernel takes it.
        vals = [ctypes.c_uint64(p) for p in pointers]
        args = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.byref(v), ctypes.c_void_p)
                                               for v in vals])
        self.check(self.drv.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1],
                                           block[2], shared, self.drv.CUstream(stream),
                                           ctypes.addressof(args), 0), "cuLaunchKernel")


_DRIVER = None


def driver():
    """The process's driver wrapper (created on first use)."""
    global _DRIVER
    if _DRIVER is None:
        want = os.environ.get("SPCONV_CUDA_DRIVER", "")
        if want == "ctypes":
            _DRIVER = _CtypesDriver()
        else:
            try:
                _DRIVER = _CudaPythonDriver()
            except ImportError:
                if want == "cuda-python":
                    raise
                _DRIVER = _CtypesDriver()
    return _DRIVER


class LoadedModule:
    """A cubin loaded into the current context of one device, with its functions."""

    def __init__(self, cubin, kernels):
        d = driver()
        self.module = d.load_module(cubin)
        self.functions = {}
        for k in kernels:
            fn = d.get_function(self.module, k["entry"])
            if k.get("dynamic_shared_bytes", 0) > 48 * 1024:
                d.set_max_dynamic_shared(fn, k["dynamic_shared_bytes"])
            self.functions[k["entry"]] = fn


def loads_whole_words(kernel):
    """Whether a half-precision kernel loads and stores whole 32-bit words: it pairs adjacent
    elements (numerics.pairing "adjacent") or its tensors are stored as image pairs (a param
    with layout "image_pairs"; docs/launch-abi.md)."""
    return ((kernel.get("numerics") or {}).get("pairing") == "adjacent"
            or any(p.get("layout") == "image_pairs" for p in kernel.get("params", [])))


def pointer_alignment(kernel):
    """Bytes every tensor pointer of `kernel` must be aligned to: 4 where it moves whole
    32-bit words (loads_whole_words), else 1."""
    return 4 if loads_whole_words(kernel) else 1


def launch(fn, kernel, stream, pointers):
    align = pointer_alignment(kernel)
    for name, p in zip((q.get("name", "?") for q in kernel.get("params", [])), pointers):
        if p % align:
            raise ValueError("kernel %r reads and writes whole %d-byte words (adjacent pairs "
                             "or the image-pair layout): param %r at 0x%x is not %d-byte "
                             "aligned" % (kernel.get("entry"), align, name, p, align))
    driver().launch(fn, kernel["grid"], kernel["block"], kernel.get("dynamic_shared_bytes", 0),
                    stream, pointers)
