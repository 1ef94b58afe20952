"""Kernels of the project's notebooks, copied verbatim for tests/test_doctor.py (util.doctor).

Each kernel is the notebook's own source as committed at ``NOTEBOOKS_COMMIT``;
``test_fixture_kernels_match_the_notebooks`` checks that every copied function appears verbatim in the notebook
it cites at that commit (the ladder's factories have been reorganised since, to the same PTX).

- ``VARIANTS``: the original investigation's eight kernels, ``notebooks/matmul_variants.ipynb`` (same source in
  ``notebooks/check_types.ipynb``, whose cell 6 gives the signatures used here).
- ``STEPS``: kernel 2 factor by factor, ``notebooks/numba_vs_cuda_c.ipynb`` sections 0-8 (and M), with the
  signatures and jit options that notebook compiles them with.
- ``LADDER``: steps of ``notebooks/sgemm_ladder.ipynb`` (1, 2, 3, 4, 5, 5a, 6, 6b and 15 "lean interior"), with
  the signature its SASS section uses and each step's threads per block.
"""

import numpy as np
from numba import float32, int32, int64, uint32, uint64

from util import cuda
from util.intrinsics import add_nsw, at, ldg128, ldg128_at, mul_nsw, nonneg

NOTEBOOKS_COMMIT = "c6f81de"
A2, A1, AA = float32[:, ::1], float32[::1], float32[:, :]
I64 = int64

# ---- notebooks/matmul_variants.ipynb (cells 4-18) --------------------------------------------------------

BS = 32  # a global: numba freezes it into the kernel as a constant


@cuda.jit
def original(a, b, c, m, n, k, bs):
    x = cuda.blockIdx.x * bs + cuda.threadIdx.x // bs
    y = cuda.blockIdx.y * bs + cuda.threadIdx.x % bs
    if x >= m or y >= n:
        return
    tmp = 0
    for i in range(k):
        tmp += a[x, i] * b[i, y]
    c[x, y] = tmp


@cuda.jit
def variant2(a, b, c, m, n, k):
    x = cuda.blockIdx.x * BS + cuda.threadIdx.x // BS
    y = cuda.blockIdx.y * BS + cuda.threadIdx.x % BS
    if x >= m or y >= n:
        return
    tmp = 0
    for i in range(k):
        tmp += a[x, i] * b[i, y]
    c[x, y] = tmp


@cuda.jit
def variant3(a, b, c, m, n, k):
    x = cuda.blockIdx.x * BS + cuda.threadIdx.x // BS
    y = cuda.blockIdx.y * BS + cuda.threadIdx.x % BS
    if x < m and y < n:
        tmp = 0
        for i in range(k):
            tmp += a[x, i] * b[i, y]
        c[x, y] = tmp


@cuda.jit
def variant4(a, b, c, m, n, k):
    x = cuda.blockIdx.x * BS + cuda.threadIdx.x // BS
    y = cuda.blockIdx.y * BS + cuda.threadIdx.x % BS
    if x < m and y < n:
        tmp = 0.
        for i in range(k):
            tmp += a[x, i] * b[i, y]
        c[x, y] = tmp


@cuda.jit("void(float32[:, :], float32[:, :], float32[:, :], int64, int64, int64)")
def variant5(a, b, c, m, n, k):
    x = cuda.blockIdx.x * BS + cuda.threadIdx.x // BS
    y = cuda.blockIdx.y * BS + cuda.threadIdx.x % BS
    if x < m and y < n:
        tmp = 0.
        for i in range(k):
            tmp += a[x, i] * b[i, y]
        c[x, y] = tmp


@cuda.jit
def variant6(a, b, c, m: int, n: int, k: int):
    x: int = cuda.blockIdx.x * BS + cuda.threadIdx.x // BS
    y: int = cuda.blockIdx.y * BS + cuda.threadIdx.x % BS
    if x < m and y < n:
        tmp: float = 0.0
        for i in range(k):
            tmp += a[x, i] * b[i, y]
        c[x, y] = tmp


@cuda.jit
def variant7(a, b, c, m, n, k):
    x = cuda.blockIdx.x * BS + cuda.threadIdx.x // BS
    y = cuda.blockIdx.y * BS + cuda.threadIdx.x % BS
    if x < m and y < n:
        tmp = np.float32(0)
        for i in range(k):
            tmp += a[x, i] * b[i, y]
        c[x, y] = tmp


@cuda.jit
def variant8(a, b, c, m, n, k):
    x = cuda.blockIdx.x * BS + cuda.threadIdx.x // BS
    y = cuda.blockIdx.y * BS + cuda.threadIdx.x % BS
    if x < m and y < n:
        tmp = np.float32(0)
        for i in range(k):
            tmp += a[x * k + i] * b[i * n + y]
        c[x * n + y] = tmp


