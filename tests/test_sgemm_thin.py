"""util.sgemm_thin: the kernels for C with few rows or few columns. Correct in the simulator on edge shapes, slices
and 64-bit offsets; forced through util.sgemm's plan only; the machine code each is for (sm_90 SASS: only the FMAs
C needs, 4-byte loads of the large operand, the small one's values from shared memory, no local memory)."""

import math
import re

import numpy as np
import pytest

import util  # noqa: F401  first: without a GPU it switches numba to its simulator
from util import cuda
from util import sgemm as S
from util import sgemm_thin as T
from util.compile import cubin_from_ptx, numba_ptx
from util.intrinsics import at_cs
from util.occupancy import max_blocks_per_sm
from util.sass import analyze
from util.splitk import fuses, slices_a_round
from util.verify import Problem


def gm(xs):
    """Geometric mean."""
    xs = list(xs)
    return math.exp(sum(map(math.log, xs)) / len(xs))

pytestmark = pytest.mark.skipif(not util.SIMULATED, reason="small sizes for numba's simulator; the GPU probe is "
                                                           "scripts/sgemm_thin_probe.py")


@pytest.mark.parametrize("shape, thin, options", [
    ((1, 130, 37), T.Thin("rows", 1), {}),                 # one row; a column block past n; a partial group of k
    ((3, 129, 70), T.Thin("rows", 4), {"splits": 2}),      # m < W: rows clamped; two slices, the sum
    ((17, 60, 9), T.Thin("rows", 16), {}),                 # two row blocks, the second with one row
    ((2, 5, 1), T.Thin("rows", 2), {}),                    # K = 1: one partial group
    ((8, 40, 40), T.Thin("rows", 8), {"wide": True}),      # 64-bit offsets
    ((70, 1, 45), T.Thin("cols", 1), {}),                  # one column; a partial pass of k
    ((3, 2, 70), T.Thin("cols", 2), {"splits": 3, "wide": True}),  # rows clamped, three slices, 64-bit
    ((5, 17, 33), T.Thin("cols", 16), {}),                 # two column blocks, the second with one column
    ((1, 300, 200), T.Thin("rows", 1), {"splits": 5, "fused": True}),   # the tiles' last blocks add the slices
    ((2, 140, 90), T.Thin("rows", 2), {"splits": 3, "fuse": True, "wide": True}),  # forced, 64-bit
    ((130, 3, 100), T.Thin("cols", 4), {"splits": 4, "fuse": True}),    # a row block past m, a partial pass
    ((70, 1, 300), T.Thin("cols", 1), {"splits": 10, "fuse": False}),   # the second kernel, forced
    ((1, 136, 300), T.ROW_VEC, {}),                        # one row, 16-byte loads: a column block past n
    ((1, 4, 9), T.ROW_VEC, {}),                            # n = 4: every lane clamped to the same 4 columns
    ((1, 260, 700), T.ROW_VEC, {"splits": 2, "fuse": True}),             # the tiles' last blocks add the slices
    ((1, 132, 600), T.ROW_VEC, {"splits": 3, "fuse": False, "wide": True}),  # the second kernel; 64-bit
    ((1, 100, 530), T.ROW_VECS[1], {}),                    # 64 columns a block (2 rows a warp's load), a block past n
    ((1, 4, 13), T.ROW_VECS[2], {}),                       # 32 columns (4 rows a load), K below a pass: tail rows only
    ((1, 72, 2100), T.ROW_VECS[2], {"splits": 2, "fuse": True}),   # two slices of passes and tail rows, fused
    ((1, 36, 1030), T.ROW_VECS[1], {"splits": 3, "fuse": False, "wide": True}),  # the second kernel; 64-bit
    ((70, 1, 45), T.COL_VEC, {}),                          # one column, 4-byte loads, a partial pass, edge rows
    ((3, 1, 3), T.COL_VEC, {}),                            # m < the block's rows, k < a warp's lanes
    ((20, 1, 4), T.COL_VEC, {"va": True}),                 # 16-byte loads: one lane's 4 values, the rest zeros
    ((9, 1, 1030), T.COL_VEC, {"splits": 3, "fused": True}),            # the tiles' last blocks add the slices
    ((17, 1, 700), T.COL_VEC, {"splits": 3, "fuse": True, "va": True}),  # 16-byte loads, partial passes
    ((33, 1, 601), T.COL_VEC, {"splits": 5, "fuse": False, "wide": True}),  # the second kernel; 64-bit
    ((1, 7, 3000), T.ROW_FEWS[2], {"splits": 3, "fuse": True}),  # slices of 1024, 1024, 952 rows: the last partial
    ((1, 2, 33), T.ROW_FEWS[0], {}),                       # K under one step of 32 rows: the partial pass only
    ((1, 5, 1), T.ROW_FEWS[2], {}),                        # K = 1; slots 5..7 past n
    ((1, 3, 5000), T.ROW_FEWS[1], {"splits": 2, "fuse": False, "wide": True}),  # the second kernel; 64-bit
    ((1, 16, 1100), T.ROW_FEWS[3], {"splits": 2, "fuse": True}),  # every slot live, whole and partial passes
    ((1, 31, 700), T.ROW_FEWS[4], {}),                     # 31 of 32 slots; a warp's row spans lanes
    ((1, 2, 9000), T.ROW_FEWS[0], {"splits": 2, "fuse": True}),  # 16 steps a pass: a whole pass and a partial a slice
    ((1, 32, 1000), T.ROW_FEWS[4], {"splits": 4, "fuse": True}),  # every slot live, one step a pass, 4 slices fused
])
def test_thin_kernels_are_correct(shape, thin, options):
    p = Problem(*shape, seed=7)
    fused = options.pop("fused", None)  # what the rule should choose, not an option
    va = options.pop("va", False)  # COL_VEC's 16-byte loads, which the plan takes where k % 4 == 0
    for _ in range(2):  # twice: a fused call leaves its tile counters at zero for the next
        p.poison()
        used = S.sgemm(p.a, p.b, p.c, tile=thin, **options)
        check = p.check()
        assert check.correct, f"{shape} {thin.name} {options} -> {used}: {check}"
    assert used.tile == thin and used.kslice <= thin.kmax and (used.va, used.vb) == (va, va or thin in T.ROW_VECS)
    for key, value in options.items():
        assert getattr(used, "fused" if key == "fuse" else key) == value
    if fused is not None:
        assert used.fused == fused
    if used.fused:
        assert not S._workspace["flags"].copy_to_host().any()


def test_who_adds_the_slices():
    """A thin kernel of FUSED_KINDS adds its slices in its tiles' last blocks where that takes at most FUSE_ROUNDS
    rounds of loads; the tiles, the other thin kernels and more slices take the second kernel; fuse forces it,
    where the kernel can (at most splitk.MAX_ELEMENTS of the tile a thread), and is refused elsewhere."""
    assert S.plan(1, 4095, 4096, sms=132).fused                     # rows/1, 17 slices: 2 rounds of 16
    assert not S.plan(1, 1001, 5000, sms=132).fused                 # rows/1, 66 slices: 5 rounds
    assert S.plan(1, 640, 20000, sms=132).fused                     # ROW_VEC, 9 slices
    assert not S.plan(4, 8192, 8192, sms=132).fused                 # rows/4
    assert S.plan(15806, 8, 313, sms=132).fused                     # cols/8, 2 slices
    assert S.plan(391, 1, 14450, sms=132).fused                     # COL_VEC, 9 slices: one round
    assert not S.plan(512, 512, 512, sms=132).fused                 # a tile
    assert not S.plan(1, 300, 30, sms=132).fused                    # one slice: nothing to add
    assert S.plan(4, 8192, 8192, sms=132, fuse=True).fused          # forced
    assert not S.plan(1, 4095, 4096, sms=132, fuse=False).fused
    for shape, options in [((512, 512, 512), {}), ((16, 4096, 4096), {}), ((4096, 16, 4096), {})]:
        with pytest.raises(ValueError, match="fuse=True takes a thin kernel"):
            S.plan(*shape, sms=132, fuse=True, **options)
    with pytest.raises(ValueError, match="fuse must be True, False or None"):
        S.plan(1, 4096, 4096, fuse="yes")


