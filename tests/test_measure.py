"""measure_runtime, cuda_mean_runtime, cdiv, to_d/to_h: correct kernels pass, planted wrong ones are caught,
bad input is rejected with a message that says what to do. Runs in numba's simulator on a CPU."""

import math

import numpy as np
import pytest

import util
from util import cdiv, cuda, cuda_mean_runtime, measure_runtime, to_d, to_h
from util.kernel2 import original, variant7, variant8
from util.timing import matches

BS = 16  # 256 threads a block keeps the simulator quick
SIZES = dict(m=40, n=36, k=24)  # not multiples of the block: the bounds checks matter
SQUARE = dict(m=33, n=33, k=33)


def grid(outp_shape, nthreads):
    return cdiv(outp_shape, (BS, BS))


def run(kernel, flat=False, sizes=SIZES, **kw):
    return measure_runtime(kernel, nthreads=BS * BS, nblocks_fn=grid, kernel_args=[BS], runs=1, flat=flat,
                           **sizes, **kw)


# ---- correct kernels: the original notebook's first and last forms (util.kernel2) ------------------

@pytest.mark.parametrize("kernel,flat", [(original, False), (variant7, False), (variant8, True)])
def test_correct_kernels_pass(kernel, flat, capsys):
    res = run(kernel, flat=flat)
    out = capsys.readouterr().out
    assert res.correct and res.name == kernel.py_func.__name__
    assert len(res.times) == 1 and res.seconds == res.times[0] > 0
    assert res.simulated and res.device == "simulator"
    assert f"Measuring runtime of kernel {res.name} for m,n,k = 40,36,24, averaging over 1 runs." in out
    assert "NOT GPU time" in out and "WRONG" not in out
    assert "SIMULATED" in repr(res)


def test_default_sizes_shrink_under_simulator(capsys):
    res = measure_runtime(variant7, nthreads=BS * BS, nblocks_fn=grid, kernel_args=[BS], runs=1)
    out = capsys.readouterr().out
    assert (res.m, res.n, res.k) == (util.timing.SIM_SIZE,) * 3
    assert "[simulator] sizes not given shrink" in out


# ---- planted wrong kernels: each must be flagged ------------------------------------------------------

@cuda.jit
def missing_term(a, b, c, m, n, k, bs):
    x = cuda.blockIdx.x * bs + cuda.threadIdx.x // bs
    y = cuda.blockIdx.y * bs + cuda.threadIdx.x % bs
    if x < m and y < n:
        tmp = np.float32(0)
        for i in range(k - 1):  # drops the last term
            tmp += a[x, i] * b[i, y]
        c[x, y] = tmp


@cuda.jit
def unwritten_row(a, b, c, m, n, k, bs):
    x = cuda.blockIdx.x * bs + cuda.threadIdx.x // bs
    y = cuda.blockIdx.y * bs + cuda.threadIdx.x % bs
    if x < m - 1 and y < n:  # the last row is never written
        tmp = np.float32(0)
        for i in range(k):
            tmp += a[x, i] * b[i, y]
        c[x, y] = tmp


@cuda.jit
def single_nan(a, b, c, m, n, k, bs):
    x = cuda.blockIdx.x * bs + cuda.threadIdx.x // bs
    y = cuda.blockIdx.y * bs + cuda.threadIdx.x % bs
    if x < m and y < n:
        tmp = np.float32(0)
        for i in range(k):
            tmp += a[x, i] * b[i, y]
        if x == 3 and y == 5:
            tmp = np.float32(math.nan)
        c[x, y] = tmp


@cuda.jit
def scaled_0p1_percent(a, b, c, m, n, k, bs):
    x = cuda.blockIdx.x * bs + cuda.threadIdx.x // bs
    y = cuda.blockIdx.y * bs + cuda.threadIdx.x % bs
    if x < m and y < n:
        tmp = np.float32(0)
        for i in range(k):
            tmp += a[x, i] * b[i, y]
        c[x, y] = tmp * np.float32(1.001)


@cuda.jit
def transposed_b(a, b, c, m, n, k, bs):
    x = cuda.blockIdx.x * bs + cuda.threadIdx.x // bs
    y = cuda.blockIdx.y * bs + cuda.threadIdx.x % bs
    if x < m and y < n:
        tmp = np.float32(0)
        for i in range(k):
            tmp += a[x, i] * b[y, i]
        c[x, y] = tmp


@cuda.jit
def writes_nothing(a, b, c, m, n, k, bs):
    pass


@pytest.mark.parametrize("kernel,sizes,expect", [
    (missing_term, SIZES, ""),
    (unwritten_row, SIZES, "NaN/unwritten"),
    (single_nan, SIZES, "1 bad elements (1 NaN/unwritten)"),
    (scaled_0p1_percent, SIZES, ""),
    (transposed_b, SQUARE, ""),
    (writes_nothing, SIZES, "NaN/unwritten"),
])
def test_wrong_kernels_are_flagged(kernel, sizes, expect, capsys):
    res = run(kernel, sizes=sizes)
    out = capsys.readouterr().out
    assert not res.correct
    assert res.times == [] and math.isnan(res.seconds)  # a wrong kernel is never timed
    assert "WRONG" in out and "worst C[" in out and expect in out
    assert "WRONG" in repr(res)


