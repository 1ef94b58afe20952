"""util.sgemm: SGEMM on any shape. Every strategy correct in the simulator at small sizes, bad input refused before
anything is written, the plan rule's invariants, and the machine code each variant is for (sm_90 SASS)."""

import dataclasses
import math
import re
import warnings
from collections import Counter

import numpy as np
import pytest

import util  # noqa: F401  first: without a GPU it switches numba to its simulator
from util import cuda
from util import sgemm as S
from util.compile import cubin_from_ptx, numba_ptx
from util.sass import analyze
from util.verify import Problem

pytestmark = pytest.mark.skipif(not util.SIMULATED, reason="small sizes for numba's simulator; the GPU run is "
                                                           "notebooks/sgemm_any_shape.ipynb")


def run(shape, seed=0, **options):
    p = Problem(*shape, seed=seed)
    p.poison()
    used = S.sgemm(p.a, p.b, p.c, **options)
    return used, p.check()


def tiled_sass(tile, va, vb, wide=False, **options):
    """The sm_90 machine code of ``S.numba_kernel(va, vb, wide, tile, **options)`` (default 32-bit offsets), as the
    plan launches it (its launch bounds); its hot loop found by the tile's FFMAs a k-step."""
    kernel = S.numba_kernel(va, vb, wide, tile, simulator=False, **options)
    return analyze(cubin_from_ptx(numba_ptx(kernel, S.numba_sig(), launch_bounds=(tile.NT, tile.MINB))),
                   ffma_per_iteration=tile.ffma)


@pytest.mark.parametrize("shape, options", [
    ((1, 1, 1), {}),                                  # the smallest: one scalar, every load clamped or zero
    ((1, 9, 20), {}),                                 # one row
    ((9, 1, 20), {}),                                 # one column
    ((9, 8, 1), {}),                                  # K = 1: only the tail tile
    ((130, 132, 24), {"tile": S.TILE, "one_loop": False}),  # 16-byte loads of A and B, edge blocks clamped, a pass
                                                            # of two tiles and one more
    ((67, 129, 17), {"tile": S.SMALL_TILE, "one_loop": False}),  # scalar loads, a K tail, 64 x 128 tiles
    ((5, 8, 40), {"splits": 5}),                      # split-K: five slices of one tile each, then the sum
    ((5, 9, 176), {"splits": 22}),                    # 22 slices: the sum's passes of 8 slices, then 4, then 1 alone
    ((5, 9, 56), {"splits": 7}),                      # 7 slices: the sum's 4 slices at once, then 2 alone
    ((128, 128, 16), {"splits": 2}),                  # split-K on enough elements for the sum's 16-byte loads
    ((33, 4, 44), {"splits": 2, "wide": True}),       # split-K with 64-bit offsets
    ((9, 8, 26), {"tile": S.TILE, "wide": True}),     # vector loads of B only over whole k-tiles, 64-bit, 128 x 128
    ((20, 7, 36), {"tile": S.SMALL_TILE, "splits": 3}),  # 64 x 128 tiles split, vector loads of A only
    ((131, 130, 27), {"tile": S.TILE, "one_loop": False}),  # 128 x 128, scalar A, B spread over threads, K tail,
                                                            # edges
    ((70, 257, 40), {"tile": S.TILE, "wide": True}),  # B spread over threads with 64-bit offsets
    ((65, 67, 19), {"tile": S.TINY_TILE}),            # 64 x 64 sliced K: scalar loads, edges, a K tail in group 0 only
    ((67, 70, 29), {"tile": S.TINY_TILE, "splits": 2, "wide": True}),  # sliced K, 64-bit, split, K tails
    ((66, 132, 48), {"tile": S.TINY_TILE, "splits": 3, "wide": True}),  # sliced K split, vector loads, 64-bit
    ((65, 70, 88), {"tile": S.TINY_TILE, "splits": 1, "one_loop": False}),  # sliced K: two passes of two whole tiles,
                                                                            # one more, a tail
    ((65, 70, 88), {"tile": S.TINY_TILE, "splits": 1, "one_loop": True}),  # the same tiles all through one loop
    ((131, 130, 27), {"tile": S.TILE, "one_loop": True}),  # 128 x 128 through one loop, 4-byte loads, a K tail
    ((20, 8, 36), {"tile": S.SMALL_TILE, "splits": 3, "one_loop": True}),  # 64 x 128 through one loop, split
    ((40, 65, 24), {"tile": S.TINY_TILE}),            # n = BN + 1: the right-edge block shifted 63 columns left
    ((70, 259, 40), {"tile": S.SMALL_TILE, "splits": 2}),  # shifted right edge, 4-byte A and B, split-K
    ((9, 63, 33), {"tile": S.TINY_TILE, "splits": 2}),  # 4-byte B with n < BN: per-column clamps, not shifted
    ((70, 20, 40), {"tile": S.plan(70, 20, 40).tile}),  # 17-32 columns: the rule's tile of NARROW_TILES
    ((130, 19, 37), {"tile": S.NARROW_TILE, "splits": 2}),  # 128 x 32: 4-byte loads, edges, a K tail, split-K
    ((67, 28, 48), {"tile": S.NARROW_TILE, "wide": True}),  # 128 x 32: 16-byte loads and stores, 64-bit offsets
    ((65, 33, 40), {"tile": S.NARROW_TILE, "one_loop": False}),  # n = BN + 1: a second column of tiles, 1 wide
    ((66, 21, 29), {"tile": S.NARROW_SLICED, "one_loop": False}),  # 64 x 32 sliced K: 4-byte B, C staged, K tails
    ((130, 32, 64), {"tile": S.NARROW_SLICED, "splits": 2, "wide": True}),  # sliced, 16-byte, split, 64-bit
    ((65, 25, 88), {"tile": S.NARROW_SLICED, "one_loop": True}),  # sliced K through one loop
    ((35, 33, 19), {"tile": S.MICRO_TILE}),           # 32 x 32 sliced K: scalar loads, edges, a K tail
    ((70, 36, 56), {"tile": S.MICRO_TILE, "splits": 2, "wide": True}),  # 16-byte loads and stores, split, 64-bit
    ((66, 35, 88), {"tile": S.MICRO_TILE, "one_loop": False}),  # 16-byte A, B shifted and spread along rows, C staged
    ((40, 72, 88), {"tile": S.MICRO_TILE, "one_loop": True}),  # 32 x 32 through one loop, 16-byte loads
])
def test_every_strategy_is_correct(shape, options):
    used, check = run(shape, **options)
    assert check.correct, f"{shape} {options} -> {used}: {check}"
    for key, value in options.items():
        assert getattr(used, key) == value


@pytest.mark.parametrize("shape", [(70, 33, 40), (130, 67, 29), (9, 8, 1), (3, 40, 50), (200, 300, 4000),
                                   (500, 24, 3000)])
def test_choices_start_with_the_rules_plan(shape):
    """choices(): the rule's tiled plan first, then distinct (tile, slices) of the tiles it ranks, in the order of the
    rule's estimates."""
    cs = S.choices(*shape)
    rule = S.plan(*shape, thin=False)
    assert (cs[0].tile, cs[0].splits) == (rule.tile, rule.splits)
    keys = [(c.tile, c.splits) for c in cs]
    pool = S._tiles(*shape, None, None)  # TILES, or NARROW_TILES where C has at most NARROW_MAX columns
    assert len(set(keys)) == len(keys) == min(S.TUNE_CHOICES, sum(len(S.slice_counts(shape[2], t)) for t in pool))
    est = [S.cost_model(c.tile).estimate(*shape, c.tile, c.splits, S._sms(), S.stores16(c.tile, c.vb, c.splits, c.c16))
           for c in cs]
    assert est == sorted(est)


