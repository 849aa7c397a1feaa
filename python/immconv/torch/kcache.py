"""The kernel cache: compiled convs by what they compute, shared by every compile.

A conv's key is a hash of everything its kernel depends on: the folded weights and bias
(full SHA-256), input shape, stride, padding, dilation, groups, fused activation, the extra
compiler arguments and, for a half-precision conv, its dtype and accumulation. One compile (`spconv-translate --spconv-compile` of a module with the
convs not found) is a *unit*: `units/<id>/model.{cubin,json}` (the cubin may be stored
gzipped, `model.cubin.gz`, and is unpacked on first use); `index/<key>.json` says which
unit and kernel computes a conv, which compiler made it and, per GPU, how long it and its
PyTorch original took when measured (the keep-or-compile measurement is cached too, so a
recompile for a new input shape, or the same model through another front end, decides the
same way).

Where spconv-translate is available, an entry made by another compiler binary (its SHA-256
differs) is a miss and gets recompiled. Where it is not (a GPU machine that only runs
kernels compiled elsewhere), entries are used as they are.

Location: `$IMMCONV_CACHE_DIR`, else `$XDG_CACHE_HOME/immconv`, else `~/.cache/immconv`;
`IMMCONV_CACHE_DIR=none` turns it off.
"""
import gzip
import hashlib
import json
import lzma
import os
import shutil
import tempfile

import numpy as np

FORMAT = 1
_TOOL_IDS = {}


def default_dir():
    env = os.environ.get("IMMCONV_CACHE_DIR")
    if env:
        return None if env == "none" else env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "immconv")


def compiler_id():
    """SHA-256 (16 hex) of the spconv-translate binary that would compile, or None if there
    is none here."""
    from ..tools import ToolNotFound, find_tool
    try:
        path = find_tool()
    except ToolNotFound:
        return None
    st = os.stat(path)
    k = (path, st.st_mtime_ns, st.st_size)
    if k not in _TOOL_IDS:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        _TOOL_IDS[k] = h.hexdigest()[:16]
    return _TOOL_IDS[k]


def tuning_table_path(extra_args=()):
    """The tuning table spconv-translate would read: --tuning-table= in extra_args, else
    $SPCONV_TUNING_TABLE; None for none (docs/design.md "Tuning table")."""
    path = os.environ.get("SPCONV_TUNING_TABLE", "")
    for a in extra_args:
        if a.startswith("--tuning-table="):
            path = a[len("--tuning-table="):]
    return None if not path or path == "none" else path


# spconv-translate's SM count without --num-sms or a table's "sms": an H100 SXM's, an H200's
DEFAULT_NUM_SMS = 132


def num_sms_args(num_sms, extra_args=()):
    """("--num-sms=N",) where spconv-translate with extra_args would tile for another SM
    count than `num_sms` (the GPU the kernels will run on): its default, or the tuning
    table's "sms"; () where it already tiles for that many, or extra_args name a count. Only
    a different count is passed, so kernels compiled without a GPU for the default keep
    their cache keys on an H100 or H200 (docs/design.md "Target GPU")."""
    if any(a.startswith("--num-sms") for a in extra_args):
        return ()
    default = DEFAULT_NUM_SMS
    path = tuning_table_path(extra_args)
    if path:
        try:
            with open(path) as f:
                default = json.load(f).get("sms") or DEFAULT_NUM_SMS
        except (OSError, ValueError, AttributeError):
            pass  # spconv-translate reports an unreadable table
    return () if num_sms == default else ("--num-sms=%d" % num_sms,)


def tuning_table_id(extra_args=()):
    """SHA-256 (16 hex) of the tuning table spconv-translate would read (tuning_table_path)
    and of the table it falls back to ("falls_back_to", relative to its directory), or None:
    a table changes tilings, so the kernels compiled with it are cached apart."""
    path = tuning_table_path(extra_args)
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            text = f.read()
    except OSError:
        return "unreadable:" + path  # spconv-translate reports it
    h = hashlib.sha256(text)
    try:
        fallback = json.loads(text).get("falls_back_to")
    except (ValueError, AttributeError):
        fallback = None  # spconv-translate reports a malformed table
    if isinstance(fallback, str):
        try:
            with open(os.path.join(os.path.dirname(path), fallback), "rb") as f:
                h.update(b"falls_back_to")
                h.update(f.read())
        except OSError:
            return "unreadable:" + fallback
    return h.hexdigest()[:16]


