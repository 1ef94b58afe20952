"""SGEMM kernel 2 (global-memory coalescing) as the original notebook wrote it, and as CUDA C writes it: the
reference kernels that the tests, ``scripts/check_timer.py`` and the doctor's checks share.

Every kernel computes C = A @ B with one thread per element of C: thread t of a block takes row
``blockIdx.x * bs + t // bs`` and column ``blockIdx.y * bs + t % bs``, so consecutive threads read consecutive
columns of B. Launch with ``nthreads = bs * bs`` and ``grid(bs)``. The notebooks define their variants inline;
these are the original notebook's first form and its best two, kept once for the code outside the notebooks,
and ``make_kernel2``, which builds kernel 2 with any combination of the changes that take numba's version to
CUDA C's speed (numba_vs_cuda_c.ipynb's factorial design; its steps are corners of it), and their C side.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
from numba import int32, int64, uint32, uint64

from .backend import cuda
from .intrinsics import add_nsw, mul_nsw, nonneg
from .memory import cdiv

F64 = "float64 accumulator"


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


# ---- the factorial family: every combination of the changes that take numba's kernel 2 to CUDA C's ----------

FACTORS = ("int32 sizes", "launch_bounds", "while loop", "unsigned indices", "flat 32-bit indexing",
           "walking indices", "no-wrap promise")


def make_kernel2(on: Iterable[str] = ()):
    """Kernel 2 (blocks of 32 x 32 threads, ``grid(32)``) with the factors named in ``on`` applied: any subset
    of ``FACTORS``, plus ``"float64 accumulator"`` (``tmp = 0``, the original notebook's first finding). The
    flags are constants of the closure: numba prunes the branches they decide before typing, so every
    combination compiles to its own plain kernel (the factorial design of numba_vs_cuda_c.ipynb)."""
    on = frozenset(on)
    unknown = on - set(FACTORS) - {F64}
    if unknown:
        raise ValueError(f"unknown factor(s) {sorted(unknown)}; choose from {FACTORS} and {F64!r}")
    WHILE, FLAT, WALK = "while loop" in on, "flat 32-bit indexing" in on, "walking indices" in on
    FLOAT64 = F64 in on
    PROMISE = "no-wrap promise" in on                       # signed indices promised not to wrap (util.intrinsics)
    UNSIGNED = "unsigned indices" in on and not PROMISE     # the promise is made on signed indices: it wins

    def kernel2(a, b, c, m, n, k):
        if PROMISE and FLAT:                # index type: int32 + promise
            x = int32(cuda.blockIdx.x * 32 + cuda.threadIdx.x // 32)
            y = int32(cuda.blockIdx.y * 32 + cuda.threadIdx.x % 32)
            kk, nn, i, one = int32(k), int32(n), int32(0), int32(1)
        elif PROMISE:                       # int64 + promise
            x = int64(cuda.blockIdx.x * 32 + cuda.threadIdx.x // 32)
            y = int64(cuda.blockIdx.y * 32 + cuda.threadIdx.x % 32)
            kk, nn, i, one = int64(k), int64(n), int64(0), int64(1)
        elif UNSIGNED and FLAT:             # uint32
            x = uint32(cuda.blockIdx.x * 32 + cuda.threadIdx.x // 32)
            y = uint32(cuda.blockIdx.y * 32 + cuda.threadIdx.x % 32)
            kk, nn, i, one = uint32(k), uint32(n), uint32(0), uint32(1)
        elif UNSIGNED:                      # uint64
            x = uint64(cuda.blockIdx.x * 32 + cuda.threadIdx.x // 32)
            y = uint64(cuda.blockIdx.y * 32 + cuda.threadIdx.x % 32)
            kk, nn, i, one = uint64(k), uint64(n), uint64(0), uint64(1)
        elif FLAT:                          # int32 variables (numba widens their arithmetic to int64)
            x = int32(cuda.blockIdx.x * 32 + cuda.threadIdx.x // 32)
            y = int32(cuda.blockIdx.y * 32 + cuda.threadIdx.x % 32)
            kk, nn, i, one = k, n, 0, 1
        else:                               # numba's default: signed, int64
            x = cuda.blockIdx.x * 32 + cuda.threadIdx.x // 32
            y = cuda.blockIdx.y * 32 + cuda.threadIdx.x % 32
            kk, nn, i, one = k, n, 0, 1
        if x < m and y < n:
            if FLOAT64:
                tmp = 0                     # an int, then float64 once float32 products are added to it
            else:
                tmp = np.float32(0)
            if WALK:                        # two indices walk: along row x of A, down column y of B
                ia = mul_nsw(x, kk) if PROMISE else x * kk
                end = add_nsw(ia, kk) if PROMISE else ia + kk
                ib = y
                if WHILE and PROMISE:
                    while ia < end:
                        tmp += a[nonneg(ia)] * b[nonneg(ib)]
                        ia, ib = add_nsw(ia, one), add_nsw(ib, nn)
                elif WHILE:
                    while ia < end:
                        tmp += a[ia] * b[ib]
                        ia, ib = ia + one, ib + nn
                elif PROMISE:
                    for _ in range(k):
                        tmp += a[nonneg(ia)] * b[nonneg(ib)]
                        ia, ib = add_nsw(ia, one), add_nsw(ib, nn)
                else:
                    for _ in range(k):
                        tmp += a[ia] * b[ib]
                        ia, ib = ia + one, ib + nn
            elif FLAT:                      # 1-D arrays, C's index expressions
                row = mul_nsw(x, kk) if PROMISE else x * kk
                if WHILE and PROMISE:
                    while i < kk:
                        tmp += a[nonneg(add_nsw(row, i))] * b[nonneg(add_nsw(mul_nsw(i, nn), y))]
                        i = add_nsw(i, one)
                elif WHILE:
                    while i < kk:
                        tmp += a[x * kk + i] * b[i * nn + y]
                        i += one
                elif PROMISE:
                    for i in range(kk):
                        tmp += a[nonneg(add_nsw(row, i))] * b[nonneg(add_nsw(mul_nsw(i, nn), y))]
                else:
                    for i in range(kk):
                        tmp += a[x * kk + i] * b[i * nn + y]
            else:                           # 2-D arrays
                if WHILE and PROMISE:
                    while i < kk:
                        tmp += a[nonneg(x), nonneg(i)] * b[nonneg(i), nonneg(y)]
                        i = add_nsw(i, one)
                elif WHILE:
                    while i < kk:
                        tmp += a[x, i] * b[i, y]
                        i += one
                elif PROMISE:
                    for i in range(kk):
                        tmp += a[nonneg(x), nonneg(i)] * b[nonneg(i), nonneg(y)]
                else:
                    for i in range(kk):
                        tmp += a[x, i] * b[i, y]
            if ONE_D:
                c[x * nn + y] = tmp
            else:
                c[x, y] = tmp

    ONE_D = FLAT or WALK
    # compiled for its signature now: a launch's Python ints then arrive as int32 with "int32 sizes"
    options = {"launch_bounds": (1024, 2)} if "launch_bounds" in on else {}
    return cuda.jit(kernel2_sig(on), **options)(kernel2)


def kernel2_sig(on: Iterable[str] = ()) -> tuple:
    """The argument types of ``make_kernel2(on)`` as a Registry launches it: C-contiguous float32 arrays (1-D
    with flat or walking indices), and m, n, k as int32 ("int32 sizes") or int64 (Python ints)."""
    from numba import float32

    on = frozenset(on)
    array = float32[::1] if on & {"flat 32-bit indexing", "walking indices"} else float32[:, ::1]
    size = int32 if "int32 sizes" in on else int64
    return (array,) * 3 + (size,) * 3


def kernel2_c(index_type: str = "int", pragma: str = "") -> str:
    """The worklog's kernel 2 in CUDA C with its indices of ``index_type`` and an optional ``#pragma`` on the
    loop: the C side of each factor (``"unsigned"`` wraps like numba's unsigned indices, ``"long long"`` is
    64-bit, ``"#pragma unroll 1"`` keeps the loop rolled). Kernel ``kernel2``, blocks of 32 x 32 threads."""
    return f'''
extern "C" __global__ void kernel2(const float* a, const float* b, float* c, int m_, int n_, int k_) {{
    typedef {index_type} T;
    const T m = m_, n = n_, k = k_;
    const T x = blockIdx.x * 32 + threadIdx.x / 32;
    const T y = blockIdx.y * 32 + threadIdx.x % 32;
    if (x < m && y < n) {{
        float tmp = 0.0f;
        {pragma}
        for (T i = 0; i < k; ++i)
            tmp += a[x * k + i] * b[i * n + y];
        c[x * n + y] = tmp;
    }}
}}'''