def test_tune_times_the_choices_once_and_keeps_the_fastest(monkeypatch):
    """tune=True: the first call of a shape times the rule's choices (here a stand-in timer that makes the last
    one fastest), runs and keeps it; a second call times nothing; the result is right each time."""
    import util.timing

    timed = []

    def fake_time_calls(calls, runs):
        timed.append(list(calls))
        for call in calls.values():
            call()
        return {name: -float(i) for i, name in enumerate(calls)}  # the last call "fastest"

    monkeypatch.setattr(util.timing, "time_calls", fake_time_calls)
    monkeypatch.setattr(S, "_TUNED", {})
    shape = (130, 67, 29)
    want = S.choices(*shape)[-1]
    assert S.tuned(*shape) is None
    for _ in range(2):
        p = Problem(*shape, seed=5)
        p.poison()
        used = S.sgemm(p.a, p.b, p.c, tune=True)
        assert p.check().correct, p.check()
        assert (used.tile, used.splits) == (want.tile, want.splits)
    assert len(timed) == 1 and len(timed[0]) == S.TUNE_CHOICES
    assert S.tuned(*shape) == used


def test_tune_keeps_the_thin_kernel(monkeypatch):
    """Where the rule takes a thin kernel, tune=True runs it untimed."""
    import util.timing

    monkeypatch.setattr(util.timing, "time_calls", lambda calls, runs: pytest.fail("timed a thin kernel's shape"))
    used, check = run((3, 40, 50), tune=True)
    assert check.correct and isinstance(used.tile, S.Thin) and used == S.plan(3, 40, 50)


@pytest.mark.parametrize("forced", [{"splits": 1}, {"tile": S.TILE}, {"order": "row"}, {"one_loop": True},
                                    {"wide": True}, {"thin": False}, {"fuse": False}])
def test_tune_refuses_forced_choices(forced):
    """tune=True takes nothing forced: a clear error, and C is left as it was (NaN)."""
    p = Problem(70, 33, 40, seed=6)
    p.poison()
    with pytest.raises(ValueError, match="tune=True"):
        S.sgemm(p.a, p.b, p.c, tune=True, **forced)
    assert np.isnan(p.c.copy_to_host()).all()


def test_time_calls_times_each_call_once_a_round():
    """util.timing.time_calls: a warm-up and ``runs`` timed launches of each call, a median each (simulator: wall)."""
    from util.timing import time_calls

    counts = {"a": 0, "b": 0}

    def call(name):
        counts[name] += 1

    medians = time_calls({name: (lambda name=name: call(name)) for name in counts}, 3)
    assert counts == {"a": 4, "b": 4}
    assert set(medians) == {"a", "b"} and all(t >= 0 for t in medians.values())


def test_prepared_calls_keep_their_own_grids():
    """Two prepared calls of one compiled kernel with other grids (and other slices), each launched after the other
    was prepared: each runs its own launch (the simulator's ``kernel[grid, block]`` configures the kernel object
    itself, so a launch configured once would run with the last prepared grid)."""
    small, large = Problem(40, 20, 40, seed=1), Problem(100, 72, 40, seed=2)
    calls = [(p, S.prepare(p.a, p.b, p.c, tile=S.TINY_TILE, splits=s)) for p, s in ((large, 1), (small, 2))]
    assert len({(c.plan.va, c.plan.vb, c.plan.vc, c.plan.sc, c.plan.one_loop) for _, c in calls}) == 1  # one kernel
    assert calls[0][1].plan.grid != calls[1][1].plan.grid
    for p, call in calls:
        p.poison()
        call()
        assert p.check().correct, f"{p.m} x {p.n} x {p.k}: {p.check()}"


@pytest.mark.parametrize("one_loop", [False, True])
@pytest.mark.parametrize("order", S.FFMA_ORDERS)
@pytest.mark.parametrize("tile", S.TILES)
def test_every_ffma_order_is_correct(order, tile, one_loop):
    """Each order of a k-step's FMAs, forced, on a shape with edge blocks and a K tail (the plan's grid), in the
    two-tile pass (3 whole k-tiles or more on every tile) and through one loop."""
    used, check = run((70, 131, 59), seed=3, tile=tile, splits=1, order=order, one_loop=one_loop)
    assert check.correct, f"{tile.name} {order} one_loop={one_loop} -> {used}: {check}"


def test_every_variant_has_a_recorded_ffma_order():
    for compiler in ("numba", "cuda_c"):
        for tile in S.TILES:
            for va, vb, wide in np.ndindex(2, 2, 2):
                assert S.ffma_order(compiler, tile, bool(va), bool(vb), bool(wide)) in S.FFMA_ORDERS
                if not vb and tile.B4 > 1:  # the shifted right edge of B: other machine code, its own order
                    assert S.ffma_order(compiler, tile, bool(va), False, bool(wide), True) in S.FFMA_ORDERS
                if vb and tile.VC:  # 16-byte stores of C: other registers, their own order
                    assert S.ffma_order(compiler, tile, bool(va), True, bool(wide), vc=True) in S.FFMA_ORDERS
                if not vb and tile.SC:  # C through shared memory: another epilogue, its own order
                    for shift_b in (False, True):
                        assert S.ffma_order(compiler, tile, bool(va), False, bool(wide), shift_b,
                                            sc=True) in S.FFMA_ORDERS
                # one copy of the k-tile (Plan.one_loop, 32-bit offsets): other registers, its own order, for
                # every variant a plan takes (C staged where the tile has SC and B 4-byte loads)
                for shift_b in (False, True) if not vb and tile.B4 > 1 else (False,):
                    for vc in (False, True) if vb and tile.VC else (False,):
                        if not wide:
                            assert S.ffma_order(compiler, tile, bool(va), bool(vb), False, shift_b, vc,
                                                not vb and tile.SC, one_loop=True) in S.FFMA_ORDERS
    p = Problem(8, 8, 8)
    p.poison()
    with pytest.raises(ValueError, match="order must be one of"):
        S.sgemm(p.a, p.b, p.c, order="diagonal")
    assert np.isnan(p.c.copy_to_host()).all()


def test_c_with_17_to_32_columns_takes_a_narrow_tile():
    """Where C has at most NARROW_MAX columns and no thin kernel takes it, plan() ranks NARROW_TILES (32 columns
    wide) by the cost rule, at their fixed FMA order; with more columns, TILES. (On the H200, 16 shapes with 17-32
    columns drawn after the fit: 118.8% of cuBLAS against 91.8% with TILES; docs/notes.md.)"""
    for shape, (name, splits) in {(6312, 19, 5830): ("128x32", 7), (2048, 24, 2048): ("64x32/2k", 16),
                                  (15656, 27, 639): ("128x32", 3), (1000, 17, 1000): ("64x32/2k", 32)}.items():
        p = S.plan(*shape, sms=132)
        assert (p.tile.name, p.splits) == (name, splits), (shape, p.why)
        assert p.tile in S.NARROW_TILES and S.plan(*shape, sms=132, thin=False) == p
    assert S.plan(1000, 16, 1000, sms=132).tile == S.Thin("cols", 16)  # a thin kernel first
    assert S.plan(1000, 16, 1000, sms=132, thin=False).tile in S.NARROW_TILES
    assert S.plan(4096, 33, 4096, sms=132).tile in S.TILES
    assert all(c.tile in S.NARROW_TILES for c in S.choices(6312, 19, 5830, sms=132))
    for tile in S.NARROW_TILES:
        for compiler in ("numba", "cuda_c"):
            assert S.ffma_order(compiler, tile, False, False, False) == tile.order in S.FFMA_ORDERS
    with pytest.raises(ValueError, match="order must be one of"):
        S.Tile(BN=32, order="diagonal")


