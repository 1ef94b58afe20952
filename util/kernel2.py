"""SGEMM kernel 2 (global-memory coalescing) as the original notebook wrote it, and as CUDA C writes it: the
reference kernels that the tests, ``scripts/check_timer.py`` and the doctor's checks share.

Every kernel computes C = A @ B with one thread per element of C: thread t of a block takes row
``blockIdx.x * bs + t // bs`` and column ``blockIdx.y * bs + t % bs``, so consecutive threads read consecutive
columns of B. Launch with ``nthreads = bs * bs`` and ``grid(bs)``. The notebooks define their variants inline;
these are the original notebook's first form and its best two, kept once for the code outside the notebooks.
"""

from __future__ import annotations

import numpy as np

from .backend import cuda
from .memory import cdiv


def grid(bs: int):
    """``nblocks_fn`` for blocks of ``bs * bs`` threads: one block per bs x bs tile of C."""
    return lambda outp_shape, nthreads: cdiv(outp_shape, (bs, bs))


@cuda.jit
def original(a, b, c, m, n, k, bs):
    """The original notebook's first form: ``tmp = 0`` makes the accumulator float64."""
    x = cuda.blockIdx.x * bs + cuda.threadIdx.x // bs
    y = cuda.blockIdx.y * bs + cuda.threadIdx.x % bs
    if x >= m or y >= n:
        return
    tmp = 0
    for i in range(k):
        tmp += a[x, i] * b[i, y]
    c[x, y] = tmp


@cuda.jit
def variant7(a, b, c, m, n, k, bs):
    """The original notebook's best: a float32 accumulator, 2-D arrays, ``range()``."""
    x = cuda.blockIdx.x * bs + cuda.threadIdx.x // bs
    y = cuda.blockIdx.y * bs + cuda.threadIdx.x % bs
    if x < m and y < n:
        tmp = np.float32(0)
        for i in range(k):
            tmp += a[x, i] * b[i, y]
        c[x, y] = tmp


@cuda.jit
def variant8(a, b, c, m, n, k, bs):
    """Same as variant7 but 1-D row-major arrays indexed by hand (launch with ``flat=True``)."""
    x = cuda.blockIdx.x * bs + cuda.threadIdx.x // bs
    y = cuda.blockIdx.y * bs + cuda.threadIdx.x % bs
    if x < m and y < n:
        tmp = np.float32(0)
        for i in range(k):
            tmp += a[x * k + i] * b[i * n + y]
        c[x * n + y] = tmp


# The worklog's kernel 2 in CUDA C, in the numba convention's arguments (blocks of 32 x 32 threads).
KERNEL2_C = r"""
extern "C" __global__ void sgemm_coalesce(const float* A, const float* B, float* C, int M, int N, int K) {
    const int x = blockIdx.x * 32 + threadIdx.x / 32;
    const int y = blockIdx.y * 32 + threadIdx.x % 32;
    if (x < M && y < N) {
        float tmp = 0.f;
        for (int i = 0; i < K; ++i) tmp += A[x * K + i] * B[i * N + y];
        C[x * N + y] = tmp;
    }
}
"""
KERNEL2_C_NAME = "sgemm_coalesce"