def test_the_plan_takes_a_thin_kernel_where_c_has_few_rows_or_columns():
    for shape, name in [((1, 4094, 4096), "rows/1"), ((1, 4095, 4096), "rows/1"), ((16, 8192, 8192), "rows/16"),
                        ((32, 100, 7), "rows/16"),
                        ((4096, 8, 4096), "cols/8"), ((3000, 16, 129), "cols/16"), ((3, 3, 3), "cols/4"),
                        ((30, 9, 73), "cols/16"), ((5, 2, 1000), "cols/2"), ((2, 12, 1000), "rows/2")]:
        assert S.plan(*shape, sms=132).tile.name == name, shape
    # past the thresholds, with thin=False, a forced split or a forced tile: the tiles (32 columns wide where C has
    # at most NARROW_MAX columns)
    for shape, options in [((33, 4096, 4096), {}), ((1, 4096, 4096), {"thin": False}),
                           ((1, 4096, 4096), {"splits": 2}), ((1, 4096, 4096), {"tile": S.TINY_TILE})]:
        assert S.plan(*shape, sms=132, **options).tile in S.TILES, (shape, options)
    for shape, options in [((4096, 17, 4096), {}), ((4096, 16, 4096), {"thin": False})]:
        assert S.plan(*shape, sms=132, **options).tile in S.NARROW_TILES, (shape, options)
    # thin_choice's exceptions: the 16-row kernel on at most ROWS16_MIN_COLS columns, a cols kernel of 8 or 16
    # columns on K of at most COLS_SHORT_K * n: the tiles (the 32-column ones where C has at most 32 columns)
    assert (S.ROWS_FIRST, S.ROWS16_MIN_COLS, S.COLS_SHORT_K) == (4, 64, 8)
    for shape, tiles in [((12, 64, 4096), S.TILES), ((32, 32, 2048), S.NARROW_TILES), ((9, 20, 50000), S.NARROW_TILES),
                         ((3000, 16, 128), S.NARROW_TILES), ((30, 9, 72), S.NARROW_TILES),
                         ((100000, 8, 64), S.NARROW_TILES)]:
        assert S.plan(*shape, sms=132).tile in tiles, shape
    for shape, name in [((12, 65, 4096), "rows/16"), ((8, 20, 50000), "rows/8"), ((100000, 8, 65), "cols/8"),
                        ((100000, 5, 41), "cols/8"), ((100000, 4, 16), "cols/4")]:  # just past them; 4 columns
        assert S.plan(*shape, sms=132).tile.name == name, shape
    for shape in [(100000, 5, 40), (100000, 12, 96)]:  # cols/8's and cols/16's thresholds at 5 and 12 columns (untimed)
        assert S.plan(*shape, sms=132).tile in S.NARROW_TILES, shape
    # one row and B's rows 16-byte aligned: ROW_VEC (16-byte loads), its block width the one whose blocks and slices
    # come nearest one wave of blocks (one an SM) with a pass of rows in a slice; on a tie the fewest slices
    assert S.plan(1, 4096, 4096, sms=132, aligned=(True, False)).tile.name == "rows/1"
    for shape, name, splits in [((1, 4096, 4096), "rows/1v32", 1),   # 128 blocks of 32 columns (32 of 128)
                                ((1, 8192, 1024), "rows/1v64", 1),   # 128 of 64 (256 of 32: two waves)
                                ((1, 16384, 1024), "rows/1v", 1),    # 128 of 128
                                ((1, 2048, 8192), "rows/1v32", 1),   # 64 blocks each way: the fewest slices
                                ((1, 6000, 700), "rows/1v64", 1),    # 32 columns: a slice under a pass
                                ((1, 4096, 256), "rows/1v", 1),      # 64 too
                                ((1, 640, 20000), "rows/1v32", 3),   # 9 slices of 128 columns: 45 blocks' worth of
                                # columns, under VEC_BUSY; row_vec_time's fastest: 3 slices of 32 (60 blocks)
                                ((1, 116, 22369), "rows/1v32", 14),  # few columns, long K: 5 slices of 64 loaded 9
                                ((1, 7088, 26632), "rows/1v", 2),    # 110 blocks' worth: the rule's, unestimated
                                ((1, 4096, 100), "rows/1v", 1)]:     # none holds a pass: ROW_VEC
        p = S.plan(*shape, sms=132)
        assert (p.tile.name, p.splits) == (name, splits), (shape, p)
    assert T.ROW_VEC.kmin == T.VEC_SLICE_PASSES * T.VEC_ROWS * T.VEC_WARPS == 2048
    assert [t.kmin for t in T.ROW_VECS] == [2048, 4096, 8192] and [t.BN for t in T.ROW_VECS] == [128, 64, 32]
    for shape, aligned in [((1, 130, 40), (True, True)), ((2, 128, 40), (True, True)), ((1, 128, 40), (True, False))]:
        for thin in T.ROW_VECS:
            with pytest.raises(ValueError, match="ROW_VEC"):
                S.plan(*shape, tile=thin, aligned=aligned)
    with pytest.raises(ValueError, match="cb .a block's columns. is the one-row kernel's"):
        T.Thin("rows", 1, cb=32)
    with pytest.raises(ValueError, match="vec is the one-row or one-column kernel's"):
        T.Thin("rows", 2, vec=True)
    # one column: COL_VEC, 16-byte loads of both where k % 4 == 0 and both operands start 16-byte aligned
    for shape, aligned, va in [((4096, 1, 4096), (True, True), True), ((391, 1, 14450), (True, True), False),
                               ((4096, 1, 4096), (False, True), False), ((4096, 1, 4096), (True, False), False)]:
        p = S.plan(*shape, sms=132, aligned=aligned)
        assert (p.tile, p.va, p.vb) == (T.COL_VEC, va, va), (shape, aligned, p)
    assert S.plan(4096, 1, 4096, sms=132, tile=T.Thin("cols", 1)).tile.name == "cols/1"  # forced: the staged kernel
    # more rows than COL_VEC's blocks of 8 put in the grid (gridDim.y <= 65535): cols/1's blocks of 128
    assert S.plan(8 * S.MAX_GRID_Y, 1, 64, sms=132).tile == T.COL_VEC
    p = S.plan(8 * S.MAX_GRID_Y + 1, 1, 64, sms=132)
    assert p.tile.name == "cols/1" and p.grid[1] <= S.MAX_GRID_Y, p
    with pytest.raises(ValueError, match="COL_VEC .* takes C with one column; got n = 2: use Thin"):
        S.plan(64, 2, 64, tile=T.COL_VEC)
    with pytest.raises(ValueError, match="va .* is COL_VEC's"):
        T.numba_kernel(T.Thin("cols", 1), False, va=True)
    # where both kinds qualify: rows where n >= ROWS_FIRST * m, else cols (one row and one column: cols/1v; one row
    # and 2-32 columns: plan() takes ROW_FEW before thin_choice)
    for shape, kind in [((1, 4, 4096), "rows"), ((3, 12, 4096), "rows"), ((1, 3, 4096), "cols"), ((2, 7, 4096), "cols"),
                        ((12, 12, 4096), "cols"), ((20, 12, 4096), "cols")]:
        assert S.thin_choice(*shape).kind == kind, shape
        tile = S.plan(*shape, sms=132).tile
        assert tile == T.row_few_for(shape[1]) if shape[0] == 1 else tile.kind == kind, shape
    assert S.plan(1, 1, 1_000_000, sms=132).tile == T.COL_VEC
    assert S.plan(2, 8, 2_000_000, sms=132).tile in S.NARROW_TILES  # slices of at most 2048: more than MAX_SPLITS
    p = S.plan(16, 4096, 4096, sms=132, tile=T.Thin("rows", 16))
    assert (p.va, p.vb, p.shift_b) == (False, False, False) and p.variant == "scalar"
    for shape, thin in [((16, 4096, 4096), T.Thin("rows", 16)), ((1, 300, 100000), T.Thin("rows", 1)),
                        ((4096, 16, 4096), T.Thin("cols", 16)), ((9, 9, 1), T.Thin("cols", 8)),
                        ((16, 4096, 11008), T.Thin("rows", 16)), ((17, 1861, 1084), T.Thin("rows", 16)),
                        ((11, 4647, 685), T.Thin("rows", 16)), ((4, 8192, 8192), T.Thin("rows", 4))]:
        p = S.plan(*shape, sms=132, tile=thin)
        m, n, k = shape
        assert p.kslice % thin.BK == 0 and p.kslice <= thin.kmax
        assert (p.splits - 1) * p.kslice < k <= p.splits * p.kslice, p  # none empty, all of K
        # of the slice counts that leave none empty and none deeper than kmax, the fewest that make a wave of
        # THIN_WAVES of a wave of MINB blocks an SM (or the most there are); where those make more than one wave of
        # the blocks an SM the kernel holds, the most that make one wave fewer, or where none does, the most that
        # make no more waves and are FILL_DEPTH x kmin deep or more
        valid = [s for s in S.slice_counts(k, thin) if math.ceil(math.ceil(k / thin.BK) / s) * thin.BK <= thin.kmax]
        blocks = math.ceil(m / thin.BM) * math.ceil(n / thin.BN)
        wave = S.THIN_WAVES.get(thin.name, S.THIN_WAVES[thin.kind]) * thin.MINB * 132
        base = S.thin_splits(m, n, k, thin, 132)
        assert base == next((s for s in valid if blocks * s >= wave), valid[-1])
        slots = thin.blocks_per_sm(p.wide, p.fused) * 132
        waves = math.ceil(blocks * base / slots)
        assert p.splits in valid, p
        deep = [s for s in valid if math.ceil(math.ceil(k / thin.BK) / s) * thin.BK >= S.FILL_DEPTH * thin.kmin]
        filled = [s for s in deep if s > base and math.ceil(blocks * s / slots) == waves]
        fewer = [s for s in valid if s < base and math.ceil(blocks * s / slots) == waves - 1]
        if waves <= 1 or not (filled or fewer):
            assert p.splits == base, p
        elif fewer:
            assert p.splits == max(fewer) and math.ceil(blocks * p.splits / slots) == waves - 1, p
        else:
            assert p.splits == max(filled) and p.kslice >= S.FILL_DEPTH * thin.kmin, p
    # the last wave left out: 24 x 5000 x 3000 takes 7 slices of rows/16 for a wave of 4 blocks an SM (560 blocks on
    # 528 places), then 6 (480); 11 x 4647 x 685's 15 (555 blocks) 14 (518); 17 x 1861 x 1084's 19 (570) 17 (510);
    # 20 x 1116 x 14411's 30 (540) 29 (522). Filled where no fewer slices make one wave fewer (kmax): 16 x 4096 x
    # 11008 takes 22 slices (704 blocks: 1.33 waves; 16 would be deeper than kmax), then 33 (2.00 waves); 1 x 17823 x
    # 60260's rows/1, fused (9 blocks an SM, as unfused), fills two waves with 16 (17 make a third); 2 x 15221 x 21699
    # (rows/2: 8 blocks an SM at 32-bit offsets, 6 at 64-bit) fills to 17 or 13. 4 x 8192 x 8192's 11 slices of rows/4
    # (704 blocks) fit in one wave of 6 an SM
    assert [S.plan(*shape, sms=132).splits for shape in [(16, 4096, 11008), (4, 8192, 8192), (24, 5000, 3000),
                                                         (4096, 16, 4096), (16, 2048, 16384), (11, 4647, 685),
                                                         (1, 17823, 60260), (2, 15221, 21699), (17, 1861, 1084),
                                                         (20, 1116, 14411)]] == [
        33, 11, 6, 16, 33, 14, 16, 17, 17, 29]
    # rows/1 (one row, B's 4-byte loads) aims at half a wave, the other rows kernels at a whole one: 1 x 9825 x 10250
    # takes 7 slices of 77 blocks (539 of 1056 slots), 2 x 8154 x 425 14 of rows/2's 64 (896 of 1056)
    assert S.THIN_WAVES["rows/1"] == 0.5 and S.THIN_WAVES["rows"] == 1.0
    assert [S.plan(*shape, sms=132).splits for shape in [(1, 9825, 10250), (2, 8154, 425)]] == [7, 14]
    assert S.plan(2, 15221, 21699, sms=132, wide=True).splits == 13
    assert S.plan(16, 4096, 4096, sms=132, tile=T.Thin("rows", 16)).splits == 16  # a forced kernel: the same rule
    assert "thin_splits gives 22; more to fill the last wave" in S.plan(16, 4096, 11008, sms=132).why
    assert "thin_splits gives 7; fewer to leave the last wave out" in S.plan(24, 5000, 3000, sms=132).why
    assert S.plan(16, 4096, 11008, sms=132, splits=22, tile=T.Thin("rows", 16)).splits == 22  # forced: kept
    with pytest.raises(ValueError, match="no entry in the table of blocks an SM"):
        T.ROW_VEC.blocks_per_sm(False)
    with pytest.raises(ValueError, match="rows/16 has no fused variant"):
        T.Thin("rows", 16).blocks_per_sm(False, True)
    # small problems: slices no shallower than kmin (two groups of 4 k-steps a warp), where the waves would ask more
    for shape, name, splits in [((27, 1138, 448), "rows/16", 14), ((1, 1274, 360), "rows/1", 12),
                                ((2, 12, 1000), "rows/2", 32)]:
        p = S.plan(*shape, sms=132)
        assert (p.tile.name, p.splits, p.kslice) == (name, splits, 32), p
        assert p.splits == max(s for s in S.thin_slice_counts(shape[2], p.tile)
                                if math.ceil(math.ceil(shape[2] / 4) / s) * 4 >= p.tile.kmin)
    with pytest.raises(ValueError, match="does not fit rows/4"):
        S.plan(4, 100, 40, tile=T.Thin("rows", 4), splits=7)  # 10 groups of 4 k-steps in slices of 2 make 5
    with pytest.raises(ValueError, match="MAX_SPLITS"):
        S.plan(1, 8, 600000, tile=T.Thin("cols", 16))          # slices of at most 256: more than 256 of them
    with pytest.raises(ValueError, match="THINS"):
        S.plan(4, 4, 4, tile=S.Tile(BM=32))
    with pytest.raises(ValueError, match="W must be one of"):
        T.Thin("rows", 3)


