"""SGEMM where C has few rows or few columns: kernels that read the large operand once, coalesced.

``util.sgemm``'s tiled kernel computes whole tiles of 64 or 128 rows and columns. With m = 16 its 64-row tile does
four times the FMAs C needs, with m = 1 sixty-four times; yet such a problem is bound by reading B once (k * n
floats): 2 m n k FLOPs over 4 k n bytes is m / 2 FLOP a byte, under an H200's ~12 (51 TFLOP/s over its measured
4.3 TB/s copy rate) until m is about 24. The same holds for n by symmetry, with A read once. Two kernels do only the FMAs C needs and
keep the large operand's loads coalesced and in flight:

- ``rows`` (few rows of C: m small): a block computes W rows x 128 columns of C over a slice of K. It stages its
  slice of A (W x kslice) in shared memory once; each lane takes 4 columns 32 apart, so that a warp's 4-byte load
  reads 128 contiguous bytes of a row of B whatever n's alignment; the 4 warps take every fourth group of 4
  k-steps (16 loads of B a group in flight) and reading a group's 4 values of a row of A is one 16-byte
  shared load that every lane shares. At the end warps 1, 2, 3 hand their sums to warp 0 through shared memory,
  which adds them in that order.
- ``cols`` (few columns of C: n small): a block computes 16 R rows x W columns of C over a slice of K. It stages
  its slice of B (kslice x W, rows padded so that 8 lanes' 16-byte reads hit different banks) in shared memory;
  a warp's lanes are 8 along k by 4 along rows (a warp's 4-byte load reads 32 contiguous bytes of each of 4 rows of
  A), each lane R rows 4 apart, 4 steps of 8 k a pass (4 R loads in flight). At the end the 8 lanes along k add
  their sums by shuffles (xor 1, 2, 4: every lane gets the same sums, in the same order).

A third, ``ROW_VEC`` (``rows/1v``), takes rows/1's place where C has one row and B's rows start 16-byte aligned: 32
warps on 128 columns, each lane 4 adjacent columns by one 16-byte streamed load a row of B, nothing staged (or on
64 or 32 columns, ``ROW_VECS``, a warp's lanes then on 2 or 4 rows of B at once: more blocks where n is small;
``util.sgemm.row_vec_choice`` picks the width). A
fourth, ``COL_VEC`` (``cols/1v``), takes cols/1's place where C has one column (a matrix-vector product A x): a
warp's lanes lie along k, so that a warp's load reads 128 (4-byte loads) or 512 (16-byte loads, where k % 4 == 0
and both operands start 16-byte aligned) contiguous bytes of one row of A, and each line of A is read by one load,
streamed; each warp takes COL_ROWS rows, COL_LOADS loads a row in flight, B's values through the read-only path,
nothing staged; at the end the 32 lanes add a row's sums by shuffles (xor 16, 8, 4, 2, 1). A fifth, ``ROW_FEW``
(``rows/1k2`` ... ``rows/1k32``), takes C with one row and 2-32 columns (a vector times a K x n matrix): ``rows``'s
blocks of 128 columns leave most lanes idle there, and ``cols`` computes 16 rows of which one is C's. Its lanes lie
along k and read B as the flat array it is: a warp's 32 rows are 32 n contiguous floats, lane l's slot u the element
l + 32 u (a warp's 4-byte load one 128-byte line, whatever n's alignment), which keeps its column (l + 32 u) % n as
the warp steps by 32 rows; each lane loads A's value of one row, and a slot takes its row's from that lane by a
shuffle. At the end each warp adds its 32 x n sums column by column in shared memory, then the block's warps in warp
order. Its slices are one pass of its loop deep, or one slice where K takes few passes (``util.sgemm.row_few_splits``).

K is split over blockIdx.z into slices of at most ``Thin.kmax`` k-steps (what the shared buffer holds); the
slices' sums go through ``util.sgemm``'s workspace and are added by its split-K sum or, with ``fuse``, by each output
tile's last block (``util.splitk``). A row of A or a column of B past the matrix is loaded clamped (its results are
not stored); k-steps past the slice are zeros. But for ROW_VEC's loads of B, every load is 4 bytes: ``rows`` and
``cols`` need no alignment and have no alignment variants. Loads go through the read-only
data path (``util.intrinsics.at_nc``, SASS ``LDG.E.CONSTANT``), as the C twins' ``const float* __restrict__`` loads
do (with plain loads numba took up to 1.4x the twin's time, docs/notes.md), but for ``rows``'s loads of B: B is read
once, a line by one warp's load, so it is streamed (``util.intrinsics.at_cs``, the twins' ``__ldcs``, SASS
``LDG.E.EF``: cached evict-first), and its lines make room for each other rather than evict lines still to be read or
written back (behind an L2 full of written lines, 1 x 4096 x 4096 took 0.89x the time it took through the read-only
path). ``cols`` reads each line of A in four loads, 32 bytes each, and streamed, 4096 x 1 x 4096 took 1.09x its
time (cols/16 0.89x; docs/notes.md): it keeps the read-only path. The C twins are util/sgemm_thin.cu.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .backend import SIMULATED, cuda

TWIN_SOURCE = Path(__file__).with_name("sgemm_thin.cu")
KINDS = ("rows", "cols")
WIDTHS = (1, 2, 4, 8, 16)
STAGED = 32  # floats of the small operand's slice a thread stages (all its loads in flight at once)
NW = 4  # warps a block


@dataclass(frozen=True)
class Thin:
    """One of the two kernels for C with few rows (``kind="rows"``) or few columns (``"cols"``), computing ``W`` of
    them a block. The attributes util.sgemm's plan reads of a tile: ``BM`` x ``BN`` (the block's part of C),
    ``BK`` (the quantum of a K slice), ``NT`` (threads), ``MINB`` (blocks an SM), ``ffma``, ``name``."""

    kind: str
    W: int
    vec: bool = False  # W = 1 only: the one-row (``ROW_VEC``) or one-column (``COL_VEC``) kernel, nothing staged
    cb: int = 128  # ROW_VEC and ROW_FEW: the columns of C a block computes (ROW_VEC_WIDTHS, FEW_WIDTHS)
    few: bool = False  # the one-row kernel for few columns, lanes along k (``ROW_FEW``; ``vec`` and ``cb`` with it)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if self.vec and self.W != 1:
            raise ValueError(f"vec is the one-row or one-column kernel's (rows/1, cols/1), not {self.kind}/{self.W}'s")
        if self.W not in WIDTHS:
            raise ValueError(f"W must be one of {WIDTHS}, got {self.W!r}")
        if self.few and not (self.vec and self.kind == "rows" and self.cb in FEW_WIDTHS):
            raise ValueError(f"few (the one-row kernel for few columns) takes kind='rows', W=1, vec=True and cb (its "
                             f"columns) one of {FEW_WIDTHS}; got {self.kind}/{self.W}, vec={self.vec}, cb={self.cb}")
        if self.cb != 128 and not self.few and not (self.vec and self.kind == "rows" and self.cb in ROW_VEC_WIDTHS):
            raise ValueError(f"cb (a block's columns) is the one-row kernel's (ROW_VEC), one of {ROW_VEC_WIDTHS}; "
                             f"got cb = {self.cb!r} for {self.kind}/{self.W}{'v' if self.vec else ''}")

    @property
    def NT(self) -> int:
        """Threads a block: NW warps (ROW_VEC: VEC_WARPS; COL_VEC: COL_WARPS; ROW_FEW: FEW_WARPS)."""
        if self.few:
            return 32 * FEW_WARPS
        return 32 * ((VEC_WARPS if self.kind == "rows" else COL_WARPS) if self.vec else NW)

    @property
    def MINB(self) -> int:
        """launch_bounds' second argument, the blocks an SM the registers must allow: the most of 8, 6, 5, 4 (64,
        80, 96, 128 registers a thread) at which ptxas needs no local memory for either twin, 32- or 64-bit offsets
        (sm_90; tests/test_sgemm_thin.py checks it; one exception: rows/16's C twin with 64-bit offsets spills 8 B
        even at 4; ROW_VEC is one block of 1024 threads an SM, 64 registers; ROW_FEW, 256 threads, 2: up to 128
        registers). These kernels are bound by the large
        operand's loads in flight, so more resident blocks is more bytes in flight an SM; both twins get the same
        bounds."""
        return _MINB[self.name]

    def blocks_per_sm(self, wide: bool, fused: bool = False) -> int:
        """The blocks an SM holds of this kernel's numba variant (32-bit or ``wide`` 64-bit offsets; ``fused``: its
        tiles' last blocks add the slices, util.splitk): its registers and shared memory on sm_90
        (``util.occupancy.max_blocks_per_sm``, the wheels' ptxas), at least ``MINB`` and more where ptxas took fewer
        registers than the bound allows (tests/test_sgemm_thin.py compiles each). Not for ROW_VEC and COL_VEC, which
        plan() gives slices of their own."""
        if self.vec:
            raise ValueError(f"{self.name} has no entry in the table of blocks an SM (its slices follow its own rule)")
        blocks = _BLOCKS_PER_SM[self.name][2 * bool(fused) + bool(wide)]
        if blocks is None:
            raise ValueError(f"{self.name} has no fused variant (util.splitk.fuses): its slices take the second kernel")
        return blocks

    @property
    def R(self) -> int:
        """``cols``: rows of C a lane computes: the most (up to 8) whose R * W sums and 4 R loads in flight take at
        most 80 registers."""
        return max(r for r in (1, 2, 4, 8) if r * (self.W + 4) <= 80)

    @property
    def BM(self) -> int:
        if self.kind == "cols" and self.vec:
            return COL_WARPS * COL_ROWS
        return self.W if self.kind == "rows" else 4 * NW * self.R

    @property
    def BN(self) -> int:
        return self.cb if self.kind == "rows" else self.W

    @property
    def G(self) -> int:
        """ROW_VEC: the rows of B a warp's 16-byte load reads (its lanes' 4 columns each span cb columns of G
        rows: 128 bytes or more of each row, whole lines)."""
        return 128 // self.cb

    @property
    def pass_rows(self) -> int:
        """ROW_VEC: the rows of B one pass of its unrolled loop takes (VEC_ROWS rows of each of its VEC_WARPS x G
        rows at once)."""
        return VEC_ROWS * VEC_WARPS * self.G

    @property
    def BK(self) -> int:
        """K slices are whole multiples of this: a group of 4 k-steps (rows), a pass of 32 (cols); COL_VEC, a
        warp's 16-byte loads of a row (128: slices start 16-byte aligned); ROW_FEW, a step of its warps' 32 rows."""
        if self.kind == "cols" and self.vec:
            return 128
        if self.few:
            return 32 * FEW_WARPS
        return 4 if self.kind == "rows" else 32

    @property
    def WP(self) -> int:
        """``cols``: floats a k-step's row of B takes in shared memory (padded from 8 up: the 8 lanes along k read
        16-byte pieces in different banks)."""
        return self.W + 4 if self.W >= 8 else self.W

    @property
    def kmax(self) -> int:
        """The deepest K slice: the small operand's slice, W x kmax floats, is STAGED floats a thread (for ``rows``
        with W = 16 twice that: its hot loop takes ~120 registers anyway, and a deeper slice halves the workspace);
        ``vec`` stages nothing (any depth)."""
        if self.vec:
            return 2**30
        return max(512, STAGED * self.NT // self.W) if self.kind == "rows" else STAGED * self.NT // self.W

    @property
    def kmin(self) -> int:
        """The shallowest K slice ``plan`` gives it when K allows more than one: ``rows``, two groups of 4 k-steps
        a warp (in a slice of 4 k-steps three of the four warps have nothing to load; at 27 x 1138 x 448, rows/16, a
        slice of 12 k-steps ran at 83% of cuBLAS and one of 32 at 114%, H100, docs/notes.md); ``cols``, one pass;
        ROW_VEC, VEC_SLICE_PASSES passes of every warp; COL_VEC, one pass of a warp's 16-byte loads; ROW_FEW, one
        pass of its loop (``steps`` steps of every warp)."""
        if self.few:
            return self.steps * self.BK
        if self.vec:
            return VEC_SLICE_PASSES * self.pass_rows if self.kind == "rows" else COL_LOADS * self.BK
        return 8 * NW if self.kind == "rows" else self.BK

    @property
    def reach(self) -> int:
        """How many k-steps past k the kernel's offsets may run, loaded or not (``plan`` sizes its offsets by it):
        the staged slice's kmax and 32 more; ROW_VEC and COL_VEC, which stage nothing, a pass of their warps and 32
        more."""
        if not self.vec:
            return self.kmax + 32
        if self.few:
            return 32 + self.steps * self.BK
        return 32 + (self.pass_rows if self.kind == "rows" else COL_LOADS * self.BK)

    @property
    def shared_floats(self) -> int:
        """The block's shared buffer: the small operand's slice; for ``rows`` then warps 1..3's sums (``vec``: the
        warps' sums only; ROW_FEW sizes its own)."""
        if self.vec:
            return VEC_WARPS * 128 if self.kind == "rows" else 0
        if self.kind == "rows":
            return max(self.W * self.kmax, (NW - 1) * self.W * 128)
        return self.kmax * self.WP

    @property
    def ffma(self) -> int:
        """FFMA a thread does per k-step (COL_VEC: per value of B it loads)."""
        if self.kind == "cols" and self.vec:
            return COL_ROWS
        if self.few:
            return 1
        return 4 * self.W if self.kind == "rows" else self.R * self.W

    @property
    def name(self) -> str:
        if self.few:
            return f"rows/1k{self.cb}"
        return f"{self.kind}/{self.W}" + ("v" if self.vec else "") + (f"{self.cb}" if self.cb != 128 else "")

    @property
    def steps(self) -> int:
        """ROW_FEW: the steps of 32 rows of B a lane has in flight (FEW_LOADS loads of B, ``cb`` a step)."""
        return max(1, FEW_LOADS // self.cb)


# Thin.MINB of each kernel, from compiling both twins at each bound (docs/notes.md: "The thin kernels timed", "Streamed
# loads of the large operand")
_MINB = {"rows/1": 8, "rows/2": 6, "rows/4": 5, "rows/8": 5, "rows/16": 4,
         "cols/1": 6, "cols/2": 5, "cols/4": 4, "cols/8": 5, "cols/16": 4, "rows/1v": 1, "rows/1v64": 1,
         "rows/1v32": 1, "cols/1v": 6, "rows/1k2": 2, "rows/1k4": 2, "rows/1k8": 2, "rows/1k16": 2,
         "rows/1k32": 2}
# Thin.blocks_per_sm of each numba kernel: 32-bit and 64-bit offsets, then the same with the fused sum (None: no fused
# variant). sm_90, the wheels' ptxas; registers (32-bit, 64-bit; fused 32-bit, 64-bit): rows/1 56, 64; 56, 64,
# rows/2 64, 80; 72, 80, rows/4 80, 80; 72, 96, rows/8 88, 96, rows/16 120, 128, cols/1 80, 80; 80, 80, cols/2 80, 96;
# 80, 96, cols/4 98, 121; 109, 128, cols/8 96, 94; 96, 96, cols/16 124, 127; shared memory 17-34 KB, never the limit
_BLOCKS_PER_SM = {"rows/1": (9, 8, 9, 8), "rows/2": (8, 6, 7, 6), "rows/4": (6, 6, 7, 5), "rows/8": (5, 5, None, None),
                  "rows/16": (4, 4, None, None), "cols/1": (6, 6, 6, 6), "cols/2": (6, 5, 6, 5), "cols/4": (4, 4, 4, 4),
                  "cols/8": (5, 5, 5, 5), "cols/16": (4, 4, None, None)}
THINS = tuple(Thin(kind, w) for kind in KINDS for w in WIDTHS)
# The one-row kernel for B whose rows start 16-byte aligned (n % 4 == 0, B aligned): a block of VEC_WARPS warps on
# 128 columns, each lane 4 adjacent columns by one 16-byte streamed load a row of B, each warp VEC_ROWS rows of B in
# flight (every VEC_WARPS-th row of the slice), the warps' sums added in shared memory in warp order. Nothing staged:
# A's value of a row is one 4-byte load, shared by the warp. (At 1 x 8192 x 1024 one slice of it took 0.82x the time
# of rows/1 and its split sum, H100, docs/notes.md.) 8 rows in flight, not 4: on 9 one-row shapes 0.98x the time, numba
# and twin alike (H200, docs/notes.md); 16 would be 80 floats of loads a lane, past the 64 registers a thread that
# 1024 threads an SM leave.
VEC_WARPS = 32
VEC_ROWS = 8
# ROW_VEC splits K into slices of at least this many passes of its warps (2048 k-steps; shallower, down to one pass,
# only where its blocks load few columns: util.sgemm.row_vec_splits): a split cost it more than it gave wherever K
# was short (one slice against two, H200: 1 x 8192 x 1024 105.1% of cuBLAS against 84.3%, 1 x 6000 x 700 115.2 /
# 89.2, 1 x 4096 x 256 122.9 / 83.1; with long K, 1 x 2048 x 8192: 64.7% at one slice, 105.6% at four; docs/notes.md)
VEC_SLICE_PASSES = 8
ROW_VEC = Thin("rows", 1, vec=True)
# Narrower blocks of the one-row kernel (``Thin.cb`` columns, the lanes of a warp on G = 128 / cb rows of B at once):
# more blocks where n / 128 leaves SMs idle (1 x 4096 x 4096: 32 blocks of 128 columns on 132 SMs, 128 of 32)
ROW_VEC_WIDTHS = (128, 64, 32)
ROW_VECS = tuple(Thin("rows", 1, vec=True, cb=cb) for cb in ROW_VEC_WIDTHS)  # util.sgemm.row_vec_choice picks
# The one-column kernel (C = A x): a block of COL_WARPS warps, each on COL_ROWS rows of A with its lanes along k,
# COL_LOADS loads a row in flight (a prototype's sweep of 2 x 4, 4 x 4 and 4 x 8 (4 x 2 with 16-byte loads) on 10
# one-column shapes, H200, docs/notes.md: 2 x 4 the fastest on 8, 0.96x the fastest at 3000 x 1 x 3000 and 0.84x at
# 100000 x 1 x 100, where K is shorter than a pass and the prototype took its tail element by element)
COL_WARPS = 4
COL_ROWS = 2
COL_LOADS = 4
COL_VEC = Thin("cols", 1, vec=True)
# The one-row kernel for few columns (C = a B with B k x n, n <= cb): a block of FEW_WARPS warps, lanes along k. A
# warp's 32 rows of B are 32 n contiguous floats, read as such: lane l's slot u < n is element l + 32 u (a warp's load
# one 128-byte line), of row (l + 32 u) // n and column (l + 32 u) % n, which stay the lane's as the warp steps by 32
# rows; lane l loads A's value of row l of the 32, and slot u takes its row's by a shuffle (SHFL.IDX) from lane
# (l + 32 u) // n. steps (FEW_LOADS / cb) steps of 32 rows in flight a lane, FEW_LOADS loads of B; the slice's last,
# partial pass the same loads, predicated.
FEW_WARPS = 8
FEW_LOADS = 32
FEW_WIDTHS = (2, 4, 8, 16, 32)
ROW_FEWS = tuple(Thin("rows", 1, vec=True, cb=cb, few=True) for cb in FEW_WIDTHS)


def row_few_for(n: int) -> Thin:
    """The narrowest of ROW_FEWS whose ``cb`` covers n (1..FEW_WIDTHS[-1]) columns."""
    if not 1 <= n <= FEW_WIDTHS[-1]:
        raise ValueError(f"ROW_FEW takes 1..{FEW_WIDTHS[-1]} columns, got {n}")
    return next(t for t in ROW_FEWS if t.cb >= n)


def thin_for(m: int, n: int, kind: str) -> Thin:
    """The narrowest kernel of ``kind`` whose block covers C's few rows (``rows``: m) or columns (``cols``: n);
    beyond 16, blocks of 16 side by side."""
    few = m if kind == "rows" else n
    return Thin(kind, next((w for w in WIDTHS if w >= few), WIDTHS[-1]))


# ---- numba ----------------------------------------------------------------------------------------------------

@lru_cache(maxsize=None)
def numba_kernel(thin: Thin, wide: bool, *, simulator: bool = SIMULATED, fuse: bool = False, va: bool = False):
    """The numba kernel ``gemm(m, n, k, kslice, a, b, out, dst, flags)`` of ``thin`` on flat (1-D, row-major)
    arrays, with the signature of ``util.sgemm.numba_kernel``'s: ``out`` holds ``gridDim.z`` slices of m x n (C
    itself when there is one). ``wide``: 64-bit offsets. ``fuse``: with several slices, the last block of each
    output tile adds them into ``dst`` (C), counting the tile's blocks in ``flags`` (``util.splitk``); without it
    ``dst`` and ``flags`` are not read. ``simulator``: as for util.sgemm.numba_kernel (the simulator takes no
    alignment of shared arrays). ``va``: COL_VEC only, 16-byte loads of both operands (k % 4 == 0, both 16-byte
    aligned; the plan's ``va`` and ``vb``)."""
    _check_va(thin, va)
    if thin == COL_VEC:
        return _cols_vec(thin, bool(wide), bool(fuse), bool(va))
    if thin.few:
        return _rows_few(thin, bool(wide), bool(fuse))
    build = _rows_vec if thin.vec else _rows if thin.kind == "rows" else _cols
    return build(thin, bool(wide), simulator, bool(fuse))


def _check_va(thin: Thin, va: bool) -> None:
    if va and thin != COL_VEC:
        raise ValueError(f"va (16-byte loads) is COL_VEC's ({COL_VEC.name}) option, not {thin.name}'s")


def _rows(thin: Thin, wide: bool, simulator: bool, fuse: bool):
    from numba import float32, int32, int64, uint32, uint64

    from .intrinsics import add_nsw, at_cs, at_nc, mul_nsw, nonneg
    from .splitk import add_slices

    W, KP, NT, SH = thin.W, thin.kmax, thin.NT, thin.shared_floats
    add_tile = add_slices(thin.BM, thin.BN, NT)
    JPR = KP // NT  # elements of a row of A's slice a thread stages
    SJ = W * JPR  # all that it stages
    OFF = int64 if wide else int32
    UOFF = uint64 if wide else uint32
    # the set-up (the slice's bounds, B's first offset and step, the group count) in the offsets' width with 1, 2 or 4
    # rows; with 8 or 16 it ran 2.6-2.8% slower than in numba's 64-bit typing (H200, docs/notes.md), which stays there
    SETUP32 = W <= 4
    ALIGN = None if simulator else 16

    @cuda.jit(device=True)
    def group(acc, bv, sh, k4):
        """The FMAs of k-steps k4 .. k4 + 3 (B's rows in bv; A's from shared memory, 4 values of a row at once)."""
        for i in range(W):
            a0 = sh[uint32(i * KP) + k4]
            a1 = sh[uint32(i * KP + 1) + k4]
            a2 = sh[uint32(i * KP + 2) + k4]
            a3 = sh[uint32(i * KP + 3) + k4]
            for c in range(4):
                acc[i, c] += a0 * bv[0, c]
                acc[i, c] += a1 * bv[1, c]
                acc[i, c] += a2 * bv[2, c]
                acc[i, c] += a3 * bv[3, c]

    def gemm(m, n, k, kslice, a, b, out, dst, flags):
        """C's rows r0 .. r0 + W, columns c0 .. c0 + 128, over slice blockIdx.z of K, into out[blockIdx.z] (and
        with ``fuse``, the tile's last block adds the slices into dst, C)."""
        sh = cuda.shared.array(SH, float32, alignment=ALIGN)
        t = uint32(cuda.threadIdx.x)
        lane = t % uint32(32)
        w = t // uint32(32)
        mm, nn, kk = OFF(m), OFF(n), OFF(k)
        r0 = mul_nsw(OFF(cuda.blockIdx.y), OFF(W))
        c0 = mul_nsw(OFF(cuda.blockIdx.x), OFF(128))
        if SETUP32:  # the slice's bounds in the offsets' width, as the twin's
            kb = mul_nsw(OFF(cuda.blockIdx.z), OFF(kslice))
            ks = min(OFF(kslice), add_nsw(kk, mul_nsw(kb, OFF(-1))))  # this slice's k-steps (>= 1)
        else:  # in numba's typing: int32 * int32 (and +, -, //) is int64
            kb = OFF(OFF(cuda.blockIdx.z) * OFF(kslice))
            ks = OFF(min(kb + OFF(kslice), kk) - kb)
        # A[r0 + i, kb + q] -> sh[i * KP + q] for every q < KP (zeros from ks on; a row past m: the last row), the
        # loads first, so that all are in flight at once; the stores unpredicated (each behind a predicate, ptxas
        # read the shared window's base, S2R SR_CgaCtaId, again for each: 34 in rows/1's prologue)
        v = cuda.local.array(SJ, float32)
        for j in range(SJ):
            q = add_nsw(OFF(t), OFF(NT * (j % JPR)))
            row = min(add_nsw(r0, OFF(j // JPR)), add_nsw(mm, OFF(-1)))
            v[j] = at_nc(a, add_nsw(add_nsw(mul_nsw(row, kk), kb), q)) if q < ks else float32(0.0)
        for j in range(SJ):
            q = add_nsw(OFF(t), OFF(NT * (j % JPR)))
            sh[uint32(j // JPR * KP) + uint32(q)] = v[j]
        # this lane's columns c0 + lane + 32 c, clamped to the last (their results are not stored)
        col = cuda.local.array(4, OFF)
        for c in range(4):
            col[c] = min(add_nsw(c0, OFF(lane + uint32(32 * c))), add_nsw(nn, OFF(-1)))
        nu = cuda.local.array(4, OFF)  # offsets of B's rows 0..3 of a group from its first
        for u in range(4):
            nu[u] = mul_nsw(OFF(u), nn)
        acc = cuda.local.array((W, 4), float32)
        for i in range(W):
            for c in range(4):
                acc[i, c] = float32(0.0)
        bv = cuda.local.array((4, 4), float32)
        cuda.syncthreads()
        g = OFF(w)  # whole groups of 4 k-steps (full): warp w takes groups w, w + 4, ...
        if SETUP32:
            full = OFF(UOFF(ks) // UOFF(4))
            pb = mul_nsw(add_nsw(kb, mul_nsw(OFF(4), g)), nn)  # the offset of B's row kb + 4 g
            step = mul_nsw(OFF(4 * NW), nn)
        else:
            full = OFF(ks // OFF(4))
            pb = OFF((kb + OFF(4) * g) * nn)
            step = OFF(OFF(4 * NW) * nn)
        # one row: B + pb a 64-bit pointer that walks, plus u * n + col[c], as NVVM keeps the twin's b + pb + u * n
        # + col[c] (one 32-bit sum a load, each widened, took 17 more instructions); with more rows that form took
        # more registers than the twin's (rows/2: 72 against 64, one block an SM fewer), and the sum stays
        while g < full:
            for u in range(4):
                if W == 1:  # (a constant: numba compiles one branch)
                    for c in range(4):
                        bv[u, c] = at_cs(b, (pb, add_nsw(nu[u], col[c])))
                else:
                    pu = add_nsw(pb, nu[u])
                    for c in range(4):
                        bv[u, c] = at_cs(b, add_nsw(pu, col[c]))
            group(acc, bv, sh, uint32(OFF(4) * g))
            pb = add_nsw(pb, step)
            g = add_nsw(g, OFF(NW))
        # the slice's last, partial group: its k-steps past ks are zeros in A's slice
        if SETUP32:
            k4 = mul_nsw(OFF(4), g)
            if k4 < ks:
                for u in range(4):
                    pu = add_nsw(pb, nu[u])
                    for c in range(4):
                        bv[u, c] = at_cs(b, add_nsw(pu, col[c])) if add_nsw(k4, OFF(u)) < ks else float32(0.0)
                group(acc, bv, sh, uint32(k4))
        elif OFF(4) * g < ks:
            for u in range(4):
                pu = add_nsw(pb, nu[u])
                for c in range(4):
                    bv[u, c] = at_cs(b, add_nsw(pu, col[c])) if OFF(4) * g + OFF(u) < ks else float32(0.0)
            group(acc, bv, sh, uint32(OFF(4) * g))
        # warps 1, 2, 3 hand their sums to warp 0 through the same shared buffer, which adds them in that order
        cuda.syncthreads()
        if w > 0:
            for i in range(W):
                for c in range(4):
                    sh[(w - uint32(1)) * uint32(W * 128) + uint32(i * 128 + c * 32) + lane] = acc[i, c]
        cuda.syncthreads()
        if w == uint32(0):
            for h in range(NW - 1):
                for i in range(W):
                    for x in range(4):
                        acc[i, x] += sh[uint32(h * W * 128 + i * 128 + x * 32) + lane]
            base = mul_nsw(mul_nsw(OFF(cuda.blockIdx.z), mm), nn)
            for i in range(W):
                row = add_nsw(r0, OFF(i))
                if row < mm:
                    for x in range(4):
                        cc = add_nsw(c0, OFF(lane + uint32(32 * x)))
                        if cc < nn:
                            out[nonneg(add_nsw(add_nsw(base, mul_nsw(row, nn)), cc))] = acc[i, x]
        if fuse:
            add_tile(out, dst, flags, m, n, r0, c0)

    return cuda.jit(launch_bounds=(NT, thin.MINB))(gemm)


def _rows_vec(thin: Thin, wide: bool, simulator: bool, fuse: bool):
    from numba import float32, int32, int64, uint32

    from .intrinsics import add_nsw, at_nc, ldg128_cs_at, mul_nsw, nonneg
    from .splitk import add_slices

    NT, NWV, U, CB, G = thin.NT, VEC_WARPS, VEC_ROWS, thin.cb, thin.G
    L = CB // 4  # the lanes on one row of B: G rows a warp's load
    RED = (NWV * G, CB)  # the sums of each (warp, row of G), each column
    OFF = int64 if wide else int32
    add_tile = add_slices(1, CB, NT)

    def gemm(m, n, k, kslice, a, b, out, dst, flags):
        """C's columns c0 .. c0 + CB of its one row over slice blockIdx.z of K, into out[blockIdx.z] (with
        ``fuse``, the tile's last block adds the slices into dst, C). n % 4 == 0 and B 16-byte aligned."""
        red = cuda.shared.array(RED, float32)
        t = uint32(cuda.threadIdx.x)
        w = t // uint32(32)
        lane = t % uint32(32)
        g = lane // uint32(L)  # this lane's row of the G its warp loads at once
        q = w * uint32(G) + g  # ... of the NWV G the block loads at once
        nn, kk = OFF(n), OFF(k)
        c0 = mul_nsw(OFF(cuda.blockIdx.x), OFF(CB))
        kb = mul_nsw(OFF(cuda.blockIdx.z), OFF(kslice))
        kend = min(add_nsw(kb, OFF(kslice)), kk)
        # this lane's 4 columns, the last block's clamped to the last 4 (their results are not stored)
        col = min(add_nsw(c0, OFF(lane % uint32(L) * uint32(4))), add_nsw(nn, OFF(-4)))
        acc = cuda.local.array(4, float32)
        for j in range(4):
            acc[j] = float32(0.0)
        av = cuda.local.array(U, float32)
        bv = cuda.local.array((U, 4), float32)
        r = add_nsw(kb, OFF(q))  # rows kb + q, kb + q + NWV G, ...
        pb = add_nsw(mul_nsw(r, nn), col)
        step = mul_nsw(OFF(NWV * G), nn)
        while add_nsw(r, OFF((U - 1) * NWV * G)) < kend:  # U rows in flight
            for u in range(U):
                av[u] = at_nc(a, add_nsw(r, OFF(u * NWV * G)))
                bv[u, 0], bv[u, 1], bv[u, 2], bv[u, 3] = ldg128_cs_at(b, add_nsw(pb, mul_nsw(OFF(u), step)))
            for u in range(U):
                for j in range(4):
                    acc[j] += av[u] * bv[u, j]
            r = add_nsw(r, OFF(U * NWV * G))
            pb = add_nsw(pb, mul_nsw(OFF(U), step))
        last = min(kend, add_nsw(r, OFF((U - 1) * NWV * G)))  # fewer than U rows left (LLVM unrolled the loop
        while r < last:  # 4 times, with a remainder, for a trip count it did not know was under U)
            x = at_nc(a, r)
            v0, v1, v2, v3 = ldg128_cs_at(b, pb)
            acc[0] += x * v0
            acc[1] += x * v1
            acc[2] += x * v2
            acc[3] += x * v3
            r = add_nsw(r, OFF(NWV * G))
            pb = add_nsw(pb, step)
        for j in range(4):
            red[q, lane % uint32(L) * uint32(4) + uint32(j)] = acc[j]
        cuda.syncthreads()
        if t < uint32(CB):  # thread t adds column c0 + t's sums in the order of their first rows, the next 16
            s = float32(-0.0)  # loads issued among the adds of the 16 before them (a loop of one load and one add
            v = cuda.local.array(16, float32)  # waited on each: with 128 sums at cb = 32, 0.7-0.9x the twin's rate,
            for u in range(16):  # whose loop nvcc unrolls whole)
                v[u] = red[u, t]
            for h0 in range(16, NWV * G, 16):
                for u in range(16):
                    s += v[u]  # -0.0 + x is x: the first sum is red[0, t] itself
                    v[u] = red[h0 + u, t]
            for u in range(16):
                s += v[u]
            c = add_nsw(c0, OFF(t))
            if c < nn:
                out[nonneg(add_nsw(mul_nsw(OFF(cuda.blockIdx.z), nn), c))] = s
        if fuse:
            add_tile(out, dst, flags, m, n, OFF(0), c0)

    return cuda.jit(launch_bounds=(NT, thin.MINB))(gemm)


def _rows_few(thin: Thin, wide: bool, fuse: bool):
    from numba import float32, int32, int64, uint32

    from .intrinsics import add_nsw, at_cs, at_nc, mul_nsw, nonneg, shfl_idx
    from .splitk import add_slices

    S, NT, NWF, U, STEP = thin.cb, thin.NT, FEW_WARPS, thin.steps, thin.BK
    OFF = int64 if wide else int32
    RED, PART = (NWF, 32 * S), (NWF, S)
    add_tile = add_slices(1, S, NT)

    @cuda.jit(device=True)
    def fma(acc, av, bv, src):
        """The FMAs of U steps: slot u's A value from the lane that loaded its row."""
        for v in range(U):
            for u in range(S):
                acc[u] += shfl_idx(av[v], src[u]) * bv[v, u]

    def gemm(m, n, k, kslice, a, b, out, dst, flags):
        """C's one row, its n <= S columns, over slice blockIdx.z of K, into out[blockIdx.z] (with ``fuse``, the
        tile's last block adds the slices into dst, C)."""
        red = cuda.shared.array(RED, float32)  # each warp's 32 x n sums, row-major
        part = cuda.shared.array(PART, float32)  # each warp's column sums
        t = uint32(cuda.threadIdx.x)
        w = t // uint32(32)
        lane = t % uint32(32)
        un = uint32(n)
        nn, kk = OFF(n), OFF(k)
        kb = mul_nsw(OFF(cuda.blockIdx.z), OFF(kslice))
        kend = min(add_nsw(kb, OFF(kslice)), kk)
        src = cuda.local.array(S, int32)  # slot u's row in the warp's 32, the lane holding its A value
        for u in range(S):
            src[u] = int32((lane + uint32(32 * u)) // un % uint32(32))  # (a slot past n: any lane; its B is 0)
        acc = cuda.local.array(S, float32)
        for u in range(S):
            acc[u] = float32(0.0)
        av = cuda.local.array(U, float32)
        bv = cuda.local.array((U, S), float32)
        r = add_nsw(kb, OFF(w * uint32(32)))  # the warp's first row: rows r .. r + 31, then r + STEP ...
        pb = add_nsw(mul_nsw(r, nn), OFF(lane))  # slot 0's element of B
        stepb = mul_nsw(OFF(STEP), nn)
        while add_nsw(r, OFF((U - 1) * STEP + 32)) <= kend:  # U whole steps of 32 rows
            for v in range(U):
                av[v] = at_nc(a, add_nsw(add_nsw(r, OFF(v * STEP)), OFF(lane)))
                for u in range(S):
                    live = uint32(u) < un
                    bv[v, u] = at_cs(b, add_nsw(add_nsw(pb, mul_nsw(OFF(v), stepb)), OFF(32 * u))) if live \
                        else float32(0.0)
            fma(acc, av, bv, src)
            r = add_nsw(r, OFF(U * STEP))
            pb = add_nsw(pb, mul_nsw(OFF(U), stepb))
        if r < kend:  # the slice's last, partial pass: rows at or past kend are zeros, not loaded
            for v in range(U):
                rv = add_nsw(r, OFF(v * STEP))
                lim = mul_nsw(add_nsw(kend, mul_nsw(rv, OFF(-1))), nn)  # this step's elements before kend
                av[v] = at_nc(a, add_nsw(rv, OFF(lane))) if add_nsw(rv, OFF(lane)) < kend else float32(0.0)
                for u in range(S):
                    live = uint32(u) < un and OFF(lane + uint32(32 * u)) < lim
                    bv[v, u] = at_cs(b, add_nsw(add_nsw(pb, mul_nsw(OFF(v), stepb)), OFF(32 * u))) if live \
                        else float32(0.0)
            fma(acc, av, bv, src)
        for u in range(S):
            if uint32(u) < un:
                red[w, lane + uint32(32 * u)] = acc[u]
        cuda.syncthreads()
        if lane < un:  # lane j adds column j of its warp's 32 rows, in row order, the loads first
            v32 = cuda.local.array(32, float32)
            for i in range(32):
                v32[i] = red[w, uint32(uint32(i) * un) + lane]
            s = float32(-0.0)  # -0.0 + x is x
            for i in range(32):
                s += v32[i]
            part[w, lane] = s
        cuda.syncthreads()
        if t < un:  # thread j adds column j's warp sums in warp order
            s = float32(-0.0)
            for h in range(NWF):
                s += part[h, t]
            out[nonneg(add_nsw(mul_nsw(OFF(cuda.blockIdx.z), nn), OFF(t)))] = s
        if fuse:
            add_tile(out, dst, flags, m, n, OFF(0), OFF(0))

    return cuda.jit(launch_bounds=(NT, thin.MINB))(gemm)


def _cols(thin: Thin, wide: bool, simulator: bool, fuse: bool):
    from numba import float32, int32, int64, uint32

    from .intrinsics import add_nsw, at_nc, mul_nsw, nonneg, shfl_xor
    from .splitk import add_slices

    W, R, WP, KP, NT, SH, BM = thin.W, thin.R, thin.WP, thin.kmax, thin.NT, thin.shared_floats, thin.BM
    add_tile = add_slices(BM, thin.BN, NT)
    SJ = KP * W // NT  # elements of B's slice a thread stages
    OFF = int64 if wide else int32
    ALIGN = None if simulator else 16

    @cuda.jit(device=True)
    def step(acc, av, sh, q, u):
        """The FMAs of this lane's k-step q (A's values for its R rows in av[u]; B's row q from shared memory)."""
        bw = cuda.local.array(W, float32)
        for j in range(W):
            bw[j] = sh[q * uint32(WP) + uint32(j)]
        for ri in range(R):
            for j in range(W):
                acc[ri, j] += av[u, ri] * bw[j]

    def gemm(m, n, k, kslice, a, b, out, dst, flags):
        """C's rows r0 .. r0 + 16 R, columns c0 .. c0 + W, over slice blockIdx.z of K, into out[blockIdx.z] (and
        with ``fuse``, the tile's last block adds the slices into dst, C)."""
        sh = cuda.shared.array(SH, float32, alignment=ALIGN)
        t = uint32(cuda.threadIdx.x)
        lane = t % uint32(32)
        w = t // uint32(32)
        kr = lane % uint32(8)  # this lane's k-steps: kr, kr + 8, ... of the slice
        mm, nn, kk = OFF(m), OFF(n), OFF(k)
        # this lane's rows: r0 + 4 ri for ri < R
        r0 = OFF(OFF(cuda.blockIdx.y) * OFF(4 * NW * R) + OFF(w * uint32(4 * R) + lane // uint32(8)))
        c0 = OFF(OFF(cuda.blockIdx.x) * OFF(W))
        kb = OFF(OFF(cuda.blockIdx.z) * OFF(kslice))
        ks = OFF(min(kb + OFF(kslice), kk) - kb)
        # B[kb + q, c0 + j] -> sh[q * WP + j] for every q < KP (zeros from ks on and past column n), the loads
        # first; the stores unpredicated (as in _rows). Element t + NT s of the slice is at row tq + s NT / W,
        # column tc (NT % W == 0): one column check, and the loads and stores at fixed steps from one offset
        tq, tc = t // uint32(W), t % uint32(W)
        col = add_nsw(c0, OFF(tc))
        pb = add_nsw(mul_nsw(add_nsw(kb, OFF(tq)), nn), col)
        v = cuda.local.array(SJ, float32)
        for s in range(SJ):
            q = add_nsw(OFF(tq), OFF(s * (NT // W)))
            v[s] = at_nc(b, add_nsw(pb, mul_nsw(OFF(s * (NT // W)), nn))) if q < ks and col < nn else float32(0.0)
        sb = int32(tq * uint32(WP) + tc)
        for s in range(SJ):  # a signed index promised >= 0: no negative-index select
            sh[nonneg(add_nsw(sb, int32(s * (NT // W) * WP)))] = v[s]
        # walking offsets of this lane's rows of A (a row past m: the last row; its results are not stored)
        pa = cuda.local.array(R, OFF)
        for ri in range(R):
            pa[ri] = add_nsw(add_nsw(mul_nsw(min(add_nsw(r0, OFF(4 * ri)), add_nsw(mm, OFF(-1))), kk), kb), OFF(kr))
        acc = cuda.local.array((R, W), float32)
        for ri in range(R):
            for j in range(W):
                acc[ri, j] = float32(0.0)
        av = cuda.local.array((4, R), float32)
        cuda.syncthreads()
        full = OFF(ks // OFF(32))  # whole passes of 32 k-steps: 4 steps of 8 lanes
        p = OFF(0)
        while p < full:
            for u in range(4):
                for ri in range(R):
                    av[u, ri] = at_nc(a, add_nsw(pa[ri], OFF(8 * u)))
            for u in range(4):
                step(acc, av, sh, uint32(OFF(32) * p) + uint32(8 * u) + kr, u)
            for ri in range(R):
                pa[ri] = add_nsw(pa[ri], OFF(32))
            p = add_nsw(p, OFF(1))
        if OFF(32) * p < ks:  # the last, partial pass: k-steps past ks are zeros in B's slice, and not loaded of A
            for u in range(4):
                live = OFF(32) * p + OFF(8 * u) + OFF(kr) < ks
                for ri in range(R):
                    av[u, ri] = at_nc(a, add_nsw(pa[ri], OFF(8 * u))) if live else float32(0.0)
            for u in range(4):
                step(acc, av, sh, uint32(OFF(32) * p) + uint32(8 * u) + kr, u)
        # the 8 lanes along k add their sums: each gets the same, in the same order
        for ri in range(R):
            for j in range(W):
                x = acc[ri, j]
                x += shfl_xor(x, 1)
                x += shfl_xor(x, 2)
                x += shfl_xor(x, 4)
                acc[ri, j] = x
        # lane kr stores the columns j with j % 8 == kr
        base = mul_nsw(mul_nsw(OFF(cuda.blockIdx.z), mm), nn)
        for ri in range(R):
            row = add_nsw(r0, OFF(4 * ri))
            if row < mm:
                for j in range(W):
                    if kr == uint32(j % 8) and add_nsw(c0, OFF(j)) < nn:
                        out[nonneg(add_nsw(add_nsw(base, mul_nsw(row, nn)), add_nsw(c0, OFF(j))))] = acc[ri, j]
        if fuse:
            add_tile(out, dst, flags, m, n, OFF(cuda.blockIdx.y) * OFF(BM), c0)

    return cuda.jit(launch_bounds=(NT, thin.MINB))(gemm)


def _cols_vec(thin: Thin, wide: bool, fuse: bool, va: bool):
    from numba import float32, int32, int64, uint32

    from .intrinsics import add_nsw, at_cs, at_nc, ldg128_cs_at, ldg128_nc_at, mul_nsw, nonneg, shfl_xor
    from .splitk import add_slices

    NT, BM, RW, U = thin.NT, thin.BM, COL_ROWS, COL_LOADS
    L = 4 if va else 1  # floats a lane loads at once
    PASS = 32 * L * U  # k-steps a warp's pass covers
    OFF = int64 if wide else int32
    add_tile = add_slices(BM, 1, NT)

    @cuda.jit(device=True)
    def load(a, b, av, xv, pa, q, kend, whole):
        """A pass's loads: B's values at q + 32 L j (L of them each) into xv[j], each row's of A into av[i, j];
        where not ``whole``, those at or past kend are zeros, not loaded."""
        for j in range(U):
            qj = add_nsw(q, OFF(32 * L * j))
            live = whole or qj < kend
            if va:
                if live:
                    xv[j, 0], xv[j, 1], xv[j, 2], xv[j, 3] = ldg128_nc_at(b, qj)
                else:
                    for e in range(L):
                        xv[j, e] = float32(0.0)
            else:
                xv[j, 0] = at_nc(b, qj) if live else float32(0.0)
        for i in range(RW):
            for j in range(U):
                qj = add_nsw(q, OFF(32 * L * j))
                live = whole or qj < kend
                if va:
                    if live:
                        av[i, j, 0], av[i, j, 1], av[i, j, 2], av[i, j, 3] = ldg128_cs_at(a, add_nsw(pa[i], qj))
                    else:
                        for e in range(L):
                            av[i, j, e] = float32(0.0)
                else:
                    av[i, j, 0] = at_cs(a, add_nsw(pa[i], qj)) if live else float32(0.0)

    @cuda.jit(device=True)
    def fma(acc, av, xv):
        for i in range(RW):
            for j in range(U):
                for e in range(L):
                    acc[i] += av[i, j, e] * xv[j, e]

    def gemm(m, n, k, kslice, a, b, out, dst, flags):
        """C's rows r0 .. r0 + BM of its one column over slice blockIdx.z of K, into out[blockIdx.z] (with ``fuse``,
        the tile's last block adds the slices into dst, C). n == 1; with ``va``, k % 4 == 0 and A, B 16-byte
        aligned."""
        t = uint32(cuda.threadIdx.x)
        lane = t % uint32(32)
        w = t // uint32(32)
        mm = OFF(m)
        kk = OFF(k)
        r0 = add_nsw(mul_nsw(OFF(cuda.blockIdx.y), OFF(BM)), OFF(w * uint32(RW)))  # this warp's rows r0, r0 + 1, ...
        kb = mul_nsw(OFF(cuda.blockIdx.z), OFF(kslice))
        kend = min(add_nsw(kb, OFF(kslice)), kk)
        pa = cuda.local.array(RW, OFF)  # offsets of this warp's rows (a row past m: the last row; not stored)
        for i in range(RW):
            pa[i] = mul_nsw(min(add_nsw(r0, OFF(i)), add_nsw(mm, OFF(-1))), kk)
        acc = cuda.local.array(RW, float32)
        for i in range(RW):
            acc[i] = float32(0.0)
        xv = cuda.local.array((U, L), float32)
        av = cuda.local.array((RW, U, L), float32)
        q = add_nsw(kb, OFF(lane * uint32(L)))  # this lane's first k-step; a pass covers q + 32 L j, j < U
        while add_nsw(q, OFF(32 * L * (U - 1))) < kend:  # whole passes (with va, L values at once: kend % 4 == 0)
            load(a, b, av, xv, pa, q, kend, True)
            fma(acc, av, xv)
            q = add_nsw(q, OFF(PASS))
        if q < kend:  # the slice's last, partial pass: its loads at or past kend are zeros
            load(a, b, av, xv, pa, q, kend, False)
            fma(acc, av, xv)
        for i in range(RW):  # the 32 lanes add a row's sums: each gets the same, in the same order
            x = acc[i]
            x += shfl_xor(x, 16)
            x += shfl_xor(x, 8)
            x += shfl_xor(x, 4)
            x += shfl_xor(x, 2)
            x += shfl_xor(x, 1)
            acc[i] = x
        for i in range(RW):  # lane i stores row r0 + i
            row = add_nsw(r0, OFF(i))
            if lane == uint32(i) and row < mm:
                out[nonneg(add_nsw(mul_nsw(OFF(cuda.blockIdx.z), mm), row))] = acc[i]
        if fuse:
            add_tile(out, dst, flags, m, n, mul_nsw(OFF(cuda.blockIdx.y), OFF(BM)), OFF(0))

    return cuda.jit(launch_bounds=(NT, thin.MINB))(gemm)


# ---- the C twin ------------------------------------------------------------------------------------------------

@lru_cache(maxsize=None)
def c_twin(thin: Thin, wide: bool, fuse: bool = False, va: bool = False):
    """The C twin of ``numba_kernel(thin, wide, fuse=fuse, va=va)``: util/sgemm_thin.cu with that kernel's macros."""
    from .cuda_c import CudaC

    _check_va(thin, va)
    if thin == COL_VEC:
        options = ["-DTHIN_COLS_VEC=1", f"-DWIDE={int(bool(wide))}", f"-DNW={COL_WARPS}", f"-DCROWS={COL_ROWS}",
                   f"-DCLOADS={COL_LOADS}", f"-DVA={int(bool(va))}", f"-DMINB={thin.MINB}", f"-DFUSE={int(bool(fuse))}"]
        return CudaC.from_file(TWIN_SOURCE, "gemm_cols_vec_c", options=options)
    if thin.few:
        options = ["-DTHIN_ROWS_FEW=1", f"-DWIDE={int(bool(wide))}", f"-DNW={FEW_WARPS}", f"-DS={thin.cb}",
                   f"-DFSTEPS={thin.steps}", f"-DMINB={thin.MINB}", f"-DFUSE={int(bool(fuse))}"]
        return CudaC.from_file(TWIN_SOURCE, "gemm_rows_few_c", options=options)
    if thin.vec:
        options = ["-DTHIN_ROWS_VEC=1", f"-DWIDE={int(bool(wide))}", f"-DNW={VEC_WARPS}", f"-DVROWS={VEC_ROWS}",
                   f"-DCB={thin.cb}", f"-DMINB={thin.MINB}", f"-DFUSE={int(bool(fuse))}"]
        return CudaC.from_file(TWIN_SOURCE, "gemm_rows_vec_c", options=options)
    options = [f"-DTHIN_{thin.kind.upper()}=1", f"-DW={thin.W}", f"-DWIDE={int(bool(wide))}",
               f"-DKP={thin.kmax}", f"-DSHARED_FLOATS={thin.shared_floats}", f"-DNW={NW}",
               f"-DMINB={thin.MINB}", f"-DFUSE={int(bool(fuse))}"]
    if thin.kind == "cols":
        options += [f"-DR={thin.R}", f"-DWP={thin.WP}"]
    return CudaC.from_file(TWIN_SOURCE, f"gemm_{thin.kind}_c", options=options)

