import io

import numpy as np

from immconv import mlir, progress


def spec(name="layer1.0.conv1", groups=1, act="relu", bias=True):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((8, 4 // groups, 3, 3)).astype(np.float32)
    w[np.abs(w) < 1] = 0
    return mlir.ConvSpec(name=name, weights=w, input_shape=(2, 4, 9, 9),
                         bias=rng.standard_normal(8).astype(np.float32) if bias else None,
                         stride=(2, 1), padding=(1, 0, 2, 1), dilation=(1, 2), groups=groups,
                         activation=act)


def test_round_trip_of_blobs_and_attributes():
    s1, s2 = spec(), spec("features.3", groups=4, act="relu6", bias=False)
    text = mlir.module_text([s1, s2])
    res = mlir.read_resources(text)
    assert sorted(res) == ["features_3_w", "layer1_0_conv1_b", "layer1_0_conv1_w"]
    np.testing.assert_array_equal(res["layer1_0_conv1_w"], s1.weights.reshape(-1))
    np.testing.assert_array_equal(res["layer1_0_conv1_b"], s1.bias)
    np.testing.assert_array_equal(res["features_3_w"], s2.weights.reshape(-1))
    assert "padding = array<i64: 1, 0, 2, 1>" in text
    assert "strides = array<i64: 2, 1>" in text and "dilations = array<i64: 1, 2>" in text
    assert "groups = 4" in text and "#spconv.activation<relu6>" in text
    assert "#spconv.activation<relu>}" in text
    # output: P = (9 + 3 - 2 - 1) // 2 + 1 = 5, Q = (9 + 1 - 4 - 1) // 1 + 1 = 6
    assert s1.output_shape == (2, 8, 5, 6)
    assert "-> tensor<2x8x5x6xf32>" in text
    assert text.index("@layer1_0_conv1") < text.index("@features_3")


def test_colliding_symbols_are_refused():
    import pytest
    with pytest.raises(ValueError, match="collide"):
        mlir.module_text([spec("a.b"), spec("a_b")])


def test_progress_lines_parse_and_draw():
    line = "spconv: ptxas 3/12 units, 4.5 s; slowest: r50/conv1 (1.2 s)\n"
    assert progress.parse_line(line) == (3, 12, 4.5)
    # What spconv-translate prints now that ptxas starts while units are still being queued.
    queued = "spconv: ptxas 3/12 units queued, 4.5 s; slowest: r50/conv1 (1.2 s)\n"
    assert progress.parse_line(queued) == (3, 12, 4.5)
    assert progress.parse_line("spconv: warning: x\n") is None
    out = io.StringIO()
    bar = progress.ProgressBar(out, use_tqdm=False, interactive=True)
    assert bar.update(line) and not bar.update("other\n")
    bar.close()
    assert "3/12 ptxas units" in out.getvalue() and "#" in out.getvalue()
    assert progress.text_bar(12, 12, 1.0).startswith("[" + "#" * 30 + "]")


def test_progress_off_a_terminal_is_a_few_plain_lines(monkeypatch):
    """A StringIO is no terminal: 100 units give one line per tenth (plus the first), no \\r;
    with time passing, a line at least every LOG_SECONDS."""
    out = io.StringIO()
    bar = progress.ProgressBar(out)
    assert not bar.interactive
    for i in range(1, 101):
        bar.update("spconv: ptxas %d/100 units queued, %d.0 s; slowest: a (1 s)\n" % (i, i))
    bar.close()
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue()
    assert 10 <= len(lines) <= 12 and lines[-1].endswith("100/100 ptxas units, 100.0 s")
    clock = [0.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: clock[0])
    out = io.StringIO()
    bar = progress.ProgressBar(out, interactive=False)
    for i in range(1, 7):
        clock[0] += progress.LOG_SECONDS  # one unit per LOG_SECONDS of 1000
        bar.update("spconv: ptxas %d/1000 units, 1.0 s; slowest: a (1 s)\n" % i)
    assert len(out.getvalue().splitlines()) == 6
    # a terminal gets the redrawn bar
    out = io.StringIO()
    bar = progress.ProgressBar(out, use_tqdm=False, interactive=True)
    bar.update("spconv: ptxas 1/2 units, 1.0 s; slowest: a (1 s)\n")
    assert out.getvalue().startswith("\r[")


def test_run_tool_draws_progress_and_reports_failures(tmp_path):
    import pytest
    from immconv.compiler import CompileError, run_tool
    tool = tmp_path / "tool"
    tool.write_text("#!/bin/sh\n"
                    "echo 'spconv: ptxas 1/2 units, 0.5 s; slowest: a (0.5 s)' >&2\n"
                    "echo 'spconv: warning: something' >&2\n"
                    "echo 'spconv: ptxas 2/2 units, 0.9 s; slowest: a (0.5 s)' >&2\n"
                    "echo out\n"
                    "exit ${FAIL:-0}\n")
    tool.chmod(0o755)
    err = io.StringIO()
    assert run_tool([str(tool)], progress=True, stream=err) == "out\n"
    text = err.getvalue()
    assert "1/2 ptxas units" in text and "2/2 ptxas units" in text
    assert "\nspconv: warning: something\n" in text  # not glued to the bar
    import os
    os.environ["FAIL"] = "3"
    try:
        with pytest.raises(CompileError, match=r"exit 3\):\n(.|\n)*spconv: warning: something"):
            run_tool([str(tool)], progress=False)
    finally:
        del os.environ["FAIL"]
