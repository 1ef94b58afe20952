"""The recorded search behind util.sgemm's FMA order: for each compiled variant (compiler, tile, load variant,
offset width), the kernel with each order of ``util.sgemm.FFMA_ORDERS``, verified and timed in one interleaved run
(shuffled, L2 flushed, launch overhead hidden, one slice, the tile forced) on a shape that takes that variant (where
that shape shifts B's right edge, ``Plan.shift_b``, the same loads without the shift are a variant of their own,
searched on a shape with n = BN - 1; where B's loads are 16-byte on a tile with ``VC``, the shape's C is aligned
and the variant stores C 16 bytes at a time, ``Plan.vc``: the 4-byte stores those variants take on a C that is not
16-byte aligned are searched on the same shape with C one float further on); the fastest median among the orders
whose kernel uses no local memory, on the GPU or in the sm_90 compile the tests read (all orders where each does),
is recorded in util/sgemm_ffma_order.json, with every order's time and the local memory of those that use it.

    python scripts/sgemm_ffma_order.py [--runs 7] [--tiles 128x128 64x128]   (GPU machine) print the table and
                                                                             compare it with the record
    python scripts/sgemm_ffma_order.py --write                               record it (other tiles' entries kept)
    python scripts/sgemm_ffma_order.py --tiles 64x128 --loads vecA scalar --write   only B's 4-byte variants
    python scripts/sgemm_ffma_order.py --one-loop --write                    the one-loop variants (Plan.one_loop),
                                                                             forced on the same shapes
    python scripts/sgemm_ffma_order.py --offsets 32 --write                  only the 32-bit-offset variants

Timed rather than chosen by a static count: the same-bank source pairs of the hot loop
(``util.sass.HotLoop.bank_pairs``) separate row by row from the other orders, but not the other orders from each
other (docs/notes.md). An order whose kernel spills (local memory, sm_90 at the tile's register cap) is kept out
where another does not: its loads and stores of local memory cost beyond the timed shape (more blocks an SM, other
caches). Run it again after a change to the kernels, the tiles or the compilers.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

# a shape for each load variant: (va, vb) -> (m, n, k); k % 4 and n % 4 decide the loads, several waves of blocks
SHAPES = {(True, True): (4096, 4096, 2048), (True, False): (4096, 4095, 2048), (False, True): (4096, 4096, 2047),
          (False, False): (4095, 4095, 2047)}
LOADS = {"vecAB": (True, True), "vecA": (True, False), "vecB": (False, True), "scalar": (False, False)}


def narrow(shape: tuple[int, int, int], bn: int) -> tuple[int, int, int]:
    """The shape of the same loads with n = BN - 1, for the variants whose 4-byte loads of B take the shifted right
    edge on the wide shape (``Plan.shift_b``): one column of blocks, clamped column by column, as many rows."""
    m, n, k = shape
    return m * n // (bn - 1) // 64 * 64, bn - 1, k


def local_bytes(compiler: str, order: str, p) -> int:
    """The local memory (bytes a thread: spills) of plan p's kernel with FMA order ``order``: the larger of this
    GPU's compile and the sm_90 compile of the CUDA wheels that the tests read (their ptxas may differ)."""
    from util import sgemm as S
    from util.compile import cubin_from_ptx, numba_ptx
    from util.sass import analyze

    if compiler == "numba":
        kernel = S.numba_kernel(p.va, p.vb, p.wide, p.tile, order=order, shift_b=p.shift_b, vc=p.vc, sc=p.sc,
                                one_loop=p.one_loop)  # the dispatcher the timed run compiled (lru_cache)
        static = analyze(cubin_from_ptx(numba_ptx(kernel, S.numba_sig(), launch_bounds=(p.tile.NT, p.tile.MINB))))
        return max([*kernel.get_local_mem_per_thread().values(), static.stack_bytes + static.local_bytes])
    twin = S.c_twin(p.va, p.vb, p.wide, p.tile, order, p.shift_b, p.vc, p.sc, p.one_loop)
    report = analyze(twin.cubin(), "gemm_c")
    return report.stack_bytes + report.local_bytes


