"""Time util.sgemm_thin's kernels against the plan's tiled choice and cuBLAS where C has few rows or columns.

For each shape (a fixed set, then seeded random ones: one of m, n in 1..64, the other two log-uniform in 256..16384),
one interleaved, verified run (shuffled, L2 flushed, launch overhead hidden) of: the numba SGEMM as planned among the
tiles of util.sgemm.TILES (``thin=False``) and its C twin; the narrowest thin kernel that covers the few rows or columns
(``sgemm_thin.thin_for``) and its C twin at a ladder of slice counts (the fewest that make 1/4, 1/2, 1 and 2 waves
of ``MINB`` blocks an SM); cuBLAS (fp32, TF32 off). It prints a line a shape and writes every median to a JSON
record (after each shape), from which util.sgemm's rule for taking a thin kernel and its slices is fitted.

    python scripts/sgemm_thin_probe.py [--runs 5] [--random 24] [--out thin_record.json]   (GPU machine)
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time

FIXED = [(1, 4096, 4096), (4, 4096, 4096), (8, 8192, 8192), (16, 4096, 11008), (16, 8192, 8192), (32, 8192, 8192),
         (48, 4096, 4096), (4096, 1, 4096), (8192, 8, 8192), (4096, 16, 4096), (11008, 32, 4096), (2048, 48, 2048),
         (16, 16, 65536), (24, 1000, 3000), (3000, 20, 1000), (1, 16384, 1024), (1024, 1, 16384)]
WAVES = (0.25, 0.5, 1.0, 2.0)  # the ladder of slice counts: fractions of a wave of blocks


def random_shapes(count: int, seed: int = 17) -> list[tuple[int, int, int]]:
    """``count`` shapes with m or n (alternately) in 1..64 and the other two in 256..16384, log-uniform, at most 2^33
    multiply-adds."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        few, big, k = int(2 ** rng.uniform(0, 6)), int(2 ** rng.uniform(8, 14)), int(2 ** rng.uniform(8, 14))
        shape = (few, big, k) if len(out) % 2 == 0 else (big, few, k)
        if math.prod(shape) <= 2**33:
            out.append(shape)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--random", type=int, default=24, help="random shapes after the fixed ones")
    ap.add_argument("--out", default="thin_record.json")
    args = ap.parse_args()

    import util
    from util import sgemm as S
    from util import sgemm_thin as T
    from util.bench import Registry

    if util.SIMULATED:
        raise SystemExit("needs a GPU: the point is GPU time (the simulator's wall time says nothing)")
    sms = S._sms()
    record, t0 = [], time.perf_counter()

    def write() -> None:  # after every shape, so a run cut short keeps what it measured
        with open(args.out, "w") as f:
            json.dump({"about": "util.sgemm_thin's kernels, the planned tiled kernel and cuBLAS on shapes with few rows "
                                "or columns (scripts/sgemm_thin_probe.py); us: medians of one interleaved, verified run",
                       "device": util.device_name(), "sms": sms, "versions": util.versions_line(),
                       "command": f"python scripts/sgemm_thin_probe.py --runs {args.runs} --random {args.random}",
                       "shapes": record}, f, indent=1)

    shapes = FIXED + random_shapes(args.random)
    for i, (m, n, k) in enumerate(shapes):
        thin = T.thin_for(m, n, "rows" if m <= n else "cols")
        blocks = math.ceil(m / thin.BM) * math.ceil(n / thin.BN)
        # per fraction of a wave (thin.MINB blocks an SM), the fewest slices that make it (or the most there are)
        ladder = sorted({S.thin_splits(m, n, k, thin, sms, waves=f) for f in WAVES})
        reg = Registry()
        S.register(reg, "tiled", "tiled C", thin=False)
        for s in ladder:
            S.register(reg, f"{thin.name} s={s}", f"{thin.name} C s={s}", tile=thin, splits=s)
        reg.cublas()
        tab = reg.run(m, n, k, runs=args.runs, shuffle=True, hide_launch=True, verbose=False)
        wrong = [r.name for r in tab.results if not r.correct]
        us = {r.name: round(r.median * 1e6, 2) for r in tab.results}
        cub = us[tab.baseline]
        best = min(ladder, key=lambda s: us[f"{thin.name} s={s}"])
        ratios = [us[f"{thin.name} s={s}"] / us[f"{thin.name} C s={s}"] for s in ladder]
        # every operand read once and C written once at 4.3 TB/s (the H200's measured copy rate, docs/notes.md)
        floor_us = 4 * (m * k + k * n + m * n) / 4.3e12 * 1e6
        tiled = S.plan(m, n, k, thin=False)
        record.append({"shape": [m, n, k], "thin": thin.name, "minb": thin.MINB, "blocks": blocks, "slices": ladder,
                       "tiled": tiled.why, "tiled_est_us": round(S.cost_model(tiled.tile).estimate(
                           m, n, k, tiled.tile, tiled.splits, sms, tiled.vc) * 1e6, 2),
                       "us": us, "wrong": wrong})
        print(f"[{time.perf_counter() - t0:4.0f} s] {i + 1}/{len(shapes)} {m}x{n}x{k}: cuBLAS {cub:7.1f} us; tiled "
              f"{100 * cub / us['tiled']:5.1f}% of cuBLAS; {thin.name} at slices "
              + ", ".join(f"{s}: {100 * cub / us[f'{thin.name} s={s}']:.1f}%" for s in ladder)
              + f" (best {best}); numba / C {min(ratios):.3f}..{max(ratios):.3f}; bytes floor {floor_us:.1f} us"
              + (f"  WRONG: {wrong}" if wrong else ""), flush=True)
        write()
    print("written:", args.out)


if __name__ == "__main__":
    main()