# name -> (kernel, signature as check_types.ipynb cell 6 gives it, float64 accumulator?)
VARIANTS = {
    "original": (original, (A2, A2, A2, I64, I64, I64, I64), True),
    "variant2": (variant2, (A2, A2, A2, I64, I64, I64), True),
    "variant3": (variant3, (A2, A2, A2, I64, I64, I64), True),
    "variant4": (variant4, (A2, A2, A2, I64, I64, I64), True),
    "variant5": (variant5, (AA, AA, AA, I64, I64, I64), True),
    "variant6": (variant6, (A2, A2, A2, I64, I64, I64), True),
    "variant7": (variant7, (A2, A2, A2, I64, I64, I64), False),
    "variant8": (variant8, (A1, A1, A1, I64, I64, I64), False),
}

# ---- notebooks/numba_vs_cuda_c.ipynb, sections 0-8 and M (cells 4-22) --------------------------------------

# cell 4
def range_f64(a, b, c, m, n, k):
    x = cuda.blockIdx.x * 32 + cuda.threadIdx.x // 32
    y = cuda.blockIdx.y * 32 + cuda.threadIdx.x % 32
    if x < m and y < n:
        tmp = 0                                  # int literal + float32 products -> float64
        for i in range(k):
            tmp += a[x, i] * b[i, y]
        c[x, y] = tmp


# cell 6
def range_loop(a, b, c, m, n, k):
    x = cuda.blockIdx.x * 32 + cuda.threadIdx.x // 32
    y = cuda.blockIdx.y * 32 + cuda.threadIdx.x % 32
    if x < m and y < n:
        tmp = np.float32(0)
        for i in range(k):
            tmp += a[x, i] * b[i, y]
        c[x, y] = tmp


# cell 12
def while_loop(a, b, c, m, n, k):
    x = cuda.blockIdx.x * 32 + cuda.threadIdx.x // 32
    y = cuda.blockIdx.y * 32 + cuda.threadIdx.x % 32
    if x < m and y < n:
        tmp = np.float32(0)
        i = 0
        while i < k:                              # <- a plain counter instead of range()
            tmp += a[x, i] * b[i, y]
            i += 1
        c[x, y] = tmp