def test_one_row_slices_where_few_columns_load():
    """row_vec_splits: the rule's slices (thin_splits) where they load VEC_BUSY blocks' worth of columns or more (slices
    x n / cb); else the count row_vec_time estimates fastest, the rule's or one at least one pass of the loop deep, all
    of them in one wave of blocks; row_vec_choice keeps the rule's width where it loads enough."""
    rng = np.random.default_rng(4)
    shapes = [(int(n), int(k)) for n, k in 2 ** rng.uniform([2, 4], [16, 17], size=(300, 2))]
    changed = 0
    for n, k in shapes:
        n = max(4, n - n % 4)
        for thin in T.ROW_VECS:
            rule, got = S.thin_splits(1, n, k, thin, 132), S.row_vec_splits(n, k, thin, 132)
            if rule * n >= S.VEC_BUSY * thin.cb or got == rule:
                assert got == rule, (n, k, thin.name)
                continue
            changed += 1
            assert got > rule and math.ceil(math.ceil(k / thin.BK) / got) * thin.BK >= thin.pass_rows
            assert math.ceil(n / thin.cb) * got <= 132
            others = [s for s in S.thin_slice_counts(k, thin) if s > rule and math.ceil(n / thin.cb) * s <= 132
                      and math.ceil(math.ceil(k / thin.BK) / s) * thin.BK >= thin.pass_rows]
            assert S.row_vec_time(n, k, thin, got) == min(S.row_vec_time(n, k, thin, s) for s in [rule, *others])
            assert S.row_vec_time(n, k, thin, got) < S.row_vec_time(n, k, thin, rule)
        choice = S.row_vec_choice(n, k, 132)
        fits = [(math.ceil(n / t.cb) * s, -s, t.cb, t) for t in T.ROW_VECS for s in [S.thin_splits(1, n, k, t, 132)]
                if math.ceil(math.ceil(k / t.BK) / s) * t.BK >= t.pass_rows and math.ceil(n / t.cb) * s <= 132]
        if fits and -max(fits)[1] * n >= S.VEC_BUSY * max(fits)[3].cb:
            assert choice == max(fits)[3], (n, k)
    assert changed > 20  # the draw reaches the case
    # the estimate: B's bytes at the rate of the columns in flight, capped at VEC_BUSY blocks' worth, and a split's cost
    # for each round of loads of its sum in the tiles' last blocks (16 slices a round), or one for a second kernel
    t32 = T.ROW_VECS[2]
    assert S.row_vec_time(4096, 4096, t32, 1) == pytest.approx(4 * 4096 * 4096 / S.VEC_BYTES_S * 1e6)
    assert S.row_vec_time(64, 4096, t32, 2) == pytest.approx(4 * 4096 * 64 / (S.VEC_BYTES_S * 4 / S.VEC_BUSY) * 1e6
                                                              + S.VEC_SPLIT_US)
    full = 4 * 4096 * 64 / S.VEC_BYTES_S * 1e6  # 48 slices or more of 64 columns on 32-column blocks: VEC_BUSY's worth
    assert S.fuse_choice(t32, 48) and not S.fuse_choice(t32, 49)
    assert S.row_vec_time(64, 4096, t32, 16) == pytest.approx(full * 48 / 32 + S.VEC_SPLIT_US)  # 32 blocks' worth
    assert S.row_vec_time(64, 4096, t32, 32) == pytest.approx(full + 2 * S.VEC_SPLIT_US)  # 2 rounds
    assert S.row_vec_time(64, 4096, t32, 48) == pytest.approx(full + 3 * S.VEC_SPLIT_US)  # 3 rounds
    assert S.row_vec_time(64, 4096, t32, 49) == pytest.approx(full + S.VEC_SPLIT_US)  # a second kernel


