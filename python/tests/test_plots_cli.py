import json
import os
import subprocess
import sys

import pytest

PY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def summary():
    return {"convs": 3, "device": "synthetic", "totals": {},
            "layers": [{"layer": "conv1", "spconv": 1.0, "cudnn_fp32": 2.0, "cudnn_tf32": 1.5,
                        "cusparse": None},
                       {"layer": "conv2", "spconv": 2.0, "cudnn_fp32": 1.0, "cudnn_tf32": 0.5,
                        "cusparse": 3.0},
                       {"layer": "conv3", "spconv": 0.5, "cudnn_fp32": 0.5, "cudnn_tf32": 0.4,
                        "cusparse": 1.0}]}


def test_plots(tmp_path):
    pytest.importorskip("matplotlib")
    from immconv import plots
    p = tmp_path / "network.json"
    p.write_text(json.dumps(summary()))
    sp = plots.speedup_per_layer(str(p), str(tmp_path / "s.png"))
    assert sp == [2.0, 0.5, 1.0]
    tot = plots.time_breakdown(str(p), str(tmp_path / "t.png"))
    assert tot == {"spconv": 3.5, "cudnn_fp32": 3.5, "cudnn_tf32": pytest.approx(2.4)}
    for f in ("s.png", "t.png"):
        assert (tmp_path / f).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def run_cli(*args):
    env = dict(os.environ, PYTHONPATH=PY)
    return subprocess.run([sys.executable, "-m", "immconv", *args], capture_output=True,
                          text=True, env=env)


def test_cli_check_sidecar(tmp_path):
    from conftest import fake_kernel
    from immconv.mlir import ConvSpec
    import numpy as np
    s = ConvSpec("c", np.ones((4, 3, 3, 3), np.float32), (1, 3, 8, 8))
    good = tmp_path / "k.json"
    good.write_text(json.dumps({"format": "spconv-launch", "version": 1,
                                "kernels": [fake_kernel(0, s)]}))
    r = run_cli("check-sidecar", str(good))
    assert r.returncode == 0 and "spconv_conv2d_0" in r.stdout, r.stderr
    k = fake_kernel(0, s)
    k["grid"][2] = 7
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "spconv-launch", "version": 1, "kernels": [k]}))
    r = run_cli("check-sidecar", str(bad))
    assert r.returncode == 1 and "grid.z" in r.stderr


def test_check_sidecar_images_per_block():
    # Packed images (tiling.images_per_block): grid.z is ceil(N / images), not N.
    from conftest import fake_kernel
    from immconv import launch
    from immconv.mlir import ConvSpec
    import numpy as np
    s = ConvSpec("c", np.ones((4, 3, 3, 3), np.float32), (5, 3, 8, 8))
    k = fake_kernel(0, s)
    k["tiling"] = {"images_per_block": 2}
    k["grid"][2] = 3
    launch.check_kernel(k)
    for images, z in ((2, 5), (2, 2), (0, 3), ("2", 3)):
        k["tiling"]["images_per_block"], k["grid"][2] = images, z
        with pytest.raises(launch.SidecarError, match="grid.z"):
            launch.check_kernel(k)


def test_check_sidecar_channel_block_major():
    # A channel-block-major grid (tiling.channel_block_major) runs the batch along grid.y.
    from conftest import fake_kernel
    from immconv import launch
    from immconv.mlir import ConvSpec
    import numpy as np
    s = ConvSpec("c", np.ones((4, 3, 3, 3), np.float32), (5, 3, 8, 8))
    k = fake_kernel(0, s)
    k["tiling"] = {"images_per_block": 2, "channel_block_major": True}
    k["grid"][1], k["grid"][2] = 3, 1
    launch.check_kernel(k)
    k["grid"][1], k["grid"][2] = 1, 3
    with pytest.raises(launch.SidecarError, match="grid.y"):
        launch.check_kernel(k)
    for bad in ("yes", 1):  # 1 == True in Python: still not a JSON boolean
        k["tiling"]["channel_block_major"] = bad
        with pytest.raises(launch.SidecarError, match="grid"):
            launch.check_kernel(k)


def test_check_sidecar_sm_affine():
    # tiling.sm_affine (work queues by SM) changes nothing in the launch but must be a bool.
    from conftest import fake_kernel
    from immconv import launch
    from immconv.mlir import ConvSpec
    import numpy as np
    s = ConvSpec("c", np.ones((4, 3, 3, 3), np.float32), (5, 3, 8, 8))
    k = fake_kernel(0, s)
    k["tiling"] = {"sm_affine": True}
    launch.check_kernel(k)
    k["tiling"]["sm_affine"] = 1
    with pytest.raises(launch.SidecarError, match="sm_affine"):
        launch.check_kernel(k)


def test_cli_usage_errors(tmp_path):
    r = run_cli("compile-onnx", "m.onnx", "-o", str(tmp_path / "p"), "--input-shape", "x:1x2")
    assert r.returncode == 2 and "NAME:NxCxHxW" in r.stderr
    r = run_cli("compile-onnx", str(tmp_path / "missing.onnx"), "-o", str(tmp_path / "p"),
                "--quiet")
    assert r.returncode == 1 and "immconv: error:" in r.stderr


def test_missing_tool_is_a_clear_error(monkeypatch, tmp_path):
    import immconv.tools as t
    monkeypatch.setenv("SPCONV_BIN", str(tmp_path))
    monkeypatch.setattr(t, "REPO_ROOT", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(t.ToolNotFound, match="SPCONV_BIN"):
        t.find_tool("spconv-translate")
    exe = tmp_path / "spconv-translate"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    assert t.find_tool("spconv-translate") == str(exe)