def test_the_32_by_32_tile_where_the_64_by_64_grid_leaves_the_sms_mostly_empty():
    """MICRO_TILE (8 blocks an SM) where its grid fits one round of the GPU's block slots and K is short; the sliced
    64 x 64 tile where the 32 x 32 grid would need a second, partial round (1443 and 1488 blocks for 1056 slots). On the
    H200 (scratch probe, docs/notes.md; shapes not in the rule's record) numba on one slice of the 32 x 32 tile ran
    1.09-1.25x faster than the rule's plan before it on the first five, and at 0.6x on the last two."""
    for shape in [(3375, 163, 176), (3125, 169, 188), (609, 657, 182), (145, 1441, 141), (7766, 73, 502)]:
        p = S.plan(*shape, sms=132)
        assert (p.tile, p.splits) == (S.MICRO_TILE, 1), (shape, p.why)
        assert p.grid[0] * p.grid[1] <= 132 * S.MICRO_TILE.MINB
    for shape in [(3546, 401, 246), (363, 3966, 174)]:
        assert S.plan(*shape, sms=132).tile == S.TINY_TILE, shape
    for compiler in ("numba", "cuda_c"):
        assert S.ffma_order(compiler, S.MICRO_TILE, True, False, False, True, sc=True) == "snake"


def test_the_32_by_32_tile_leaves_no_local_memory():
    """Every variant a plan takes on MICRO_TILE, numba's and the C twin's, at its bound of 128 registers (8 blocks an
    SM): no local memory, no float64 in the hot loop; but for three 64-bit variants with C staged (4-byte loads of B),
    which only operands of 2^31 elements take: numba's with 4-byte loads of A, 8 B; the twin's, 48 B with A's 16-byte
    loads and 40 B with its 4-byte ones (sm_90; scratch/s32/micro_static_sm90.txt)."""
    t = S.MICRO_TILE
    exceptions = {  # (twin, va, vb, wide, shift_b)
        ("numba", False, False, True, False): "8 B (1 STL, 1 LDL)",
        ("C", True, False, True, False): "48 B (9 STL, 15 LDL)",
        ("C", False, False, True, False): "40 B (7 STL, 12 LDL)"}
    for va, vb, wide, options in S.plan_variants(t):
        numba_ = tiled_sass(t, va, vb, wide, **options)
        twin = analyze(S.c_twin(va, vb, wide, t, **options).cubin("sm_90"), "gemm_c", ffma_per_iteration=t.ffma)
        for name, report in (("numba", numba_), ("C", twin)):
            key = (name, va, vb, wide, options["shift_b"])
            assert report.spills == exceptions.get(key, "none"), (key, options, report.spills)
            assert report.hot_loop.count("f64") == 0


@pytest.mark.parametrize("tile", S.NARROW_TILES, ids=lambda t: t.name)
def test_narrow_tiles_leave_no_local_memory(tile):
    """Each load variant of the narrow tiles, 32- and 64-bit, with the stores of C a plan takes with it (16-byte
    where B's loads are, or 4-byte where C is not aligned; staged on the sliced tile where B takes 4-byte loads): no
    local memory in numba's kernel or the
    C twin at the tile's bound, no float64 in the hot loop; but for one exception: numba's sliced tile with 4-byte
    loads of both operands, C staged, 64-bit offsets, 8 B (each of the four orders leaves some 64-bit variant of it
    8-16 B, numba's or the twin's; scratch probe in docs/notes.md), a variant only operands of 2^31 elements take."""
    variants = [(va, vb, wide, bool(vb) and tile.VC) for va, vb, wide in np.ndindex(2, 2, 2)]
    variants += [(va, 1, 0, False) for va in (0, 1)]  # 16-byte loads of B, 4-byte stores (C not 16-byte aligned)
    for va, vb, wide, vc in variants:
        options = {"vc": vc, "sc": not vb and tile.SC}
        numba_ = tiled_sass(tile, bool(va), bool(vb), bool(wide), **options)
        twin = analyze(S.c_twin(bool(va), bool(vb), bool(wide), tile, **options).cubin("sm_90"), "gemm_c",
                       ffma_per_iteration=tile.ffma)
        exception = tile == S.NARROW_SLICED and not va and not vb and wide
        assert numba_.spills == ("8 B (2 STL, 2 LDL)" if exception else "none"), (tile.name, va, vb, wide)
        assert twin.spills == "none" and twin.local_bytes == 0, (tile.name, va, vb, wide, twin.spills)
        for report in (numba_, twin):
            assert report.hot_loop.count("f64") == 0


def test_the_plan_splits_k_when_the_tiles_cannot_fill_the_gpu():
    assert S.plan(4096, 4096, 4096, sms=132).splits == 1            # 1024 tiles on 264 slots
    assert S.plan(256, 256, 65536, sms=132).splits > 8                # 4 tiles and a long K
    assert S.plan(64, 4096, 4096, sms=132).tile.BM == 64              # half of a 128-row tile would be wasted
    for shape in [(1, 1, 1), (7, 9, 8193), (512, 512, 2048), (1000, 1000, 1000), (5000, 3000, 7000)]:
        p = S.plan(*shape, sms=132)
        ktiles = math.ceil(shape[2] / p.tile.BK)
        assert p.kslice % p.tile.BK == 0 and (p.splits - 1) * p.kslice < shape[2] <= p.splits * p.kslice, p
        assert 1 <= p.splits <= min(S.MAX_SPLITS, ktiles)


def test_the_plan_takes_one_loop_for_short_k_where_each_sm_has_one_block():
    """Plan.one_loop: a grid of at most one block an SM with at most ONE_LOOP_TILES k-tiles a slice; forced either
    way by ``one_loop``, which a thin kernel's plan refuses."""
    assert S.plan(300, 300, 100, sms=132).one_loop       # 100 blocks of 32 x 32, 7 k-tiles
    assert not S.plan(512, 512, 512, sms=132).one_loop   # 512 blocks: an SM runs several
    assert not S.plan(2223, 916, 2611, sms=132).one_loop  # 525 blocks
    edge = dict(sms=132, tile=S.TINY_TILE, splits=1)  # 64 x 64, 16-deep k-tiles
    assert S.plan(768, 704, 128, **edge).one_loop          # 132 blocks of 8 k-tiles: the most it takes
    assert not S.plan(768, 704, 144, **edge).one_loop      # 9 k-tiles
    assert not S.plan(448, 1216, 128, **edge).one_loop     # 133 blocks
    assert not S.plan(300, 300, 100, sms=132, one_loop=False).one_loop
    assert S.plan(512, 512, 512, sms=132, one_loop=True).one_loop
    with pytest.raises(ValueError, match="thin kernel"):
        S.plan(1, 4096, 4096, sms=132, one_loop=True)
    with pytest.raises(ValueError, match="one_loop must be"):
        S.plan(64, 64, 64, sms=132, one_loop=1)
    with pytest.raises(ValueError, match="32-bit offsets"):
        S.plan(300, 300, 100, sms=132, wide=True, one_loop=True)
    assert not S.plan(300, 300, 100, sms=132, wide=True).one_loop