def test_the_thin_rule_holds_to_its_record():
    """util.sgemm.THIN_MAX and THIN_WAVES against the timed record of thin kernels and tiled plans
    (data/sgemm_thin_probe_nvidia_h200.json, scripts/sgemm_thin_probe.py; retimed with the 32-column tiles in the
    tiled plans): where the rule takes the kernel timed there, that kernel at the rule's slices (the launch bounds it
    was timed with) beat the tiled plan on 26 of 29 shapes (4-7% slower on the other three); where it takes none (11),
    no thin kernel, at any of the slice counts timed, was more than 6% faster. One shape takes a kernel the record
    did not time (16 x 16 x 65536: cols/16, where the record timed the smaller side's rows/16; thin_choice's record
    has cols/16 there)."""
    import json
    from pathlib import Path

    record = json.loads((Path(__file__).parents[1] / "data" / "sgemm_thin_probe_nvidia_h200.json").read_text())
    taken, faster, untimed, other, left, missed = 0, 0, [], [], 0, []
    for r in record["shapes"]:
        m, n, k = r["shape"]
        kind, width = r["thin"].split("/")
        thin = T.Thin(kind, int(width))
        splits = S.thin_splits(m, n, k, thin, record["sms"], minb=r["minb"])
        choice = S.thin_choice(m, n, k)
        if choice == thin:
            taken += 1
            if f"{thin.name} s={splits}" in r["us"]:
                faster += r["us"][f"{thin.name} s={splits}"] < r["us"]["tiled"]
            else:
                untimed.append((m, n, k))
        elif choice is not None:
            other.append((m, n, k))
        else:
            left += 1
            if min(r["us"][f"{thin.name} s={s}"] for s in r["slices"]) < 0.94 * r["us"]["tiled"]:
                missed.append((m, n, k))
    assert (taken, faster, untimed, other, left, missed) == (29, 26, [], [(16, 16, 65536)], 11, [])


def test_the_thin_choice_holds_to_its_record():
    """util.sgemm.thin_choice (ROWS_FIRST, ROWS16_MIN_COLS, COLS_SHORT_K) against its record, a second timing of the
    shapes it was fitted to (data/sgemm_thin_choice_nvidia_h200.json, scripts/sgemm_thin_choice_probe.py; the record's
    "plan" entries are a draft of the rule's, cols/4 included, and are not read here): 468 shapes with C small on both
    sides, or few columns and short K, each timed with the rows kernel, the cols kernel (where each qualifies and its
    slices hold K) and the tiled plan. The rule's pick takes at most 1.21x the fastest of the three's time, 1.016x
    in geometric mean; taking the thin kernel of the kind that reads fewer bytes wherever one qualifies (the rule
    before these three constants) takes 1.056x, at most 2.87x."""
    import json
    from pathlib import Path

    record = json.loads((Path(__file__).parents[1] / "data" / "sgemm_thin_choice_nvidia_h200.json").read_text())
    assert not [r["shape"] for r in record["shapes"] if r["wrong"]]

    def reads_kind(m, n, k):  # the kind that reads fewer bytes, on a tie the smaller side's
        kinds = [kind for kind, few in (("rows", m), ("cols", n)) if few <= S.THIN_MAX[kind]]
        reads = {"rows": math.ceil(m / 16) * k * n + m * k, "cols": math.ceil(n / 16) * m * k + k * n}
        return min(kinds, key=lambda kind: (reads[kind], kind != ("rows" if m <= n else "cols")), default="tiled")

    rule, reads = [], []
    for r in record["shapes"]:
        (m, n, k), us = r["shape"], r["us"]
        best = min(us[w] for w in ("rows", "cols", "tiled") if w in us)
        thin = S.thin_choice(m, n, k)
        rule.append(us["tiled" if thin is None else thin.kind] / best)
        reads.append(us.get(reads_kind(m, n, k), us["tiled"]) / best)  # "tiled" where its slices cannot hold K
    assert len(rule) == 468
    assert (round(gm(rule), 3), round(max(rule), 2)) == (1.016, 1.21)
    assert (round(gm(reads), 3), round(max(reads), 2)) == (1.056, 2.87)