def test_unwritten_row_worst_element_is_in_that_row():
    res = run(unwritten_row)
    assert res.check.worst.startswith(f"C[{SIZES['m'] - 1},")


# ---- bad input ----------------------------------------------------------------------------------------

def plain_function(a, b, c, m, n, k, bs):
    pass


@pytest.mark.parametrize("kwargs,exc,msg", [
    (dict(kernel=plain_function), TypeError, "is not a CUDA kernel: decorate it with @cuda.jit"),
    (dict(nthreads=0), ValueError, "1..1024 threads"),
    (dict(nthreads=2048), ValueError, "1..1024 threads"),
    (dict(nthreads=(64, 32)), ValueError, "1..1024 threads"),
    (dict(nthreads=16.0), TypeError, "an int or a tuple"),
    (dict(m=0), ValueError, "m must be positive"),
    (dict(k=-3), ValueError, "k must be positive"),
    (dict(n=2.5), TypeError, "n must be a positive int"),
    (dict(runs=0), ValueError, "runs must be positive"),
    (dict(nblocks_fn=lambda s, t: "lots"), ValueError, "nblocks_fn must return a grid"),
    (dict(nblocks_fn=lambda s, t: (0, 4)), ValueError, "nblocks_fn must return a grid"),
    (dict(nblocks_fn=42), TypeError, "nblocks_fn must be a function"),
    (dict(kernel_args=16), TypeError, "kernel_args must be a list or tuple"),
    (dict(kernel_args=["16"]), TypeError, "kernel_args may hold numbers and device arrays only"),
    (dict(timer="stopwatch"), ValueError, "timer must be one of"),
])
def test_bad_input_is_rejected(kwargs, exc, msg):
    call = dict(kernel=variant7, nthreads=BS * BS, nblocks_fn=grid, kernel_args=[BS], runs=1, **SIZES)
    call.update(kwargs)
    with pytest.raises(exc, match=msg.replace("(", r"\(").replace(".", r"\.")):
        measure_runtime(call.pop("kernel"), call.pop("nthreads"), call.pop("nblocks_fn"), call.pop("kernel_args"),
                        **call)


# ---- cdiv, to_d, to_h -----------------------------------------------------------------------------------

def test_cdiv():
    assert cdiv(4092, 32) == 128 and cdiv(4096, 32) == 128 and cdiv(1, 32) == 1 and cdiv(0, 5) == 0
    assert cdiv((4092, 100), (32, 32)) == (128, 4)
    assert cdiv((4092, 100), 32) == (128, 4)
    for bad in (0, -1):
        with pytest.raises(ValueError, match="divisor must be positive"):
            cdiv(10, bad)
    with pytest.raises(ValueError, match="divisor must be positive"):
        cdiv((10, 10), (2, 0))
    with pytest.raises(ValueError, match="different lengths"):
        cdiv((1, 2), (1, 2, 3))
    with pytest.raises(TypeError):
        cdiv(10, 2.0)
    with pytest.raises(TypeError):
        cdiv("10", 2)


def test_to_d_to_h_round_trip():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    d = to_d(x[:, ::2])  # non-contiguous input becomes C-contiguous
    back = to_h(d)
    assert back.flags.c_contiguous and np.array_equal(back, x[:, ::2])
    assert np.array_equal(to_h(to_d([1, 2, 3])), [1, 2, 3])


@pytest.mark.parametrize("bad", ["abc", None, {"a": 1}, np.array(["x"]), np.array([object()])])
def test_to_d_rejects_non_numbers(bad):
    with pytest.raises(TypeError, match="to_d: expected"):
        to_d(bad)


def test_to_d_rejects_device_array_and_to_h_rejects_host():
    d = to_d(np.ones(3, dtype=np.float32))
    with pytest.raises(TypeError, match="already a device array"):
        to_d(d)
    with pytest.raises(TypeError, match="to_h: expected a device array"):
        to_h(np.ones(3))


# ---- cuda_mean_runtime: name matching and errors (no GPU profile exists on a CPU) -----------------------

@pytest.mark.parametrize("profiled,name,ok", [
    ("__main__::variant8[abi:v5](Array<float, 1, C, mutable, aligned>, ...)", "variant8", True),
    ("_ZN8__main__8variant8B2v1B96cw51cXTLSUwv1sDUaKthqaNgoKmjgOR3W3CwAkMXLaJtQYkOIgxJU0gCqOkEJoHkbttqdVhoqlspQ", "variant8", True),
    ("__main__::variant81[abi:v5](int)", "variant8", False),
    ("_ZN8__main__9variant81B2v1", "variant8", False),
    ("sgemm_coalesce", "sgemm_coalesce", True),
    ("__main__::original[abi:v5](...)", "variant8", False),
])
def test_kernel_name_matching(profiled, name, ok):
    assert matches(profiled, name) is ok


def test_cuda_mean_runtime_errors():
    from torch.profiler import ProfilerActivity, profile

    with pytest.raises(TypeError, match="expected a torch.profiler.profile"):
        cuda_mean_runtime("not a profile", "variant8")
    with profile(activities=[ProfilerActivity.CPU]) as p:
        np.ones(10).sum()
    with pytest.raises(KeyError, match="no kernel named 'variant8' in the profile; kernels seen"):
        cuda_mean_runtime(p, "variant8")