# cell 14
def while_unsigned(a, b, c, m, n, k):
    x = uint64(cuda.blockIdx.x * 32 + cuda.threadIdx.x // 32)   # <- unsigned indices
    y = uint64(cuda.blockIdx.y * 32 + cuda.threadIdx.x % 32)
    if x < m and y < n:
        tmp = np.float32(0)
        i, kk = uint64(0), uint64(k)
        while i < kk:
            tmp += a[x, i] * b[i, y]
            i += uint64(1)
        c[x, y] = tmp


# cell 16
def flat_u32(a, b, c, m, n, k):
    x = uint32(cuda.blockIdx.x * 32 + cuda.threadIdx.x // 32)
    y = uint32(cuda.blockIdx.y * 32 + cuda.threadIdx.x % 32)
    if x < m and y < n:
        kk, nn = uint32(k), uint32(n)
        tmp = np.float32(0)
        i = uint32(0)
        while i < kk:
            tmp += a[x * kk + i] * b[i * nn + y]   # <- 1-D arrays, 32-bit index arithmetic
            i += uint32(1)
        c[x * nn + y] = tmp


# cell 18
def kernel2_numba(a, b, c, m, n, k):
    # thread -> C[x, y]; 32 consecutive threads share x and read 32 consecutive columns of B
    x = uint32(cuda.blockIdx.x * 32 + cuda.threadIdx.x // 32)
    y = uint32(cuda.blockIdx.y * 32 + cuda.threadIdx.x % 32)
    if x < m and y < n:
        tmp = np.float32(0)           # float32 accumulator (not 0: that is float64)
        ia = x * uint32(k)            # walks along row x of A ...
        end = ia + uint32(k)
        ib = y                        # ... and down column y of B
        nn = uint32(n)
        while ia < end:               # a while loop, unsigned indices: no range(), no wraparound
            tmp += a[ia] * b[ib]
            ia += uint32(1)
            ib += nn
        c[x * nn + y] = tmp


# cell 20
def kernel2_nsw(a, b, c, m, n, k):
    x = int32(cuda.blockIdx.x * 32 + cuda.threadIdx.x // 32)
    y = int32(cuda.blockIdx.y * 32 + cuda.threadIdx.x % 32)
    if x < m and y < n:
        tmp = np.float32(0)
        row = mul_nsw(x, k)
        i = int32(0)
        while i < k:     # CUDA C's  tmp += a[x * k + i] * b[i * n + y],  with C's promise of no overflow
            tmp += a[nonneg(add_nsw(row, i))] * b[nonneg(add_nsw(mul_nsw(i, n), y))]
            i = add_nsw(i, int32(1))
        c[x * n + y] = tmp


# cell 22
def kernel2_at_walk(a, b, c, m, n, k):
    x = int32(cuda.blockIdx.x * 32 + cuda.threadIdx.x // 32)
    y = int32(cuda.blockIdx.y * 32 + cuda.threadIdx.x % 32)
    if x < m and y < n:
        tmp = np.float32(0)
        ia = mul_nsw(x, k)             # walks along row x of A ...
        end = add_nsw(ia, k)
        ib = y                         # ... and down column y of B, promised not to wrap
        while ia < end:
            tmp += at(a, ia) * at(b, ib)   # <- p[i]: data pointer + index, no stride multiply
            ia = add_nsw(ia, int32(1))
            ib = add_nsw(ib, n)
        c[x * n + y] = tmp


SIG64 = (A2, A2, A2, int64, int64, int64)
SIG32 = (A2, A2, A2, int32, int32, int32)
SIG32_FLAT = (A1, A1, A1, int32, int32, int32)
LB = (1024, 2)

# (notebook section, kernel, signature, threads per block): the order of the notebook's waterfall
STEPS = [
    ("0 float64 accumulator", cuda.jit(range_f64), SIG64, 1024),
    ("1 float32, range(), int64 sizes", cuda.jit(range_loop), SIG64, 1024),
    ("2 + int32 sizes", cuda.jit(range_loop), SIG32, 1024),
    ("3 + launch_bounds(1024, 2)", cuda.jit(launch_bounds=LB)(range_loop), SIG32, 1024),
    ("4 + while loop", cuda.jit(launch_bounds=LB)(while_loop), SIG32, 1024),
    ("5 + unsigned indices", cuda.jit(launch_bounds=LB)(while_unsigned), SIG32, 1024),
    ("6 + flat uint32 indexing", cuda.jit(launch_bounds=LB)(flat_u32), SIG32_FLAT, 1024),
    ("7 + walking indices", cuda.jit(launch_bounds=LB)(kernel2_numba), SIG32_FLAT, 1024),
    ("8 + no-wrap int32 indices", cuda.jit(launch_bounds=LB)(kernel2_nsw), SIG32_FLAT, 1024),
    ("M walk + no-wrap + at()", cuda.jit(launch_bounds=LB)(kernel2_at_walk), SIG32_FLAT, 1024),
]

# ---- notebooks/sgemm_ladder.ipynb (cells 11-41) -----------------------------------------------------------

# cell 11
@cuda.jit
def naive(a, b, c, m, n, k):
    """One thread per element of C; threadIdx.x walks down a COLUMN of C (consecutive rows)."""
    row = uint32(cuda.blockIdx.x) * 32 + uint32(cuda.threadIdx.x)
    col = uint32(cuda.blockIdx.y) * 32 + uint32(cuda.threadIdx.y)
    if row < m and col < n:
        acc = float32(0.0)
        i = 0
        while i < k:
            acc += a[row, i] * b[i, col]
            i += 1
        c[row, col] = acc


# cell 13
@cuda.jit
def coalesced(a, b, c, m, n, k):
    """Same as naive but threadIdx.x walks along a ROW of C: a warp reads 32 consecutive floats of B."""
    row = uint32(cuda.blockIdx.y) * 32 + uint32(cuda.threadIdx.y)
    col = uint32(cuda.blockIdx.x) * 32 + uint32(cuda.threadIdx.x)
    if row < m and col < n:
        acc = float32(0.0)
        i = 0
        while i < k:
            acc += a[row, i] * b[i, col]
            i += 1
        c[row, col] = acc


# cell 15
def make_smem_tiles(BS=32):
    @cuda.jit
    def smem_tiles(a, b, c, m, n, k):
        """Same as coalesced but the block stages BS x BS tiles of A and B in shared memory."""
        As = cuda.shared.array((BS, BS), float32)
        Bs = cuda.shared.array((BS, BS), float32)
        ty = uint32(cuda.threadIdx.y)
        tx = uint32(cuda.threadIdx.x)
        row = uint32(cuda.blockIdx.y) * BS + ty
        col = uint32(cuda.blockIdx.x) * BS + tx
        acc = float32(0.0)
        k0 = 0
        while k0 < k:
            As[ty, tx] = a[row, k0 + tx] if row < m and k0 + tx < k else float32(0.0)
            Bs[ty, tx] = b[k0 + ty, col] if k0 + ty < k and col < n else float32(0.0)
            cuda.syncthreads()
            for kk in range(BS):
                acc += As[ty, kk] * Bs[kk, tx]
            cuda.syncthreads()
            k0 += BS
        if row < m and col < n:
            c[row, col] = acc
    return smem_tiles


# cell 17
def make_blocktile_1d(BM=64, BN=64, BK=8, TM=8):
    NT = BM * BN // TM  # threads per block
    assert BM * BK % NT == 0 and BK * BN % NT == 0, "each thread must load the same number of A and B elements"

    @cuda.jit
    def blocktile_1d(a, b, c, m, n, k):
        """Same as smem_tiles but each thread computes TM results of one column: one B load feeds TM FMAs."""
        As = cuda.shared.array((BM, BK), float32)
        Bs = cuda.shared.array((BK, BN), float32)
        t = uint32(cuda.threadIdx.x)
        tr = t // BN  # which TM rows of the tile
        tc = t % BN  # which column of the tile
        brow = uint32(cuda.blockIdx.y) * BM
        bcol = uint32(cuda.blockIdx.x) * BN
        acc = cuda.local.array(TM, float32)
        for i in range(TM):
            acc[i] = float32(0.0)
        k0 = 0
        while k0 < k:
            for l in range(BM * BK // NT):
                r = (t + l * NT) // BK
                q = (t + l * NT) % BK
                As[r, q] = a[brow + r, k0 + q] if brow + r < m and k0 + q < k else float32(0.0)
            for l in range(BK * BN // NT):
                r = (t + l * NT) // BN
                q = (t + l * NT) % BN
                Bs[r, q] = b[k0 + r, bcol + q] if k0 + r < k and bcol + q < n else float32(0.0)
            cuda.syncthreads()
            kk = 0
            while kk < BK:
                bv = Bs[kk, tc]
                for i in range(TM):
                    acc[i] += As[tr * TM + i, kk] * bv
                kk += 1
            cuda.syncthreads()
            k0 += BK
        col = bcol + tc
        for i in range(TM):
            row = brow + tr * TM + i
            if row < m and col < n:
                c[row, col] = acc[i]
    return blocktile_1d


# cell 19
def make_blocktile_2d(BM=128, BN=128, BK=8, TM=8, TN=8):
    NT = (BM // TM) * (BN // TN)
    assert BM * BK % NT == 0 and BK * BN % NT == 0, "each thread must load the same number of A and B elements"

    @cuda.jit
    def blocktile_2d(a, b, c, m, n, k):
        """Same as blocktile_1d but each thread computes a TM x TN block: an outer product of two
        register fragments, TM + TN shared loads for TM * TN FMAs."""
        As = cuda.shared.array((BM, BK), float32)
        Bs = cuda.shared.array((BK, BN), float32)
        t = uint32(cuda.threadIdx.x)
        tr = t // (BN // TN)
        tc = t % (BN // TN)
        brow = uint32(cuda.blockIdx.y) * BM
        bcol = uint32(cuda.blockIdx.x) * BN
        acc = cuda.local.array((TM, TN), float32)
        fa = cuda.local.array(TM, float32)
        fb = cuda.local.array(TN, float32)
        for i in range(TM):
            for j in range(TN):
                acc[i, j] = float32(0.0)
        k0 = 0
        while k0 < k:
            for l in range(BM * BK // NT):
                r = (t + l * NT) // BK
                q = (t + l * NT) % BK
                As[r, q] = a[brow + r, k0 + q] if brow + r < m and k0 + q < k else float32(0.0)
            for l in range(BK * BN // NT):
                r = (t + l * NT) // BN
                q = (t + l * NT) % BN
                Bs[r, q] = b[k0 + r, bcol + q] if k0 + r < k and bcol + q < n else float32(0.0)
            cuda.syncthreads()
            kk = 0
            while kk < BK:
                for i in range(TM):
                    fa[i] = As[tr * TM + i, kk]
                for j in range(TN):
                    fb[j] = Bs[kk, tc * TN + j]
                for i in range(TM):
                    for j in range(TN):
                        acc[i, j] += fa[i] * fb[j]
                kk += 1
            cuda.syncthreads()
            k0 += BK
        for i in range(TM):
            row = brow + tr * TM + i
            for j in range(TN):
                col = bcol + tc * TN + j
                if row < m and col < n:
                    c[row, col] = acc[i, j]
    return blocktile_2d


# cell 19
def make_blocktile_2d_range(BM=128, BN=128, BK=8, TM=8, TN=8):
    NT = (BM // TM) * (BN // TN)

    @cuda.jit
    def blocktile_2d_range(a, b, c, m, n, k):
        """blocktile_2d as a first draft would write it: signed thread indices and range() loops."""
        As = cuda.shared.array((BM, BK), float32)
        Bs = cuda.shared.array((BK, BN), float32)
        t = cuda.threadIdx.x
        tr = t // (BN // TN)
        tc = t % (BN // TN)
        brow = cuda.blockIdx.y * BM
        bcol = cuda.blockIdx.x * BN
        acc = cuda.local.array((TM, TN), float32)
        fa = cuda.local.array(TM, float32)
        fb = cuda.local.array(TN, float32)
        for i in range(TM):
            for j in range(TN):
                acc[i, j] = float32(0.0)
        for k0 in range(0, k, BK):
            for l in range(BM * BK // NT):
                r = (t + l * NT) // BK
                q = (t + l * NT) % BK
                As[r, q] = a[brow + r, k0 + q] if brow + r < m and k0 + q < k else float32(0.0)
            for l in range(BK * BN // NT):
                r = (t + l * NT) // BN
                q = (t + l * NT) % BN
                Bs[r, q] = b[k0 + r, bcol + q] if k0 + r < k and bcol + q < n else float32(0.0)
            cuda.syncthreads()
            for kk in range(BK):
                for i in range(TM):
                    fa[i] = As[tr * TM + i, kk]
                for j in range(TN):
                    fb[j] = Bs[kk, tc * TN + j]
                for i in range(TM):
                    for j in range(TN):
                        acc[i, j] += fa[i] * fb[j]
            cuda.syncthreads()
        for i in range(TM):
            row = brow + tr * TM + i
            for j in range(TN):
                col = bcol + tc * TN + j
                if row < m and col < n:
                    c[row, col] = acc[i, j]
    return blocktile_2d_range


# cell 21
@cuda.jit(device=True)
def row4(arr, r, q):
    """arr[r, q:q+4] as four floats, no bounds checks."""
    return arr[r, q], arr[r, q + 1], arr[r, q + 2], arr[r, q + 3]


# cell 21
@cuda.jit(device=True)
def load_row4(arr, r, q, rows, cols):
    """arr[r, q:q+4] as four floats, zeros outside the matrix."""
    if r < rows and q + 3 < cols:
        return arr[r, q], arr[r, q + 1], arr[r, q + 2], arr[r, q + 3]
    x0 = arr[r, q] if r < rows and q < cols else float32(0.0)
    x1 = arr[r, q + 1] if r < rows and q + 1 < cols else float32(0.0)
    x2 = arr[r, q + 2] if r < rows and q + 2 < cols else float32(0.0)
    x3 = arr[r, q + 3] if r < rows and q + 3 < cols else float32(0.0)
    return x0, x1, x2, x3


# cell 21
def make_vec4(BM=128, BN=128, BK=8, TM=8, TN=8, load4=load_row4):
    NT = (BM // TM) * (BN // TN)
    A4, B4 = BM * BK // 4 // NT, BK * BN // 4 // NT  # 4-float groups each thread loads per tile
    assert A4 * 4 * NT == BM * BK and B4 * 4 * NT == BK * BN and BK % 4 == 0 and BN % 4 == 0

    @cuda.jit
    def vec4(a, b, c, m, n, k):
        """Same as blocktile_2d but each thread loads 4 consecutive floats of a row of A and of B."""
        As = cuda.shared.array((BM, BK), float32)
        Bs = cuda.shared.array((BK, BN), float32)
        t = uint32(cuda.threadIdx.x)
        tr = t // (BN // TN)
        tc = t % (BN // TN)
        brow = uint32(cuda.blockIdx.y) * BM
        bcol = uint32(cuda.blockIdx.x) * BN
        acc = cuda.local.array((TM, TN), float32)
        fa = cuda.local.array(TM, float32)
        fb = cuda.local.array(TN, float32)
        for i in range(TM):
            for j in range(TN):
                acc[i, j] = float32(0.0)
        k0 = 0
        while k0 < k:
            for l in range(A4):
                r = (t + l * NT) // (BK // 4)
                q = (t + l * NT) % (BK // 4) * 4
                As[r, q], As[r, q + 1], As[r, q + 2], As[r, q + 3] = load4(a, brow + r, k0 + q, m, k)
            for l in range(B4):
                r = (t + l * NT) // (BN // 4)
                q = (t + l * NT) % (BN // 4) * 4
                Bs[r, q], Bs[r, q + 1], Bs[r, q + 2], Bs[r, q + 3] = load4(b, k0 + r, bcol + q, k, n)
            cuda.syncthreads()
            kk = 0
            while kk < BK:
                for i in range(TM):
                    fa[i] = As[tr * TM + i, kk]
                for j in range(TN):
                    fb[j] = Bs[kk, tc * TN + j]
                for i in range(TM):
                    for j in range(TN):
                        acc[i, j] += fa[i] * fb[j]
                kk += 1
            cuda.syncthreads()
            k0 += BK
        for i in range(TM):
            row = brow + tr * TM + i
            for j in range(TN):
                col = bcol + tc * TN + j
                if row < m and col < n:
                    c[row, col] = acc[i, j]
    return vec4


# cell 22
@cuda.jit(device=True)
def load_row4_ldg128(arr, r, q, rows, cols):
    """load_row4 with one 16-byte load when the 4 floats are inside and aligned: rows of a 16-byte aligned
    array (cuda.device_array's are) start 16-byte aligned when cols % 4 == 0."""
    if r < rows and q + 3 < cols and cols % 4 == 0:
        return ldg128(arr, r, q)
    return load_row4(arr, r, q, rows, cols)


# cell 41
def make_lean(BM=128, BN=128, BK=8, WM=64, WN=32, WMI=2, WNI=2, TM=4, TN=4, PAD=4, min_blocks=2):
    WARPS_N = BN // WN
    NT = 32 * (BM // WM) * WARPS_N
    LN = WN // (WNI * TN)
    SM, SN = WM // WMI, WN // WNI
    FM, FN = WMI * TM, WNI * TN
    BMP = BM + PAD
    A4, B4 = BM * BK // 4 // NT, BK * BN // 4 // NT
    assert (WM // (WMI * TM)) * LN == 32, "a warp's 32 lanes must tile its WM x WN sub-tile exactly"
    assert A4 * 4 * NT == BM * BK and B4 * 4 * NT == BK * BN and BK % 4 == 0 and BN % 4 == 0
    assert BK == 8, "ktile writes out 8 k-steps"

    @cuda.jit(device=True)
    def kstep(acc, fa, fb, AsT, Bs, buf, kk, am, bn):
        """One k-step: the fragments of row kk of both tiles, then FM x FN FMAs."""
        for mi in range(WMI):
            for i in range(TM):
                fa[mi * TM + i] = AsT[buf, kk, am + mi * SM + i]
        for ni in range(WNI):
            for j in range(TN):
                fb[ni * TN + j] = Bs[buf, kk, bn + ni * SN + j]
        for i in range(FM):
            for j in range(FN):
                acc[i, j] += fa[i] * fb[j]

    @cuda.jit(device=True)
    def ktile(acc, fa, fb, AsT, Bs, buf, am, bn):
        """All 8 k-steps of the tile in buffer buf, written out: no loop, constant shared offsets."""
        kstep(acc, fa, fb, AsT, Bs, buf, 0, am, bn)
        kstep(acc, fa, fb, AsT, Bs, buf, 1, am, bn)
        kstep(acc, fa, fb, AsT, Bs, buf, 2, am, bn)
        kstep(acc, fa, fb, AsT, Bs, buf, 3, am, bn)
        kstep(acc, fa, fb, AsT, Bs, buf, 4, am, bn)
        kstep(acc, fa, fb, AsT, Bs, buf, 5, am, bn)
        kstep(acc, fa, fb, AsT, Bs, buf, 6, am, bn)
        kstep(acc, fa, fb, AsT, Bs, buf, 7, am, bn)

    @cuda.jit(device=True)
    def stage(AsT, Bs, nxt, ra, rb, t):
        """The tile held in registers -> shared buffer nxt (A transposed)."""
        for l in range(A4):
            r = (t + l * NT) // (BK // 4)
            q = (t + l * NT) % (BK // 4) * 4
            for x in range(4):
                AsT[nxt, q + x, r] = ra[l, x]
        for l in range(B4):
            r = (t + l * NT) // (BN // 4)
            q = (t + l * NT) % (BN // 4) * 4
            for x in range(4):
                Bs[nxt, r, q + x] = rb[l, x]

    @cuda.jit(device=True)
    def fetch(a, b, ra, rb, pa, pb, bstep):
        """The next tile -> registers, 16 bytes a load from walking 32-bit offsets (C's float4 pointers)."""
        for l in range(A4):
            ra[l, 0], ra[l, 1], ra[l, 2], ra[l, 3] = ldg128_at(a, pa[l])
            pa[l] = add_nsw(pa[l], int32(BK))
        for l in range(B4):
            rb[l, 0], rb[l, 1], rb[l, 2], rb[l, 3] = ldg128_at(b, pb[l])
            pb[l] = add_nsw(pb[l], bstep)

    def lean(a, b, c, m, n, k):
        """Same as unrolled but inner blocks take a loop of their own: no checks, global loads from 32-bit
        offsets that walk (add_nsw) through ldg128_at, all 8 k-steps written out, and two tiles a pass so that
        both buffer indices are constants; edge blocks and the last tiles take unrolled's checked loop."""
        AsT = cuda.shared.array((2, BK, BMP), float32)
        Bs = cuda.shared.array((2, BK, BN), float32)
        ra = cuda.local.array((A4, 4), float32)
        rb = cuda.local.array((B4, 4), float32)
        pa = cuda.local.array(A4, int32)  # flat offsets of this thread's 4-float pieces of the next tile
        pb = cuda.local.array(B4, int32)
        t = uint32(cuda.threadIdx.x)
        warp = t // 32
        lane = t % 32
        am = (warp // WARPS_N) * WM + (lane // LN) * TM
        bn = (warp % WARPS_N) * WN + (lane % LN) * TN
        brow = uint32(cuda.blockIdx.y) * BM
        bcol = uint32(cuda.blockIdx.x) * BN
        acc = cuda.local.array((FM, FN), float32)
        fa = cuda.local.array(FM, float32)
        fb = cuda.local.array(FN, float32)
        for i in range(FM):
            for j in range(FN):
                acc[i, j] = float32(0.0)
        for l in range(A4):  # tile 0 -> buffer 0
            r = (t + l * NT) // (BK // 4)
            q = (t + l * NT) % (BK // 4) * 4
            AsT[0, q, r], AsT[0, q + 1, r], AsT[0, q + 2, r], AsT[0, q + 3, r] = load_row4_ldg128(a, brow + r, q, m, k)
        for l in range(B4):
            r = (t + l * NT) // (BN // 4)
            q = (t + l * NT) % (BN // 4) * 4
            Bs[0, r, q], Bs[0, r, q + 1], Bs[0, r, q + 2], Bs[0, r, q + 3] = load_row4_ldg128(b, r, bcol + q, k, n)
        cuda.syncthreads()
        buf = uint32(0)
        k0 = 0
        # a whole block tile, whole BK tiles (at least one), aligned rows, and offsets that fit in int32
        if (brow + BM <= m and bcol + BN <= n and k >= BK and k % BK == 0 and n % 4 == 0
                and m * k < 2**31 and k * n < 2**31):
            for l in range(A4):
                pa[l] = int32((brow + (t + l * NT) // (BK // 4)) * k + BK + (t + l * NT) % (BK // 4) * 4)
            for l in range(B4):
                pb[l] = int32((BK + (t + l * NT) // (BN // 4)) * n + bcol + (t + l * NT) % (BN // 4) * 4)
            bstep = int32(BK * n)
            pairs = int32((k // BK - 1) // 2)  # pairs of tiles whose next tile is whole
            kt = int32(0)
            while kt < pairs:  # two tiles a pass: the buffers are constants, so are all shared offsets
                fetch(a, b, ra, rb, pa, pb, bstep)
                ktile(acc, fa, fb, AsT, Bs, 0, am, bn)
                stage(AsT, Bs, 1, ra, rb, t)
                cuda.syncthreads()
                fetch(a, b, ra, rb, pa, pb, bstep)
                ktile(acc, fa, fb, AsT, Bs, 1, am, bn)
                stage(AsT, Bs, 0, ra, rb, t)
                cuda.syncthreads()
                kt = add_nsw(kt, int32(1))
            k0 = 2 * BK * pairs
        while k0 < k:  # unrolled's loop, with checks: edge blocks, and the last tile or two of inner ones
            more = k0 + BK < k
            if more:
                for l in range(A4):
                    r = (t + l * NT) // (BK // 4)
                    q = (t + l * NT) % (BK // 4) * 4
                    ra[l, 0], ra[l, 1], ra[l, 2], ra[l, 3] = load_row4_ldg128(a, brow + r, k0 + BK + q, m, k)
                for l in range(B4):
                    r = (t + l * NT) // (BN // 4)
                    q = (t + l * NT) % (BN // 4) * 4
                    rb[l, 0], rb[l, 1], rb[l, 2], rb[l, 3] = load_row4_ldg128(b, k0 + BK + r, bcol + q, k, n)
            ktile(acc, fa, fb, AsT, Bs, buf, am, bn)
            if more:
                stage(AsT, Bs, buf ^ uint32(1), ra, rb, t)
            cuda.syncthreads()
            buf ^= uint32(1)
            k0 += BK
        for mi in range(WMI):
            for i in range(TM):
                row = brow + am + mi * SM + i
                for ni in range(WNI):
                    for j in range(TN):
                        col = bcol + bn + ni * SN + j
                        if row < m and col < n:
                            c[row, col] = acc[mi * TM + i, ni * TN + j]
    return cuda.jit(launch_bounds=(NT, min_blocks) if min_blocks else None)(lean)  # <= 128 registers at 2


WARP = dict(BM=128, BN=128, BK=8, WM=64, WN=32, WMI=2, WNI=2, TM=4, TN=4)  # cell 28
LADDER_SIG = (A2, A2, A2, int64, int64, int64)  # cell 52: what the Registry passes

# notebook step -> (kernel, threads per block)
LADDER = {
    "1 naive": (naive, 1024),
    "2 coalesced": (coalesced, 1024),
    "3 smem tiles": (make_smem_tiles(32), 1024),
    "4 blocktile 1-D": (make_blocktile_1d(64, 64, 8, 8), 512),
    "5 blocktile 2-D": (make_blocktile_2d(), 256),
    "5a blocktile 2-D, range()": (make_blocktile_2d_range(), 256),
    "6 vec4 (4 scalar loads)": (make_vec4(), 256),
    "6b vec4 + ldg128": (make_vec4(load4=load_row4_ldg128), 256),
    "15 lean interior": (make_lean(**WARP), 256),
}


# ---- small kernels for what the notebooks do not show (written for tests/test_doctor.py) --------------------

@cuda.jit
def scale_f64_literal(x, out):
    """Loop-free: `x[i] * 0.1` with a Python float literal runs in float64 (0.1 has no exact float32, so LLVM
    cannot fold the multiply back to float32)."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = x[i] * 0.1


@cuda.jit
def scale_f32(x, out):
    """The same, float32 throughout: nothing to report."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = x[i] * float32(0.1)


@cuda.jit
def local_array_dynamic(x, out, n):
    """A local array indexed by a run-time value: it lives in local memory (STL/LDL)."""
    i = uint32(cuda.grid(1))
    buf = cuda.local.array(64, float32)
    j = uint32(0)
    while j < uint32(64):
        buf[j] = x[i * uint32(64) + j]
        j += uint32(1)
    s = float32(0)
    j = uint32(0)
    while j < uint32(n):
        s += buf[(j * uint32(7)) % uint32(64)]
        j += uint32(1)
    out[i] = s


def _normalize(x, out, n):
    """A division in a loop: IEEE div.rn.f32 without fastmath."""
    i = uint32(cuda.grid(1))
    s = float32(0)
    j = uint32(0)
    while j < uint32(n):
        s += x[j] / x[i]
        j += uint32(1)
    out[i] = s


normalize = cuda.jit(_normalize)
normalize_fast = cuda.jit(fastmath=True)(_normalize)


@cuda.jit
def docs_matmul(A, B, C):
    """numba's documentation matmul: i = cuda.grid(2)'s x indexes the ROWS of A and C (uncoalesced)."""
    i, j = cuda.grid(2)
    if i < C.shape[0] and j < C.shape[1]:
        tmp = float32(0.0)
        for k in range(A.shape[1]):
            tmp += A[i, k] * B[k, j]
        C[i, j] = tmp


@cuda.jit
def histogram_atomic(x, bins, out):
    """A grid-stride loop with an atomic per element."""
    start = uint32(cuda.grid(1))
    stride = uint32(cuda.gridsize(1))
    i = start
    while i < uint32(x.shape[0]):
        cuda.atomic.add(out, uint32(x[i] * float32(bins)) % uint32(bins), int32(1))
        i += stride


@cuda.jit
def grid_sync_steps(buf, steps):
    """Cooperative groups' grid sync (ptxas can only assemble it as relocatable code)."""
    i = uint32(cuda.grid(1))
    g = cuda.cg.this_grid()
    s = uint32(0)
    while s < uint32(steps):
        buf[i] += float32(1)
        g.sync()
        s += uint32(1)


@cuda.jit(device=True)
def twice(v):
    return v * float32(2)


@cuda.jit
def calls_twice(x):
    i = cuda.grid(1)
    x[i] = twice(x[i])


@cuda.jit
def does_not_type(x):
    x[0] = undefined_name  # noqa: F821 - numba's typing fails: the doctor must say so, without a traceback


def not_a_kernel(x):
    x[0] = 1