def _row_few_record(name, count=80):
    import json
    from pathlib import Path

    record = json.loads((Path(__file__).parents[1] / "data" / name).read_text())
    assert len(record["shapes"]) == count and not [r["shape"] for r in record["shapes"] if r["wrong"]]
    for r in record["shapes"]:  # the record's plans and slices are the rule's today...
        (m, n, k) = r["shape"]
        p = S.plan(m, n, k, sms=record["sms"])
        few = T.row_few_for(n)
        today = f"{p.tile.name} x {p.splits}"
        if today != r["plan"]:  # ...but where ROW_FEW took ROW_VEC's place (row_few_choice's blocks) after the record
            splits, blocks = S.row_vec_blocks(n, k, record["sms"])
            assert (r["plan"], today) == (r["vec"], f"{few.name} x {r['rule']}"), (r["shape"], p)
            assert splits > 1 and blocks < S.VEC_BUSY, r["shape"]
        assert (few.name, S.row_few_splits(k, few), S.row_few_pass_splits(k, few)) == (r["few"], r["rule"], r["deep"])
    return record["shapes"]


def _pass_and_split_us(shapes):
    """Least squares over the ladders of the shapes with K < 20000: time = the shape's own base + p x (passes in the
    deepest slice) + F x (K split or not); returns (p, F) in us."""
    rows = [(i, S.row_few_passes(r["shape"][2], T.row_few_for(r["shape"][1]), s), s > 1, r["us"][f"few s={s}"])
            for i, r in enumerate(shapes) if r["shape"][2] < 20000 for s in r["ladder"]]
    ids = sorted({i for i, *_ in rows})
    x = np.zeros((len(rows), len(ids) + 2))
    for j, (i, passes, split, _) in enumerate(rows):
        x[j, ids.index(i)], x[j, -2], x[j, -1] = 1, passes, split
    coef = np.linalg.lstsq(x, np.array([us for *_, us in rows]), rcond=None)[0]
    return coef[-2], coef[-1]


def test_row_few_holds_to_its_record():
    """ROW_FEW's choice and slices (util.sgemm.row_few_choice, ROW_FEW_VEC_MAX, row_few_splits, ROW_FEW_SPLIT_PASSES)
    against their timed record (data/sgemm_row_few_nvidia_h200.json, scripts/sgemm_row_few_probe.py): 80 one-row
    shapes drawn at random, K of 500 to 2000000, every variant verified. ROW_FEW at the rule's slices takes 1.004x
    the time of the fastest count of its ladder (geomean; 1.07x at most); where they differ from the rule's, half as
    many slices take 1.08x, twice as many 1.10x; a pass costs 0.79 us and a split 1.68 us (fitted), so a split pays
    where it saves more than 2 passes; where B's rows are aligned, ROW_VEC takes longer than ROW_FEW at 4-16 columns
    and less on this record's 9 shapes at 20-32 (geomean; by ROW_VEC's blocks:
    test_row_few_takes_row_vecs_place_where_row_vec_has_few_blocks); where they are not, the plan takes 0.52x the
    time of the plan before ROW_FEW at 4-8 columns, 0.56x at 9-16, 0.63x at 17-32 (0.33x on the two shapes with
    2-3)."""
    shapes = _row_few_record("sgemm_row_few_nvidia_h200.json")
    fit, half, double, vec_narrow, vec_wide, before = [], [], [], [], [], {}
    for r in shapes:
        n, us = r["shape"][1], r["us"]
        at = lambda s: us[f"few s={s}"]  # noqa: E731
        near = lambda f: min(r["ladder"], key=lambda s: abs(math.log(s / (f * r["rule"]))))  # noqa: E731
        fit.append(at(r["rule"]) / min(map(at, r["ladder"])))
        half += [at(near(0.5)) / at(r["rule"])] if near(0.5) != r["rule"] else []
        double += [at(near(2)) / at(r["rule"])] if near(2) != r["rule"] else []
        if r["vec"]:
            (vec_narrow if n <= S.ROW_FEW_VEC_MAX else vec_wide).append(us["vec"] / at(r["rule"]))
        else:
            before.setdefault(next(b for b in (3, 8, 16, 32) if n <= b), []).append(us["plan"] / us["before"])
    assert (round(gm(fit), 3), round(max(fit), 2)) == (1.004, 1.07)
    assert (len(half), round(gm(half), 2), len(double), round(gm(double), 2)) == (71, 1.08, 32, 1.10)
    assert (len(vec_narrow), round(gm(vec_narrow), 2), len(vec_wide), round(gm(vec_wide), 2)) == (12, 1.10, 9, 0.93)
    assert {b: (len(x), round(gm(x), 2)) for b, x in before.items()} == {3: (2, 0.33), 8: (9, 0.52), 16: (18, 0.56),
                                                                        32: (30, 0.63)}
    p, f = _pass_and_split_us(shapes)
    assert (round(p, 2), round(f, 2), int(f / p)) == (0.79, 1.68, S.ROW_FEW_SPLIT_PASSES)


def test_row_few_splits_hold_on_a_later_draw():
    """ROW_FEW_SPLIT_PASSES on 80 one-row shapes with K of 300 to 15000 drawn after it was set
    (data/sgemm_row_few_short_k_nvidia_h200.json): the fit gives a pass 0.81 us and a split 1.63 us; on the 20 shapes
    where the rule keeps one slice, one pass a slice takes 1.09x its time (geomean), and the rule's slices take 1.004x
    the time of the ladder's fastest."""
    shapes = _row_few_record("sgemm_row_few_short_k_nvidia_h200.json")
    deep = [r["us"][f"few s={r['deep']}"] / r["us"][f"few s={r['rule']}"] for r in shapes if r["deep"] != r["rule"]]
    fit = [r["us"][f"few s={r['rule']}"] / min(r["us"][f"few s={s}"] for s in r["ladder"]) for r in shapes]
    assert (len(deep), round(gm(deep), 2), round(gm(fit), 3)) == (20, 1.09, 1.004)
    p, f = _pass_and_split_us(shapes)
    assert (round(p, 2), round(f, 2), int(f / p)) == (0.81, 1.63, S.ROW_FEW_SPLIT_PASSES)


def _vec_over_few_by_blocks(shapes, sms):
    """ROW_VEC's time over ROW_FEW's (at its rule's slices) on the shapes with 20-32 aligned columns, by what ROW_VEC's
    plan takes: one slice, fewer than VEC_BUSY blocks, or more."""
    out = {}
    for r in shapes:
        n, k = r["shape"][1:]
        if r["vec"] and n > S.ROW_FEW_VEC_MAX:
            splits, blocks = S.row_vec_blocks(n, k, sms)
            kind = "one" if splits == 1 else "few" if blocks < S.VEC_BUSY else "many"
            out.setdefault(kind, []).append(r["us"]["vec"] / r["us"][f"few s={r['rule']}"])
    return out


