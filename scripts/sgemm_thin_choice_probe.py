"""Time the three ways util.sgemm's plan can take C that is small on both sides, or has few columns and short K.

For each shape of a fixed set, one interleaved, verified run (shuffled, L2 flushed, launch overhead hidden; numba
only) of: the plan as it stands; the tiled plan (``thin=False``); the rows kernel where C has at most
``THIN_MAX["rows"]`` rows and the cols kernel where it has at most ``THIN_MAX["cols"]`` columns (``thin_for``'s, as
plan() would run it: ``thin_kernel``), each forced, at the slices the rule gives it; cuBLAS (fp32, TF32 off). It
prints a line a shape and writes every median to a JSON record (after each shape), from which util.sgemm's
``thin_choice`` (``ROWS_FIRST``, ``ROWS16_MIN_COLS``, ``COLS_SHORT_K``) was fitted; tests/test_sgemm_thin.py holds
the rule to it.

    python scripts/sgemm_thin_choice_probe.py [--runs 5] [--sets grid,wider,short] [--out record.json]   (GPU)
"""

from __future__ import annotations

import argparse
import itertools
import json
import time

SETS = {
    # both sides small, K from 2048 to 131072
    "grid": list(itertools.product((1, 2, 3, 6, 8, 12, 16, 24, 32), (1, 2, 4, 7, 12, 16, 24, 32),
                                   (2048, 16384, 131072))),
    # few rows and 40-512 columns, few columns and 40-512 rows; few columns, 2000 or 5000 rows and short K
    "wider": (list(itertools.product((5, 8, 12, 16, 24, 32), (40, 64, 96, 128, 256, 512), (2048, 16384, 131072)))
              + list(itertools.product((40, 64, 128, 256, 512), (2, 4, 8, 16), (2048, 16384, 131072)))
              + list(itertools.product((2000, 5000), (4, 8, 16), (16, 32, 64, 128)))),
    # few columns (rows), many rows (columns), short K
    "short": (list(itertools.product((20000, 100000, 400000), (2, 4, 8, 16), (16, 64, 256, 1024)))
              + [(n, m, k) for m in (20000, 400000) for n in (4, 16) for k in (16, 64, 256)]),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sets", default=",".join(SETS), help=f"comma-separated, of {', '.join(SETS)}")
    ap.add_argument("--out", default="thin_choice_record.json")
    args = ap.parse_args()
    names = args.sets.split(",")
    if not names or any(s not in SETS for s in names):
        raise SystemExit(f"--sets takes a comma-separated list of {', '.join(SETS)}; got {args.sets!r}")

    import util
    from util import sgemm as S
    from util import sgemm_thin as T
    from util.bench import Registry

    if util.SIMULATED:
        raise SystemExit("needs a GPU: the point is GPU time (the simulator's wall time says nothing)")
    sms = S._sms()
    shapes = [shape for name in names for shape in SETS[name]]
    record, t0 = [], time.perf_counter()
    for i, (m, n, k) in enumerate(shapes):
        reg = Registry()
        S.register(reg, "plan", None)
        S.register(reg, "tiled", None, thin=False)
        plans = {"plan": S.plan(m, n, k), "tiled": S.plan(m, n, k, thin=False)}
        for kind, few in (("rows", m), ("cols", n)):
            if few > S.THIN_MAX[kind]:
                continue
            thin = S.thin_kernel(m, n, k, T.thin_for(m, n, kind), sms)  # as plan() would run it
            if not S.thin_slice_counts(k, thin):
                continue  # K needs more than MAX_SPLITS of its slices
            plans[kind] = S.plan(m, n, k, tile=thin)
            S.register(reg, kind, None, tile=thin)
        reg.cublas()
        tab = reg.run(m, n, k, runs=args.runs, shuffle=True, hide_launch=True, verbose=False)
        us = {("cuBLAS" if r.name == tab.baseline else r.name): round(r.median * 1e6, 2) for r in tab.results}
        wrong = [r.name for r in tab.results if not r.correct]
        record.append({"shape": [m, n, k], "plans": {w: f"{p.tile.name} x {p.splits}" for w, p in plans.items()},
                       "us": us, "wrong": wrong})
        alts = [w for w in plans if w != "plan"]
        print(f"[{time.perf_counter() - t0:4.0f} s] {i + 1}/{len(shapes)} {m}x{n}x{k}: plan {plans['plan'].tile.name} "
              f"{100 * us['cuBLAS'] / us['plan']:5.1f}% of cuBLAS; time / the plan's: "
              + ", ".join(f"{w} ({record[-1]['plans'][w]}) {us[w] / us['plan']:.3f}" for w in alts)
              + (f"  WRONG: {wrong}" if wrong else ""), flush=True)
        with open(args.out, "w") as f:  # after every shape, so a run cut short keeps what it measured
            json.dump({"about": "numba's plan, its tiled plan and the rows and cols thin kernels (each forced, at the "
                                "rule's slices) on shapes with C small on both sides or few columns and short K "
                                "(scripts/sgemm_thin_choice_probe.py); us: medians of one interleaved, verified run",
                       "device": util.device_name(), "sms": sms, "versions": util.versions_line(),
                       "command": f"python scripts/sgemm_thin_choice_probe.py --runs {args.runs} --sets {args.sets}",
                       "shapes": record}, f, indent=0)
    print("written:", args.out)


if __name__ == "__main__":
    main()
