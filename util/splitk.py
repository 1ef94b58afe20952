"""Split-K's slices added by the kernel that wrote them: the last block of an output tile to finish adds them.

With K split into s slices, s blocks compute partial sums of the same output tile, each into its own slice of a
workspace. ``util.sgemm``'s ``splitk_sum`` adds the slices in a second kernel; this is the other way, as CUTLASS's
serial split-K and stream-K fix-ups do it: each block, after storing its slice, fences its stores and counts
itself in the tile's counter (``flags``, one int32 an output tile, zero between calls: one thread a block, behind
the block's barrier and a fence, as CUTLASS's semaphore releases); the block that counts s
adds the tile's s slices in slice order (0, 1, ..., s - 1: the order ``splitk_sum`` adds them, so the sums are the
same bits), writes C and sets the counter back to zero. No second launch, and the tile's slices are read back
while they are still in L2; but the adding is done by one block a tile, so it pays where a tile has many slices to
read (``util.sgemm.plan`` chooses). Its C twin is util/splitk.cuh."""

from __future__ import annotations

from functools import lru_cache

from .backend import cuda


MAX_ELEMENTS = 4  # the most of a tile's elements a thread adds (with 8 and 16, rows/16's and cols/16's twins spilled)


def fuses(BM: int, BN: int, NT: int) -> bool:
    """Whether a block of NT threads with a BM x BN output tile may add its slices itself: at most MAX_ELEMENTS of
    the tile's elements a thread (more, and the adding code's registers made the kernels spill, sm_90)."""
    return BM * BN <= MAX_ELEMENTS * NT


def elements(BM: int, BN: int, NT: int) -> int:
    """E, the tile's elements a thread adds: BM * BN / NT (one, on the first BM * BN threads, where the block has
    more threads than the tile has elements)."""
    if BM * BN % NT and BM * BN > NT:
        raise ValueError(f"a {BM} x {BN} tile does not split evenly over {NT} threads")
    return max(1, BM * BN // NT)


def slices_a_round(BM: int, BN: int, NT: int) -> int:
    """How many slices' loads the adding thread issues at once (``add_slices``): E elements a thread (``elements``),
    up to 16 loads in flight (at least one slice; with 32, numba's rows/2 and cols/8 spilled, sm_90)."""
    return max(1, 16 // elements(BM, BN, NT))


@lru_cache(maxsize=None)
def add_slices(BM: int, BN: int, NT: int):
    """The device function ``add_slices(ws, c, flags, m, n, brow, bcol)`` for a block of ``NT`` threads whose
    output tile is C's rows brow .. brow + BM and columns bcol .. bcol + BN (clipped to m x n): every thread of the
    block calls it after its slice's stores to ``ws`` (slice blockIdx.z of m x n); in the last block of the tile to
    call it, each thread adds E = BM * BN / NT elements of the tile over all slices (where the tile has fewer
    elements than the block threads, the first BM * BN threads one each: ``elements``), the loads of
    ``slices_a_round`` slices at once (past the last slice, -0.0, which adds nothing: the sums are those of one
    slice after another)."""
    from numba import float32, int32, int64, uint32

    from .intrinsics import add_nsw, at_cg, mul_nsw, nonneg

    E, TILE = elements(BM, BN, NT), BM * BN
    ALL = TILE >= NT  # every thread has elements (else only the first TILE threads)
    U = slices_a_round(BM, BN, NT)

    @cuda.jit(device=True)
    def add(ws, c, flags, m, n, brow, bcol):
        last = cuda.shared.array(1, int32)
        t = uint32(cuda.threadIdx.x)
        nz = int32(cuda.gridDim.z)
        cuda.syncthreads()  # the block's stores of its slice, ordered before thread 0's fence (it is cumulative)
        if t == uint32(0):
            cuda.threadfence()  # ... and so visible to the whole GPU before the block is counted
            tile = int32(cuda.blockIdx.y) * int32(cuda.gridDim.x) + int32(cuda.blockIdx.x)
            done = cuda.atomic.add(flags, tile, int32(1))
            last[0] = int32(1) if done == nz - int32(1) else int32(0)
            if done == nz - int32(1):
                flags[tile] = int32(0)  # ready for the next call
                cuda.threadfence()  # the other blocks' slices, seen after their count (the block's loads follow)
        cuda.syncthreads()
        if last[0] == int32(0):
            return
        mm, nn = int64(m), int64(n)
        mn = mul_nsw(mm, nn)
        rows = min(mm - int64(brow), int64(BM))
        cols = min(nn - int64(bcol), int64(BN))
        first = add_nsw(mul_nsw(int64(brow), nn), int64(bcol))  # C's offset of the tile's corner
        acc = cuda.local.array(E, float32)
        for i in range(E):
            acc[i] = float32(-0.0)
        v = cuda.local.array((U, E), float32)
        z = int32(0)
        base = first  # the tile's corner in slice z
        while z < nz:
            left = int32(nz - z)  # slices from z on, wrapped: numba types int32 - int32 as int64 (64-bit compares)
            for u in range(U):  # U x E independent loads (unrolled): all in flight at once
                for i in range(E):
                    e = t + uint32(i * NT)
                    r, q = int64(e // uint32(BN)), int64(e % uint32(BN))
                    v[u, i] = float32(-0.0)
                    if int32(u) < left and (ALL or e < uint32(TILE)) and r < rows and q < cols:
                        v[u, i] = at_cg(ws, add_nsw(add_nsw(base, mul_nsw(int64(u), mn)), add_nsw(mul_nsw(r, nn), q)))
            for u in range(U):
                for i in range(E):
                    acc[i] += v[u, i]
            base = add_nsw(base, mul_nsw(int64(U), mn))
            z += int32(U)
        for i in range(E):
            e = t + uint32(i * NT)
            r, q = int64(e // uint32(BN)), int64(e % uint32(BN))
            if (ALL or e < uint32(TILE)) and r < rows and q < cols:
                c[nonneg(add_nsw(first, add_nsw(mul_nsw(r, nn), q)))] = acc[i]

    return add
