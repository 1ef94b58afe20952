"""util.mlir: the shipping path to a compiler child process, checked with numba-cuda (numba-cuda-mlir needs a GPU)."""

from __future__ import annotations

import util  # noqa: I001  first: without a GPU it switches numba to the simulator before numba is imported

import numpy as np
import pytest
from numba import float32, int32, uint32

from util import cdiv, cuda
from util.intrinsics import add_nsw, at
from util.bench import Registry
from util.mlir import mlir_unavailable, run_mlir


def walk(a, b, c, m, n, k):
    x = uint32(cuda.blockIdx.x * 8 + cuda.threadIdx.x // 8)
    y = uint32(cuda.blockIdx.y * 8 + cuda.threadIdx.x % 8)
    if x < m and y < n:
        tmp = np.float32(0)
        i = uint32(0)
        while i < uint32(k):
            tmp += a[x, i] * b[i, y]
            i += uint32(1)
        c[x, y] = tmp


def off_by_one(a, b, c, m, n, k):
    x = uint32(cuda.blockIdx.x * 8 + cuda.threadIdx.x // 8)
    y = uint32(cuda.blockIdx.y * 8 + cuda.threadIdx.x % 8)
    if x < m and y < n:
        tmp = np.float32(0)
        i = uint32(1)  # skips the first term: must come back WRONG
        while i < uint32(k):
            tmp += a[x, i] * b[i, y]
            i += uint32(1)
        c[x, y] = tmp


def walk_at(a, b, c, m, n, k):
    """util.intrinsics in a shipped kernel: the child imports them under its own compiler."""
    x = int32(cuda.blockIdx.x * 8 + cuda.threadIdx.x // 8)
    y = int32(cuda.blockIdx.y * 8 + cuda.threadIdx.x % 8)
    if x < m and y < n:
        tmp = np.float32(0)
        ia, ib, end = x * k, y, x * k + k
        while ia < end:
            tmp += at(a, int32(ia)) * at(b, int32(ib))
            ia = add_nsw(int32(ia), int32(1))
            ib = add_nsw(int32(ib), n)
        c[x * n + y] = tmp


A2 = float32[:, ::1]
A1 = float32[::1]
SIG = (A2, A2, A2, int32, int32, int32)


def test_unavailable_says_why_without_a_gpu() -> None:
    why = mlir_unavailable()
    if util.SIMULATED:
        assert why is not None and "driver" in why


@pytest.mark.skipif(not util.SIMULATED, reason="the numba-cuda child runs in the simulator on a CPU machine")
def test_kernels_shipped_to_a_child_are_verified_and_timed() -> None:
    reg, launch = Registry(), dict(nthreads=64, nblocks_fn=lambda mn, nt: cdiv(mn, (8, 8)))
    reg.numba("walk", cuda.jit(walk), **launch, sig=SIG, jit_options={"launch_bounds": (64, 2)})
    reg.numba("off by one", cuda.jit(off_by_one), **launch, sig=SIG)
    reg.numba("walk at", cuda.jit(walk_at), **launch, sig=(A1, A1, A1, int32, int32, int32), flat=True)
    run = run_mlir(list(reg), **launch, m=20, n=12, k=9, runs=1, compiler="numba-cuda")
    assert run.device == "simulator" and run.size == (20, 12, 9)
    assert run["walk"].correct and run["walk"].error is None and run["walk"].median > 0
    assert not run["off by one"].correct and "WRONG" in run["off by one"].check.upper()
    assert run["walk at"].correct and run["walk at"].error is None
