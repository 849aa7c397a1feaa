# -*- Python -*-
import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config

config.name = "SPCONV"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.spconv_obj_root, "test")

# Each test gets its own template cache, so tests never see each other's entries.
config.environment["SPCONV_CACHE_DIR"] = "none"
config.substitutions.append(("%spconv_src", config.spconv_src_root))
config.substitutions.append(("%spconv_libs", config.spconv_lib_dir))
# The built tools' folder, for bench/ scripts that take it as $SPCONV_BIN.
config.substitutions.append(("%spconv_bin_dir", config.spconv_tools_dir))
# Debian's Python, which has numpy and onnx (the ONNX import tests write their models with it).
config.substitutions.append(("%python", "/usr/bin/python3"))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.spconv_tools_dir, config.llvm_tools_dir]
tools = ["spconv-opt", "spconv-translate", "spconv-gen-conv", "spconv-cpu-check", "spconv-stamp-ptx",
         "spconv-bench", "spconv-launch-info", "mlir-opt", "FileCheck", "not", "count"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# The sanitizer build (SPCONV_SANITIZERS, docs/reliability.md): tests that load spconv code
# into an uninstrumented process (the mlir-opt plugin) cannot run there.
if getattr(config, "spconv_sanitizers", ""):
    config.available_features.add("sanitizers")
    # Reports name the source line; leaks in the tools are not findings (the MLIR drivers
    # exit without tearing everything down), so LeakSanitizer stays off.
    config.environment["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=0"
    config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"

# Tests of permission errors: permissions do not deny root, so as root such a test runs the
# tool as nobody through setpriv (%unprivileged); without either it is unsupported.
if os.getuid() != 0:
    config.available_features.add("unprivileged")
    config.substitutions.append(("%unprivileged", ""))
elif shutil.which("setpriv"):
    setpriv = "setpriv --reuid=65534 --regid=65534 --clear-groups"
    # nobody must be able to run the tools and read the test inputs (not so in a checkout
    # under a private home directory).
    probe = "test -x '%s/spconv-translate' && test -r '%s/test/lit.cfg.py'" % (
        config.spconv_tools_dir, config.spconv_src_root)
    try:
        ok = subprocess.run(setpriv.split() + ["sh", "-c", probe], timeout=20).returncode == 0
    except Exception:
        ok = False
    if ok:
        config.available_features.add("unprivileged")
        config.substitutions.append(("%unprivileged", setpriv))

# A full disk without privileges: a tiny tmpfs in a user + mount namespace of its own.
def can_mount_tmpfs():
    unshare = shutil.which("unshare")
    if not unshare:
        return False
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        try:
            out = subprocess.run([unshare, "-rm", "sh", "-c",
                                  "mount -t tmpfs -o size=4k tmpfs " + d],
                                 capture_output=True, timeout=20)
            return out.returncode == 0
        except Exception:
            return False

if can_mount_tmpfs():
    config.available_features.add("userns-tmpfs")

# ptxas: cubin tests need it; CI machines have CUDA but check anyway.
ptxas = os.environ.get("SPCONV_PTXAS", "/usr/local/cuda/bin/ptxas")
if os.access(ptxas, os.X_OK):
    config.available_features.add("ptxas")
config.substitutions.append(("%ptxas", ptxas))

# GPU tests run only where a CUDA device answers (the H100 device machine), never in CI.
def has_cuda_device():
    if os.environ.get("SPCONV_DISABLE_GPU_TESTS"):
        return False
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=20)
        return out.returncode == 0 and "GPU" in out.stdout
    except Exception:
        return False

if has_cuda_device():
    config.available_features.add("cuda")
