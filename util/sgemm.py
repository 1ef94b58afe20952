"""SGEMM on any shape: C = A @ B for float32 A (m x k) and B (k x n), any m, n, k >= 1, in numba and in its C twin.

The ladder's last kernel (sgemm_ladder.ipynb, step 15: 128 x 128 block tiles, warp tiles, double-buffered shared
memory, 16-byte loads, a lean hot loop) runs near cuBLAS on large squares but drops whole blocks to a checked slow
path at the edges, every block when n or k is not a multiple of 4 or 8, and cannot fill the GPU when m * n is small.
This kernel keeps step 15's hot loop and changes what happens around it:

- **clamped edges**: a thread whose row of A (or column of B) lies outside the matrix loads the last row (column)
  instead; the results it computes from them are never stored. Every block takes the unchecked hot loop. Where
  B takes 4-byte loads by whole pieces and n >= BN, the right-edge block is shifted left to end at column n
  instead (it stores only its own columns), so no piece of B straddles the edge: one offset a piece, not one a float.
- **a K tail**: whole BK-deep tiles take the hot loop; the last partial tile (k % BK) is loaded once with checks
  and zeros.
- **alignment variants**: 16-byte loads of A when k % 4 == 0 and of B when n % 4 == 0 (and the arrays are 16-byte
  aligned), 4-byte loads otherwise: four compiled variants, picked per call. Where n % 4 == 0 the 64-row tiles also
  store C 16 bytes at a time (``Tile.VC``, ``Plan.vc``): on short K, where writing C is most of a block's work, a
  warp's 4-byte stores each touched 16 sectors of L2 for 128 bytes.
- **split-K**: when m * n has too few tiles to fill the GPU, blockIdx.z splits K into slices; each writes its
  partial C into a workspace and a second kernel adds the slices in a fixed order (deterministic), four floats a
  thread where m * n and C's alignment allow and enough threads remain.
- **the order of the FMAs**: a k-step's FM x FN FMAs can be written in several orders (``FFMA_ORDERS``); the order
  decides how ptxas assigns registers, and so how often an FFMA's source operands meet in one register bank
  (``util.sass.HotLoop.bank_pairs`` counts them). Each compiled variant takes the order recorded for it by a timed
  search (``scripts/sgemm_ffma_order.py``: every order verified and timed on the GPU, the fastest kept).

The strategy (tile, split, variant) comes from ``plan``: a documented cost rule (the busiest SM's blocks times the K
tiles each block walks, plus the workspace traffic), not a table of shapes; with ``tune=True`` the first call of a
shape times the rule's few best-estimated tiles and slice counts (``choices``) on the GPU, and its later calls take
the fastest (``tuned``). For C with few rows or few columns,
util.sgemm_thin has kernels that do only the FMAs C needs (``THINS``); ``plan`` takes one where C has at most
``THIN_MAX`` rows or columns, but for the cases ``thin_choice`` leaves to the tiles (thresholds measured on the GPU).

    from util.sgemm import sgemm
    sgemm(a, b, c)                      # numba; a, b, c C-contiguous float32 device arrays
    sgemm(a, b, c, tune=True)           # the rule's best choices timed on the shape's first call, the fastest kept
    sgemm(a, b, c, compiler="cuda_c")   # the C twin (util/sgemm_any_shape.cu), same plan, same workspace
    plan(m, n, k)                       # the strategy a call would take, and why
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .backend import SIMULATED, cuda, device_name
from numba import float32, int32, int64, uint32, uint64  # noqa: E402 - after util.backend (simulator or compiler)
from .intrinsics import add_nsw, at_nc, ldg128_nc_at, shfl_xor
from .memory import cdiv
from . import sgemm_thin
from .sgemm_thin import COL_VEC, ROW_FEWS, ROW_VEC, ROW_VECS, THINS, WIDTHS, Thin, row_few_for, thin_for
from .splitk import MAX_ELEMENTS, fuses, slices_a_round

TWIN_SOURCE = Path(__file__).with_name("sgemm_any_shape.cu")
INT32_MAX = 2**31 - 1


# The orders a k-step's FMAs acc[i, j] += fa[i] * fb[j] can be written in: "row" (i = 0, 1, ..., each row's j left
# to right), "col" (j outer, i inner), "snake" (rows, every odd row right to left), "colsnake" (columns, every odd
# column bottom to top). The same FMAs and the same sums (each acc[i, j] still adds its k-steps in order); only
# the instruction order changes, and with it how ptxas assigns registers. On the H200 the recorded orders ran the
# 128 x 128 tile 4-8% faster than "row" (ncu at 4096^3: "snake" stalled 0.25 cycles an instruction on dispatch
# where "row" stalled 0.65; docs/notes.md).
FFMA_ORDERS = ("row", "col", "snake", "colsnake")


def _check_order(order: str) -> None:
    if order not in FFMA_ORDERS:
        raise ValueError(f"order must be one of {FFMA_ORDERS}, got {order!r}")


@dataclass(frozen=True)
class Tile:
    """A BM x BN block tile, BK deep, of NT threads (256 by default: 8 warps of WM x WN), a lane computing WMI x WNI
    blocks of TM x TN results, SM x SN apart (the ladder's step 15b); PAD floats pad the rows of the transposed A tile.
    KG > 1 slices each tile's k-steps over KG groups of warps (sliced K): each group computes the whole block over
    BK / KG of every tile's k-steps, and the groups' sums are added in shared memory at the end. VC: where n % 4 ==
    0 and C (or the split-K workspace) starts 16-byte aligned, a lane writes its TN = 4 adjacent results of a row
    with one 16-byte store (``Plan.vc``) instead of four 4-byte ones. SC (sliced K only): where B takes 4-byte loads
    (n % 4 != 0, or B not 16-byte aligned), the groups' sums meet in a BM x BN tile in shared memory and every thread
    stores a column of it, a warp's store 32 adjacent floats of a row (``Plan.sc``), instead of group 0 storing its
    lanes' results, each warp's store then every fourth float of 4 rows. S32: numba's set-up of the 32-bit variants
    (offsets, clamps, tile counts) in 32-bit arithmetic, as the twin's; without it, in numba's typing (int32 + int32
    is int64), 64 bits. It shortens the set-up, which counts where K is short, but it changes the register
    allocation of the whole kernel, hot loop included: the 128 x 128 tile lost 4% to bank conflicts with every FMA
    order and keeps numba's typing (H200, docs/notes.md). TA (with S32): numba's K tail takes A's places from the
    walking offsets (as it does B's) instead of recomputing each row: brow, m and k are then not live across the hot
    loop (without it the sliced tile's shifted-B staged-C variants spilled with every FMA order, sm_90)."""

    BM: int = 128
    BN: int = 128
    BK: int = 8
    TM: int = 4
    TN: int = 4
    WM: int = 32
    WN: int = 64
    WMI: int = 2
    WNI: int = 2
    PAD: int = 4
    MINB: int = 2  # launch_bounds' second argument: blocks per SM the registers must allow
    KG: int = 1  # groups of warps that share each tile's k-steps, BK / KG each (a multiple of 8)
    speed: float = 1.0  # FMA rate at full occupancy relative to the 128 x 128 tile (scripts/sgemm_tile_rates.py)
    VC: bool = False  # 16-byte stores of C where n % 4 == 0 and C is 16-byte aligned
    SC: bool = False  # C through shared memory, stored row by row, where B takes 4-byte loads (KG > 1)
    S32: bool = False  # numba's set-up of the 32-bit variants in 32-bit arithmetic (else numba's 64-bit typing)
    TA: bool = False  # with S32: numba's K tail loads A where its walking offsets stand (else rows recomputed)
    order: str | None = None  # every variant's FMA order, fixed (else each variant's recorded: ffma_order)

    def __post_init__(self) -> None:
        if self.order is not None:
            _check_order(self.order)
        if self.KG < 1 or self.BK % (8 * self.KG):
            raise ValueError(f"BK = {self.BK} must hold KG = {self.KG} groups of 8 k-steps")
        if self.VC and self.TN != 4:
            raise ValueError(f"VC (a lane's results of a row in one 16-byte store) needs TN = 4, got {self.TN}")
        if self.SC and (self.KG < 2 or self.NT % self.BN or self.BM % (self.NT // self.BN)):
            raise ValueError(f"SC (C stored through shared memory) needs KG > 1 (it takes the groups' shared sums) "
                             f"and threads that cover whole rows of the tile; got KG = {self.KG}, NT = {self.NT}, "
                             f"BM x BN = {self.BM} x {self.BN}")

    @property
    def NT(self) -> int:
        return 32 * (self.BM // self.WM) * (self.BN // self.WN) * self.KG

    @property
    def A4(self) -> int:
        """4-float pieces of A's tile a thread loads (of B's: ``B4``)."""
        return self.BM * self.BK // 4 // self.NT

    @property
    def B4(self) -> int:
        return self.BK * self.BN // 4 // self.NT

    @property
    def ksteps(self) -> int:
        """k-steps a thread does per tile (its group's share of BK)."""
        return self.BK // self.KG

    @property
    def ffma(self) -> int:
        """FFMA one thread does per k-step."""
        return self.WMI * self.TM * self.WNI * self.TN

    @property
    def name(self) -> str:
        return f"{self.BM}x{self.BN}" + (f"/{self.KG}k" if self.KG > 1 else "")

    def macros(self) -> list[str]:
        return [f"-D{n}={int(getattr(self, n))}" for n in "BM BN BK TM TN WM WN WMI WNI PAD MINB KG".split()]


# 16-byte stores of C (VC) only where they cost no registers: a store's 4 values must sit in an aligned quad of
# registers, which at TILE's bound of 128 made ptxas spill in the hot loop (sm_90, both twins; docs/notes.md)
TILE = Tile()
# 64 x 128 in 4 warps of 32 x 64 (a lane's 8 x 8 results as in TILE), 3 blocks an SM (up to 168 registers): twice
# the blocks of TILE on small outputs and half the wasted rows when m <= 64, at 2% fewer FMA/s on large squares
# (H200, scripts/sgemm_tile_rates.py, with each tile's recorded FMA order; docs/notes.md)
SMALL_TILE = Tile(BM=64, MINB=3, speed=0.978, VC=True, S32=True)
# 64 x 64, sliced K: 4 warps in 2 groups of 2 warps of 32 x 64 (a lane's 8 x 8 results as in TILE), each group
# taking 8 of every 16-deep tile's k-steps, the two sums added in shared memory at the end; 4 blocks an SM (up to
# 128 registers). Four times the blocks of TILE without splitting K, so that outputs of about one wave or less keep
# more SMs busy (cuBLAS runs a 64 x 64 tile there). It replaced a 64 x 64 tile of 4 warps of 32 x 32 (a lane's
# 8 x 4 results, 8-deep tiles), which waited on shared memory (3 fragment reads for 32 FMAs where the 8 x 8 lane
# reads 4 for 64) and ran at 0.82 of TILE's rate (H200, docs/notes.md)
TINY_TILE = Tile(BM=64, BN=64, BK=16, WM=32, WN=64, MINB=4, KG=2, speed=0.953, VC=True, SC=True, S32=True, TA=True)
# 32 x 32, sliced K: 2 warps in 2 groups of one warp of 32 x 32 (a lane's 8 x 4 results, 2 x 1 blocks of 4 x 4), each
# group taking 8 of every 16-deep tile's k-steps as in TINY_TILE; 8 blocks an SM (up to 128 registers; 117-121 with the
# FMAs in snake order, no local memory, sm_90). Four times TINY_TILE's blocks: for outputs whose 64 x 64 grid leaves
# the SMs mostly empty where K is too short to split (cuBLAS runs a 32 x 32 tile there); its lane reads 3 fragments
# for 32 FMAs, so on a full GPU it runs slower. Its FMA order is fixed (snake, as measured when it was a probe; every
# variant a plan takes leaves no local memory with it, tests/test_sgemm.py): the orders scripts/sgemm_ffma_order.py
# finds on its full-GPU shapes (row 1.03x faster there where both operands take 16-byte loads) took numba's % of
# cuBLAS to 0.94-0.95 of snake's on 3 of the 11 small random shapes that take this tile, and raised none beyond the
# runs' spread (H200, two runs; docs/notes.md)
MICRO_TILE = Tile(BM=32, BN=32, BK=16, WM=32, WN=32, WMI=2, WNI=1, MINB=8, KG=2, speed=0.688, VC=True, SC=True,
                  S32=True, TA=True, order="snake")
TILES = (TILE, SMALL_TILE, TINY_TILE, MICRO_TILE)  # what plan() chooses from, in order of preference on a tie


def variant_name(va: bool, vb: bool, wide: bool) -> str:
    """A compiled variant's name: which operands take 16-byte loads, and the offset width."""
    loads = {(True, True): "vec A,B", (True, False): "vec A", (False, True): "vec B", (False, False): "scalar"}
    return loads[(bool(va), bool(vb))] + (", 64-bit" if wide else "")


FFMA_ORDER_FILE = Path(__file__).with_name("sgemm_ffma_order.json")


@lru_cache(maxsize=None)
def _recorded_orders() -> dict[str, str]:
    import json

    return json.loads(FFMA_ORDER_FILE.read_text())["orders"]


def ffma_order_key(compiler: str, tile: Tile, va: bool, vb: bool, wide: bool, shift_b: bool = False,
                   vc: bool = False, sc: bool = False, one_loop: bool = False) -> str:
    return (f"{compiler} {tile.name} x{tile.MINB} {variant_name(va, vb, wide)}" + (", shifted B" if shift_b else "")
            + (", 16-byte C" if vc else "") + (", staged C" if sc else "") + (", one loop" if one_loop else ""))


def ffma_order(compiler: str, tile: Tile, va: bool, vb: bool, wide: bool, shift_b: bool = False,
               vc: bool = False, sc: bool = False, one_loop: bool = False) -> str:
    """The FMA order recorded for one compiled variant (``scripts/sgemm_ffma_order.py`` timed each and wrote it);
    ``shift_b`` (``Plan.shift_b``), ``vc`` (``Plan.vc``) and ``sc`` (``Plan.sc``) make variants of their own: other
    machine code (with ``vc``, other registers: a 16-byte store's 4 values in an aligned quad), their own order;
    so does ``one_loop`` (``Plan.one_loop``: one copy of the k-tile, other registers). A tile with a fixed
    ``Tile.order`` (NARROW_TILES) takes it in every variant."""
    if tile.order is not None:
        return tile.order
    key = ffma_order_key(compiler, tile, va, vb, wide, shift_b, vc, sc, one_loop)
    order = _recorded_orders().get(key)
    if order not in FFMA_ORDERS:
        search = "python scripts/sgemm_ffma_order.py" + (" --one-loop" if one_loop else "") + " --write"
        raise KeyError(f"no FMA order recorded for {key!r} in {FFMA_ORDER_FILE.name}: run `{search}` on a GPU machine")
    return order


def b_by_pieces(vb: bool, tile: Tile) -> bool:
    """Whether B takes 4-byte loads by whole pieces of 4 columns: without 16-byte loads, on a tile that gives a
    thread more than one piece (with one, the 128 x 128 tile, B's 4-byte loads are spread over threads instead)."""
    return not vb and tile.B4 > 1


def b_by_rows(va: bool, tile: Tile) -> bool:
    """Whether B's 4-byte loads by whole pieces with the right-edge block shifted (``shift_b``) are spread along rows
    instead (``numba_kernel``'s ``row_b``): each warp's load reads 32 adjacent floats of a row (a piece's 4 floats
    read every fourth float of 128 bytes a load), a lane's floats 32 columns apart at constant offsets from one
    walking offset. On the 64 x 128 tile, and on the sliced ones (64 x 64, 32 x 32) where A takes 16-byte loads: with
    4-byte loads of A too, the sliced 64 x 64 tile's variant spills at its 128 registers (sm_90; docs/notes.md)."""
    return b_by_pieces(False, tile) and tile.BN % 32 == 0 and (va or tile.KG == 1)


def _check_row_b(row_b: bool, shift_b: bool, tile: Tile) -> bool:
    if row_b and not (shift_b and tile.BN % 32 == 0):
        raise ValueError(f"row_b spreads B's 4-byte loads by pieces along rows: it needs shift_b and BN a multiple of "
                         f"32; got shift_b={shift_b} on {tile.name}")
    return bool(row_b)


def _check_shift_b(shift_b: bool, vb: bool, tile: Tile) -> bool:
    if shift_b and not b_by_pieces(vb, tile):
        raise ValueError(f"shift_b applies to B's 4-byte loads by whole pieces (vb False, a tile with B4 > 1); "
                         f"got vb={vb} on {tile.name} (B4 = {tile.B4})")
    return bool(shift_b)


def stores16(tile: Tile, vb: bool, splits: int, c16: bool) -> bool:
    """Whether ``tile`` stores C 16 bytes at a time (``Plan.vc``): a tile with VC, B's rows 16-byte aligned (``vb``:
    n % 4 == 0), and what the kernel writes 16-byte aligned (C, ``c16``; or with several slices the workspace)."""
    return tile.VC and vb and (splits > 1 or c16)


def _check_vc(vc: bool, vb: bool, tile: Tile) -> bool:
    if vc and not (vb and tile.VC):
        raise ValueError(f"vc (16-byte stores of C) needs n % 4 == 0, as vb does, and a tile with VC; got vb={vb} "
                         f"on {tile.name} (VC {tile.VC})")
    return bool(vc)


def _check_sc(sc: bool, vb: bool, tile: Tile) -> bool:
    if sc and (vb or not tile.SC):
        raise ValueError(f"sc (C stored through shared memory) is for B's 4-byte loads (vb False) on a tile with SC; "
                         f"got vb={vb} on {tile.name} (SC {tile.SC})")
    return bool(sc)


def _check_one_loop(one_loop: bool, wide: bool) -> bool:
    # no plan of the rule takes both: 64-bit offsets need m * k or k * n past 2^31, a grid of at most one block an
    # SM and slices of at most ONE_LOOP_TILES k-tiles keep them far below it
    if one_loop and wide:
        raise ValueError("one_loop=True needs 32-bit offsets, and this plan has 64-bit ones (wide, forced or needed "
                         "by the sizes): no plan of the rule takes both (a grid of at most one block an SM and short "
                         "slices keep every offset far below 2^31)")
    return bool(one_loop)


def plan_variants(tile: Tile):
    """Every compiled variant a plan can take on ``tile``, as (va, vb, wide, options of ``numba_kernel`` and
    ``c_twin``): 16- or 4-byte loads of A and B; with B's 16-byte loads, 16- or 4-byte stores of C (a tile with VC);
    with B's 4-byte ones, C staged (a tile with SC), and where B takes whole pieces the right edge shifted or not
    (shifted, B's loads along rows where ``b_by_rows``); 32-bit offsets through two loops or one, or 64-bit ones."""
    for va, vb in ((False, False), (False, True), (True, False), (True, True)):
        for vc in (True, False) if vb and tile.VC else (False,):
            for shift_b in (False, True) if b_by_pieces(vb, tile) else (False,):
                for wide, one_loop in ((False, False), (False, True), (True, False)):
                    yield va, vb, wide, dict(vc=vc, sc=tile.SC and not vb, shift_b=shift_b,
                                             row_b=shift_b and b_by_rows(va, tile), one_loop=one_loop)


# C with at most NARROW_MAX columns (past the thin kernels' THIN_MAX["cols"], or where no thin kernel takes it): tiles
# 32 columns wide, which waste at most 15 of them where TILES' 64-column tiles waste 32-47 (n = 19: 45 of 64 columns,
# 3.4x the FMAs C needs). 128 x 32 in 4 warps of 32 x 32 (a lane's 8 x 4 results, 2 x 1 blocks of 4 x 4), 3 blocks an SM
# (140 registers with 4-byte loads); 64 x 32 sliced K, 2 groups of 2 such warps, 4 blocks an SM: more blocks where K
# is short. speed (their FMA rate against TILE's, of what the cost rule counts) and wave_seconds fitted to 182 timed
# (tile, slices) of 24 shapes with 17-32 columns (H200, docs/notes.md). Their FMA order is fixed, row by row, not
# searched: four orders timed on four such shapes came within -6%..+7% of it, none faster on all; no order leaves
# every 64-bit variant of the sliced one without local memory (row: numba's with 4-byte loads, 8 B; docs/notes.md)
NARROW_TILE = Tile(BM=128, BN=32, BK=16, WM=32, WN=32, WMI=2, WNI=1, MINB=3, speed=0.76, VC=True, S32=True,
                   order="row")
NARROW_SLICED = Tile(BM=64, BN=32, BK=16, WM=32, WN=32, WMI=2, WNI=1, MINB=4, KG=2, speed=0.62, VC=True, SC=True,
                     S32=True, TA=True, order="row")
NARROW_TILES = (NARROW_TILE, NARROW_SLICED)
NARROW_MAX = 32


@dataclass(frozen=True)
class Plan:
    """How one call runs: ``splits`` slices of K, ``kslice`` deep each (a multiple of BK), on a grid of
    (n tiles, m tiles, splits) blocks; 16-byte loads of A (``va``) and B (``vb``); 64-bit offsets (``wide``);
    with several slices, ``fused``: each output tile's last block adds them (``util.splitk``), else ``splitk_sum``."""

    m: int
    n: int
    k: int
    splits: int
    kslice: int
    va: bool
    vb: bool
    wide: bool
    tile: Tile | Thin = TILE
    why: str = ""
    fused: bool = False  # several slices added by each tile's last block (util.splitk), not a second kernel
    c16: bool = True  # C starts 16-byte aligned
    one_loop: bool = False  # a tiled plan's blocks run every k-tile through one loop (ONE_LOOP_TILES)

    @property
    def grid(self) -> tuple[int, int, int]:
        return (cdiv(self.n, self.tile.BN), cdiv(self.m, self.tile.BM), self.splits)

    @property
    def variant(self) -> str:
        """The compiled variant's name: which operands take 16-byte loads, and the offset width."""
        return variant_name(self.va, self.vb, self.wide)

    @property
    def shift_b(self) -> bool:
        """B's 4-byte loads by whole pieces, the right-edge block shifted left to end at column n (``numba_kernel``'s
        ``shift_b``): where B takes 4-byte loads, a thread loads whole pieces (not spread) and n fills a tile."""
        return isinstance(self.tile, Tile) and b_by_pieces(self.vb, self.tile) and self.n >= self.tile.BN

    @property
    def row_b(self) -> bool:
        """B's shifted 4-byte loads spread along rows (``b_by_rows``; ``numba_kernel``'s ``row_b``)."""
        return self.shift_b and b_by_rows(self.va, self.tile)

    @property
    def vc(self) -> bool:
        """16-byte stores of C (``Tile.VC``): on a tile with VC, where B's rows are 16-byte aligned (``vb``: n % 4
        == 0) and what the kernel writes starts 16-byte aligned (C, or with several slices the workspace)."""
        return isinstance(self.tile, Tile) and stores16(self.tile, self.vb, self.splits, self.c16)

    @property
    def sc(self) -> bool:
        """C stored through shared memory, row by row (``Tile.SC``): on a tile with SC, where B takes 4-byte loads."""
        return isinstance(self.tile, Tile) and self.tile.SC and not self.vb

    @property
    def workspace_floats(self) -> int:
        return self.splits * self.m * self.n if self.splits > 1 else 0

    @property
    def blocks_per_sm(self) -> int:
        """The blocks an SM of the variant that runs: a tile's MINB (its launch bound, which the rule counts rounds in);
        a thin kernel's ``Thin.blocks_per_sm`` (``thin_fill`` counts in it; ``thin_splits`` in MINB); ROW_VEC's and
        COL_VEC's MINB."""
        if isinstance(self.tile, Thin) and not self.tile.vec:
            return self.tile.blocks_per_sm(self.wide, self.fused)
        return self.tile.MINB


@dataclass(frozen=True)
class CostModel:
    """plan()'s cost rule. ``tile_seconds``: one BK-deep tile of a 128 x 128 block, two blocks an SM, at the fp32
    peak of an H200-class SM (128 FMA lanes at ~1.98 GHz: 2 * 128 * 128 * 8 FMA / 128 lanes / 1.98e9 = 1.03 us);
    ``block_overhead_tiles``: a block's fixed cost in tiles; a round of blocks' fixed cost outside its k-loop (its
    first loads and its stores of C), which on short K outweighs the k-loop: where the tile stores C 16 bytes at a
    time (``stores16``), ``wave_vc_seconds`` for a round of 2 blocks of 128 x 128 and in proportion to the results an
    SM holds for other tiles (an SM's 128 KB of C written at 1/132 of 4.3 TB/s, the H200's copy rate, would take 4
    us; the fit finds less, 0 on the H200);
    else ``wave_seconds``, each tile's own (tile name, seconds); ``workspace_bytes_per_s``: the rate at which split
    slices are written and read back; ``second_launch_s``: the cost of the sum's launch; ``operand_bytes_per_s``:
    the rate at which the blocks read their panels of A and B (an output tile reads BM + BN rows of K, mostly from
    L2: a smaller tile reads more for the same FMAs); ``partial_round``, each tile's (tile name, fraction): an SM
    runs ceil(blocks / SMs) blocks, in rounds of MINB at once; a last round of r < MINB blocks takes the time of
    max(r, fraction x MINB) blocks (the SM's FMA rate falls with fewer blocks, but not in proportion: 1.0 counts it
    a whole round). All but ``tile_seconds`` are fitted (``scripts/sgemm_rule_fit.py``, coordinate descent on a
    grid) to the times of every choice on 288 random shapes recorded in util/sgemm_rule_fit.json (H200; 48 of them
    with n and k multiples of 4, 48 with k in 8..128, 48 near-square outputs with n and k multiples of 4, 48 more of
    those with m in 256..2048 and k in 2048..16384). ``COST`` holds that fit for TILES; ``NARROW_COST`` the
    constants NARROW_TILES' wave costs (and speeds) were fitted with, to a probe of their own (docs/notes.md)."""

    tile_seconds: float = 1.03e-6
    block_overhead_tiles: float = 0.0
    workspace_bytes_per_s: float = 6e12
    second_launch_s: float = 3e-6
    operand_bytes_per_s: float = 24e12
    wave_vc_seconds: float = 0.0
    wave_seconds: tuple[tuple[str, float], ...] = (("128x128", 8e-6), ("64x128", 6e-6), ("64x64/2k", 2e-6),
                                                   ("32x32/2k", 1e-6))
    partial_round: tuple[tuple[str, float], ...] = (("128x128", 0.8), ("64x128", 0.8), ("64x64/2k", 0.8),
                                                    ("32x32/2k", 0.8))

    def _of(self, table: tuple[tuple[str, float], ...], field: str, t: Tile) -> float:
        for name, value in table:
            if name == t.name:
                return value
        raise ValueError(f"the cost rule has no entry for tile {t.name} in CostModel.{field}: add it and fit it "
                         f"(python scripts/sgemm_rule_fit.py --measure on a GPU machine)")

    def wave_cost(self, t: Tile, vc: bool) -> float:
        """A round's fixed cost with tile t (the rounds of MINB blocks the busiest SM runs: ``rounds``): ``vc``, it
        stores C 16 bytes at a time (``wave_vc_seconds``, scaled); else the tile's entry of ``wave_seconds``."""
        if vc:
            return self.wave_vc_seconds * t.MINB * t.BM * t.BN / (2 * 128 * 128)
        return self._of(self.wave_seconds, "wave_seconds", t)

    def rounds(self, blocks: int, t: Tile, sms: int) -> tuple[int, float]:
        """(rounds, blocks' worth of time) of the SM that runs the most of ``blocks`` blocks of tile t on sms SMs:
        ceil(blocks / sms) blocks, MINB at a time; a last round of r < MINB counts max(r, fraction x MINB)
        (``partial_round``)."""
        full, last = divmod(cdiv(blocks, sms), t.MINB)
        worth = full * t.MINB + (max(last, self._of(self.partial_round, "partial_round", t) * t.MINB) if last else 0)
        return full + (last > 0), worth

    def estimate(self, m: int, n: int, k: int, t: Tile, s: int, sms: int, vc: bool) -> float:
        """The estimated time of C (m x n) = A (m x k) @ B (k x n) with tile t and s slices of K on sms SMs; ``vc``:
        the tile stores C 16 bytes at a time (``stores16``)."""
        step = self.tile_seconds * (t.BM * t.BN * t.MINB * t.BK) / (128 * 128 * 2 * 8) / t.speed
        tiles = cdiv(m, t.BM) * cdiv(n, t.BN)  # output tiles
        rounds, worth = self.rounds(tiles * s, t, sms)
        est = (cdiv(cdiv(k, t.BK), s) + self.block_overhead_tiles) * step * worth / t.MINB
        est += rounds * self.wave_cost(t, vc)
        est += tiles * (t.BM + t.BN) * cdiv(k, t.BK) * t.BK * 4 / self.operand_bytes_per_s
        if s > 1:
            est += (2 * s + 1) * m * n * 4 / self.workspace_bytes_per_s + self.second_launch_s
        return est


COST = CostModel()  # TILES' rule
# NARROW_TILES' rule: their speeds and wave costs fitted to a probe of their own (docs/notes.md, "Tiles 32 columns
# wide") with the other constants as the rule had them then, in whole waves; a refit of COST leaves them as fitted
NARROW_COST = CostModel(tile_seconds=1.03e-6, block_overhead_tiles=0.0, workspace_bytes_per_s=3e12,
                        second_launch_s=4e-6, operand_bytes_per_s=16e12, wave_vc_seconds=0.5e-6,
                        wave_seconds=(("128x32", 4.25e-6), ("64x32/2k", 2.75e-6)),
                        partial_round=(("128x32", 1.0), ("64x32/2k", 1.0)))


def cost_model(t: Tile) -> CostModel:
    """The cost rule that ranks tile t: ``NARROW_COST`` for NARROW_TILES, ``COST`` for the others."""
    return NARROW_COST if t in NARROW_TILES else COST


MAX_SPLITS = 256
# A tiled plan whose grid puts at most one block on an SM and whose slices are at most this many k-tiles runs every
# k-tile through the kernels' one-tile loop (``Plan.one_loop``): each SM then runs one block, its code cold, and
# numba's two-tile pass (a second copy of the k-tile's ~600 instructions, run at most three times there) cost more to
# fetch than its constant shared addresses saved (H200, docs/notes.md); where SMs run several blocks it pays off
ONE_LOOP_TILES = 8
MAX_GRID_Y = 65535  # CUDA's limit on gridDim.y, which holds the row tiles


def _sms() -> int:
    if SIMULATED:
        return 4  # the simulator's stand-in "GPU": small, so that small problems exercise split-K
    return int(cuda.get_current_device().MULTIPROCESSOR_COUNT)


def slice_counts(k: int, t: Tile) -> list[int]:
    """The numbers of slices of K that leave none empty with tile t: s = ceil(ktiles / per) for some per."""
    ktiles = cdiv(k, t.BK)
    return sorted({cdiv(ktiles, cdiv(ktiles, s)) for s in range(1, min(MAX_SPLITS, ktiles) + 1)})


@lru_cache(maxsize=4096)
def plan(m: int, n: int, k: int, *, sms: int | None = None, splits: int | None = None,
         aligned: tuple[bool, ...] = (True, True, True), wide: bool | None = None,
         tile: Tile | Thin | None = None, thin: bool = True, fuse: bool | None = None,
         one_loop: bool | None = None) -> Plan:
    """The strategy for C (m x n) = A (m x k) @ B (k x n).

    One row and 2-32 columns (``row_few_choice``): ``ROW_FEW`` (lanes along k, B read as a flat array), its slices
    one pass of its loop deep where that saves more than ``ROW_FEW_SPLIT_PASSES`` passes, else one
    (``row_few_splits``); but ROW_VEC where B's rows start 16-byte aligned, C has more than ``ROW_FEW_VEC_MAX``
    columns, rows/1's slices hold K (``thin_choice``) and ROW_VEC's own plan takes one slice or at least
    ``VEC_BUSY`` blocks (``row_vec_blocks``).
    Few rows or columns (``thin_choice``): where C has at most ``THIN_MAX["rows"]`` rows or ``THIN_MAX["cols"]``
    columns (rows where both and n >= ``ROWS_FIRST`` * m, else cols; none where the 16-row kernel would take C with
    at most ``ROWS16_MIN_COLS`` columns, or a cols kernel of 8 or 16 columns where k <= ``COLS_SHORT_K`` * n), one of
    ``THINS`` (util.sgemm_thin: only the FMAs C needs, the large operand read once a block of 16
    rows or columns); its slices are the fewest that keep each within its ``kmax`` (and no shallower than its
    ``kmin``) and make ``THIN_WAVES`` of a wave of its ``MINB`` blocks an SM (or the most there are); where those
    make more than one wave of the blocks an SM the kernel holds, fewer, to leave the last wave out, or where no
    count does, more, to fill it, none shallower than ``FILL_DEPTH`` x ``kmin`` (``thin_fill``).
    ``thin=False``, a forced ``splits`` or a forced ``tile`` of ``TILES`` or ``NARROW_TILES`` keeps to the tiles.

    Tile and split-K: for each tile of ``TILES`` (where C has at most ``NARROW_MAX`` columns, of ``NARROW_TILES``, 32
    columns wide, unless a forced ``splits`` leaves a slice of each empty) and each number of slices s (1..MAX_SPLITS,
    each slice whole BK tiles), the estimated time (``cost_model(tile).estimate``) is ``(k-tiles per slice +
    block_overhead_tiles) * step * worth / MINB + rounds * a round's fixed cost (``wave_cost``)``: the busiest SM runs
    ceil(blocks / sms) blocks in ``rounds`` of MINB, a last round of fewer counting as ``partial_round``'s share of
    MINB blocks at least (``worth`` blocks' time in all); ``step`` is the time an SM takes for one k-tile of MINB
    blocks (``tile_seconds`` for 2 blocks of 128 x 128, in proportion to the FMAs for others, divided by the tile's
    measured ``speed``), plus the blocks' reads of
    their panels of A and B ((BM + BN) * k * 4 bytes an output tile, at ``operand_bytes_per_s``), plus for s > 1 the
    workspace traffic ((2s + 1) * m * n * 4 bytes at ``workspace_bytes_per_s``) and the sum's launch; the cheapest
    wins (on a tie the larger tile, then fewer slices). ``tile`` and ``splits`` force a choice (checked, never
    clamped; forced slices go only to tiles they leave none empty).
    16-byte loads: of A when k % 4 == 0, of B when n % 4 == 0, and each only where ``aligned`` (A, B and C) says
    its array starts 16-byte aligned; 16-byte stores of C (``Plan.vc``) on the tiles with ``VC`` where B's loads
    are 16-byte and C (or the workspace) is aligned. ``wide``: 64-bit offsets when an operand or the workspace has
    2^31 elements or more. ``tile`` may also force one of ``THINS`` (or ``ROW_VECS``, ``ROW_FEWS``, ``COL_VEC``),
    with or without ``splits``. Where thin_choice takes rows/1 for C with one row and B's rows start 16-byte aligned
    (n % 4 == 0 and ``aligned``; with 2-32 columns only where ``row_few_choice`` leaves it), ``ROW_VEC`` (16-byte
    loads of B) takes rows/1's place; where C has
    one column, ``COL_VEC`` takes cols/1's (16-byte loads of both operands where k % 4 == 0 and both start 16-byte
    aligned: ``va`` and ``vb``), both with their own ``THIN_WAVES_VEC``.
    With several slices, who adds them (``fuse_choice``; ``fuse`` forces it): for the thin kernels of
    ``FUSED_KINDS``, each output tile's last block, where that takes at most ``FUSE_ROUNDS`` rounds of loads; else
    a second kernel.
    A tiled plan's blocks take every k-tile through the kernels' one-tile loop (``Plan.one_loop``; ``one_loop``
    forces it either way) where the grid has at most one block an SM and a slice at most ``ONE_LOOP_TILES``
    k-tiles (with 32-bit offsets: no such plan needs 64-bit ones).
    """
    for name, v in (("m", m), ("n", n), ("k", k)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v <= INT32_MAX:
            raise ValueError(f"{name} must be an int in 1..2^31-1, got {v!r}")
    if tile is not None and tile not in TILES + NARROW_TILES + THINS + ROW_VECS + ROW_FEWS + (COL_VEC,):
        raise ValueError(f"tile must be one of util.sgemm.TILES ({', '.join(t.name for t in TILES)}), NARROW_TILES "
                         f"({', '.join(t.name for t in NARROW_TILES)}), THINS ({', '.join(t.name for t in THINS)}), "
                         f"ROW_VECS, ROW_FEWS or COL_VEC, got {tile!r}")
    if tile in ROW_FEWS and not (m == 1 and n <= tile.cb):
        raise ValueError(f"ROW_FEW ({tile.name}) takes C with one row and at most {tile.cb} columns; got m = {m}, "
                         f"n = {n}: use Thin('rows', 1)" + (" or a wider one of ROW_FEWS" if m == 1 and
                                                             n <= ROW_FEWS[-1].cb else ""))
    if tile in ROW_VECS and not (m == 1 and n % 4 == 0 and aligned[1]):
        raise ValueError(f"ROW_VEC ({tile.name}) takes C with one row and B whose rows start 16-byte aligned "
                         f"(n % 4 == 0, B aligned); got m = {m}, n = {n}, B aligned: {aligned[1]}: use Thin('rows', 1)")
    if tile == COL_VEC and n != 1:
        raise ValueError(f"COL_VEC ({COL_VEC.name}) takes C with one column; got n = {n}: use Thin('cols', {n})"
                         if n <= WIDTHS[-1] else f"COL_VEC ({COL_VEC.name}) takes C with one column; got n = {n}")
    if one_loop is not None and not isinstance(one_loop, bool):
        raise ValueError(f"one_loop must be True, False or None (the rule), got {one_loop!r}")
    if one_loop is not None and isinstance(tile, Thin):
        raise ValueError(f"one_loop is the tiled kernels' choice; {tile.name} is a thin kernel: force a tile of TILES "
                         "or leave one_loop to the rule")
    if one_loop is not None and tile is None and thin and splits is None and thin_choice(m, n, k) is not None:
        raise ValueError("one_loop is the tiled kernels' choice; this shape takes a thin kernel (pass thin=False or "
                         "a tile of TILES)")
    if len(aligned) not in (2, 3):
        raise ValueError(f"aligned is (A, B) or (A, B, C): whether each starts 16-byte aligned; got {aligned!r}")
    c16 = bool(aligned[2]) if len(aligned) == 3 else True
    m, n, k = int(m), int(n), int(k)
    sms = _sms() if sms is None else sms

    tiles = _tiles(m, n, k, tile, splits)
    if not tiles:
        rows = tile.BM if tile else max(t.BM for t in TILES)
        raise ValueError(f"m = {m} needs more than {MAX_GRID_Y} row tiles of {rows} rows, the most one launch's "
                         f"grid holds (gridDim.y): split A and C by rows into calls of at most {MAX_GRID_Y * rows} rows")
    if isinstance(tile, Thin):
        return _fused(_thin_plan(m, n, k, tile, sms, splits, wide, "forced", aligned, fuse), fuse)
    one_row = row_few_choice(m, n, k, aligned[1], sms) if tile is None and splits is None and thin else None
    if one_row is not None:
        return _fused(_thin_plan(m, n, k, one_row, sms, None, wide, f"C has one row and {n} columns", aligned, fuse),
                      fuse)
    few = thin_choice(m, n, k) if tile is None and splits is None and thin else None
    if few is not None:
        few = thin_kernel(m, n, k, few, sms, aligned[1])
        return _fused(_thin_plan(m, n, k, few, sms, None, wide, f"C has {m if few.kind == 'rows' else n} {few.kind}",
                                 aligned, fuse), fuse)
    if splits is not None:  # only the tiles that this many slices leave none empty
        most = max(min(cdiv(k, t.BK), MAX_SPLITS) for t in tiles)
        if isinstance(splits, bool) or not isinstance(splits, (int, np.integer)) or not 1 <= splits <= most:
            raise ValueError(f"splits must be an int in 1..{most} (the number of {min(t.BK for t in tiles)}-deep "
                             f"k-tiles, at most MAX_SPLITS = {MAX_SPLITS}), got {splits!r}")
        fits = tuple(t for t in tiles if splits in slice_counts(k, t))
        if not fits:
            made = "; ".join(f"{t.name}: {cdiv(k, t.BK)} k-tiles in slices of {cdiv(cdiv(k, t.BK), splits)} make "
                             f"{cdiv(cdiv(k, t.BK), cdiv(cdiv(k, t.BK), splits))}" for t in tiles)
            raise ValueError(f"splits={splits} would leave a slice empty ({made})")
        tiles = fits
    va = k % 4 == 0 and aligned[0]
    vb = n % 4 == 0 and aligned[1]
    est, _, splits, tile = _ranked(m, n, k, tiles, splits, sms, vb, c16)[0]
    first = tiles[0]  # one slice of the first tile ranked, by the same rule (NARROW_COST ranks NARROW_TILES)
    one = cost_model(first).estimate(m, n, k, first, 1, sms, stores16(first, vb, 1, c16))
    why = (f"{tile.name} tiles, {splits} slice(s): est. {est * 1e6:.0f} us on {sms} SMs "
           f"(one slice of {first.name}: {one * 1e6:.0f} us)")
    kslice = cdiv(cdiv(k, tile.BK), splits) * tile.BK
    # the largest offset formed: the walking offsets end one tile past A (BK) and B (BK rows of n), the workspace
    big = max(m * k + tile.BK, (k + tile.BK) * n, splits * m * n if splits > 1 else 0)
    wide = big > INT32_MAX if wide is None else bool(wide)
    blocks = cdiv(m, tile.BM) * cdiv(n, tile.BN) * splits
    if one_loop is None:
        one_loop = not wide and blocks <= sms and kslice // tile.BK <= ONE_LOOP_TILES
    _check_one_loop(one_loop, wide)
    return _fused(Plan(m, n, k, int(splits), kslice, va, vb, wide, tile, why, c16=c16, one_loop=one_loop), fuse)


def _tiles(m: int, n: int, k: int, tile: Tile | Thin | None, splits: int | None) -> tuple[Tile | Thin, ...]:
    """The tiles plan() ranks: ``tile`` where forced, else NARROW_TILES where C has at most NARROW_MAX columns (but
    for a forced ``splits`` that would leave a slice of each of them empty) and TILES elsewhere; those whose row tiles
    fit the grid (MAX_GRID_Y)."""
    narrow = n <= NARROW_MAX and (splits is None or any(splits in slice_counts(k, t) for t in NARROW_TILES))
    pool = (tile,) if tile is not None else NARROW_TILES if narrow else TILES
    return tuple(t for t in pool if cdiv(m, t.BM) <= MAX_GRID_Y)


def _ranked(m: int, n: int, k: int, tiles: tuple[Tile, ...], splits: int | None, sms: int, vb: bool,
            c16: bool) -> list[tuple[float, int, int, Tile]]:
    """(estimate, preference, slices, tile) of each tile of ``tiles`` with ``splits`` slices (or each count
    ``slice_counts`` allows), cheapest first; on a tie the earlier tile, then fewer slices. ``plan`` takes the first,
    ``choices`` the first few."""
    return sorted(((cost_model(t).estimate(m, n, k, t, s, sms, stores16(t, vb, s, c16)), i, s, t)
                   for i, t in enumerate(tiles)
                   for s in ([splits] if splits is not None else slice_counts(k, t))), key=lambda o: o[:3])


def choices(m: int, n: int, k: int, count: int | None = None, *, sms: int | None = None,
            aligned: tuple[bool, ...] = (True, True, True)) -> list[Plan]:
    """The cost rule's ``count`` (default ``TUNE_CHOICES``) best-estimated tiled plans, cheapest first: the first is
    ``plan(m, n, k, thin=False)``'s choice, the others the tiles and slice counts it estimates next (``tune=True``
    times them)."""
    count = TUNE_CHOICES if count is None else count
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"count must be an int >= 1, got {count!r}")
    first = plan(m, n, k, sms=sms, aligned=aligned, thin=False)  # (and the checks of m, n, k, aligned)
    sms = _sms() if sms is None else sms
    tiles = _tiles(m, n, k, None, None)
    ranked = _ranked(m, n, k, tiles, None, sms, n % 4 == 0 and aligned[1], first.c16)
    return [plan(m, n, k, sms=sms, aligned=aligned, tile=t, splits=s) for _, _, s, t in ranked[:count]]


# The thin kernels whose output tile's last block adds its slices (util.splitk), where that takes at most FUSE_ROUNDS
# rounds of loads (slices_a_round slices' loads a round); elsewhere a second kernel adds them, every element on its
# own thread. Measured (H200, scratch probe in docs/notes.md, numba fused / second kernel): cols/1-8 and rows/1
# 0.85-1.01 at up to 3 rounds (1.03-1.05 at 5 and more); rows/2 and rows/4 1.04-1.30 at every count. ROW_FEW's slices
# (row_few_splits) were timed with this choice in place. The tiled
# kernels' 32 or 64 results a thread made every one of them spill (24-304 B, sm_90), so they take the second kernel
FUSED_KINDS = ("cols/1", "cols/2", "cols/4", "cols/8", "rows/1", *(t.name for t in ROW_VECS), "cols/1v",
               *(t.name for t in ROW_FEWS))
FUSE_ROUNDS = 3


def fuse_choice(tile: Tile | Thin, splits: int) -> bool:
    """Whether ``splits`` slices are added by each output tile's last block (``util.splitk``) rather than by a
    second kernel (``splitk_sum``): one of ``FUSED_KINDS``, several slices, at most ``FUSE_ROUNDS`` rounds of
    loads."""
    return (isinstance(tile, Thin) and tile.name in FUSED_KINDS and splits > 1
            and cdiv(splits, slices_a_round(tile.BM, tile.BN, tile.NT)) <= FUSE_ROUNDS)


def fused_at(tile: Tile | Thin, splits: int, fuse: bool | None) -> bool:
    """Whether ``splits`` slices of ``tile`` are added by each output tile's last block: as ``fuse`` forces it, else
    ``fuse_choice``; never with one slice."""
    return splits > 1 and (fuse_choice(tile, splits) if fuse is None else bool(fuse))


def _fused(p: Plan, fuse: bool | None) -> Plan:
    """p with ``fused`` set: forced by ``fuse`` (a thin kernel's, only meaningful with several slices), else
    ``fuse_choice``."""
    if fuse is not None and not isinstance(fuse, bool):
        raise ValueError(f"fuse must be True, False or None (the rule), got {fuse!r}")
    if fuse and not (isinstance(p.tile, Thin) and fuses(p.tile.BM, p.tile.BN, p.tile.NT)):
        raise ValueError(f"fuse=True takes a thin kernel whose threads add at most {MAX_ELEMENTS} elements of the tile "
                         f"(util.splitk; rows/1-4, cols/1-8); {p.tile.name} adds its slices with a second kernel")
    fused = fused_at(p.tile, p.splits, fuse)
    return replace(p, fused=fused, why=p.why + (", added by each tile's last block" if fused else ""))


# plan() takes a Thin kernel where C has at most this many rows ("rows") or columns ("cols"), and its slices aim at
# THIN_WAVES of a wave of Thin.MINB blocks an SM: read from the timed shapes of data/sgemm_thin_probe_nvidia_h200.json
# (scripts/sgemm_thin_probe.py, H200; docs/notes.md; retimed with the 32-column tiles in the tiled plans), which
# tests/test_sgemm_thin.py holds them to (of 29 shapes given the kernel timed there, 26 faster than the tiled plan; of
# 11 left to the tiles, none more than 6% slower), and thin_choice's exceptions below; where they
# make more than a wave, thin_fill takes fewer to leave the last one out (or, where none does, more to fill it)
THIN_MAX = {"rows": 32, "cols": 16}
# (by kind, or by a kernel's name where it has its own): rows/1, the one-row kernel that B's 4-byte loads take, at
# half a wave: on 15 one-row shapes with odd n 0.948x the time of a whole wave (0.896-1.015), and 0.950x on 20 drawn
# afterwards; the kernels of 2-32 rows took 0.83-1.25x at half a wave, no rule in it (H200, docs/notes.md)
THIN_WAVES = {"rows": 1.0, "cols": 0.5, "rows/1": 0.5}
# ROW_VEC's slices (no shallower than its kmin) aim at half a wave of its one 32-warp block an SM: each block keeps
# 64 KB of B in flight (1 x 8192 x 1024: 64 blocks, one slice, 105.1% of cuBLAS; 1 x 2048 x 8192: 4 slices of 16
# blocks 105.6%; H200, docs/notes.md)
# COL_VEC's too (16 one-column shapes drawn at random, each at the slices of 0.25-3 waves, H200: geomean 114.4% of
# cuBLAS at 0.25, 114.2% at 0.5, 113.6% at 1, 112.7% at 3; docs/notes.md)
THIN_WAVES_VEC = 0.5


# Which thin kernel, and where none: fitted to 468 shapes with C small on both sides, or few columns and short K, each
# timed with the rows kernel, the cols kernel and the tiled plan (data/sgemm_thin_choice_nvidia_h200.json,
# scripts/sgemm_thin_choice_probe.py, H200; docs/notes.md), which tests/test_sgemm_thin.py holds the rule to. Where
# both kinds qualify, rows where n >= ROWS_FIRST * m (the one-row kernel on 4 or more columns, 2-4 rows on 8-16), else
# cols (1 x 1 x 131072: cols/1v 0.35x rows/1's time). The 16-row kernel (9-32 rows) only where C has more than
# ROWS16_MIN_COLS columns: with fewer its blocks of 128 columns idle; on the 48 shapes where this decides, the tiles
# took 0.71-0.99x its time on 41 and 1.01-1.14x on 7 (12-16 rows, 40-64 columns, K of 16384 or more). The cols kernels
# of 5-16 columns (cols/8, cols/16) only where k > COLS_SHORT_K * n: with shorter K the stores of C outweigh the reads
# of A, and the 32-column tiles took 0.45-0.94x their time on 20 of 26 such shapes (timed at 8 and 16 columns).
ROWS_FIRST = 4
ROWS16_MIN_COLS = 64
COLS_SHORT_K = 8


def thin_choice(m: int, n: int, k: int) -> Thin | None:
    """The Thin kernel plan() takes for C (m x n) = A (m x k) @ B (k x n), or None (a tile of TILES or NARROW_TILES).
    A kind qualifies where C has at most ``THIN_MAX[kind]`` rows (``rows``) or columns (``cols``); where both do,
    rows where n >= ``ROWS_FIRST`` * m, else cols; then none where the kernel is the 16-row one and C has at most
    ``ROWS16_MIN_COLS`` columns, where it is a cols kernel of 8 or more columns (C has 5-16) and k <=
    ``COLS_SHORT_K`` * n, where its slices cannot hold K, or where its row blocks would pass ``MAX_GRID_Y``."""
    kinds = [kind for kind, few in (("rows", m), ("cols", n)) if few <= THIN_MAX[kind]]
    if not kinds:
        return None
    kind = kinds[0] if len(kinds) == 1 else "rows" if n >= ROWS_FIRST * m else "cols"
    pick = thin_for(m, n, kind)
    if kind == "rows" and pick.W == WIDTHS[-1] and n <= ROWS16_MIN_COLS:
        return None
    if kind == "cols" and pick.W >= 8 and k <= COLS_SHORT_K * n:
        return None
    return pick if thin_slice_counts(k, pick) and cdiv(m, pick.BM) <= MAX_GRID_Y else None


def thin_kernel(m: int, n: int, k: int, thin: Thin, sms: int, b_aligned: bool = True) -> Thin:
    """The kernel plan() runs for ``thin`` (one of THINS, as ``thin_for`` gives it): for one row with B's rows
    16-byte aligned (n % 4 == 0 and ``b_aligned``), ROW_VEC (16-byte loads) at ``row_vec_choice``'s width; for one
    column, COL_VEC (lanes along k; its blocks of 8 rows fit the grid up to 524,280 rows, cols/1 beyond); else
    ``thin``."""
    if thin == Thin("rows", 1) and n % 4 == 0 and b_aligned:
        return row_vec_choice(n, k, sms)
    if thin == Thin("cols", 1) and cdiv(m, COL_VEC.BM) <= MAX_GRID_Y:
        return COL_VEC
    return thin


# ROW_FEW takes C with one row and 2..FEW_WIDTHS[-1] columns, but for more than ROW_FEW_VEC_MAX columns with B's rows
# 16-byte aligned where rows/1's slices hold K and ROW_VEC's own plan (row_vec_choice, its slices) reads B in one slice
# or in VEC_BUSY blocks or more (ROW_VEC's there). On 80 one-row shapes drawn at random (2-32 columns, K of 500 to
# 2000000; H200, data/sgemm_row_few_nvidia_h200.json, scripts/sgemm_row_few_probe.py), where B's rows are not aligned
# the plan took 0.52x the time of the plan before it (rows/1, cols/2, or the tiles where K passed the thin kernels'
# reach: 1 x 5 x 1092039 had run at 15% of cuBLAS) at 4-8 columns, 0.56x at 9-16, 0.63x at 17-32 (geomeans; 0.33x on
# the two shapes with 2-3). Where B's rows are aligned, ROW_VEC took 1.099x ROW_FEW's time at 4-16 columns (geomean
# of 12). At 20-32 aligned columns it follows ROW_VEC's plan (one block an SM): on 48 shapes drawn there (K of 1500 to
# 150000, data/sgemm_row_few_wide_nvidia_h200.json, `--widths 20 24 28 32`), where ROW_VEC split K over 9-16 blocks
# it took 1.04-1.20x ROW_FEW's time (17 shapes, geomean 1.126; on the two earlier records 1.07-1.15x, 10 shapes), over
# 50-129 blocks 0.83-1.01x (28, geomean 0.940; earlier 0.91-0.97x, 4), in one slice 1.05-1.15x (3, K of 1830-2042;
# earlier 0.79-1.07x, geomean 0.914, 10 with K of 435-2516). The blocks follow K there (9-16 at K of 2541-12253, 50 or
# more from 12708 on): no shape had ROW_VEC on 17-49 blocks, where the line lies is not measured
ROW_FEW_VEC_MAX = 16


def row_few_choice(m: int, n: int, k: int, b_aligned: bool = True, sms: int | None = None) -> Thin | None:
    """The one-row kernel for few columns (``row_few_for``) where C has one row and 2..FEW_WIDTHS[-1] columns, but
    ROW_VEC (None: thin_choice's rows/1, then ``thin_kernel``) for more than ``ROW_FEW_VEC_MAX`` columns with B's
    rows 16-byte aligned (n % 4 == 0 and ``b_aligned``) where rows/1's slices hold K and ROW_VEC's plan takes one
    slice or at least VEC_BUSY blocks (``row_vec_blocks``); else None."""
    if m != 1 or not 2 <= n <= ROW_FEWS[-1].cb:
        return None
    if n > ROW_FEW_VEC_MAX and n % 4 == 0 and b_aligned and thin_choice(m, n, k) is not None:
        splits, blocks = row_vec_blocks(n, k, _sms() if sms is None else sms)
        if splits == 1 or blocks >= VEC_BUSY:
            return None
    return row_few_for(n)


def row_vec_blocks(n: int, k: int, sms: int) -> tuple[int, int]:
    """ROW_VEC's slices and blocks (slices x column blocks) as plan() would run it for C with one row."""
    vec = row_vec_choice(n, k, sms)
    splits = _thin_plan(1, n, k, vec, sms, None, None, "", (True, True)).splits
    return splits, splits * cdiv(n, vec.cb)


# ROW_FEW splits K only where that saves more than this many passes of its loop (whole or partial): a least-squares
# fit of time = a shape's own base + p x (passes in the deepest slice) + F x (split or not) to the timed ladders of
# the 40 shapes with K < 20000 of data/sgemm_row_few_nvidia_h200.json gave p = 0.79 us a pass and F = 1.68 us a split
# (its slices added by the tiles' last block), F / p = 2.1 (tests/test_sgemm_thin.py refits it); on the 80 shapes of
# K 300 to 15000 drawn after it (data/sgemm_row_few_short_k_nvidia_h200.json), 0.81 and 1.63 us, F / p = 2.0, and
# on the 20 of them where this rule keeps one slice, one pass a slice took 1.092x its time (geomean; 0.951-1.191)
ROW_FEW_SPLIT_PASSES = 2


def row_few_pass_splits(k: int, thin: Thin) -> int:
    """ROW_FEW's slices one pass of its loop deep (``Thin.kmin``: steps x BK rows, FEW_LOADS loads of B a lane in
    flight), or the most there are (MAX_SPLITS)."""
    quanta = cdiv(k, thin.BK)
    return max(s for s in thin_slice_counts(k, thin) if s == 1 or cdiv(quanta, s) * thin.BK >= thin.kmin)


def row_few_passes(k: int, thin: Thin, splits: int) -> int:
    """The passes of ROW_FEW's loop (whole or partial) in the deepest of ``splits`` slices of K."""
    return cdiv(cdiv(cdiv(k, thin.BK), splits), thin.steps)


def row_few_splits(k: int, thin: Thin) -> int:
    """ROW_FEW's slices: one pass deep (``row_few_pass_splits``) where that saves more than ``ROW_FEW_SPLIT_PASSES``
    passes against one slice; else one slice. On the 80 shapes of data/sgemm_row_few_nvidia_h200.json, the fastest
    of a ladder of 3-8 counts took 1/1.004 of this count's time (geomean; 1/1.066 at the most); where they differ
    from it, half as many slices took 1.083x its time (71 shapes), twice as many 1.099x (32); on those of
    data/sgemm_row_few_short_k_nvidia_h200.json, 1/1.004 (1/1.19 at the most), 1.115x (49) and 1.118x (49) (H200)."""
    deep = row_few_pass_splits(k, thin)
    return deep if row_few_passes(k, thin, 1) - row_few_passes(k, thin, deep) > ROW_FEW_SPLIT_PASSES else 1


def row_vec_choice(n: int, k: int, sms: int) -> Thin:
    """The one-row kernel's block width (one of ROW_VECS, blocks of 1024 threads, one an SM): of those whose slices
    (``thin_splits``) hold at least one pass of its loop (``Thin.pass_rows``, VEC_ROWS rows a lane; with fewer, that
    loop does not run and each row waits alone), the one whose blocks come nearest one wave without passing it
    (cdiv(n, cb) x slices <= sms), on a tie the fewest slices, then the widest; where none fits, ROW_VEC (128
    columns). Narrow blocks put more SMs on B where n / 128 leaves most idle: at 1 x 4096 x 4096, 32 blocks of 128
    columns (2 slices) read 94% of cuBLAS's rate, 128 of 32 columns 103% (H200, docs/notes.md). (Two passes of 8
    rows, against one: on 16 one-row shapes 1.05x the fastest width's time, geomean, against 1.015x; H200,
    docs/notes.md.) Where that width's blocks load fewer than VEC_BUSY blocks' worth of columns (few columns, K
    long), the width and slices (``row_vec_splits``) that ``row_vec_time`` estimates fastest."""
    fits = _row_vec_fits(n, k, sms, lambda t: thin_splits(1, n, k, t, sms))
    if fits:
        rule, s = max(fits, key=lambda f: (cdiv(n, f[0].cb) * f[1], -f[1], f[0].cb))
        if s * n >= VEC_BUSY * rule.cb:  # slices x n / cb: the blocks' worth of columns loading
            return rule
    fast = _row_vec_fits(n, k, sms, lambda t: row_vec_splits(n, k, t, sms))
    if fast:
        return min(fast, key=lambda f: (row_vec_time(n, k, *f), -cdiv(n, f[0].cb) * f[1], f[1], -f[0].cb))[0]
    return rule if fits else ROW_VEC


def _row_vec_fits(n: int, k: int, sms: int, slices: Callable[[Thin], int]) -> list[tuple[Thin, int]]:
    """(width, slices(width)) of each of ROW_VECS whose slices ``_row_vec_fit``."""
    return [(t, s) for t in ROW_VECS for s in [slices(t)] if _row_vec_fit(n, k, t, s, sms)]


def _row_vec_fit(n: int, k: int, thin: Thin, splits: int, sms: int) -> bool:
    """Whether ``splits`` slices of the one-row kernel ``thin`` each hold a pass of its loop, in at most one wave of
    blocks."""
    return cdiv(cdiv(k, thin.BK), splits) * thin.BK >= thin.pass_rows and cdiv(n, thin.cb) * splits <= sms


def row_vec_splits(n: int, k: int, thin: Thin, sms: int) -> int:
    """ROW_VEC's slices: ``thin_splits``'; where those load fewer than VEC_BUSY blocks' worth of columns (slices x
    n / cb), the count that ``row_vec_time`` estimates fastest of those and of every count down to one pass of its
    loop deep in at most one wave of blocks (on a tie the fewest)."""
    splits = thin_splits(1, n, k, thin, sms)
    if splits * n >= VEC_BUSY * thin.cb:
        return splits
    more = [s for s in thin_slice_counts(k, thin) if s > splits and _row_vec_fit(n, k, thin, s, sms)]
    return min([splits, *more], key=lambda s: (row_vec_time(n, k, thin, s), s))


# The one-row kernel's time as its loads in flight allow (row_vec_time): a block of 1024 threads, 8 rows of 16 bytes
# in flight a lane, keeps 128 KB of B in flight an SM; at ~1.5 us a load under load, VEC_BUSY such blocks hold the
# ~4.3 TB/s that an H200 copies at (util.sgemm_thin's docstring). A block whose columns pass n loads fewer (its clamped
# lanes read what another lane reads). Slices cost VEC_SPLIT_US more for each round of loads their sum takes in the
# tiles' last blocks (``util.splitk.slices_a_round`` slices a round), or once for a second kernel: two slices against
# one, both with blocks enough to hold the rate, took 2.5 us more at 1 x 2048 x 8192 (32 columns a block) and 2.1 us
# at 1 x 4096 x 4096 (64); the rounds' cost fitted the fastest of every width at up to 7 slice counts on 47 one-row
# shapes with few columns (H200, docs/notes.md)
VEC_BUSY = 48
VEC_BYTES_S = 4.3e12
VEC_SPLIT_US = 2.0


def row_vec_time(n: int, k: int, thin: Thin, splits: int) -> float:
    """The one-row kernel's estimated time in us: B's bytes over the rate its blocks' loads in flight hold (each
    slice's columns, n / cb blocks' worth, up to VEC_BUSY), and VEC_SPLIT_US for each round of the slices' sum
    (``fuse_choice``: the tiles' last blocks, ``slices_a_round`` slices a round; a second kernel counts one)."""
    busy = min(splits * n / thin.cb, VEC_BUSY)
    rounds = (cdiv(splits, slices_a_round(thin.BM, thin.BN, thin.NT)) if fuse_choice(thin, splits)
              else int(splits > 1))
    return 4 * k * n / (VEC_BYTES_S * busy / VEC_BUSY) * 1e6 + VEC_SPLIT_US * rounds


def thin_slice_counts(k: int, thin: Thin) -> list[int]:
    """The numbers of K slices a Thin kernel can take: none empty (``slice_counts``), none deeper than its kmax."""
    return [s for s in slice_counts(k, thin) if cdiv(cdiv(k, thin.BK), s) * thin.BK <= thin.kmax]


def thin_splits(m: int, n: int, k: int, thin: Thin, sms: int, waves: float | None = None,
                minb: int | None = None) -> int:
    """Of ``thin_slice_counts`` whose slices are at least ``thin.kmin`` deep (or one slice), the fewest that make
    ``waves`` (default ``THIN_WAVES``' entry for its name, or else for its kind) of a wave of ``minb`` (default
    ``thin.MINB``) blocks an SM on ``sms`` SMs, or the most there are (K must take some)."""
    blocks = cdiv(m, thin.BM) * cdiv(n, thin.BN)
    default = THIN_WAVES_VEC if thin.vec else THIN_WAVES.get(thin.name, THIN_WAVES[thin.kind])
    target = (default if waves is None else waves) * (thin.MINB if minb is None else minb) * sms
    quanta = cdiv(k, thin.BK)
    valid = [s for s in thin_slice_counts(k, thin) if s == 1 or cdiv(quanta, s) * thin.BK >= thin.kmin]
    return next((s for s in valid if blocks * s >= target), valid[-1])


# thin_fill's slices stay at least this many times Thin.kmin deep (96 k-steps): of the fills timed (H200,
# docs/notes.md), 8 of the 16 that ended shallower ran 1.01-1.18x longer (and the four taken down to kmin, 1.02-1.16x),
# of the 38 that ended at 96 or deeper, one (1.07x): each block's fixed costs (its staging and stores, one more slice
# to add) weigh against the few k-steps a shallow slice saves. With it, of 46 fills timed again, 2 ran longer (9 x 1078
# x 8593 1.23x, 1 x 4611 x 3447 1.06x)
FILL_DEPTH = 3


def thin_fill(m: int, n: int, k: int, thin: Thin, splits: int, sms: int, wide: bool, fuse: bool | None = None) -> int:
    """Where ``splits`` slices make more than one wave of blocks (at the blocks an SM the variant that runs holds,
    ``Thin.blocks_per_sm``: 32- or ``wide`` 64-bit offsets, its slices added by its tiles' last blocks or not, as
    ``fuse`` forces or ``fuse_choice`` takes at each count), the most slices of ``thin_slice_counts`` that make one
    wave fewer; where none does, the most that make no more waves, are no shallower than ``FILL_DEPTH`` times
    ``thin.kmin`` and keep the offsets' width; else ``splits``. ``thin_splits`` takes the fewest slices that reach its
    share of a wave, and with whole slice counts that mostly means a few blocks more than the wave holds: a last wave
    part empty, which costs a whole slice's time. Leaving it out beat filling it on each of 20 shapes drawn at random
    (0.87x the time, 0.78-0.95x; 20 x 1116 x 14411: 58 slices of rows/16 in two waves 103.7% of cuBLAS, 29 in one
    111.5%), and beat the count that overflows on each of 20 more where slices too shallow to fill had kept it
    (0.88x; 17 x 1861 x 1084: 19 slices of rows/16, 570 blocks on 528 places, then 17, 0.79x the time; H200,
    docs/notes.md). ROW_VEC and COL_VEC keep their slices."""
    if thin.vec:
        return splits
    blocks, quanta = cdiv(m, thin.BM) * cdiv(n, thin.BN), cdiv(k, thin.BK)

    def waves(s: int) -> int:  # a kernel without a fused variant refuses a forced fuse later, in _fused
        fused = fused_at(thin, s, fuse) and fuses(thin.BM, thin.BN, thin.NT)
        return cdiv(blocks * s, sms * thin.blocks_per_sm(wide, fused))

    first = waves(splits)
    if first <= 1:
        return splits
    counts = thin_slice_counts(k, thin)
    fewer = max((s for s in counts if s < splits and waves(s) == first - 1), default=None)
    if fewer is not None:
        return fewer
    return max((s for s in counts if s > splits and waves(s) == first
                and cdiv(quanta, s) * thin.BK >= FILL_DEPTH * thin.kmin and (wide or s * m * n <= INT32_MAX)),
               default=splits)


def _thin_plan(m: int, n: int, k: int, thin: Thin, sms: int, splits: int | None, wide: bool | None,
               reason: str, aligned: tuple[bool, bool], fuse: bool | None = None) -> Plan:
    """plan() for a Thin kernel (forced, or ``thin_choice``'s when ``splits`` is None and the caller did not force
    one): slices that leave none empty and none deeper than ``thin.kmax``, ``thin_splits``' count and then
    ``thin_fill``'s (offsets 64-bit if that count's need them); COL_VEC's 16-byte loads of both operands
    (``va`` and ``vb``: A's rows and B, a vector of k floats) where k % 4 == 0 and both start 16-byte aligned."""
    quanta = cdiv(k, thin.BK)
    valid = thin_slice_counts(k, thin)
    if not valid:
        raise ValueError(f"k = {k} needs more than MAX_SPLITS = {MAX_SPLITS} slices of at most {thin.kmax} for "
                         f"{thin.name}: use a tile of util.sgemm.TILES")

    def offsets_wide(s: int) -> bool:
        """The largest offset formed (loaded or not) with s slices passes int32: A's and B's offsets end within
        thin.reach k-steps past k; the last slice's end (kb + kslice, which may pass k); the workspace."""
        return max(m * k + thin.reach, (k + thin.reach) * n, s * cdiv(quanta, s) * thin.BK,
                   s * m * n if s > 1 else 0) > INT32_MAX

    moved = ""
    if splits is None:
        base = (row_vec_splits(n, k, thin, sms) if thin in ROW_VECS else row_few_splits(k, thin) if thin.few
                else thin_splits(m, n, k, thin, sms))
        splits = thin_fill(m, n, k, thin, base, sms, offsets_wide(base) if wide is None else bool(wide), fuse)
        if splits != base:
            way = "fewer to leave the last wave out" if splits < base else "more to fill the last wave"
            moved = f" (thin_splits gives {base}; {way})"
    elif isinstance(splits, bool) or not isinstance(splits, (int, np.integer)) or int(splits) not in valid:
        raise ValueError(f"splits={splits!r} does not fit {thin.name} on k = {k}: slices of whole {thin.BK}-step "
                         f"quanta, at most {thin.kmax} deep, none empty, make one of {valid}")
    splits = int(splits)
    kslice = cdiv(quanta, splits) * thin.BK
    wide = offsets_wide(splits) if wide is None else bool(wide)
    vec = thin == COL_VEC and k % 4 == 0 and aligned[0] and aligned[1]  # both operands' loads 16-byte
    why = f"{thin.name} kernel ({reason}), {splits} slice(s) of {kslice}{moved}" + (", 16-byte loads" if vec else "")
    return Plan(m, n, k, splits, kslice, vec, vec or thin in ROW_VECS, wide, thin, why)  # ROW_VEC: B's 16-byte


# ---- numba ----------------------------------------------------------------------------------------------------

@lru_cache(maxsize=None)
def numba_kernel(va: bool, vb: bool, wide: bool, tile: Tile = TILE, *, simulator: bool = SIMULATED,
                 order: str | None = None, shift_b: bool = False, vc: bool = False, sc: bool = False,
                 one_loop: bool = False, row_b: bool = False):
    """The numba kernel ``gemm(m, n, k, kslice, a, b, out, dst, flags)`` on flat (1-D, row-major) arrays; ``out`` holds
    ``gridDim.z`` slices of m x n (C itself when there is one), which ``splitk_sum`` adds; ``dst`` and
    ``flags``, which the thin kernels' fused split-K takes (``util.splitk``), are not read (one signature for
    every kernel). ``order``: the order of a k-step's FMAs (one of
    ``FFMA_ORDERS``; default: the one recorded for this variant, ``ffma_order``). ``vc`` (``Plan.vc``): a lane's 4
    results of a row in one 16-byte store (n % 4 == 0, ``out`` 16-byte aligned). ``shift_b`` (``Plan.shift_b``;
    only for B's 4-byte loads by whole pieces, and only launched with n >= BN): the right-edge block's tile starts
    at column n - BN instead of being clamped column by column, so a piece's 4 floats are always consecutive and one
    walking offset serves each piece (with per-column clamps each float needs its own); that block stores only
    the columns from its own BN-aligned start on. ``row_b`` (``Plan.row_b``, with ``shift_b``): those 4-byte loads
    spread along rows, a warp's load 32 adjacent floats of a row (``b_by_rows``). ``one_loop`` (``Plan.one_loop``):
    without the two-tile pass, every k-tile through the one-tile loop.

    Its shared tiles are 16-byte aligned (without that, ptxas does not always prove a fragment's 4 floats
    aligned and reads them one by one: LDS instead of LDS.128). numba's simulator takes no alignment:
    ``simulator=True`` builds the kernel it runs; ``simulator=False`` the one a compiler sees (the default on a
    GPU; pass it for static analysis from a simulator process)."""
    from numba import float32, int32, int64, uint32, uint64

    from .intrinsics import add_nsw, at, ldg128_at, mul_nsw, stg128_at

    BM, BN, BK, TM, TN, WM, WN, WMI, WNI, PAD = (tile.BM, tile.BN, tile.BK, tile.TM, tile.TN, tile.WM, tile.WN,
                                                 tile.WMI, tile.WNI, tile.PAD)
    NT, KG = tile.NT, tile.KG
    WARPS_N, LN, NTG = BN // WN, WN // (WNI * TN), NT // KG  # NTG: the threads of one group of warps
    SM, SN, FM, FN, BMP = WM // WMI, WN // WNI, WMI * TM, WNI * TN, BM + PAD
    A4, B4 = BM * BK // 4 // NT, BK * BN // 4 // NT
    KC = BK // KG // 8  # runs of 8 k-steps a group does per tile
    assert A4 * 4 * NT == BM * BK and B4 * 4 * NT == BK * BN and KC * 8 * KG == BK, "whole pieces, 8 k-steps a run"
    OFF = int64 if wide else int32  # the type of every element offset
    UOFF = uint64 if wide else uint32  # the same width, unsigned: divisions of counts >= 0 by shifts
    VA, VB = bool(va), bool(vb)
    # B's scalar loads spread over consecutive threads, one walking offset per element: with one piece a thread
    # (the 128 x 128 tile); the 64 x 128 tile's two pieces would take 8 offsets out of its 168 registers
    # (measured slower there, docs/notes.md)
    SPREAD_B = not VB and B4 == 1
    SHIFT_B = _check_shift_b(shift_b, vb, tile)
    PIECE_B = VB or SHIFT_B  # one walking offset per piece of B (else one per element), as the twin's PIECE_B
    # ROW_B (with SHIFT_B): each warp's 4-byte loads of B read 32 adjacent floats of a row, a lane's elements 32
    # columns apart in RB consecutive rows (constant offsets from one walking offset, the rows n apart)
    ROW_B = _check_row_b(row_b, SHIFT_B, tile)
    CB = BN // 32  # with ROW_B: a row's runs of 32 columns
    RB = max(1, 4 * B4 // CB)  # with ROW_B: the rows of a warp's part of B's tile
    assert not ROW_B or (BN % 32 == 0 and (4 * B4) % CB == 0), "ROW_B: whole rows a warp"
    VC = _check_vc(vc, vb, tile)
    SC = _check_sc(sc, vb, tile)
    S32 = tile.S32 and not wide  # (a 64-bit variant's offsets are int64 either way)
    TA = tile.TA and S32
    ONE_LOOP = _check_one_loop(one_loop, wide)
    ALIGN = None if simulator else 16
    order = ffma_order("numba", tile, va, vb, wide, SHIFT_B, VC, SC, ONE_LOOP) if order is None else order
    _check_order(order)
    COLS, SNAKE = order in ("col", "colsnake"), order in ("snake", "colsnake")
    NO, NI = (FN, FM) if COLS else (FM, FN)  # the outer and inner loop of the FMAs

    @cuda.jit(device=True)
    def kstep(acc, fa, fb, AsT, Bs, buf, kk, am, bn):
        """One k-step: the fragments of row kk of both tiles, then FM x FN FMAs."""
        for mi in range(WMI):
            for i in range(TM):
                fa[mi * TM + i] = AsT[buf, kk, am + mi * SM + i]
        for ni in range(WNI):
            for j in range(TN):
                fb[ni * TN + j] = Bs[buf, kk, bn + ni * SN + j]
        for o in range(NO):  # in the order `order` (FFMA_ORDERS): constants once the loops are unrolled
            for q in range(NI):
                r = NI - 1 - q if SNAKE and o % 2 == 1 else q
                i = r if COLS else o
                j = o if COLS else r
                acc[i, j] += fa[i] * fb[j]

    @cuda.jit(device=True)
    def ktile(acc, fa, fb, AsT, Bs, buf, k0, am, bn):
        """This group's k-steps k0, k0 + 1, ... of the tile in buffer buf (all BK of them with one group), 8 at a
        time written out: constant shared offsets from k0."""
        for c in range(KC):
            kstep(acc, fa, fb, AsT, Bs, buf, k0 + c * 8 + 0, am, bn)
            kstep(acc, fa, fb, AsT, Bs, buf, k0 + c * 8 + 1, am, bn)
            kstep(acc, fa, fb, AsT, Bs, buf, k0 + c * 8 + 2, am, bn)
            kstep(acc, fa, fb, AsT, Bs, buf, k0 + c * 8 + 3, am, bn)
            kstep(acc, fa, fb, AsT, Bs, buf, k0 + c * 8 + 4, am, bn)
            kstep(acc, fa, fb, AsT, Bs, buf, k0 + c * 8 + 5, am, bn)
            kstep(acc, fa, fb, AsT, Bs, buf, k0 + c * 8 + 6, am, bn)
            kstep(acc, fa, fb, AsT, Bs, buf, k0 + c * 8 + 7, am, bn)

    if KG > 1:
        RED = (KG - 1, FM * FN, NTG)  # the other groups' sums, element-major: conflict-free and coalesced

        @cuda.jit(device=True)
        def gather(acc, g, tg):
            """Sliced K: groups 1, 2, ... hand their sums to group 0 through shared memory, which adds them in that
            order; True for the group that stores the results."""
            red = cuda.shared.array(RED, float32)
            if g > 0:
                for i in range(FM):
                    for j in range(FN):
                        red[g - 1, i * FN + j, tg] = acc[i, j]
            cuda.syncthreads()
            if g == 0:
                for h in range(KG - 1):
                    for i in range(FM):
                        for j in range(FN):
                            acc[i, j] += red[h, i * FN + j, tg]
            return g == 0
    else:
        @cuda.jit(device=True)
        def gather(acc, g, tg):
            return True

    CROWS, CS = NT // BN, (KG - 1, BM, BN)  # SC: the rows of C's tile that all threads store a pass; its tiles

    @cuda.jit(device=True)
    def staged(acc, out, g, t, am, bn, brow, bcl, bcl0, m, n):
        """SC: every group's sums into one BM x BN tile in shared memory (group 0 adds the others' in order 1, 2, ...
        to its own, each thread only at its own results' places), then every thread stores a column of it, the
        block's consecutive threads on consecutive columns: a warp's store writes 32 adjacent floats of a row."""
        cs = cuda.shared.array(CS, float32, alignment=ALIGN)
        if g > 0:
            for mi in range(WMI):
                for i in range(TM):
                    for ni in range(WNI):
                        for jj in range(TN):
                            cs[g - 1, am + mi * SM + i, bn + ni * SN + jj] = acc[mi * TM + i, ni * TN + jj]
        cuda.syncthreads()
        if g == 0:
            for mi in range(WMI):
                for i in range(TM):
                    for ni in range(WNI):
                        for jj in range(TN):
                            v = acc[mi * TM + i, ni * TN + jj]
                            for h in range(KG - 1):
                                v += cs[h, am + mi * SM + i, bn + ni * SN + jj]
                            cs[0, am + mi * SM + i, bn + ni * SN + jj] = v
        cuda.syncthreads()
        um, un = uint64(m), uint64(n)  # unsigned: no negative-index selects
        c = t % uint32(BN)
        col = uint64(bcl) + uint64(c)
        if col < un and (not SHIFT_B or col >= uint64(bcl0)):
            row0 = uint64(brow) + uint64(t // uint32(BN))
            p = uint64(cuda.blockIdx.z) * um * un + row0 * un + col
            for e in range(BM // CROWS):
                if row0 + uint64(e * CROWS) < um:
                    out[p] = cs[0, e * CROWS + t // uint32(BN), c]
                p += uint64(CROWS) * un

    @cuda.jit(device=True)
    def a_at(t, l, x):
        """(row, k) inside the tile of element x of this thread's piece l of A: 4 floats along k."""
        return (t + l * NT) // (BK // 4), (t + l * NT) % (BK // 4) * 4 + x

    @cuda.jit(device=True)
    def b_at(t, l, x):
        """(k, column) inside the tile of element x of this thread's piece l of B: 4 floats along a row, or with
        SPREAD_B consecutive threads on consecutive columns (each warp's scalar load reads 128 contiguous bytes
        instead of every fourth float of 512)."""
        if SPREAD_B:
            e = t + (l * 4 + x) * NT
            return e // BN, e % BN
        return (t + l * NT) // (BN // 4), (t + l * NT) % (BN // 4) * 4 + x

    @cuda.jit(device=True)
    def b_row(t, j):
        """ROW_B: (k, column) inside the tile of this thread's element j (= 4 l + x) of B: the warp's RB rows, a row's
        CB runs of 32 columns, the lane's column in each."""
        return (t // 32) * RB + j // CB, (j % CB) * 32 + t % 32

    @cuda.jit(device=True)
    def stage(AsT, Bs, nxt, ra, rb, t):
        """The tile held in registers -> shared buffer nxt (A transposed)."""
        for l in range(A4):
            for x in range(4):
                r, q = a_at(t, l, x)
                AsT[nxt, q, r] = ra[l, x]
        for l in range(B4):
            for x in range(4):
                if ROW_B:
                    r, q = b_row(t, l * 4 + x)
                else:
                    r, q = b_at(t, l, x)
                Bs[nxt, r, q] = rb[l, x]

    @cuda.jit(device=True)
    def fetch(a, b, ra, rb, pa, pb, bstep, nrow):
        """A whole tile -> registers from walking offsets, no checks (edge rows and columns were clamped)."""
        for l in range(A4):
            if VA:
                ra[l, 0], ra[l, 1], ra[l, 2], ra[l, 3] = ldg128_at(a, pa[l])
            else:
                for x in range(4):
                    ra[l, x] = at(a, add_nsw(pa[l], OFF(x)))
            pa[l] = add_nsw(pa[l], OFF(BK))
        if ROW_B:  # one walking offset; the warp's rows nrow (n) apart, a row's runs of 32 floats 32 apart
            q = pb[0, 0]
            for r in range(RB):
                for c in range(CB):
                    rb[(r * CB + c) // 4, (r * CB + c) % 4] = at(b, add_nsw(q, OFF(c * 32)))
                q = add_nsw(q, nrow)
            pb[0, 0] = add_nsw(pb[0, 0], bstep)
            return
        for l in range(B4):
            if VB:
                rb[l, 0], rb[l, 1], rb[l, 2], rb[l, 3] = ldg128_at(b, pb[l, 0])
                pb[l, 0] = add_nsw(pb[l, 0], bstep)
            elif SHIFT_B:
                for x in range(4):
                    rb[l, x] = at(b, add_nsw(pb[l, 0], OFF(x)))
                pb[l, 0] = add_nsw(pb[l, 0], bstep)
            else:
                for x in range(4):
                    rb[l, x] = at(b, pb[l, x])
                    pb[l, x] = add_nsw(pb[l, x], bstep)

    @cuda.jit(device=True)
    def tail_b_rows(b, rb, pb, k0, kend, t, nrow):
        """ROW_B's part of the last, partial tile: zeros past kend, the loads where the walking offset stands."""
        q = pb[0, 0]
        for r in range(RB):
            rr, _ = b_row(t, r * CB)
            for c in range(CB):
                rb[(r * CB + c) // 4, (r * CB + c) % 4] = (at(b, add_nsw(q, OFF(c * 32)))
                                                           if add_nsw(k0, OFF(rr)) < kend else float32(0.0))
            q = add_nsw(q, nrow)

    if S32:
        @cuda.jit(device=True)
        def arow(brow, r, m):
            """Row r of the block's tile of A: past the last row, the last row (clamped)."""
            return min(add_nsw(brow, OFF(r)), add_nsw(m, OFF(-1)))

        @cuda.jit(device=True)
        def bcol(bcl, q, n):
            """Column q of the block's tile of B, clamped inside the matrix; with VB, q starts a piece that stays
            whole and aligned (clamped as one)."""
            return min(add_nsw(bcl, OFF(q)), add_nsw(n, OFF(-4 if VB else -1)))

        @cuda.jit(device=True)
        def fetch_tail(a, b, ra, rb, pa, pb, k0, kend, brow, m, k, t, nrow):
            """The last, partial tile (k0 + BK > kend) -> registers: zeros past kend. B's elements are where its
            walking offsets stand (every tile before this one was whole), so a load of B needs only its row's check
            (with its clamped column recomputed from the block's corner in numba's 64-bit arithmetic, one took ~26
            instructions where the twin's took ~6, docs/notes.md); with TA, A's too, else A's rows recomputed."""
            for l in range(A4):
                r, q = a_at(t, l, 0)
                kq = add_nsw(k0, OFF(q))
                r0 = pa[l] if TA else add_nsw(mul_nsw(arow(brow, r, m), k), kq)
                for x in range(4):
                    ra[l, x] = at(a, add_nsw(r0, OFF(x))) if add_nsw(kq, OFF(x)) < kend else float32(0.0)
            if ROW_B:
                tail_b_rows(b, rb, pb, k0, kend, t, nrow)
            else:
                for l in range(B4):
                    for x in range(4):
                        r, _ = b_at(t, l, 0 if VB else x)
                        p = add_nsw(pb[l, 0], OFF(x)) if PIECE_B else pb[l, x]
                        rb[l, x] = at(b, p) if add_nsw(k0, OFF(r)) < kend else float32(0.0)
    else:  # the same in numba's typing
        @cuda.jit(device=True)
        def arow(brow, r, m):
            return min(brow + OFF(r), m - OFF(1))

        @cuda.jit(device=True)
        def bcol(bcl, q, n):
            return min(bcl + OFF(q), n - OFF(4 if VB else 1))

        @cuda.jit(device=True)
        def fetch_tail(a, b, ra, rb, pa, pb, k0, kend, brow, m, k, t, nrow):
            for l in range(A4):
                r, q = a_at(t, l, 0)
                kq = k0 + OFF(q)
                r0 = arow(brow, r, m) * k + kq
                for x in range(4):
                    ra[l, x] = at(a, r0 + OFF(x)) if kq + OFF(x) < kend else float32(0.0)
            if ROW_B:
                tail_b_rows(b, rb, pb, k0, kend, t, nrow)
            else:
                for l in range(B4):
                    for x in range(4):
                        r, _ = b_at(t, l, 0 if VB else x)
                        p = add_nsw(pb[l, 0], OFF(x)) if PIECE_B else pb[l, x]
                        rb[l, x] = at(b, p) if k0 + OFF(r) < kend else float32(0.0)

    def gemm(m, n, k, kslice, a, b, out, dst, flags):
        """Step 15's hot loop for every block: edge rows and columns clamped (their results are not stored), a
        K tail loaded once with checks, slice blockIdx.z of K written to out[blockIdx.z]."""
        AsT = cuda.shared.array((2, BK, BMP), float32, alignment=ALIGN)
        Bs = cuda.shared.array((2, BK, BN), float32, alignment=ALIGN)
        ra = cuda.local.array((A4, 4), float32)
        rb = cuda.local.array((B4, 4), float32)
        pa = cuda.local.array(A4, OFF)       # walking offsets of this thread's pieces of the next tile (one per
        pb = cuda.local.array((B4, 4), OFF)  # piece; for B without 16-byte loads, one per element)
        t = uint32(cuda.threadIdx.x)
        # the group of warps (sliced K) and the thread in it; with one group, constants (no group arithmetic)
        g = uint32(t // uint32(NTG)) if KG > 1 else uint32(0)
        tg = uint32(t % uint32(NTG)) if KG > 1 else t
        warp = tg // 32
        lane = tg % 32
        am = (warp // WARPS_N) * WM + (lane // LN) * TM
        bn = (warp % WARPS_N) * WN + (lane % LN) * TN
        k0 = g * (BK // KG)  # the group's first k-step of each tile
        mm, nn, kk = OFF(m), OFF(n), OFF(k)
        if S32:  # the set-up in 32 bits, as the twin's (Tile.S32)
            brow = mul_nsw(OFF(cuda.blockIdx.y), OFF(BM))
            bcl0 = mul_nsw(OFF(cuda.blockIdx.x), OFF(BN))
            bcl = min(bcl0, add_nsw(nn, OFF(-BN))) if SHIFT_B else bcl0  # this block's first column of B
            kbeg = mul_nsw(OFF(cuda.blockIdx.z), OFF(kslice))
            kend = min(add_nsw(kbeg, OFF(kslice)), kk)
        else:  # in numba's typing: int32 + int32 (and *, //) is int64 (the 128 x 128 tile, the 64-bit variants)
            brow = OFF(cuda.blockIdx.y) * OFF(BM)
            bcl0 = OFF(cuda.blockIdx.x) * OFF(BN)
            bcl = min(bcl0, nn - OFF(BN)) if SHIFT_B else bcl0
            kbeg = OFF(cuda.blockIdx.z) * OFF(kslice)
            kend = min(kbeg + OFF(kslice), kk)
        acc = cuda.local.array((FM, FN), float32)
        fa = cuda.local.array(FM, float32)
        fb = cuda.local.array(FN, float32)
        for i in range(FM):
            for j in range(FN):
                acc[i, j] = float32(0.0)
        if S32:
            for l in range(A4):
                r, q = a_at(t, l, 0)
                pa[l] = add_nsw(add_nsw(mul_nsw(arow(brow, r, mm), kk), kbeg), OFF(q))
            if ROW_B:
                rr, q = b_row(t, 0)
                pb[0, 0] = add_nsw(mul_nsw(add_nsw(kbeg, OFF(rr)), nn), add_nsw(bcl, OFF(q)))
            else:
                for l in range(B4):
                    for x in range(1 if PIECE_B else 4):
                        r, q = b_at(t, l, x)
                        pb[l, x] = add_nsw(mul_nsw(add_nsw(kbeg, OFF(r)), nn), bcol(bcl, q, nn))
            bstep = mul_nsw(OFF(BK), nn)
            span = OFF(kend - kbeg)  # >= 1: the tile counts by unsigned division (a shift)
            ntiles = OFF(UOFF(add_nsw(span, OFF(BK - 1))) // UOFF(BK))
            nfull = OFF(UOFF(span) // UOFF(BK))
        else:
            for l in range(A4):
                r, q = a_at(t, l, 0)
                pa[l] = arow(brow, r, mm) * kk + kbeg + OFF(q)
            if ROW_B:
                rr, q = b_row(t, 0)
                pb[0, 0] = (kbeg + OFF(rr)) * nn + bcl + OFF(q)
            else:
                for l in range(B4):
                    for x in range(1 if PIECE_B else 4):
                        r, q = b_at(t, l, x)
                        pb[l, x] = (kbeg + OFF(r)) * nn + bcol(bcl, q, nn)
            bstep = OFF(OFF(BK) * nn)
            ntiles = (kend - kbeg + OFF(BK - 1)) // OFF(BK)
            nfull = (kend - kbeg) // OFF(BK)
        if nfull > 0:
            fetch(a, b, ra, rb, pa, pb, bstep, nn)
        else:
            fetch_tail(a, b, ra, rb, pa, pb, kbeg, kend, brow, mm, kk, t, nn)
        stage(AsT, Bs, 0, ra, rb, t)
        cuda.syncthreads()
        j = OFF(0)  # the tile in buffer 0
        if not ONE_LOOP:  # (with ONE_LOOP this is not compiled)
            # passes whose two next tiles are whole
            if S32:
                pairs = OFF(UOFF(add_nsw(nfull, OFF(-1))) // UOFF(2)) if nfull > OFF(0) else OFF(0)
            else:
                pairs = (nfull - OFF(1)) // OFF(2) if nfull > 0 else OFF(0)
            kt = OFF(0)
            while kt < pairs:  # two tiles a pass: both buffer indices are constants
                fetch(a, b, ra, rb, pa, pb, bstep, nn)
                ktile(acc, fa, fb, AsT, Bs, 0, k0, am, bn)
                stage(AsT, Bs, 1, ra, rb, t)
                cuda.syncthreads()
                fetch(a, b, ra, rb, pa, pb, bstep, nn)
                ktile(acc, fa, fb, AsT, Bs, 1, k0, am, bn)
                stage(AsT, Bs, 0, ra, rb, t)
                cuda.syncthreads()
                kt = add_nsw(kt, OFF(1))
            j = mul_nsw(OFF(2), pairs) if S32 else OFF(2) * pairs
        buf = uint32(0)
        while j < ntiles:  # the last whole tile or two and the tail (with ONE_LOOP every tile): one copy of ktile
            if S32:
                nxt = add_nsw(j, OFF(1))
                more = nxt < ntiles
                if nxt < nfull:
                    fetch(a, b, ra, rb, pa, pb, bstep, nn)
                elif more:
                    fetch_tail(a, b, ra, rb, pa, pb, add_nsw(kbeg, mul_nsw(nxt, OFF(BK))), kend, brow, mm, kk, t, nn)
            else:
                more = j + OFF(1) < ntiles
                if j + OFF(1) < nfull:
                    fetch(a, b, ra, rb, pa, pb, bstep, nn)
                elif more:
                    fetch_tail(a, b, ra, rb, pa, pb, kbeg + (j + OFF(1)) * OFF(BK), kend, brow, mm, kk, t, nn)
            ktile(acc, fa, fb, AsT, Bs, buf, k0, am, bn)
            if more:
                stage(AsT, Bs, buf ^ uint32(1), ra, rb, t)
            cuda.syncthreads()
            buf ^= uint32(1)
            if S32:
                j = nxt
            else:
                j += OFF(1)
        if SC:
            staged(acc, out, g, t, am, bn, brow, bcl, bcl0, mm, nn)
            return
        if not gather(acc, g, tg):  # sliced K: the group that stores holds the sum
            return
        # the stores: unsigned (no negative-index selects), each row checked once, each column by a 32-bit compare
        # of a constant with the columns left, a row's 8 stores at constant offsets from one index (numba's
        # per-element `row < m and col < n` on 64-bit indices took 612 instructions for the 64 stores where the C
        # twin's took 258; this takes 308, the hot loops unchanged: docs/notes.md)
        um, un = uint64(m), uint64(n)
        base = uint64(cuda.blockIdx.z) * um * un
        first = uint64(bcl) + uint64(bn)  # this thread's first column of C
        cols = uint32(un - first) if first < un else uint32(0)  # the columns of C from there on (< 2^31)
        skip = uint32(uint64(bcl0) - first) if SHIFT_B and uint64(bcl0) > first else uint32(0)
        if VC:  # n % 4 == 0: a lane's 4 columns are all in C or all past it, one 16-byte store; each store's
            # own predicate and the rows' offsets by adds (a branch a row kept numba's stores from overlapping)
            row0 = uint64(brow) + uint64(am)
            rb0 = base + row0 * un + first
            for mi in range(WMI):
                for i in range(TM):
                    ok = row0 + uint64(mi * SM + i) < um
                    rbase = rb0 + uint64(mi * SM + i) * un
                    for ni in range(WNI):
                        if ok and uint32(ni * SN) < cols:
                            stg128_at(out, rbase + uint64(ni * SN), acc[mi * TM + i, ni * TN],
                                      acc[mi * TM + i, ni * TN + 1], acc[mi * TM + i, ni * TN + 2],
                                      acc[mi * TM + i, ni * TN + 3])
            return
        for mi in range(WMI):
            for i in range(TM):
                row = uint64(brow) + uint64(am + mi * SM + i)
                if row < um:
                    rbase = base + row * un + first
                    for ni in range(WNI):
                        for jj in range(TN):
                            if uint32(ni * SN + jj) < cols and uint32(ni * SN + jj) >= skip:
                                out[rbase + uint64(ni * SN + jj)] = acc[mi * TM + i, ni * TN + jj]

    return cuda.jit(launch_bounds=(NT, tile.MINB))(gemm)


def _sum_pass(count: int):
    """splitk_sum's pass: a device function that adds the ``count`` slices after offset j (umn apart) to s in order,
    their loads written first so that all are in flight; it returns the sum and the last slice's offset."""

    @cuda.jit(device=True)
    def add(ws, s, j, umn):
        v = cuda.local.array(count, float32)
        for u in range(count):
            j += umn
            v[u] = at_nc(ws, int64(j))
        for u in range(count):
            s += v[u]
        return s, j

    return add


_sum_pass16, _sum_pass8, _sum_pass3, _sum_pass2, _sum_pass1 = (_sum_pass(count) for count in (16, 8, 3, 2, 1))


@cuda.jit
def splitk_sum(mn, splits, ws, c):
    """c[i] = ws[0 * mn + i] + ws[1 * mn + i] + ... in that order, for every i < mn (a grid-stride loop). The
    workspace through the read-only data path (``at_nc``, SASS ``LDG.E.CONSTANT``, as the twin's ``const float*
    __restrict__`` loads). Unsigned indices that walk by mn (no negative-index select, one add a load): 1.5-3x
    faster than ``ws[z * mn + i]``; a 32-bit slice counter, each sum of two wrapped in uint32 (numba types
    uint32 + uint32 as 64-bit: unwrapped, the kernel was 984 instructions against the twin's 424; 592 wrapped).
    ``range(1, splits)`` over int64 kept ~5 integer instructions a load for its overflow-safe trip count. The
    twin's loop is unrolled 16 times by NVVM, then 8, then 4, then the last 1-3, with each pass's loads issued
    before its adds; this sum does the same passes, each pass's loads written first so that all are in flight. (With
    8 loads a pass at most, numba's sum took 1.32-1.53x the twin's time at 42-97 slices: 8 loads in flight where the
    twin has 16; one by one, 7 slices took 1.13x; the last 1-3 in a loop of one load and one add, 1.03-1.09x at 3-4
    slices, written out 0.90-0.97x; docs/notes.md.) Passes of 8 predicated loads (-0.0 past the last slice) took
    1.19-1.25x the twin's time at 3-13 slices (docs/notes.md)."""
    i = uint64(cuda.grid(1))
    stride = uint64(cuda.gridsize(1))
    umn = uint64(mn)
    nz = uint32(splits)
    while i < umn:
        j = i
        s = at_nc(ws, int64(j))
        z = uint32(1)
        while uint32(z + uint32(16)) <= nz:  # 16 slices a pass
            s, j = _sum_pass16(ws, s, j, umn)
            z = uint32(z + uint32(16))
        if uint32(z + uint32(8)) <= nz:  # 8 of the last 15 or fewer
            s, j = _sum_pass8(ws, s, j, umn)
            z = uint32(z + uint32(8))
        if uint32(z + uint32(4)) <= nz:  # 4 of the last 7 or fewer the same way (the twin's loop is unrolled by 4 there)
            v0 = at_nc(ws, int64(j + umn))
            v1 = at_nc(ws, int64(j + uint64(2) * umn))
            v2 = at_nc(ws, int64(j + uint64(3) * umn))
            v3 = at_nc(ws, int64(j + uint64(4) * umn))
            s += v0
            s += v1
            s += v2
            s += v3
            j += uint64(4) * umn
            z = uint32(z + uint32(4))
        left = uint32(nz - z)  # the last 3 or fewer: their loads first, as the twin's unrolled remainder
        if left == uint32(3):
            s, j = _sum_pass3(ws, s, j, umn)
        elif left == uint32(2):
            s, j = _sum_pass2(ws, s, j, umn)
        elif left == uint32(1):
            s, j = _sum_pass1(ws, s, j, umn)
        c[i] = s
        i += stride


@cuda.jit
def splitk_sum4(mn, splits, ws, c):
    """splitk_sum four floats a thread: a 16-byte load from each slice (mn % 4 == 0 and c 16-byte aligned; the
    workspace is), the same sums in the same order, through the read-only data path (``ldg128_nc_at``). Signed
    indices, as the 16-byte load takes."""
    i = int64(cuda.grid(1)) * int64(4)
    stride = int64(cuda.gridsize(1)) * int64(4)
    nz = uint32(splits)
    while i < mn:
        j = i
        s0, s1, s2, s3 = ldg128_nc_at(ws, j)
        z = uint32(1)
        while z < nz:
            j = add_nsw(j, mn)
            v0, v1, v2, v3 = ldg128_nc_at(ws, j)
            s0 += v0
            s1 += v1
            s2 += v2
            s3 += v3
            z = uint32(z + uint32(1))
        u = uint64(i)
        c[u] = s0
        c[u + uint64(1)] = s1
        c[u + uint64(2)] = s2
        c[u + uint64(3)] = s3
        i = add_nsw(i, stride)


@cuda.jit
def splitk_sum8(mn, splits, ws, c):
    """splitk_sum with 8 lanes an element, for a C too small to fill the GPU a thread an element: lane q of an
    element's 8 adds the slices q per .. (q + 1) per - 1 in order (per = ceil(splits / 8); 8 at a time, their loads
    written first, zeros past the lane's last slice, so that 5 slices wait on one latency, not five), then the 8
    partial sums are added by shuffles (xor 1, 2, 4: every lane gets the same sum), and lane 0 stores it. A fixed
    order (deterministic); the twin's (splitk_sum8_c). Each warp's 4 elements are consecutive, and a warp stays
    whole in the grid-stride loop (its first element decides), as the shuffles need. The slice offsets are 32-bit
    (in both twins): with 64-bit ones numba hoisted the 7 offsets j + u mn of a pass before a loop each lane runs
    once, and its sum took 1.01-1.13x the twin's time; 32-bit, 0.97-1.05x (H200, docs/notes.md)."""
    t = uint64(cuda.grid(1))
    q = uint32(cuda.threadIdx.x) % uint32(8)
    first = uint64(uint32(cuda.threadIdx.x) % uint32(32) // uint32(8))  # this lane's element, from its warp's first
    i = t // uint64(8)
    stride = uint64(cuda.gridsize(1)) // uint64(8)
    umn = uint64(mn)
    m32 = uint32(mn)  # the workspace's offsets in 32 bits: splits x mn < 2^32 wherever this sum is taken (sum_lanes)
    nz = uint32(splits)
    per = uint32(uint32(nz + uint32(7)) // uint32(8))  # uint32 op uint32 is 64-bit in numba: each wrapped
    z0 = uint32(min(uint32(q * per), nz))
    z1 = uint32(min(uint32(z0 + per), nz))
    while i - first < umn:
        s = float32(0.0)
        if i < umn:
            j = uint32(uint32(z0 * m32) + uint32(i))
            z = z0
            while z < z1:  # 8 slices a pass, their loads first so that all are in flight (zeros past z1)
                v = cuda.local.array(8, float32)
                for u in range(8):
                    v[u] = (at_nc(ws, int64(uint32(j + uint32(u * m32)))) if uint32(z + uint32(u)) < z1
                            else float32(0.0))
                for u in range(8):
                    s += v[u]
                j = uint32(j + uint32(uint32(8) * m32))
                z = uint32(z + uint32(8))
        s += shfl_xor(s, 1)
        s += shfl_xor(s, 2)
        s += shfl_xor(s, 4)
        if q == uint32(0) and i < umn:
            c[i] = s
        i += stride


SUM_THREADS = 256
# The sum takes four floats a thread only while that leaves this many threads an SM: each thread walks every slice,
# one load after another, so with many slices and few threads it waits on latency (H200, the C twin's sum: at 256 x
# 256 x 65536, 66 slices, four a thread took 8.9 us against 5.0 us for one; at 1024 x 1024 x 512, 3 slices, 4.1
# against 5.2 us; docs/notes.md)
SUM_VEC_THREADS_PER_SM = 1024


def sum_vec(mn: int, c_aligned16: bool, sms: int | None = None) -> bool:
    """Whether the split-K sum of an m x n = ``mn`` C takes four floats a thread (``splitk_sum4``): 16-byte loads
    and stores need mn % 4 == 0 and C 16-byte aligned, and mn / 4 threads must still fill the SMs."""
    sms = _sms() if sms is None else sms
    return mn % 4 == 0 and c_aligned16 and mn // 4 >= SUM_VEC_THREADS_PER_SM * sms


def sum_lanes(mn: int, sms: int | None = None) -> bool:
    """Whether the split-K sum of an m x n = ``mn`` C takes 8 lanes an element (``splitk_sum8``): where a thread an
    element would give at most a quarter of the SMs a block of ``SUM_THREADS`` (each thread walks every slice, one
    latency after another: at 1 x 4096 x 4096, 34 slices in 16 blocks, the sum took 4.7 us on an H100). Measured
    (docs/notes.md): 0.85-0.91x the time of the whole call with 144-1274 elements and 40-256 slices; at ~30000
    elements (120 blocks) numba's took 1.04-1.06x, its 64-bit slice arithmetic (32-bit since) costing more than the
    latency saved. Its workspace offsets are 32-bit, so only where MAX_SPLITS (the most slices any plan takes) x mn
    < 2^32."""
    sms = _sms() if sms is None else sms
    return 4 * cdiv(mn, SUM_THREADS) <= sms and mn * MAX_SPLITS < 2**32  # its workspace offsets are 32-bit


def _sum_blocks(mn: int, vec: bool, lanes: bool = False) -> int:
    """Blocks of the split-K sum: a thread per element (per 4 with ``vec``, 8 per element with ``lanes``), at most
    65535 (a grid-stride loop)."""
    return min(cdiv(cdiv(mn, 4) if vec else mn * 8 if lanes else mn, SUM_THREADS), 65535)


# ---- the call ------------------------------------------------------------------------------------------------

def _describe(name: str, x: Any) -> tuple[tuple[int, ...], Any]:
    """(shape, x as a numba device array) of a C-contiguous float32 2-D device array, or a clear error."""
    if isinstance(x, np.ndarray):
        raise TypeError(f"{name} is a NumPy (host) array: copy it to the GPU first (cuda.to_device({name}))")
    if SIMULATED:
        if not hasattr(x, "copy_to_host"):
            raise TypeError(f"{name} must be a device array (cuda.to_device), got {type(x).__name__}")
        arr, dtype, shape = x, x.dtype, tuple(x.shape)
        contiguous = x.is_c_contiguous()
    else:
        if getattr(x, "__cuda_array_interface__", None) is None:
            raise TypeError(f"{name} must be a CUDA device array (numba's, or any with __cuda_array_interface__ "
                            f"such as a torch CUDA tensor), got {type(x).__name__}")
        arr = cuda.as_cuda_array(x)
        dtype, shape = arr.dtype, tuple(arr.shape)
        contiguous = arr.is_c_contiguous()
    if dtype != np.float32:
        raise TypeError(f"{name} must be float32, got {dtype}: convert it first (e.g. {name}.astype(np.float32))")
    if len(shape) != 2:
        raise ValueError(f"{name} must be a 2-D matrix, got shape {shape}")
    if not contiguous:
        raise ValueError(f"{name} must be C-contiguous (row-major, rows packed); got a strided view of shape "
                         f"{shape}: make a contiguous copy first (cuda.device_array_like + copy, or "
                         f"torch's .contiguous())")
    if 0 in shape:
        raise ValueError(f"{name} has an empty dimension (shape {shape}): m, n and k must be at least 1")
    return shape, arr


def _address(arr: Any) -> int:
    return arr.__cuda_array_interface__["data"][0]


def _aligned16(arr: Any) -> bool:
    return SIMULATED or _address(arr) % 16 == 0


_workspace: dict[str, Any] = {}


def _buffer(name: str, size: int, dtype: type, zeros: bool = False):
    """A cached device buffer ``name`` of at least ``size`` elements (grown, never shrunk; ``zeros``: made of
    zeros, for counters that every call leaves zero)."""
    buf = _workspace.get(name)
    if buf is None or buf.size < size:
        buf = cuda.to_device(np.zeros(size, dtype=dtype)) if zeros else cuda.device_array(size, dtype=dtype)
        _workspace[name] = buf
    return buf


def _workspace_for(floats: int):
    """The split-K workspace: at least ``floats`` float32, the first ``floats`` of them."""
    return _buffer("ws", floats, np.float32)[:floats]


def _counters_for(tiles: int):
    """The output tiles' counters of a fused split-K (``util.splitk``): at least ``tiles`` int32 zeros; a kernel that
    does not fuse takes them too (``_counters_for(1)``) and never reads them."""
    return _buffer("flags", max(tiles, 1024), np.int32, zeros=True)


def check_operands(a: Any, b: Any, c: Any) -> tuple[int, int, int, Any, Any, Any]:
    """(m, n, k) and the three as device arrays; a clear error, before anything is written, if they do not fit."""
    (m, k), a = _describe("a", a)
    (k2, n), b = _describe("b", b)
    if k2 != k:
        raise ValueError(f"inner dimensions differ: a is {m}x{k}, b is {k2}x{n}; C = A @ B needs b with {k} rows")
    (mc, nc), c = _describe("c", c)
    if (mc, nc) != (m, n):
        raise ValueError(f"c must be {m}x{n} (a's rows x b's columns), got {mc}x{nc}")
    if not SIMULATED:
        for name, x in (("a", a), ("b", b)):
            if _address(x) < _address(c) + 4 * c.size and _address(c) < _address(x) + 4 * x.size:
                raise ValueError(f"c overlaps {name}: the output must be a separate array")
    return m, n, k, a, b, c


def sgemm(a: Any, b: Any, c: Any, *, compiler: str = "numba", splits: int | None = None,
          wide: bool | None = None, tile: Tile | Thin | None = None, order: str | None = None,
          thin: bool = True, fuse: bool | None = None, one_loop: bool | None = None, tune: bool = False) -> Plan:
    """C = A @ B into ``c`` (float32, C-contiguous device arrays: a m x k, b k x n, c m x n); returns the Plan it ran.
    ``compiler``: "numba" or "cuda_c" (the C twin). ``splits``/``wide``/``tile`` override the plan (``tile``: one of
    ``TILES`` or ``NARROW_TILES``, or of ``THINS``, the kernels for C with few rows or columns), ``order`` the
    recorded order of the tiled kernels' FMAs (tests, studies; it keeps to the tiles); ``thin=False``: no thin kernel,
    ``fuse``: who adds the slices of a split K, ``one_loop``: the tiled kernels' k-tiles all through one loop or not
    (``plan``; forced either way, it too keeps to the tiles). ``tune=True``: where the rule takes a tile, the first
    call of a shape times the rule's ``TUNE_CHOICES`` best-estimated choices (``choices``) and every call of that
    shape takes the fastest (``tuned``); nothing may be forced then.

    The checks, the plan and the launch configuration are kept for the last few numba device arrays it was
    called on (``prepare``), so that a repeated call costs little more than the launches."""
    call = _cached(a, b, c, compiler, splits, wide, tile, order, thin, fuse, one_loop, tune)
    call()
    return call.plan


# tune=True: how many of the rule's best-estimated choices the first call of a shape times, and how many rounds. On
# 64 random shapes (the notebook's 24 and a draw of 40, H200, docs/notes.md) the fastest of the rule's first three in
# one run reached 90% of cuBLAS on 52 where its first did on 47; the first six, also 52
TUNE_CHOICES = 3
TUNE_RUNS = 5
_TUNED: dict[tuple, tuple[Tile, int]] = {}  # _tune_key -> the fastest (tile, slices)


def _tune_key(m: int, n: int, k: int, aligned: tuple[bool, ...]) -> tuple:
    """What a tuned choice is kept for: the GPU, the shape and whether A, B and C start 16-byte aligned."""
    return (device_name(), m, n, k, tuple(bool(x) for x in aligned))


def _tuned_choice(a: Any, b: Any, c: Any, m: int, n: int, k: int,
                  aligned: tuple[bool, bool, bool]) -> tuple[Tile | None, int | None]:
    """(tile, slices) for a ``tune=True`` call: (None, None) where the rule takes a thin kernel (kept, untimed);
    else the fastest of ``choices`` on this GPU, timed once a shape with numba's kernels on the call's own arrays
    (``util.timing.time_calls``: C is written by each, and each computes all of it) and kept. The C twin takes
    numba's choice, so that numba / C compares one strategy."""
    from .timing import time_calls

    if isinstance(plan(m, n, k, aligned=aligned).tile, Thin):
        return None, None
    key = _tune_key(m, n, k, aligned)
    if key not in _TUNED:
        options = choices(m, n, k, aligned=aligned)
        if len(options) == 1:
            best = options[0]
        else:
            calls = {str(i): Prepared(a, b, c, tile=o.tile, splits=o.splits) for i, o in enumerate(options)}
            times = time_calls(calls, TUNE_RUNS)
            best = options[min(range(len(options)), key=lambda i: (times[str(i)], i))]
        _TUNED[key] = (best.tile, best.splits)
    return _TUNED[key]


def tuned(m: int, n: int, k: int, *, aligned: tuple[bool, bool, bool] = (True, True, True)) -> Plan | None:
    """The plan that a ``tune=True`` call of this shape takes on this GPU: the rule's where it takes a thin kernel,
    else the timed choice once the shape's first such call has made it (None before)."""
    rule = plan(m, n, k, aligned=aligned)
    if isinstance(rule.tile, Thin):
        return rule
    hit = _TUNED.get(_tune_key(m, n, k, aligned))
    return None if hit is None else plan(m, n, k, aligned=aligned, tile=hit[0], splits=hit[1])


# numba's warning for a launch configured with fewer than 128 blocks ("Grid size N will likely result in GPU
# under-utilization due to low occupancy"): a plan's grid is chosen for its shape (few blocks where C is small,
# each taking more of K), so it says nothing about a plan's launch
_SMALL_GRID_WARNING = r".*Grid size \d+ will likely result in GPU under-utilization"  # (in bold: .* first)


def _configured(kernel: Any, grid: Any, threads: int) -> Any:
    """``kernel[grid, threads]``, the launch configured once (without numba's warning for small grids,
    ``_SMALL_GRID_WARNING``); in the simulator at each call: its ``kernel[...]`` sets the configuration on the
    kernel itself and returns it, so a second prepared call of the same kernel with another grid would change the
    first one's grid."""
    if SIMULATED:
        return lambda *args: kernel[grid, threads](*args)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_SMALL_GRID_WARNING)
        return kernel[grid, threads]


class Prepared:
    """One checked, planned C = A @ B, ready to launch again and again: ``g = prepare(a, b, c); g()``."""

    def __init__(self, a: Any, b: Any, c: Any, compiler: str = "numba", splits: int | None = None,
                 wide: bool | None = None, tile: Tile | Thin | None = None, order: str | None = None,
                 thin: bool = True, fuse: bool | None = None, one_loop: bool | None = None,
                 tune: bool = False) -> None:
        if compiler not in ("numba", "cuda_c"):
            raise ValueError(f"compiler must be 'numba' or 'cuda_c', got {compiler!r}")
        if compiler == "cuda_c" and SIMULATED:
            raise RuntimeError("the C twin needs a GPU (the simulator runs numba kernels only)")
        if order is not None and isinstance(tile, Thin):
            raise ValueError(f"order is the order of the tiled kernels' FMAs; {tile.name} has none to choose")
        if not isinstance(tune, bool):
            raise ValueError(f"tune must be True or False, got {tune!r}")
        forced = [name for name, v in (("splits", splits), ("wide", wide), ("tile", tile), ("order", order),
                                       ("fuse", fuse), ("one_loop", one_loop)) if v is not None]
        if tune and (forced or not thin):
            raise ValueError(f"tune=True chooses the tile and slices by timing the rule's best choices; it takes "
                             f"nothing forced (got {', '.join(forced) or 'thin=False'}): leave tune off to force")
        m, n, k, a, b, c = check_operands(a, b, c)
        aligned = (_aligned16(a), _aligned16(b), _aligned16(c))
        if tune:
            tile, splits = _tuned_choice(a, b, c, m, n, k, aligned)
        tiles_only = order is not None or one_loop is not None  # the tiled kernels' choices keep to the tiles
        self.plan = p = plan(m, n, k, splits=splits, wide=wide, tile=tile, thin=thin and not tiles_only,
                             aligned=aligned, fuse=fuse, one_loop=one_loop)
        ws = _workspace_for(p.workspace_floats) if p.splits > 1 else None
        flags = _counters_for(p.grid[0] * p.grid[1] if p.fused else 1)
        second = p.splits > 1 and not p.fused  # a second kernel adds the slices
        vec = second and sum_vec(m * n, _aligned16(c))
        lanes = second and not vec and sum_lanes(m * n)
        # a slice's depth as the kernels take it, int32: the plan's, but at most k (one slice of k within BK of
        # 2^31 rounds up past int32; ending at k, it ends where the kernels' min(kbeg + kslice, k) ends it)
        kslice = np.int32(min(p.kslice, k))
        self._sum = None
        if compiler == "numba":
            cf = c.reshape(m * n)
            self._args = (np.int32(m), np.int32(n), np.int32(k), kslice, a.reshape(m * k),
                          b.reshape(k * n), ws if ws is not None else cf, cf, flags)
            kernel = (sgemm_thin.numba_kernel(p.tile, p.wide, fuse=p.fused, va=p.va) if isinstance(p.tile, Thin) else
                      numba_kernel(p.va, p.vb, p.wide, p.tile, order=order, shift_b=p.shift_b, row_b=p.row_b, vc=p.vc, sc=p.sc,
                                   one_loop=p.one_loop))
            self._main = _configured(kernel, p.grid, p.tile.NT)
            total = splitk_sum4 if vec else splitk_sum8 if lanes else splitk_sum
            if second:
                self._sum = (_configured(total, _sum_blocks(m * n, vec, lanes), SUM_THREADS), (m * n, p.splits, ws, cf))
        else:
            twin = (sgemm_thin.c_twin(p.tile, p.wide, p.fused, p.va) if isinstance(p.tile, Thin) else
                    c_twin(p.va, p.vb, p.wide, p.tile, order, p.shift_b, p.vc, p.sc, p.one_loop, p.row_b))
            self._args = (a, b, ws if ws is not None else c, c, flags, np.int32(m), np.int32(n), np.int32(k),
                          kslice)
            self._main = lambda *args: twin.call(p.grid, p.tile.NT, *args)
            if second:
                total = c_splitk_sum(vec, lanes)
                self._sum = (lambda *args: total.call(_sum_blocks(m * n, vec, lanes), SUM_THREADS, *args),
                             (ws, c, np.int64(m * n), np.int32(p.splits)))
        self._arrays = (a, b, c)  # keep them alive with the views made of them

    def __call__(self) -> None:
        self._main(*self._args)
        if self._sum is not None:
            self._sum[0](*self._sum[1])


def prepare(a: Any, b: Any, c: Any, *, compiler: str = "numba", splits: int | None = None,
            wide: bool | None = None, tile: Tile | Thin | None = None, order: str | None = None,
            thin: bool = True, fuse: bool | None = None, one_loop: bool | None = None,
            tune: bool = False) -> Prepared:
    """Check and plan C = A @ B once; the returned object launches it (``g()``), as often as wanted."""
    return Prepared(a, b, c, compiler, splits, wide, tile, order, thin, fuse, one_loop, tune)


_CACHE: dict[tuple, tuple[tuple, Prepared]] = {}
_CACHE_SIZE = 16  # prepared calls kept; each keeps its three arrays (and their device memory) alive: clear_cache()


def clear_cache() -> None:
    """Drop the prepared calls ``sgemm`` keeps (and with them their arrays) and the split-K workspace."""
    _CACHE.clear()
    _workspace.clear()


def _cached(a: Any, b: Any, c: Any, compiler: str, splits: int | None, wide: bool | None,
            tile: Tile | Thin | None, order: str | None, thin: bool, fuse: bool | None,
            one_loop: bool | None, tune: bool) -> Prepared:
    """``prepare(...)``, reused while a, b and c are the same numba device arrays (whose shape, data and
    alignment cannot change); anything else (torch tensors, the simulator's arrays) is checked every call. The
    last ``_CACHE_SIZE`` entries hold their arrays (so an id cannot be reused while its entry lives): their memory
    stays allocated until ``clear_cache()`` or until newer calls push them out."""
    if SIMULATED:
        return Prepared(a, b, c, compiler, splits, wide, tile, order, thin, fuse, one_loop, tune)
    from numba.cuda.cudadrv.devicearray import DeviceNDArray

    if not all(type(x) is DeviceNDArray for x in (a, b, c)):
        return Prepared(a, b, c, compiler, splits, wide, tile, order, thin, fuse, one_loop, tune)
    key = (id(a), id(b), id(c), compiler, splits, wide, tile, order, thin, fuse, one_loop, tune)
    hit = _CACHE.get(key)
    if hit is not None:  # the entry holds a, b and c, so these ids are still theirs
        return hit[1]
    call = Prepared(a, b, c, compiler, splits, wide, tile, order, thin, fuse, one_loop, tune)
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = ((a, b, c), call)
    return call


@lru_cache(maxsize=None)
def c_twin(va: bool, vb: bool, wide: bool, tile: Tile = TILE, order: str | None = None, shift_b: bool = False,
           vc: bool = False, sc: bool = False, one_loop: bool = False, row_b: bool = False):
    """The C twin of ``numba_kernel(va, vb, wide, tile, shift_b=shift_b, vc=vc, sc=sc, one_loop=one_loop,
    row_b=row_b)``:
    util/sgemm_any_shape.cu with those macros. ``order``: as for numba_kernel; by default the order recorded for the
    twin's variant by the same search, run on the twin's own machine code."""
    from .cuda_c import CudaC

    shift_b, vc = _check_shift_b(shift_b, vb, tile), _check_vc(vc, vb, tile)
    sc, one_loop = _check_sc(sc, vb, tile), _check_one_loop(one_loop, wide)
    row_b = _check_row_b(row_b, shift_b, tile)
    order = ffma_order("cuda_c", tile, va, vb, wide, shift_b, vc, sc, one_loop) if order is None else order
    _check_order(order)
    options = tile.macros() + [f"-DVA={int(va)}", f"-DVB={int(vb)}", f"-DWIDE={int(wide)}",
                               f"-DSHIFT_B={int(shift_b)}", f"-DVC={int(vc)}", f"-DSC={int(sc)}",
                               f"-DONE_LOOP={int(one_loop)}", f"-DROW_B={int(row_b)}",
                               f"-DFFMA_COLS={int(order in ('col', 'colsnake'))}",
                               f"-DFFMA_SNAKE={int(order in ('snake', 'colsnake'))}"]
    return CudaC.from_file(TWIN_SOURCE, "gemm_c", options=options)


@lru_cache(maxsize=None)
def c_splitk_sum(vec: bool = False, lanes: bool = False):
    """The C twin of ``splitk_sum`` (``splitk_sum4`` with ``vec``, ``splitk_sum8`` with ``lanes``)."""
    from .cuda_c import CudaC

    return CudaC.from_file(TWIN_SOURCE, "splitk_sum4_c" if vec else "splitk_sum8_c" if lanes else "splitk_sum_c")


def numba_sig() -> tuple:
    """The argument types ``sgemm`` passes the numba kernel: the int32 sizes m, n, k and kslice, then flat float32
    arrays (a, b, out, c) and the int32 tile counters. The sizes come first: numba passes each array as 7 eight-byte
    fields, and with the sizes after five arrays a block's set-up read four 64-byte lines of the kernel's constant
    bank (each line's first read on an SM a miss, ncu's stall_imc) where the twin's read two; so the data pointers
    of a and b share one line and the sizes the line before (docs/notes.md)."""
    return (int32,) * 4 + (float32[::1],) * 4 + (int32[::1],)


def sum_sig() -> tuple:
    """The argument types ``sgemm`` passes the split-K sums (mn, splits, ws, c): sizes first, as ``numba_sig``."""
    return (int64, int64, float32[::1], float32[::1])


def register(reg: Any, name: str = "16 any shape", c_name: str | None = "16 C", **plan_options: Any) -> None:
    """Add the numba kernel (``sgemm``) and its C twin (``sgemm(compiler="cuda_c")``; not with ``c_name=None``)
    to a util.bench.Registry, each launched through ``sgemm`` with ``plan_options`` (``splits=1``: no split-K);
    their static analysis reads the variant that 16-byte loads both operands (with ``tile`` a Thin, that kernel)."""
    from .bench import INTRINSICS

    def numba_launch(p):
        sgemm(p.a, p.b, p.c, **plan_options)

    def c_launch(p):
        sgemm(p.a, p.b, p.c, compiler="cuda_c", **plan_options)

    unused_grid = lambda mn, nthreads: 1  # noqa: E731 - the launch plans its own grid
    forced = plan_options.get("tile")
    if isinstance(forced, Thin):
        kernel, twin = sgemm_thin.numba_kernel(forced, False, simulator=False), sgemm_thin.c_twin(forced, False)
        what, note = forced, f"the {forced.name} kernel for C with few {forced.kind} (util.sgemm_thin), forced"
    else:
        kernel, twin = numba_kernel(True, True, False, simulator=False), c_twin(True, True, False)
        what, note = TILE, ("step 15 for any shape: clamped edges, a K tail, scalar loads where unaligned; tile and "
                            "split-K (or a thin kernel for few rows or columns) by plan()")
    reg.numba(name, kernel, what.NT, unused_grid, flat=True, sig=numba_sig(),
              jit_options={"launch_bounds": (what.NT, what.MINB)}, tags={INTRINSICS}, ffma=what.ffma,
              launch=numba_launch, note=note)
    if c_name is not None:
        reg.cuda_c(c_name, twin, what.NT, unused_grid, twin_of=name, ffma=what.ffma, launch=c_launch,
                   note=f"CUDA C twin of {name}: the same plan, the same workspace")
