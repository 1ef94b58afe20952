"""GPU: the cost rule with partial rounds (util.sgemm.COST) against the rule before it (whole waves, its constants),
on random shapes drawn after the fit (the notebook's distribution: m, n log-uniform in 64..8192, k in 128..16384,
at most 2^33 multiply-adds; a seed of its own), where the two pick another tile or slice count. numba forced to each
pick, cuBLAS beside; one verified, interleaved, shuffled run a shape (L2 flushed, launch hidden).

    python scratch/s25/rule_check.py SEED COUNT [RUNS]
"""
import math
import sys
import time
from dataclasses import replace

import numpy as np

import util
from util import sgemm as S
from util.bench import cublas_launch
from util.timing import problem, run_verified

# the rule before: whole waves (a last round of fewer blocks costs a whole one) and the constants fitted that way
OLD = replace(S.COST, workspace_bytes_per_s=3e12, second_launch_s=4e-6, operand_bytes_per_s=16e12,
              wave_vc_seconds=0.5e-6, block_overhead_tiles=0.0,
              wave_seconds=(("128x128", 12e-6), ("64x128", 6e-6), ("64x64/2k", 2e-6)),
              partial_round=tuple((name, 1.0) for name, _ in S.COST.partial_round))


def old_pick(m, n, k, sms):
    vb = n % 4 == 0
    tiles = S._tiles(m, n, k, None, None)
    return min(((OLD.estimate(m, n, k, t, s, sms, S.stores16(t, vb, s, True)), i, s, t) for i, t in enumerate(tiles)
                for s in S.slice_counts(k, t)), key=lambda o: o[:3])


def main():
    seed, count = int(sys.argv[1]), int(sys.argv[2])
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 9
    print("device:", util.device_name(), "|", util.versions_line())
    sms = S._sms()
    rng = np.random.default_rng(seed)
    shapes, same = [], 0
    while len(shapes) + same < count:
        m, n, k = (int(x) for x in 2 ** rng.uniform([6, 6, 7], [13, 13, 14]))
        if m * n * k > 2**33:
            continue
        p = S.plan(m, n, k)
        if not isinstance(p.tile, S.Tile) or p.tile not in S.TILES:
            continue
        _, _, s_old, t_old = old_pick(m, n, k, sms)
        if (t_old, s_old) == (p.tile, p.splits):
            same += 1
        else:
            shapes.append(((m, n, k), (t_old, s_old), (p.tile, p.splits)))
    print(f"{count} shapes on the tiles: the same pick on {same}, another on {len(shapes)}")
    rows, t0 = [], time.perf_counter()
    for i, (s, (t_old, s_old), (t_new, s_new)) in enumerate(shapes):
        q = problem(*s)
        new = S.prepare(q.a, q.b, q.c)
        old = S.prepare(q.a, q.b, q.c, tile=t_old, splits=s_old)
        res = run_verified(q, runs, {"new": lambda _q: new(), "old": lambda _q: old(), "cuBLAS": cublas_launch},
                           shuffle=True, hide_launch=True)
        if not all(r.correct for r in res.values()):
            print(s, "WRONG", [name for name, r in res.items() if not r.correct], flush=True)
            continue
        med = {name: r.median for name, r in res.items()}
        rows.append((s, med["new"] / med["old"], med["cuBLAS"] / med["new"], med["cuBLAS"] / med["old"]))
        print(f"[{i + 1}/{len(shapes)} {time.perf_counter() - t0:4.0f} s] {s}: old {t_old.name} x{s_old} "
              f"{med['old'] * 1e6:.1f} us, new {t_new.name} x{s_new} {med['new'] * 1e6:.1f} us: new/old "
              f"{rows[-1][1]:.3f}; % of cuBLAS {100 * rows[-1][3]:.1f} -> {100 * rows[-1][2]:.1f}", flush=True)
    gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))  # noqa: E731
    r = [x[1] for x in rows]
    print(f"new/old on the {len(rows)} shapes it changes: geomean {gm(r):.3f} ({min(r):.3f}-{max(r):.3f}), faster by "
          f"more than 3% on {sum(x < 0.97 for x in r)}, slower by more than 3% on {sum(x > 1.03 for x in r)}; over all "
          f"{len(rows) + same} (the same pick counted 1.0): {gm(r + [1.0] * same):.3f}")
    print(f"% of cuBLAS on those: old {100 * gm([x[3] for x in rows]):.1f} (below 90: {sum(x[3] < 0.9 for x in rows)}), "
          f"new {100 * gm([x[2] for x in rows]):.1f} (below 90: {sum(x[2] < 0.9 for x in rows)})")


if __name__ == "__main__":
    main()
