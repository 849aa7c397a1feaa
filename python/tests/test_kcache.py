"""The kernel cache on its own: keys, units, compressed cubins, compiler identity."""
import gzip
import json
import lzma
import os

import numpy as np
import pytest

from immconv.mlir import ConvSpec

kcache = pytest.importorskip("immconv.torch.kcache")


def spec(**kw):
    w = np.arange(2 * 3 * 3 * 3, dtype=np.float32).reshape(2, 3, 3, 3)
    args = dict(name="c", weights=w, input_shape=(1, 3, 8, 8))
    args.update(kw)
    return ConvSpec(**args)


def test_keys_follow_what_the_kernel_depends_on():
    base = kcache.layer_key(spec())
    assert base == kcache.layer_key(spec(name="other"))          # the name does not matter
    w = spec().weights.copy()
    w[0, 0, 0, 0] = 0.5
    for other in (spec(weights=w), spec(input_shape=(2, 3, 8, 8)), spec(stride=(2, 2)),
                  spec(padding=(1, 1, 1, 1)), spec(activation="relu"),
                  spec(bias=np.zeros(2, np.float32))):
        assert kcache.layer_key(other) != base
    assert kcache.layer_key(spec(), ["--chip=sm_80"]) != base


def test_keys_follow_the_tuning_table(tmp_path, monkeypatch):
    monkeypatch.delenv("SPCONV_TUNING_TABLE", raising=False)
    base = kcache.layer_key(spec())
    off = kcache.layer_key(spec(), ["--tuning-table=none"])
    table = tmp_path / "t.json"
    table.write_text('{"entries": [1]}')
    monkeypatch.setenv("SPCONV_TUNING_TABLE", str(table))
    tuned = kcache.layer_key(spec())
    assert tuned != base
    table.write_text('{"entries": [2]}')                       # its contents, not its name
    assert kcache.layer_key(spec()) not in (base, tuned)
    assert kcache.layer_key(spec(), ["--tuning-table=none"]) == off    # the flag wins
    monkeypatch.setenv("SPCONV_TUNING_TABLE", "none")
    assert kcache.layer_key(spec()) == base


def test_keys_follow_the_table_a_table_falls_back_to(tmp_path, monkeypatch):
    # An H100 table over the H200 one: a change to either changes the tilings.
    h200 = tmp_path / "h200.json"
    h200.write_text('{"entries": [1]}')
    h100 = tmp_path / "h100.json"
    h100.write_text('{"falls_back_to": "h200.json", "entries": []}')
    monkeypatch.setenv("SPCONV_TUNING_TABLE", str(h100))
    first = kcache.layer_key(spec())
    h200.write_text('{"entries": [2]}')
    assert kcache.layer_key(spec()) != first
    h200.unlink()
    assert kcache.tuning_table_id() == "unreadable:h200.json"


def test_num_sms_is_passed_only_where_the_compiler_would_tile_for_another_count(
        tmp_path, monkeypatch):
    monkeypatch.delenv("SPCONV_TUNING_TABLE", raising=False)
    assert kcache.num_sms_args(132) == ()                         # the compiler's default
    assert kcache.num_sms_args(114) == ("--num-sms=114",)         # an H100 PCIe
    assert kcache.num_sms_args(114, ["--num-sms=132"]) == ()      # the user's count wins
    table = tmp_path / "t.json"
    table.write_text('{"device": "NVIDIA H100 PCIe", "sms": 114, "entries": []}')
    assert kcache.num_sms_args(114, ["--tuning-table=%s" % table]) == ()
    assert kcache.num_sms_args(132, ["--tuning-table=%s" % table]) == ("--num-sms=132",)
    monkeypatch.setenv("SPCONV_TUNING_TABLE", str(table))
    assert kcache.num_sms_args(114) == ()
    table.write_text('{"device": "NVIDIA H200", "entries": []}')  # a table without "sms"
    assert kcache.num_sms_args(132) == ()
    assert kcache.num_sms_args(108) == ("--num-sms=108",)
    # the flag is part of the cache key, as every compiler flag is
    assert kcache.layer_key(spec(), ["--num-sms=108"]) != kcache.layer_key(spec())


def _unit(cache, keys, tmp_path, payload=b"CUBIN"):
    d = cache.new_unit()
    with open(os.path.join(d, "model.cubin"), "wb") as f:
        f.write(payload)
    with open(os.path.join(d, "model.json"), "w") as f:
        json.dump({"kernels": [{"entry": "k%d" % i} for i in range(len(keys))]}, f)
    open(os.path.join(d, "model.ptx"), "w").close()
    return cache.commit(d, keys, [{"entry": "k%d" % i} for i in range(len(keys))], "tool-a")


@pytest.mark.parametrize("ext,opener", [(".xz", lzma.open), (".gz", gzip.open)])
def test_compressed_cubins_are_unpacked_on_first_use(tmp_path, ext, opener):
    cache = kcache.KernelCache(str(tmp_path / "c"))
    d = _unit(cache, ["a", "b"], tmp_path, b"\x7fELF payload")
    assert sorted(os.listdir(d)) == ["model.cubin", "model.json"]   # the PTX is not kept
    with open(os.path.join(d, "model.cubin"), "rb") as fi, opener(
            os.path.join(d, "model.cubin" + ext), "wb") as fo:
        fo.write(fi.read())
    os.remove(os.path.join(d, "model.cubin"))
    cubin, sidecar, k, entry = cache.lookup("b", None)
    assert (k, entry) == (1, "k1")
    assert open(cubin, "rb").read() == b"\x7fELF payload"


def test_compiler_identity_decides_where_a_compiler_exists(tmp_path):
    cache = kcache.KernelCache(str(tmp_path / "c"))
    _unit(cache, ["a"], tmp_path)
    assert cache.lookup("a", "tool-a") is not None
    assert cache.lookup("a", "tool-b") is None        # another compiler binary: recompile
    assert cache.lookup("a", None) is not None        # no compiler here: use what is there
    assert cache.lookup("missing", None) is None
    cache.record_measurement("a", "GPU/cuda-graph", {"x_fp32": 1.5})
    assert cache.measured("a", "GPU/cuda-graph") == {"x_fp32": 1.5}
    assert cache.lookup("a", "tool-a") is not None    # the entry survives the update


def test_cpu_inputs_keep_the_default_target():
    torch = pytest.importorskip("torch")
    from immconv.torch import pipeline
    assert pipeline.target_args(torch.zeros(1, 3, 8, 8)) == ()
    assert pipeline.target_args((torch.zeros(1, 3, 8, 8),), ["--num-sms=16"]) == ()