def test_the_plan_shifts_the_right_edge_only_for_whole_pieces_of_b_that_fill_a_tile():
    assert S.plan(8, 129, 8, tile=S.SMALL_TILE).shift_b and S.plan(8, 65, 8, tile=S.TINY_TILE).shift_b
    assert not S.plan(8, 127, 8, tile=S.SMALL_TILE).shift_b   # n < BN: no tile-wide block to shift
    assert not S.plan(8, 132, 8, tile=S.SMALL_TILE).shift_b   # 16-byte loads of B: pieces never straddle n
    assert not S.plan(8, 129, 8, tile=S.TILE).shift_b         # one piece a thread: B spread over threads
    with pytest.raises(ValueError, match="shift_b applies"):
        S.numba_kernel(True, True, False, S.TINY_TILE, shift_b=True)
    with pytest.raises(ValueError, match="shift_b applies"):
        S.c_twin(True, False, False, S.TILE, None, True)


def test_the_plan_spreads_shifted_b_along_rows_where_that_leaves_no_local_memory():
    assert S.plan(8, 129, 8, tile=S.SMALL_TILE).row_b and S.plan(8, 129, 6, tile=S.SMALL_TILE).row_b  # A 16 or 4 B
    assert S.plan(8, 65, 8, tile=S.TINY_TILE).row_b           # the sliced tile with 16-byte loads of A
    assert not S.plan(8, 65, 6, tile=S.TINY_TILE).row_b       # ... not with 4-byte ones (its variant would spill)
    assert not S.plan(8, 63, 8, tile=S.TINY_TILE).row_b       # no shifted right edge: n < BN
    assert not S.plan(8, 129, 8, tile=S.TILE).row_b           # B spread over threads already (one piece a thread)
    with pytest.raises(ValueError, match="row_b spreads"):
        S.numba_kernel(True, False, False, S.SMALL_TILE, row_b=True)  # without shift_b
    with pytest.raises(ValueError, match="row_b spreads"):
        S.c_twin(True, False, False, S.SMALL_TILE, row_b=True)


def _b_load_offsets(report) -> set[str]:
    """The byte offsets of the hot loop's 4-byte global loads from their 64-bit address registers ("+0x0" for none)."""
    return {(m.group(1) or "+0x0") for i in report.hot_loop.instructions if i.opcode == "LDG.E"
            for m in [re.search(r"\.64(\+0x[0-9a-f]+)?\]", i.text)] if m}


