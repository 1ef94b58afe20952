"""util.fixcheck: a kernel before and after a fix, verified against a float64 reference (simulator)."""

import numpy as np
import pytest

import util  # noqa: F401  first: the simulator on a CPU
from util import cuda
from util.fixcheck import Case, compare


@cuda.jit
def scale(x, y):
    i = cuda.grid(1)
    if i < x.shape[0]:
        y[i] = x[i] * 2.0   # float64 literal: the result is rounded to float32 on store


@cuda.jit
def scale_f32(x, y):
    i = cuda.grid(1)
    if i < x.shape[0]:
        y[i] = x[i] * np.float32(2.0)


@cuda.jit
def scale_wrong(x, y):
    i = cuda.grid(1)
    if i < x.shape[0] - 1:   # leaves the last element unwritten: NaN
        y[i] = x[i] * np.float32(2.0)


def case():
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, 300).astype(np.float32)
    return Case("scale", make=lambda: {"x": x, "y": np.empty_like(x)},
                launch=lambda k, d: k[3, 128](d["x"], d["y"]), output="y", reference=lambda h: 2.0 * h["x"])


def test_before_after_verified_and_timed():
    c = compare(case(), {"as published": scale, "fixed": scale_f32, "wrong": scale_wrong,
                         "own launch": lambda d: scale_f32[5, 64](d["x"], d["y"])}, runs=2)
    assert c["as published"].correct and c["fixed"].correct and c["own launch"].correct
    assert not c["wrong"].correct and c["wrong"].times == [] and "1 NaN" in str(c["wrong"].check)
    assert c.speedup("fixed") > 0 and np.isnan(c.speedup("wrong"))
    assert "speed-up over 'as published'" in str(c) and c._repr_html_().count("<tr>") == 5


def test_bad_cases_are_refused():
    bad = Case("no output", make=lambda: {"x": np.zeros(3, np.float32)}, launch=lambda k, d: None, output="y",
               reference=lambda h: h["x"])
    with pytest.raises(KeyError, match="no array named 'y'"):
        compare(bad, {"k": scale})
    with pytest.raises(TypeError, match="kernel or a launch function"):
        compare(case(), {"k": 42})
    with pytest.raises(ValueError, match="at least one kernel"):
        compare(case(), {})
