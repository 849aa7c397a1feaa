"""The distribution installs `immconv` (package, command, dynamo entry point) and nothing named
`spconv`, so it sits beside the registry's unrelated `spconv` (spatial sparse convolution)."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import REPO

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None


@pytest.mark.skipif(tomllib is None, reason="tomllib needs Python 3.11")
def test_pyproject_names():
    with open(os.path.join(REPO, "python", "pyproject.toml"), "rb") as f:
        doc = tomllib.load(f)
    proj = doc["project"]
    assert proj["name"] == "immconv"
    assert proj["scripts"] == {"immconv": "immconv.cli:main"}
    assert proj["entry-points"]["torch_dynamo_backends"] == {
        "immconv": "immconv.torch.dynamo:immconv_backend"}
    pkgs = doc["tool"]["setuptools"]["packages"]
    assert pkgs and all(p == "immconv" or p.startswith("immconv.") for p in pkgs)
    # every package directory exists, and no spconv package is left in the source tree
    for p in pkgs:
        assert os.path.isfile(os.path.join(REPO, "python", *p.split("."), "__init__.py")), p
    assert not os.path.exists(os.path.join(REPO, "python", "spconv"))


def test_installs_beside_registry_spconv(tmp_path):
    """pip install into a target that already holds a stand-in for the registry's `spconv`:
    both import afterwards, and the install added only immconv's files."""
    if subprocess.run([sys.executable, "-m", "pip", "--version"],
                      capture_output=True).returncode != 0:
        pytest.skip("pip not available")
    src = tmp_path / "src"
    shutil.copytree(os.path.join(REPO, "python"), src,
                    ignore=shutil.ignore_patterns("tests", "__pycache__", "build", "*.egg-info"))
    target = tmp_path / "site"
    (target / "spconv").mkdir(parents=True)
    (target / "spconv" / "__init__.py").write_text("ORIGIN = 'registry stand-in'\n")
    before = set(os.listdir(target))
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                        "--no-build-isolation", "--no-index", "--target", str(target),
                        str(src)], capture_output=True, text=True)
    if r.returncode != 0 and "setuptools" in r.stderr:
        pytest.skip("setuptools not available: " + r.stderr[-200:])
    assert r.returncode == 0, r.stderr
    added = set(os.listdir(target)) - before
    assert "immconv" in added
    assert all(a in ("immconv", "bin") or a.startswith("immconv-") for a in added), added
    assert (target / "spconv" / "__init__.py").read_text() == "ORIGIN = 'registry stand-in'\n"
    ep = [f for f in os.listdir(target) if f.endswith(".dist-info")]
    assert len(ep) == 1 and ep[0].startswith("immconv-")
    with open(target / ep[0] / "entry_points.txt") as f:
        text = f.read()
    assert "[torch_dynamo_backends]" in text and "immconv.torch.dynamo:immconv_backend" in text
    code = ("import spconv, immconv, immconv.launch; "
            "print(spconv.ORIGIN, immconv.__file__)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=str(target)), cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "registry stand-in" in r.stdout and str(target) in r.stdout