@pytest.mark.parametrize("tile, va", [(S.SMALL_TILE, False), (S.SMALL_TILE, True), (S.TINY_TILE, True)])
def test_b_by_rows_reads_32_floats_apart_from_one_address_a_row(tile, va):
    """row_b: a lane's 4-byte loads of B 32 floats (0x80 bytes) apart in a row, at constant offsets from one address
    (a warp's load reads 32 adjacent floats), where whole pieces read 4 adjacent floats (+0x4, +0x8, +0xc); numba's
    kernel without local memory, the twin's with no more than with pieces (the sliced tile's 4-byte-B twins spill
    either way at 128 registers)."""
    def both(row_b):
        options = dict(shift_b=True, sc=tile.SC, row_b=row_b)
        return (tiled_sass(tile, va, False, **options),
                analyze(S.c_twin(va, False, False, tile, **options).cubin("sm_90"), "gemm_c", ffma_per_iteration=tile.ffma))

    (pieces, twin_pieces), (rows, twin_rows) = both(False), both(True)
    runs = {f"+{hex(c * 128)}" for c in range(1, tile.BN // 32)}
    assert runs <= _b_load_offsets(rows) and not runs & _b_load_offsets(pieces)
    if va:  # the only 4-byte loads are B's
        assert _b_load_offsets(pieces) == {"+0x0", "+0x4", "+0x8", "+0xc"}
        assert _b_load_offsets(rows) == {"+0x0"} | runs
    assert pieces.spills == rows.spills == "none"
    assert twin_rows.stack_bytes + twin_rows.local_bytes <= twin_pieces.stack_bytes + twin_pieces.local_bytes


@pytest.mark.parametrize("shape, tile, splits", [((70, 67, 40), S.TINY_TILE, 1), ((33, 129, 36), S.TINY_TILE, 3),
                                                 ((70, 131, 37), S.SMALL_TILE, 1), ((20, 133, 22), S.SMALL_TILE, 2),
                                                 ((3, 129, 5), S.SMALL_TILE, 1)])
def test_b_by_rows_is_correct(shape, tile, splits):
    """row_b at the shifted right edge, in the K tail, with split-K; with 16- and 4-byte loads of A."""
    assert S.plan(*shape, tile=tile, splits=splits).row_b
    used, check = run(shape, seed=6, tile=tile, splits=splits)
    assert check.correct, f"{used}: {check}"


def test_the_plan_picks_loads_by_alignment():
    # 64 x 64 (and up): the tiles, whose loads depend on alignment (the thin kernels' are 4 bytes on every shape)
    assert (S.plan(64, 64, 8).va, S.plan(64, 64, 8).vb) == (True, True)
    assert (S.plan(64, 63, 8).va, S.plan(64, 63, 8).vb) == (True, False)
    assert (S.plan(64, 64, 6).va, S.plan(64, 64, 6).vb) == (False, True)
    assert S.plan(64, 64, 8, aligned=(False, True)).va is False
    assert S.plan(70000, 64, 40000).wide and not S.plan(70000, 40000, 8).wide  # offsets into A, B: 64-bit past 2^31
    assert S.plan(70000, 8, 40000).wide  # the thin kernels' too


def test_the_plan_stores_16_bytes_where_n_and_c_allow_on_the_tiles_with_vc():
    assert [t.name for t in S.TILES if t.VC] == ["64x128", "64x64/2k", "32x32/2k"]  # 128 x 128: the quads would spill
    for tile in (S.SMALL_TILE, S.TINY_TILE):
        assert S.plan(300, 300, 40, tile=tile).vc and not S.plan(300, 302, 40, tile=tile).vc  # n % 4
        assert not S.plan(300, 300, 40, tile=tile, splits=1, aligned=(True, True, False)).vc  # C not 16-byte aligned
        assert S.plan(300, 300, 400, tile=tile, splits=2, aligned=(True, True, False)).vc  # ... but the workspace is
        assert not S.plan(300, 300, 40, tile=tile, aligned=(True, False, True)).vc  # B's rows: 4-byte loads
    assert not S.plan(300, 300, 40, tile=S.TILE).vc and not S.plan(1, 300, 40).vc  # no VC; a thin kernel
    with pytest.raises(ValueError, match="aligned is"):
        S.plan(64, 64, 8, aligned=(True,))
    with pytest.raises(ValueError, match="vc .16-byte stores of C. needs"):
        S.numba_kernel(True, True, False, S.TILE, vc=True)
    with pytest.raises(ValueError, match="needs TN = 4"):
        S.Tile(TN=2, VC=True)


def test_a_problem_whose_c_starts_past_its_allocation():
    """Problem's ``c_offset`` (the FMA order search's 4-byte stores of C): C is the allocation from its second
    float on, poisoned, written and checked as any other; the float before it is not written."""
    p = Problem(16, 12, 8, seed=2, c_offset=1)
    assert p.c_buffer.size == 16 * 12 + 1
    p.c_buffer[:1].copy_to_device(np.array([7.0], np.float32))
    p.poison()
    assert p.check().nan_count == 16 * 12
    S.sgemm(p.a, p.b, p.c, tile=S.TINY_TILE)
    assert p.check().correct
    whole = p.c_buffer.copy_to_host()
    assert whole[0] == 7.0 and (whole[1:] == p.c.copy_to_host().reshape(-1)).all()
    with pytest.raises(ValueError, match="c_offset"):
        Problem(8, 8, 8, c_offset=4)


def test_bad_input_is_refused_and_nothing_is_written():
    p = Problem(16, 12, 8, seed=2)
    bad = [
        (TypeError, "NumPy", lambda: S.sgemm(np.ones((16, 8), np.float32), p.b, p.c)),
        (TypeError, "float32", lambda: S.sgemm(cuda.to_device(np.ones((16, 8))), p.b, p.c)),
        (ValueError, "C-contiguous", lambda: S.sgemm(p.a, p.b, cuda.device_array((16, 24), np.float32)[:, ::2])),
        (ValueError, "inner dimensions", lambda: S.sgemm(p.a, p.a, p.c)),
        (ValueError, "c must be 16x12", lambda: S.sgemm(p.a, p.b, cuda.device_array((12, 16), np.float32))),
        (ValueError, "2-D", lambda: S.sgemm(p.a.reshape(128), p.b, p.c)),
        (ValueError, "empty", lambda: S.sgemm(cuda.device_array((0, 8), np.float32), p.b, p.c)),
        (ValueError, "splits", lambda: S.sgemm(p.a, p.b, p.c, splits=2)),
        (ValueError, "tile", lambda: S.sgemm(p.a, p.b, p.c, tile=S.Tile(BM=32))),
        (ValueError, "compiler", lambda: S.sgemm(p.a, p.b, p.c, compiler="cublas")),
        (RuntimeError, "needs a GPU", lambda: S.sgemm(p.a, p.b, p.c, compiler="cuda_c")),
    ]
    for error, words, call in bad:
        p.poison()
        with pytest.raises(error, match=words):
            call()
        assert np.isnan(p.c.copy_to_host()).all(), f"{words}: the output was written"


def test_the_sum_takes_four_floats_a_thread_only_where_it_can_and_they_fill_the_gpu():
    assert S.sum_vec(1024 * 1024, True, sms=132)
    assert not S.sum_vec(1024 * 1024 + 2, True, sms=132)       # m * n not a multiple of 4
    assert not S.sum_vec(1024 * 1024, False, sms=132)          # C not 16-byte aligned
    assert not S.sum_vec(256 * 256, True, sms=132)             # 16384 threads: too few for 132 SMs
    assert S.sum_vec(128 * 128, True, sms=4) and not S.sum_vec(128 * 124 + 4, True, sms=4)


def test_the_sum_takes_eight_lanes_an_element_where_a_thread_each_leaves_sms_idle():
    assert S.sum_lanes(1, sms=132) and S.sum_lanes(33 * 256, sms=132)       # 1 and 33 blocks for 132 SMs
    assert not S.sum_lanes(33 * 256 + 1, sms=132) and not S.sum_lanes(1024 * 1024, sms=132)
    # its workspace offsets are 32-bit: never where MAX_SPLITS slices of mn elements would pass 2^32
    assert S.sum_lanes(2**32 // S.MAX_SPLITS - 1, sms=10**6) and not S.sum_lanes(2**32 // S.MAX_SPLITS, sms=10**6)


@pytest.mark.parametrize("mn, splits", [(1, 1), (37, 3), (37, 21), (300, 256), (1000, 9)])
def test_the_eight_lane_sum_adds_every_slice(mn, splits):
    """splitk_sum8 in the simulator: each element the sum of its slices (the last warp part past mn, a grid smaller
    than the elements: the grid-stride loop), and nothing written past mn."""
    rng = np.random.default_rng(splits)
    ws = rng.standard_normal(splits * mn).astype(np.float32)
    c = np.full(mn + 5, np.nan, dtype=np.float32)
    d_c = cuda.to_device(c)
    S.splitk_sum8[min(S._sum_blocks(mn, False, True), 2), S.SUM_THREADS](mn, splits, cuda.to_device(ws), d_c)
    got = d_c.copy_to_host()
    want = ws.astype(np.float64).reshape(splits, mn).sum(axis=0)
    np.testing.assert_allclose(got[:mn], want, rtol=1e-5, atol=1e-5 * splits)
    assert np.isnan(got[mn:]).all()


@pytest.mark.parametrize("splits", [1, 2, 3, 4, 5, 6, 8, 9, 12, 16, 17, 24, 25, 28, 29, 44])
def test_the_sum_adds_every_slice_in_order(splits):
    """splitk_sum in the simulator, with slice counts that take each of its passes (16, 8 and 4 loads, the last 1-3)
    and their combinations: each element the sum of its slices in slice order, as the twin adds them (the same
    float32 sums, bit for bit), a grid smaller than the elements (the grid-stride loop), nothing written past mn."""
    mn = 300
    rng = np.random.default_rng(splits)
    ws = rng.standard_normal(splits * mn).astype(np.float32)
    c = np.full(mn + 5, np.nan, dtype=np.float32)
    d_c = cuda.to_device(c)
    S.splitk_sum[1, 128](mn, splits, cuda.to_device(ws), d_c)
    got = d_c.copy_to_host()
    want = ws.reshape(splits, mn)[0].copy()
    for z in range(1, splits):
        want += ws.reshape(splits, mn)[z]  # float32, in slice order
    np.testing.assert_array_equal(got[:mn], want)
    assert np.isnan(got[mn:]).all()


@pytest.mark.parametrize("name, vec, lanes", [("splitk_sum", False, False), ("splitk_sum4", True, False),
                                               ("splitk_sum8", False, True)])
def test_the_sums_read_the_workspace_as_their_twins_do(name, vec, lanes):
    """Each split-K sum, numba and its C twin (sm_90): the workspace through the read-only path only (LDG.E.CONSTANT,
    as the twin's ``const float* __restrict__``), as many 16-byte loads where the twin's are 16 bytes, and no more
    than 1.75x the twin's instructions (with the slice counters' arithmetic widened to 64 bits, as numba types
    uint32 + uint32, numba's splitk_sum8 took 464 against 200, splitk_sum 984 against 424; with a loop for its last
    slices, into each path of which NVVM copied the passes of 16 and 8 loads, splitk_sum took 720; 248 now)."""
    numba_ = analyze(cubin_from_ptx(numba_ptx(getattr(S, name), S.sum_sig())))
    twin = analyze(S.c_splitk_sum(vec, lanes).cubin("sm_90"), name + "_c")
    for report in (numba_, twin):
        loads = [i.opcode for i in report.instructions if i.opcode.startswith("LDG")]
        assert loads and all(op == ("LDG.E.128.CONSTANT" if vec else "LDG.E.CONSTANT") for op in loads), loads
    assert len(numba_.instructions) <= 1.75 * len(twin.instructions), (len(numba_.instructions), len(twin.instructions))
    if lanes:  # 32-bit slice offsets: 176 against 200 (with 64-bit ones, hoisted before the pass, 256)
        assert len(numba_.instructions) <= 1.1 * len(twin.instructions), (len(numba_.instructions),
                                                                          len(twin.instructions))


def test_the_cost_rule_holds_the_fit_to_its_record():
    """util.sgemm.COST's fitted constants are what scripts/sgemm_rule_fit.py fits to util/sgemm_rule_fit.json, and
    with them the rule loses less against the fastest timed choice than with the earlier rules: the rule in whole
    waves (a last round of fewer blocks than an SM holds costed as a whole one) with the constants fitted that way,
    the fit of the record before it had short-K shapes (no wave costs), the fit before that (no operand-panel term),
    and the first guesses before any fit."""
    import dataclasses
    import importlib.util
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "scripts" / "sgemm_rule_fit.py"
    spec = importlib.util.spec_from_file_location("sgemm_rule_fit", path)
    fit = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fit)
    data = json.loads(fit.RECORD.read_text())
    assert len(data["shapes"]) == sum(count for _, count in fit.FAMILIES)
    assert [tuple(e["shape"]) for e in data["shapes"]] == fit.shapes()
    assert fit.fit(S, data["shapes"], data["sms"]) == S.COST
    loss = fit.score(fit.losses(S, S.COST, data["shapes"], data["sms"]))
    whole = tuple((name, 1.0) for name, _ in S.COST.partial_round)
    no_waves = dataclasses.replace(S.COST, wave_vc_seconds=0.0, wave_seconds=tuple((t.name, 0.0) for t in S.TILES),
                                   partial_round=whole)
    for before in (S.CostModel(tile_seconds=S.COST.tile_seconds, block_overhead_tiles=0.0, workspace_bytes_per_s=3e12,
                               second_launch_s=4e-6, operand_bytes_per_s=16e12, wave_vc_seconds=0.5e-6,
                               wave_seconds=(("128x128", 12e-6), ("64x128", 6e-6), ("64x64/2k", 2e-6),
                                             ("32x32/2k", 2e-6)),  # (before the 32 x 32 tile: the 64 x 64 one's)
                               partial_round=whole),
                   dataclasses.replace(no_waves, block_overhead_tiles=1.0, workspace_bytes_per_s=1e12,
                                       second_launch_s=0.0, operand_bytes_per_s=16e12),
                   dataclasses.replace(no_waves, block_overhead_tiles=0.0, workspace_bytes_per_s=1.5e12,
                                       second_launch_s=2e-6, operand_bytes_per_s=math.inf),
                   dataclasses.replace(no_waves, block_overhead_tiles=2.0, workspace_bytes_per_s=3e12,
                                       second_launch_s=3e-6, operand_bytes_per_s=math.inf)):
        assert loss < fit.score(fit.losses(S, before, data["shapes"], data["sms"])), before


def test_the_cost_rule_wants_a_wave_cost_for_each_tile():
    """A tile the rule has no wave cost or partial round for is refused with what to do, not costed as free; with
    16-byte loads of both operands the cost follows the results an SM holds a wave (2 x 128 x 128 for the 128 x 128
    tile)."""
    import dataclasses

    odd = S.Tile(BN=64, MINB=3)
    with pytest.raises(ValueError, match="no entry for tile 128x64 in CostModel.partial_round.*sgemm_rule_fit"):
        S.COST.estimate(1000, 1000, 100, odd, 1, 132, False)
    rounds = dataclasses.replace(S.COST, partial_round=S.COST.partial_round + (("128x64", 1.0),))
    with pytest.raises(ValueError, match="no entry for tile 128x64 in CostModel.wave_seconds.*sgemm_rule_fit"):
        rounds.estimate(1000, 1000, 100, odd, 1, 132, False)
    model = dataclasses.replace(S.COST, wave_vc_seconds=1e-6)
    assert model.wave_cost(odd, True) == pytest.approx(0.75e-6)
    assert model.wave_cost(S.TINY_TILE, True) == pytest.approx(0.5e-6)
    assert S.COST.wave_cost(S.TILE, False) == dict(S.COST.wave_seconds)["128x128"]


def test_the_cost_rule_counts_the_busiest_sms_blocks():
    """The busiest SM runs ceil(blocks / SMs) blocks, MINB at a time; a last round of r fewer counts max(r, fraction
    x MINB) blocks (``partial_round``); at 1.0 every round counts whole, and the estimate is the rule in whole waves:
    waves * ((k-tiles a slice + overhead) * step + a wave's cost) + the panels + the split's workspace and launch."""
    import dataclasses
    import random

    half = dataclasses.replace(S.COST, partial_round=tuple((name, 0.5) for name, _ in S.COST.partial_round))
    assert half.rounds(132, S.TILE, 132) == (1, 1.0)  # one block an SM, MINB = 2: max(1, 1.0)
    assert half.rounds(264, S.TILE, 132) == (1, 2)
    assert half.rounds(265, S.TILE, 132) == (2, 3)  # 2 blocks on one SM, then 1: max(1, 1.0)
    assert half.rounds(3 * 132, S.TINY_TILE, 132) == (1, 3)  # MINB = 4: max(3, 2.0)
    assert half.rounds(132, S.TINY_TILE, 132) == (1, 2.0)  # max(1, 2.0)
    assert half.rounds(7 * 132, S.TINY_TILE, 132) == (2, 7)
    assert S.COST.rounds(7 * 132, S.TINY_TILE, 132)[0] == 2
    whole = dataclasses.replace(S.COST, partial_round=tuple((name, 1.0) for name, _ in S.COST.partial_round))
    rng = random.Random(5)
    for _ in range(2000):
        m, n, k, t, sms = (rng.randint(1, 9000), rng.randint(1, 9000), rng.randint(1, 20000), rng.choice(S.TILES),
                           rng.choice((1, 7, 132)))
        s, vc = rng.choice(S.slice_counts(k, t)), rng.random() < 0.5
        tiles, ktiles = S.cdiv(m, t.BM) * S.cdiv(n, t.BN), S.cdiv(k, t.BK)
        waves = S.cdiv(tiles * s, sms * t.MINB)
        assert whole.rounds(tiles * s, t, sms) == (waves, waves * t.MINB)
        step = whole.tile_seconds * (t.BM * t.BN * t.MINB * t.BK) / (128 * 128 * 2 * 8) / t.speed
        est = waves * ((S.cdiv(ktiles, s) + whole.block_overhead_tiles) * step + whole.wave_cost(t, vc))
        est += tiles * (t.BM + t.BN) * ktiles * t.BK * 4 / whole.operand_bytes_per_s
        if s > 1:
            est += (2 * s + 1) * m * n * 4 / whole.workspace_bytes_per_s + whole.second_launch_s
        assert whole.estimate(m, n, k, t, s, sms, vc) == pytest.approx(est, rel=1e-12)


def test_plans_why_compares_estimates_of_one_rule():
    """plan().why sets the chosen estimate beside one slice of the first tile it ranked, by that tile's own rule:
    NARROW_COST's first narrow tile where C is narrow, COST's 128 x 128 elsewhere, the forced tile where one is."""
    for shape, first in [((5000, 24, 700), S.NARROW_TILES[0]), ((3000, 3000, 3000), S.TILES[0]),
                         ((1000, 1000, 1000), S.TINY_TILE)]:
        p = S.plan(*shape, sms=132, thin=False, tile=first if first is S.TINY_TILE else None)
        assert f"(one slice of {first.name}: " in p.why, p.why
        us = float(re.search(r"one slice of \S+: (\d+) us", p.why).group(1))
        est = S.cost_model(first).estimate(*shape, first, 1, 132, S.stores16(first, p.vb, 1, p.c16))
        assert us == round(est * 1e6)


def test_plan_refuses_bad_sizes():
    for m, n, k in [(0, 4, 4), (4, -1, 4), (4, 4, 2**31), (4.0, 4, 4), (True, 4, 4)]:
        with pytest.raises(ValueError, match="must be an int"):
            S.plan(m, n, k)
    with pytest.raises(ValueError, match="leave a slice empty"):
        S.plan(8, 8, 40, splits=4)  # 5 k-tiles in slices of 2 make 3
    with pytest.raises(ValueError, match="MAX_SPLITS"):
        S.plan(8, 8, 8000, splits=S.MAX_SPLITS + 1)
    with pytest.raises(ValueError, match="1..10 "):  # ten 16-deep k-tiles: 20 slices would leave ten empty
        S.plan(5, 9, 160, splits=20, tile=S.TINY_TILE)
    assert S.plan(5, 9, 160, splits=20).tile.BK == 8  # so the plan takes an 8-deep tile there
    with pytest.raises(ValueError, match="gridDim.y"):  # more row tiles than a grid holds: a clear error
        S.plan(9_000_000, 64, 64)
    assert S.plan(5_000_000, 64, 64).tile == S.TILE  # the 64-row tile would need too many: the 128-row one


@pytest.mark.parametrize("tile, va, vb", [(S.TILE, True, True), (S.SMALL_TILE, False, False),
                                          (S.TINY_TILE, True, False)])
def test_machine_code(tile, va, vb):
    """The hot loop is two whole tiles of FFMA (a group's share of each with sliced K); every fragment read once,
    as one LDS.128 but for at most one (the tiles are 16-byte aligned for that); 16-byte global loads exactly where
    the variant takes them; no float64, no local memory; and the recorded FMA order leaves fewer same-bank source
    pairs than row by row."""
    def hot_loop(order):
        return tiled_sass(tile, va, vb, order=order).hot_loop

    loop = hot_loop(None)
    assert loop.bank_pairs < hot_loop("row").bank_pairs
    ops = loop.opcodes
    assert loop.ffma == 2 * tile.ksteps * tile.ffma
    fragments = 2 * tile.ksteps * (tile.WMI * tile.TM + tile.WNI * tile.TN) // 4  # 16-byte fragment reads a pass
    width = {"LDS.128": 16, "LDS.64": 8, "LDS": 4}
    assert set(op for op in ops if op.startswith("LDS")) <= set(width)
    assert sum(n * width.get(op, 0) for op, n in ops.items()) == 16 * fragments  # each fragment read once
    # every read one LDS.128 but at most one: in numba's sliced-K tile ptxas splits one into LDS, LDS, LDS.64 at
    # +0x0, +0x4, +0x8 (the C twin's are all LDS.128)
    assert ops["LDS.128"] >= fragments - 1
    assert ops.get("LDG.E.128.CONSTANT", 0) + ops.get("LDG.E.128", 0) == 2 * (tile.A4 * va + tile.B4 * vb)
    assert loop.count("f64") == 0 and not any(op.startswith(("LDL", "STL")) for op in ops)


@pytest.mark.parametrize("tile, va, vb, shift_b, vc, sc", [(S.TILE, True, True, False, False, False),
                                                            (S.SMALL_TILE, False, False, True, False, False),
                                                            (S.TINY_TILE, True, False, False, False, True)])
def test_one_loop_machine_code(tile, va, vb, shift_b, vc, sc):
    """With ``one_loop`` (Plan.one_loop) the kernel holds one copy of the k-tile: the hot loop is one tile of FFMA
    (half the two-tile pass's) and the kernel is shorter; local memory in the loop only where the recorded order
    (timed) trades it for fewer same-bank source pairs than every order without it."""
    def report(one_loop, order=None):
        return tiled_sass(tile, va, vb, order=order, shift_b=shift_b, vc=vc, sc=sc, one_loop=one_loop)

    def local(r):
        return sum(n for op, n in r.hot_loop.opcodes.items() if op.startswith(("LDL", "STL")))

    one, two = report(True), report(False)
    assert one.hot_loop.ffma == tile.ksteps * tile.ffma == two.hot_loop.ffma // 2
    assert len(one.instructions) < len(two.instructions)
    if local(one):
        clean = [r for r in (report(True, o) for o in S.FFMA_ORDERS) if not local(r)]
        assert clean and all(one.hot_loop.bank_pairs < r.hot_loop.bank_pairs for r in clean)


def test_the_plan_stages_c_in_shared_memory_where_b_takes_4_byte_loads_on_the_tiles_with_sc():
    assert [t.name for t in S.TILES if t.SC] == ["64x64/2k", "32x32/2k"]  # sliced: groups meet in shared memory
    assert S.plan(300, 302, 40, tile=S.TINY_TILE).sc and not S.plan(300, 300, 40, tile=S.TINY_TILE).sc  # n % 4
    assert S.plan(300, 300, 40, tile=S.TINY_TILE, aligned=(True, False, True)).sc  # B's rows not aligned
    assert not S.plan(300, 300, 40, tile=S.TINY_TILE, splits=1, aligned=(True, True, False)).sc  # vb: 4-byte C
    assert not S.plan(300, 302, 40, tile=S.SMALL_TILE).sc and not S.plan(1, 302, 40).sc  # no SC; a thin kernel
    with pytest.raises(ValueError, match="sc .C stored through shared memory. is for B's 4-byte loads"):
        S.numba_kernel(True, True, False, S.TINY_TILE, sc=True)
    with pytest.raises(ValueError, match="sc .C stored through shared memory. is for B's 4-byte loads"):
        S.c_twin(True, False, False, S.SMALL_TILE, sc=True)
    with pytest.raises(ValueError, match="SC .C stored through shared memory. needs KG > 1"):
        S.Tile(BM=64, MINB=3, SC=True)


@pytest.mark.parametrize("shape, splits", [((70, 67, 40), 1), ((65, 130, 33), 2), ((129, 63, 50), 2), ((1, 65, 17), 1)])
def test_c_through_shared_memory_is_correct(shape, splits):
    """The staged stores on the sliced tile: edge rows and columns, the shifted right edge (n >= 64), split-K."""
    p = S.plan(*shape, tile=S.TINY_TILE, splits=splits)
    assert p.sc and p.shift_b == (shape[1] >= 64)
    used, check = run(shape, seed=5, tile=S.TINY_TILE, splits=splits)
    assert check.correct, f"{used}: {check}"


@pytest.mark.parametrize("va", [False, True])
def test_c_through_shared_memory_stores_whole_rows(va):
    """With sc every thread of the block stores BM * BN / NT results (a warp's 32 adjacent floats of a row a store),
    where without it group 0 stores its lanes' FM * FN each; one more barrier (the sum's tile is whole before it is
    read), in both twins; numba's recorded order leaves no local memory anywhere in the kernel."""
    tile = S.TINY_TILE
    bars = {}
    for sc in (False, True):
        for twin, report in (("numba", tiled_sass(tile, va, False, sc=sc)),
                             ("C", analyze(S.c_twin(va, False, False, tile, sc=sc).cubin("sm_90")))):
            ops = Counter(i.opcode for i in report.instructions)
            stores = {op: v for op, v in ops.items() if op.startswith("STG")}
            per_thread = tile.BM * tile.BN // tile.NT if sc else tile.WMI * tile.TM * tile.WNI * tile.TN
            assert stores == {"STG.E": per_thread}, (twin, sc, stores)
            bars[twin, sc] = sum(v for op, v in ops.items() if op.startswith("BAR"))
            if twin == "numba":
                assert report.spills == "none", (sc, report.spills)
    assert all(bars[twin, True] == bars[twin, False] + 1 for twin in ("numba", "C")), bars


@pytest.mark.parametrize("tile, va", [(S.SMALL_TILE, False), (S.TINY_TILE, True)])
def test_shifted_right_edge_gives_b_one_address_a_piece(tile, va):
    """B's 4-byte loads: with per-column clamps each float has its own walking offset and 64-bit address
    (IMAD.WIDE); with the right-edge block shifted, one per piece, the floats at +4, +8, +12 bytes from it. The
    variants the plan builds: on a tile with SC, C through shared memory."""
    def hot_loop(shift_b):
        return tiled_sass(tile, va, False, shift_b=shift_b, sc=tile.SC).hot_loop

    pieces = 2 * (tile.A4 + tile.B4)  # the pieces of A and B a thread loads in a pass of two tiles
    shifted, clamped = hot_loop(True), hot_loop(False)
    assert shifted.opcodes["IMAD.WIDE"] <= pieces < clamped.opcodes["IMAD.WIDE"]
    assert shifted.size < clamped.size and not any(op.startswith(("LDL", "STL")) for op in shifted.opcodes)


@pytest.mark.parametrize("va, shift_b", [(False, False), (False, True), (True, False), (True, True)])
def test_the_k_tail_loads_b_where_the_walking_offsets_stand(va, shift_b):
    """The sliced tile with B's 4-byte loads: numba's K tail takes B's addresses from the walking offsets, so its
    set-up (the instructions before the first barrier, where the first tile or the tail is loaded) stays within
    1.6x the twin's. When the tail recomputed each element's clamped column from the block's corner (in numba's
    64-bit arithmetic, ~26 instructions a load), it was 1.70-2.33x (sm_90: 520 / 305 .. 582 / 250)."""
    tile = S.TINY_TILE
    numba_ = tiled_sass(tile, va, False, shift_b=shift_b, sc=True)
    twin = analyze(S.c_twin(va, False, False, tile, shift_b=shift_b, sc=True).cubin("sm_90"), "gemm_c")
    setup = len(numba_.prologue), len(twin.prologue)
    assert setup[0] <= 1.6 * setup[1], setup


@pytest.mark.parametrize("tile", [t for t in S.TILES if t.S32], ids=lambda t: t.name)
def test_the_32_bit_set_up_is_shorter_than_numbas_typing_and_the_twins(tile):
    """Tile.S32: the one-loop kernel's set-up (what a short K pays for) in 32-bit arithmetic is shorter than the same
    tile's in numba's typing (int32 + int32 is int64: 64-bit offsets, clamps and tile counts) and than the twin's."""
    options = dict(vc=tile.VC, one_loop=True)
    s32 = len(tiled_sass(tile, True, True, **options).prologue)
    typed = len(tiled_sass(dataclasses.replace(tile, S32=False, TA=False), True, True, **options).prologue)
    twin = len(analyze(S.c_twin(True, True, False, tile, **options).cubin("sm_90"), "gemm_c").prologue)
    assert s32 < typed and s32 <= twin, (s32, typed, twin)


def parameter_lines(report) -> set[int]:
    """The 64-byte lines of the kernel parameters (sm_90: constant bank 0 from 0x210 on) that the instructions before
    the first barrier read."""
    return {int(x, 16) // 64 for ins in report.prologue for x in re.findall(r"c\[0x0\]\[(0x[0-9a-f]+)\]", ins.text)
            if int(x, 16) >= 0x210}


@pytest.mark.parametrize("tile", S.TILES, ids=lambda t: t.name)
def test_the_set_up_reads_as_few_lines_of_parameters_as_the_twin(tile):
    """numba passes each array as seven 8-byte fields: with the sizes after the five arrays, the tiled kernel's
    set-up read four 64-byte lines of its parameters (each line's first read on an SM a constant-cache miss, ncu's
    stall_imc), the twin's two. With the sizes first (``numba_sig``), no more lines than the twin's."""
    for va, vb in ((False, False), (True, True)):
        numba_ = tiled_sass(tile, va, vb, vc=tile.VC and vb, sc=tile.SC and not vb)
        twin = analyze(S.c_twin(va, vb, False, tile, vc=tile.VC and vb, sc=tile.SC and not vb).cubin("sm_90"),
                       "gemm_c")
        assert len(parameter_lines(numba_)) <= len(parameter_lines(twin)), (va, vb, parameter_lines(numba_),
                                                                           parameter_lines(twin))


@pytest.mark.parametrize("tile, va", [(S.SMALL_TILE, True), (S.TINY_TILE, False), (S.MICRO_TILE, True)])
def test_16_byte_stores_of_c(tile, va):
    """With vc every result leaves in a 16-byte store (FM * FN / 4 of them, no 4-byte ones), in both twins; without,
    in 4-byte ones; the recorded FMA order of each variant leaves no local memory anywhere in the kernel."""
    for vc in (False, True):
        for report in (tiled_sass(tile, va, True, vc=vc),
                       analyze(S.c_twin(va, True, False, tile, vc=vc).cubin("sm_90"))):
            stores = Counter(i.opcode for i in report.instructions if i.opcode.startswith("STG"))
            results = tile.WMI * tile.TM * tile.WNI * tile.TN
            assert stores == ({"STG.E.128": results // 4} if vc else {"STG.E": results}), (vc, stores)
            assert report.spills == "none", (vc, report.spills)


def test_a_tile_refuses_k_groups_that_do_not_divide_its_depth():
    with pytest.raises(ValueError, match="groups of 8 k-steps"):
        S.Tile(BM=64, BN=64, WM=32, WN=64, KG=2)  # 8-deep tiles: no 8 k-steps for a second group


def test_a_plans_launch_is_configured_without_numbas_small_grid_warning(monkeypatch):
    """numba warns when a launch of fewer than 128 blocks is configured; a plan's grid is chosen for its shape, so
    the launch sgemm configures leaves that warning out (that one only)."""
    class Kernel:
        def __getitem__(self, config):
            warnings.warn(f"\x1b[1mGrid size {config[0]} will likely result in GPU under-utilization due to low "
                          "occupancy.\x1b[0m")  # numba's text, in bold
            warnings.warn("another warning")
            return config

    monkeypatch.setattr(S, "SIMULATED", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert S._configured(Kernel(), 3, 128) == (3, 128)
    assert [str(w.message) for w in caught] == ["another warning"]