def record(old: dict, chosen: dict, times: dict, local: dict) -> None:
    """Write util/sgemm_ffma_order.json: this run's entries over the ``old`` record's (the others kept)."""
    import util
    from util import sgemm as S

    S.FFMA_ORDER_FILE.write_text(json.dumps({
        **old,
        "about": "util.sgemm's FMA order per compiled variant: the fastest in one interleaved, verified run on a "
                 "shape that takes the variant, among the orders whose kernel uses no local memory where one does "
                 "(scripts/sgemm_ffma_order.py); median_us: each order's time; local_bytes: the orders whose kernel "
                 "spills, on the GPU or in the sm_90 compile of the CUDA wheels (bytes a thread, the larger), for "
                 "the entries searched with that check",
        "device": util.device_name(),
        "versions": util.versions_line(),
        "command": "python scripts/sgemm_ffma_order.py " + " ".join(sys.argv[1:]) + " (the last run; the entries it "
                   "did not search are kept from earlier runs)",
        "shapes": {S.variant_name(va, vb, False): list(s) for (va, vb), s in SHAPES.items()},
        "narrow_shapes": "for the variants without the shifted right edge whose wide shape takes it: "
                         "narrow(shape, BN) = (m * n // (BN - 1) rounded down to 64, BN - 1, k)",
        "c_offset": "for the 4-byte stores of C on the tiles with 16-byte ones: the same shape with C one float past "
                    "a 16-byte boundary",
        "orders": dict(sorted({**old.get("orders", {}), **chosen}.items())),
        "median_us": dict(sorted({**old.get("median_us", {}), **times}.items())),
        "local_bytes": dict(sorted({**{k: v for k, v in old.get("local_bytes", {}).items() if k not in local},
                                    **{k: v for k, v in local.items() if v}}.items())),
    }, indent=1) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--write", action="store_true", help="record the choices in util/sgemm_ffma_order.json")
    ap.add_argument("--tiles", nargs="+", help="the tiles to search (names as 128x128; default: all of TILES)")
    ap.add_argument("--loads", nargs="+", choices=sorted(LOADS), help="the load variants to search (default: all)")
    ap.add_argument("--one-loop", action="store_true", help="the one-loop variants (Plan.one_loop), forced")
    ap.add_argument("--offsets", nargs="+", type=int, choices=(32, 64), default=(32, 64),
                    help="the offset widths to search (the one loop has 32-bit offsets only)")
    args = ap.parse_args()

    import util
    from util import sgemm as S
    from util.bench import Registry

    if util.SIMULATED:
        raise SystemExit("needs a GPU: the search times each order (the simulator's wall time says nothing)")
    print("device:", util.device_name())
    print(util.versions_line())

    tiles = [t for t in S.TILES if args.tiles is None or t.name in args.tiles]
    if not tiles:
        raise SystemExit(f"no tile of util.sgemm.TILES is named {args.tiles}: {[t.name for t in S.TILES]}")
    old = json.loads(S.FFMA_ORDER_FILE.read_text()) if S.FFMA_ORDER_FILE.exists() else {}
    chosen, times, local = {}, {}, {}
    t0 = time.perf_counter()
    for tile in tiles:
        # (the one loop has 32-bit offsets only: plan)
        for wide in [w for w in (False, True) if (64 if w else 32) in args.offsets and not (w and args.one_loop)]:
            for (va, vb), shape in SHAPES.items():
                if args.loads is not None and (va, vb) not in [LOADS[x] for x in args.loads]:
                    continue
                forced = dict(tile=tile, splits=1, wide=wide, one_loop=args.one_loop)
                first = S.plan(*shape, **forced)
                cases = [(shape, 0)]  # (shape, C's offset in floats)
                if first.shift_b:  # the same loads without the shifted right edge: n = BN - 1
                    cases.append((narrow(shape, tile.BN), 0))
                if first.vc:  # the 4-byte stores of C that is not 16-byte aligned: C one float further on
                    cases.append((shape, 1))
                for run, c_offset in cases:
                    p = S.plan(*run, aligned=(True, True, not c_offset), **forced)
                    assert p.variant == S.variant_name(va, vb, wide) and p.shift_b == (run == shape and first.shift_b)
                    reg = Registry()
                    for order in S.FFMA_ORDERS:
                        S.register(reg, f"numba {order}", f"cuda_c {order}", order=order, **forced)
                    tab = reg.run(*run, runs=args.runs, shuffle=True, hide_launch=True, c_offset=c_offset,
                                  verbose=False)
                    wrong = [r.name for r in tab.results if not r.correct]
                    if wrong:
                        raise SystemExit(f"{run}: wrong results from {wrong}: fix the kernel before recording")
                    for compiler in ("numba", "cuda_c"):
                        key = S.ffma_order_key(compiler, tile, va, vb, wide, p.shift_b, p.vc, p.sc, p.one_loop)
                        times[key] = {o: round(tab[f"{compiler} {o}"].median * 1e6, 1) for o in S.FFMA_ORDERS}
                        spills = {o: local_bytes(compiler, o, p) for o in S.FFMA_ORDERS}
                        local[key] = {o: b for o, b in spills.items() if b}
                        clean = [o for o in S.FFMA_ORDERS if not spills[o]] or S.FFMA_ORDERS
                        chosen[key] = min(clean, key=lambda o: times[key][o])
                        best = times[key][chosen[key]]
                        print(f"[{time.perf_counter() - t0:5.0f} s] {key:50s} {'x'.join(map(str, run))}"
                              + (f", C +{c_offset}" if c_offset else "") + ": " +
                              "  ".join(f"{o} {times[key][o] / best:.3f}" + (f" ({spills[o]} B local)" if spills[o]
                                                                                 else "") for o in S.FFMA_ORDERS)
                              + f"  -> {chosen[key]}", flush=True)
                    if args.write:  # after each shape: a run cut short keeps what it measured
                        record(old, chosen, times, local)
    recorded = old.get("orders", {})
    differ = sorted(k for k in chosen if recorded.get(k) != chosen[k])
    print(f"{S.FFMA_ORDER_FILE.name}: " + ("no orders recorded yet" if not recorded else
                                             f"differs on {len(differ)}: {', '.join(differ)}" if differ else
                                             "matches this search") + (" (written)" if args.write else ""))


if __name__ == "__main__":
    main()