def layer_key(spec, extra_args=()):
    """The cache key of one conv (a mlir.ConvSpec)."""
    h = hashlib.sha256(np.ascontiguousarray(spec.weights, dtype="<f4").tobytes())
    if spec.bias is not None:
        h.update(b"bias")
        h.update(np.ascontiguousarray(spec.bias, dtype="<f4").tobytes())
    desc = {"format": FORMAT, "weights": h.hexdigest(), "wshape": list(spec.weights.shape),
            "input_shape": list(spec.input_shape), "stride": list(spec.stride),
            "padding": list(spec.padding), "dilation": list(spec.dilation),
            "groups": spec.groups, "activation": spec.activation,
            "extra_args": list(extra_args)}
    table = tuning_table_id(extra_args)
    if table:
        desc["tuning_table"] = table
    dtype = getattr(spec, "dtype", "f32")
    if dtype != "f32":
        # half kernels: the type and where the sums live (f32 keys are unchanged by this)
        desc["dtype"] = dtype
        desc["accumulate"] = spec.accumulate
    if getattr(spec, "layout", "nchw") != "nchw":
        desc["layout"] = spec.layout  # NCHW keys are unchanged by this
    if getattr(spec, "residual", False):
        desc["residual"] = True  # keys without one are unchanged by this
    return hashlib.sha256(json.dumps(desc, sort_keys=True).encode()).hexdigest()[:32]


def _write_json(path, doc):
    d = os.path.dirname(path)
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-")
    with os.fdopen(fd, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, path)


class KernelCache:
    def __init__(self, root):
        self.root = root
        self.hits = self.misses = 0

    def _index(self, key):
        return os.path.join(self.root, "index", key[:2], key + ".json")

    def unit_dir(self, unit):
        return os.path.join(self.root, "units", unit)

    def entry(self, key):
        try:
            with open(self._index(key)) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def lookup(self, key, compiler):
        """(cubin, sidecar, kernel index, entry name) or None."""
        e = self.entry(key)
        if e is None or (compiler is not None and e.get("compiler") != compiler):
            self.misses += 1
            return None
        d = self.unit_dir(e["unit"])
        cubin, sidecar = os.path.join(d, "model.cubin"), os.path.join(d, "model.json")
        for ext, opener in ((".xz", lzma.open), (".gz", gzip.open)):
            if not os.path.exists(cubin) and os.path.exists(cubin + ext):
                fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-")
                with opener(cubin + ext, "rb") as fi, os.fdopen(fd, "wb") as fo:
                    shutil.copyfileobj(fi, fo)
                os.replace(tmp, cubin)
        if not (os.path.exists(cubin) and os.path.exists(sidecar)):
            self.misses += 1
            return None
        self.hits += 1
        return cubin, sidecar, e["kernel"], e["entry"]

    def new_unit(self):
        """A fresh directory to compile a unit into; commit() moves it into place."""
        os.makedirs(os.path.join(self.root, "units"), exist_ok=True)
        return tempfile.mkdtemp(dir=os.path.join(self.root, "units"), prefix=".new-")

    def commit(self, tmpdir, keys, kernels, compiler):
        """Registers the unit compiled in tmpdir: keys[i] is computed by kernels[i] (sidecar
        entries). Only the cubin and the sidecar are kept."""
        unit = hashlib.sha256(json.dumps([compiler] + list(keys)).encode()).hexdigest()[:24]
        for f in os.listdir(tmpdir):
            if f not in ("model.cubin", "model.json"):
                os.remove(os.path.join(tmpdir, f))
        final = self.unit_dir(unit)
        if os.path.exists(final):
            shutil.rmtree(tmpdir)
        else:
            os.replace(tmpdir, final)
        for i, (key, k) in enumerate(zip(keys, kernels)):
            _write_json(self._index(key), {"unit": unit, "kernel": i, "entry": k["entry"],
                                           "compiler": compiler})
        return final

    def measured(self, key, device):
        e = self.entry(key)
        return (e or {}).get("measured", {}).get(device)

    def record_measurement(self, key, device, row):
        e = self.entry(key)
        if e is None:
            return
        e.setdefault("measured", {})[device] = row
        _write_json(self._index(key), e)