def test_row_few_takes_row_vecs_place_where_row_vec_has_few_blocks():
    """row_few_choice at 20-32 aligned columns: ROW_FEW where ROW_VEC's plan splits K over fewer than VEC_BUSY blocks
    (one an SM), ROW_VEC where it takes one slice or more blocks. Read from 48 shapes drawn there
    (data/sgemm_row_few_wide_nvidia_h200.json: ROW_VEC / ROW_FEW 1.04-1.20x on the 17 with few blocks, geomean
    0.94 on the 28 with many, 1.11 on the 3 with one slice, K of 1830-2042) and the two earlier records (1.07-1.15x,
    10; 0.93, 4; 0.91, 10 with one slice); then checked on 40 shapes drawn after the rule was set
    (data/sgemm_row_few_wide_check_nvidia_h200.json): ROW_VEC took longer on each of the 14 with few blocks
    (1.05-1.25x), and the plan took 0.875x the time of the plan before (ROW_VEC) there (0.800-0.977x, each
    faster); % of cuBLAS, geomean over the 40: 114.5 against 108.9, lowest 98.7 against 83.1 (H200)."""
    fit = {}
    for name, count in (("sgemm_row_few_wide_nvidia_h200.json", 48), ("sgemm_row_few_nvidia_h200.json", 80),
                        ("sgemm_row_few_short_k_nvidia_h200.json", 80)):
        for kind, x in _vec_over_few_by_blocks(_row_few_record(name, count), 132).items():
            fit.setdefault("wide" if "wide" in name else "earlier", {}).setdefault(kind, []).extend(x)
    wide, earlier = fit["wide"], fit["earlier"]
    assert (len(wide["few"]), round(min(wide["few"]), 2), round(max(wide["few"]), 2)) == (17, 1.04, 1.20)
    assert (len(wide["many"]), round(gm(wide["many"]), 2), len(wide["one"]), round(gm(wide["one"]), 2)) == (28, 0.94,
                                                                                                          3, 1.11)
    assert (len(earlier["few"]), round(min(earlier["few"]), 2), round(max(earlier["few"]), 2)) == (10, 1.07, 1.15)
    assert (len(earlier["many"]), round(gm(earlier["many"]), 2)) == (4, 0.93)
    assert (len(earlier["one"]), round(gm(earlier["one"]), 2)) == (10, 0.91)
    check = _row_few_record("sgemm_row_few_wide_check_nvidia_h200.json", 40)
    few = _vec_over_few_by_blocks(check, 132)["few"]
    assert (len(few), round(min(few), 2), round(max(few), 2)) == (14, 1.05, 1.25)
    changed = [r["us"]["plan"] / r["us"]["before"] for r in check if r["plan"] != r["before"]]
    assert all(r["plan"].startswith("rows/1k") for r in check if r["plan"] != r["before"])
    assert (len(changed), round(gm(changed), 3), round(min(changed), 3), round(max(changed), 3)) == (14, 0.875, 0.8,
                                                                                                     0.977)
    pct = [[100 * r["us"]["cuBLAS"] / r["us"][w] for r in check] for w in ("plan", "before")]
    assert [(round(gm(x), 1), round(min(x), 1)) for x in pct] == [(114.5, 98.7), (108.9, 83.1)]


def test_a_thin_kernel_refuses_an_fma_order_and_writes_nothing():
    p = Problem(4, 8, 8)
    p.poison()
    with pytest.raises(ValueError, match="has none to choose"):
        S.sgemm(p.a, p.b, p.c, tile=T.Thin("rows", 4), order="row")
    assert np.isnan(p.c.copy_to_host()).all()


@pytest.mark.parametrize("thin", T.THINS, ids=lambda t: t.name)
def test_thin_machine_code(thin):
    """The hot loop does the FMAs of a group of 4 k-steps (rows: W x 4 columns each) or a pass of 4 (cols: R rows
    x W columns), no more; the large operand arrives by 4-byte loads (16 a group for rows, 4 R a pass for cols);
    the small one's values from shared memory (rows: a group's 4 values of a row in one 16-byte load; cols: a k-step's
    W values in 4-, 8- or 16-byte loads for W = 1, 2, >= 4); no
    float64, no local memory; the large operand's loads streamed (rows) or through the read-only path (cols); the
    same for the C twin. numba's kernel holds Thin.blocks_per_sm(False) blocks an SM (plan()'s waves)."""
    numba_cubin = cubin_from_ptx(numba_ptx(T.numba_kernel(thin, False, simulator=False), S.numba_sig()))
    numba_ = analyze(numba_cubin)
    assert max_blocks_per_sm(numba_.registers, thin.NT, numba_.shared_bytes) == thin.blocks_per_sm(False) >= thin.MINB
    for cubin, name in ((numba_cubin, None), (T.c_twin(thin, False).cubin("sm_90"), f"gemm_{thin.kind}_c")):
        report = analyze(cubin, name)
        loop, ops = report.hot_loop, report.hot_loop.opcodes
        assert report.spills == "none" and not any(op.startswith(("LDL", "STL")) for op in ops), name
        assert loop.count("f64") == 0
        big = {op: n for op, n in ops.items() if op.startswith("LDG")}
        if thin.kind == "rows":
            assert loop.ffma == 16 * thin.W and sum(big.values()) == 16
            shared = {op: n for op, n in ops.items() if op.startswith("LDS")}
            assert shared == {"LDS.128": thin.W}, (name or "numba", shared)
        else:
            assert loop.ffma == 4 * thin.R * thin.W and sum(big.values()) == 4 * thin.R
            assert ops[{1: "LDS", 2: "LDS.64"}.get(thin.W, "LDS.128")] == 4 * max(1, thin.W // 4)
        # 4 bytes each; rows: streamed, evict-first (numba util.intrinsics.at_cs, the twin __ldcs: each line is read by
        # one load); cols: the read-only path (util.intrinsics.at_nc; streamed, cols/1 was slower: docs/notes.md)
        assert set(big) == ({"LDG.E.EF"} if thin.kind == "rows" else {"LDG.E.CONSTANT"}), big
        # the staging's shared stores unpredicated: the shared window's base (S2R SR_CgaCtaId) read once, not once a
        # store (behind a predicate each, 32-35 reads in numba's rows/1 and cols/1 and in most of the twins)
        assert sum("SR_CgaCtaId" in i.text for i in report.instructions) == 1, name


def bounded_sass(thin):
    """sm_90 SASS of numba's kernel for ``thin`` (32-bit offsets) at its launch bound, as sgemm launches it."""
    return analyze(cubin_from_ptx(numba_ptx(T.numba_kernel(thin, False, simulator=False), S.numba_sig(),
                                            launch_bounds=(thin.NT, thin.MINB))))


def test_one_row_hot_loop_is_as_long_as_the_twins():
    """rows/1 adds B's offsets to its address as the twin's b + pb + u * n + col[c] does (util.intrinsics.at_cs with a
    tuple: B + pb one 64-bit pointer that walks): its hot loop no longer than the twin's, no more integer arithmetic
    (one 32-bit sum a load, each widened, took 17 more instructions, 16 of them integer arithmetic)."""
    thin = T.Thin("rows", 1)
    numba_ = bounded_sass(thin)
    twin = analyze(T.c_twin(thin, False).cubin("sm_90"), "gemm_rows_c")
    assert numba_.hot_loop.size <= twin.hot_loop.size and numba_.hot_loop.mix["int"] <= twin.hot_loop.mix["int"]


@pytest.mark.parametrize("thin", [t for t in T.THINS if t.kind == "cols" and t.W > 1], ids=lambda t: t.name)
def test_cols_staging_takes_its_column_once(thin):
    """cols stages B's slice element t + NT s at row t / W + s NT / W, column t % W (NT % W == 0), in both twins: the
    column and its check once, not a division and a remainder each of the 32 elements (numba kept the remainder
    of each, a LOP3 each: 37 in cols/16's set-up against the twin's 5, and ran 1-3% longer, H200, docs/notes.md)."""
    def setup_lop3(report):
        return sum(i.opcode.startswith("LOP3") for i in report.prologue)

    numba_ = bounded_sass(thin)
    twin = analyze(T.c_twin(thin, False).cubin("sm_90"), "gemm_cols_c")
    assert setup_lop3(twin) <= 8 and setup_lop3(numba_) <= setup_lop3(twin) + 2, (setup_lop3(numba_), setup_lop3(twin))


def test_at_cs_takes_a_tuple_of_parts():
    """at_cs(a, (i, j)) loads a[i + j]; under the simulator each part must be >= 0, as the address adds them in turn."""
    from numba import int32

    @cuda.jit
    def gather(a, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = at_cs(a, (int32(i), int32(3)))

    host = np.random.default_rng(5).random(40, dtype=np.float32)
    a, out = cuda.to_device(host), cuda.to_device(np.full(37, np.nan, np.float32))
    gather[1, 64](a, out)
    assert np.array_equal(out.copy_to_host(), host[3:])
    with pytest.raises(IndexError, match="negative"):
        at_cs(host, (5, -1))


@pytest.mark.parametrize("thin", T.THINS, ids=lambda t: t.name)
def test_thin_launch_bounds_leave_no_local_memory_with_64_bit_offsets(thin):
    """Thin.MINB is a bound at which neither twin spills, with 64-bit offsets too (the 32-bit variants: above), but
    for the one exception Thin.MINB names: rows/16's C twin, 8 bytes, at the fewest blocks an SM the search allows;
    numba's variant holds Thin.blocks_per_sm(True) blocks an SM (the 32-bit one's: above)."""
    numba_cubin = cubin_from_ptx(numba_ptx(T.numba_kernel(thin, True, simulator=False), S.numba_sig()))
    numba_ = analyze(numba_cubin)
    assert max_blocks_per_sm(numba_.registers, thin.NT, numba_.shared_bytes) == thin.blocks_per_sm(True) >= thin.MINB
    for cubin, name in ((numba_cubin, None), (T.c_twin(thin, True).cubin("sm_90"), f"gemm_{thin.kind}_c")):
        report = analyze(cubin, name)
        if thin.name == "rows/16" and name is not None:
            assert thin.MINB == 4 and report.spills == "8 B (2 STL, 2 LDL)", report.spills
        else:
            assert report.spills == "none" and report.local_bytes == 0, (thin.name, name, report.spills)


@pytest.mark.parametrize("thin", [t for t in T.THINS if fuses(t.BM, t.BN, t.NT)], ids=lambda t: t.name)
def test_fused_split_k_leaves_the_hot_loop_and_local_memory_as_they_were(thin):
    """The variant whose last block adds the slices (util.splitk, ``fuse``; the kernels whose threads add at most
    MAX_ELEMENTS of the tile), 32- and 64-bit: no local memory, the hot loop's FMAs and loads as in the plain
    variant, and the slices read back from L2 (``ld.global.cg``, SASS LDG.E.STRONG.GPU), never L1; numba's holds
    Thin.blocks_per_sm(wide, fused=True) blocks an SM."""
    for wide in (False, True):
        plain = analyze(cubin_from_ptx(numba_ptx(T.numba_kernel(thin, wide, simulator=False), S.numba_sig())))
        numba_cubin = cubin_from_ptx(numba_ptx(T.numba_kernel(thin, wide, simulator=False, fuse=True), S.numba_sig()))
        numba_ = analyze(numba_cubin)
        assert max_blocks_per_sm(numba_.registers, thin.NT, numba_.shared_bytes) == thin.blocks_per_sm(wide, True)
        for cubin, name in ((numba_cubin, None), (T.c_twin(thin, wide, True).cubin("sm_90"), f"gemm_{thin.kind}_c")):
            report = analyze(cubin, name)
            assert report.spills == "none" and report.local_bytes == 0, (thin.name, wide, name, report.spills)
            ops = report.hot_loop.opcodes
            # the adding block's loads, all written out: a round's U slices x E elements of this thread
            each = thin.BM * thin.BN // thin.NT
            adds = len(re.findall(r"LDG\.E\.STRONG\.GPU\b", report.sass))
            assert adds == slices_a_round(thin.BM, thin.BN, thin.NT) * each
            assert report.hot_loop.ffma == plain.hot_loop.ffma
            assert {op: n for op, n in ops.items() if op.startswith("LDG")} == {
                op: n for op, n in plain.hot_loop.opcodes.items() if op.startswith("LDG")}


@pytest.mark.parametrize("thin", T.ROW_VECS, ids=lambda t: t.name)
def test_row_vec_machine_code(thin):
    """ROW_VEC's hot loop, both twins, each block width: a pass of VEC_ROWS rows (unrolled to 16 rows by both
    compilers): 4 FFMA a row, B's rows in 16-byte streamed loads (LDG.E.EF.128), A's values through the read-only
    path, one a row; no local memory, 32- or 64-bit offsets, fused or not (with the sizes after the arrays, numba's
    128-column kernel and its fused 32-column one spilled 8 B outside the hot loop at 64-bit offsets). numba's kernel
    at most 8% longer than the twin's (64-bit offsets: numba's address arithmetic; with its last rows' loop unbounded,
    LLVM unrolled that loop 4 times and numba's 32-bit 128-column kernel was 664 instructions against 440)."""
    for wide in (False, True):
        for fuse in (False, True):
            numba_ = analyze(cubin_from_ptx(numba_ptx(T.numba_kernel(thin, wide, simulator=False, fuse=fuse),
                                                      S.numba_sig())))
            twin = analyze(T.c_twin(thin, wide, fuse).cubin("sm_90"), "gemm_rows_vec_c")
            assert len(numba_.instructions) <= 1.08 * len(twin.instructions)
            for name, report in (("numba", numba_), ("twin", twin)):
                ops = report.hot_loop.opcodes
                loads = {op: n for op, n in ops.items() if op.startswith("LDG")}
                assert report.hot_loop.ffma == 4 * loads["LDG.E.EF.128"] == 4 * loads["LDG.E.CONSTANT"], loads
                assert set(loads) == {"LDG.E.EF.128", "LDG.E.CONSTANT"} and report.hot_loop.count("f64") == 0
                assert not any(op.startswith(("LDL", "STL")) for op in ops)
                assert report.spills == "none", (wide, fuse, name, report.spills)



def test_col_vec_machine_code():
    """COL_VEC's hot loop, both twins, every variant (4- or 16-byte loads, 32- or 64-bit, fused or not): A's values
    streamed (LDG.E.EF, .128 with ``va``), COL_ROWS of them for each value of B (through the read-only path,
    LDG.E.CONSTANT), one FFMA a float of A loaded (the compilers unroll the pass loop differently: ratios, not counts);
    no float64, no local memory at Thin.MINB."""
    thin = T.COL_VEC
    for va in (False, True):
        suffix = ".128" if va else ""
        for wide in (False, True):
            for fuse in (False, True):
                numba_cubin = cubin_from_ptx(numba_ptx(T.numba_kernel(thin, wide, simulator=False, fuse=fuse, va=va),
                                                       S.numba_sig()))
                for cubin, name in ((numba_cubin, None), (T.c_twin(thin, wide, fuse, va).cubin("sm_90"),
                                                          "gemm_cols_vec_c")):
                    report = analyze(cubin, name)
                    ops = report.hot_loop.opcodes
                    loads = {op: n for op, n in ops.items() if op.startswith("LDG")}
                    a_loads, b_loads = loads.get(f"LDG.E.EF{suffix}", 0), loads.get(f"LDG.E{suffix}.CONSTANT", 0)
                    assert set(loads) == {f"LDG.E.EF{suffix}", f"LDG.E{suffix}.CONSTANT"}, (va, wide, fuse, name, loads)
                    assert a_loads == T.COL_ROWS * b_loads > 0 and report.hot_loop.ffma == (4 if va else 1) * a_loads
                    assert report.hot_loop.count("f64") == 0
                    assert report.spills == "none" and report.local_bytes == 0, (va, wide, fuse, name, report.spills)


def test_one_row_few_columns_takes_row_few():
    """C with one row and 2..32 columns: ROW_FEW, the narrowest width that covers n (but ROW_VEC for 20-32 columns
    whose rows start 16-byte aligned, where rows/1's slices hold K and ROW_VEC's plan takes one slice or at least
    VEC_BUSY blocks), its slices one pass of its loop deep (``Thin.kmin``) or MAX_SPLITS of them where that saves
    more than ROW_FEW_SPLIT_PASSES passes, else one; forced only on one row and at most its width."""
    for n in range(2, 33):
        for b_aligned in (True, False):
            p = S.plan(1, n, 50000, sms=132, aligned=(True, b_aligned, True))
            splits, blocks = S.row_vec_blocks(n, 50000, 132)
            vec = n > S.ROW_FEW_VEC_MAX and n % 4 == 0 and b_aligned and (splits == 1 or blocks >= S.VEC_BUSY)
            assert (p.tile in T.ROW_VECS) if vec else p.tile == T.row_few_for(n), (n, b_aligned, p)
    for shape, name, splits, kslice in [((1, 7, 131072), "rows/1k8", 128, 1024),   # one pass: 4 steps of 256 rows
                                        ((1, 2, 1000000), "rows/1k2", 245, 4096),  # 16 steps a pass; MAX_SPLITS
                                        ((1, 31, 300000), "rows/1k32", 235, 1280),  # MAX_SPLITS: 5 passes a slice
                                        ((1, 32, 1500000), "rows/1k32", 255, 5888),  # aligned, past rows/1's reach
                                        ((1, 21, 943), "rows/1k32", 4, 256),       # 4 passes: a split saves 3
                                        ((1, 21, 617), "rows/1k32", 1, 768),       # 3 passes: a split saves 2
                                        ((1, 11, 1000), "rows/1k16", 1, 1024),     # a pass and a partial one
                                        ((1, 4, 100), "rows/1k4", 1, 256)]:        # K under a pass
        p = S.plan(*shape, sms=132)
        assert (p.tile.name, p.splits, p.kslice) == (name, splits, kslice), (shape, p)
        quanta = S.cdiv(shape[2], p.tile.BK)
        deep = min(quanta * p.tile.BK, max(p.tile.kmin, S.cdiv(quanta, S.MAX_SPLITS) * p.tile.BK))
        saved = S.cdiv(quanta, p.tile.steps) - S.cdiv(deep // p.tile.BK, p.tile.steps)
        assert p.kslice == (deep if saved > S.ROW_FEW_SPLIT_PASSES else quanta * p.tile.BK), shape
    assert S.thin_choice(1, 32, 1500000) is None  # rows/1's slices cannot hold K: ROW_FEW, not the tiles
    for shape, name, splits in [((1, 24, 3237), "rows/1k32", 13),    # ROW_VEC would take 12 slices, 12 blocks
                                ((1, 24, 1500), "rows/1v32", 1),     # ROW_VEC in one slice
                                ((1, 28, 100000), "rows/1v64", 110)]:  # ROW_VEC on 110 blocks
        p = S.plan(*shape, sms=132)
        assert (p.tile.name, p.splits) == (name, splits), (shape, p)
    near = 2**31 - 1000  # one column forced: B's offsets stay in int32, the last slice's end kb + kslice does not
    assert S.plan(1, 1, near, sms=132, tile=T.ROW_FEWS[0]).wide and not S.plan(1, 1, near - 10**6, sms=132,
                                                                                tile=T.ROW_FEWS[0]).wide
    assert S.plan(1, 1, 5000, sms=132).tile == T.COL_VEC and S.plan(1, 33, 5000, sms=132).tile == T.Thin("rows", 1)
    assert S.plan(2, 7, 5000, sms=132).tile.name == "cols/8"
    assert [t.steps for t in T.ROW_FEWS] == [16, 8, 4, 2, 1] and all(t.kmin == t.steps * t.BK for t in T.ROW_FEWS)
    with pytest.raises(ValueError, match="ROW_FEW"):
        S.plan(2, 7, 5000, tile=T.ROW_FEWS[2])
    with pytest.raises(ValueError, match="or a wider one"):
        S.plan(1, 9, 5000, tile=T.ROW_FEWS[2])
    with pytest.raises(ValueError, match=r"Thin\('rows', 1\)$"):
        S.plan(1, 33, 5000, tile=T.ROW_FEWS[4])
    with pytest.raises(ValueError, match="few"):
        T.Thin("rows", 1, vec=True, cb=128, few=True)
    with pytest.raises(ValueError, match="1..32 columns"):
        T.row_few_for(33)


@pytest.mark.parametrize("thin", T.ROW_FEWS, ids=lambda t: t.name)
def test_row_few_machine_code(thin):
    """ROW_FEW, both twins, 32- and 64-bit offsets, fused or not: B streamed (LDG.E.EF), FEW_LOADS loads a pass in the
    loop and as many in the partial pass; A through the read-only path, one load a step of 32 rows (``steps`` a pass),
    its values handed to the slots by SHFL.IDX; the same counts of loads, shuffles and FMAs in both; no local memory,
    no float64, at least MINB blocks an SM; numba's kernel at most 10% longer than the twin's."""
    for wide in (False, True):
        for fuse in (False, True):
            numba_ = analyze(cubin_from_ptx(numba_ptx(T.numba_kernel(thin, wide, simulator=False, fuse=fuse),
                                                      S.numba_sig())))
            twin = analyze(T.c_twin(thin, wide, fuse).cubin("sm_90"), "gemm_rows_few_c")
            counts = []
            for name, report in (("numba", numba_), ("twin", twin)):
                def count(pattern):
                    return len(re.findall(pattern, report.sass))
                assert count(r"LDG\.E\.EF\b") == 2 * T.FEW_LOADS and count(r"LDG\.E\.CONSTANT\b") == 2 * thin.steps
                assert report.spills == "none" and report.local_bytes == 0 and "F2F.F64" not in report.sass, name
                assert max_blocks_per_sm(report.registers, thin.NT, report.shared_bytes) >= thin.MINB
                counts.append((count(r"SHFL\.IDX"), count(r"\bFFMA\b"), count(r"LDG\.E\.STRONG\.GPU")))
            assert counts[0] == counts[1] and counts[0][0] > 0, counts
            assert len(numba_.instructions) <= 1.10 * len(twin.instructions)

