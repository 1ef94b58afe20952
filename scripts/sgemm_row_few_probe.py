"""Time util.sgemm's one-row kernel for few columns (ROW_FEW) against the plan before it, ROW_VEC and cuBLAS.

For each of a seeded random set of one-row shapes (n uniform in 2..32, K log-uniform in --kmin..--kmax, default
500..2000000), one interleaved, verified run (shuffled, L2 flushed, launch overhead hidden) of: the numba SGEMM as
planned and its C twin; the plan as it was without ROW_FEW (``row_few_choice`` off: rows/1, ROW_VEC, a cols kernel
or the tiles), forced; the ROW_FEW that covers n at a ladder of slice counts around ``row_few_splits``' (1, a
quarter, a half, the rule's, twice, four times, the most, and one pass deep: ``row_few_pass_splits``); where B's
rows start 16-byte aligned (n % 4 == 0), ROW_VEC at its own rule; cuBLAS (fp32, TF32 off). Where the plan is
ROW_FEW, the ladder's entry at the rule's count is the same call as the plan's: the two are an A/A pair that shows
the timer's noise on these short calls. It prints a line a shape and a summary, and writes every median to a JSON
record (after each shape).

    python scripts/sgemm_row_few_probe.py [--count 80] [--seed 2027] [--runs 21] [--kmin 500] [--kmax 2000000]
        [--widths N ...] [--out record.json]   (GPU)
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import time


def shapes(count: int, seed: int, kmin: int, kmax: int, widths: list[int] | None = None) -> list[tuple[int, int, int]]:
    """``count`` one-row shapes: n uniform in 2..32 (or drawn from ``widths``), K log-uniform in kmin..kmax."""
    rng = random.Random(seed)
    return [(1, rng.choice(widths) if widths else rng.randint(2, 32),
             int(10 ** rng.uniform(math.log10(kmin), math.log10(kmax)))) for _ in range(count)]


def ladder(k: int, few, rule: int) -> list[int]:
    """The slice counts ROW_FEW is timed at: of those it can take, the nearest to 1, rule/4, rule/2, rule, 2 rule,
    4 rule, one pass deep and the most."""
    from util import sgemm as S

    counts = S.thin_slice_counts(k, few)
    targets = (1, rule / 4, rule / 2, rule, 2 * rule, 4 * rule, S.row_few_pass_splits(k, few), counts[-1])
    return sorted({min(counts, key=lambda s: abs(math.log(s / t))) for t in targets})


def before_plan(m: int, n: int, k: int, sms: int):
    """plan() with ``row_few_choice`` off: the plan these shapes had before ROW_FEW."""
    from util import sgemm as S

    choice = S.row_few_choice
    S.row_few_choice = lambda *args: None
    S.plan.cache_clear()
    try:
        return S.plan(m, n, k, sms=sms)
    finally:
        S.row_few_choice = choice
        S.plan.cache_clear()


def geomean(xs) -> float:
    return math.exp(statistics.fmean(math.log(x) for x in xs))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=80)
    ap.add_argument("--seed", type=int, default=2027)
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--kmin", type=int, default=500)
    ap.add_argument("--kmax", type=int, default=2_000_000)
    ap.add_argument("--widths", type=int, nargs="+", default=None,
                    help="draw n from these (2..32) instead of uniformly from 2..32")
    ap.add_argument("--out", default="row_few_record.json")
    args = ap.parse_args()

    import util
    from util import sgemm as S
    from util import sgemm_thin as T
    from util.bench import Registry

    if util.SIMULATED:
        raise SystemExit("needs a GPU: the point is GPU time (the simulator's wall time says nothing)")
    sms = S._sms()
    record, t0 = [], time.perf_counter()
    if not 1 <= args.kmin <= args.kmax:
        raise SystemExit(f"--kmin and --kmax need 1 <= kmin <= kmax; got {args.kmin}, {args.kmax}")
    if args.widths and not all(2 <= w <= 32 for w in args.widths):
        raise SystemExit(f"--widths need 2 <= n <= 32 (ROW_FEW's columns); got {args.widths}")
    todo = shapes(args.count, args.seed, args.kmin, args.kmax, args.widths)
    for i, (m, n, k) in enumerate(todo):
        plan, before = S.plan(m, n, k), before_plan(m, n, k, sms)
        few = T.row_few_for(n)
        rule, deep = S.row_few_splits(k, few), S.row_few_pass_splits(k, few)
        steps = ladder(k, few, rule)
        reg = Registry()
        S.register(reg, "plan", "plan C")
        S.register(reg, "before", None, tile=before.tile, splits=before.splits)
        for s in steps:
            S.register(reg, f"few s={s}", None, tile=few, splits=s)
        vec = None
        if n % 4 == 0:
            vec = S.plan(m, n, k, tile=S.row_vec_choice(n, k, sms))
            S.register(reg, "vec", None, tile=vec.tile)
        reg.cublas()
        tab = reg.run(m, n, k, runs=args.runs, shuffle=True, hide_launch=True, verbose=False)
        wrong = [r.name for r in tab.results if not r.correct]
        us = {("cuBLAS" if r.name == tab.baseline else r.name): round(r.median * 1e6, 3) for r in tab.results}
        record.append({"shape": [m, n, k], "plan": f"{plan.tile.name} x {plan.splits}",
                       "before": f"{before.tile.name} x {before.splits}", "few": few.name, "rule": rule, "deep": deep,
                       "ladder": steps, "vec": None if vec is None else f"{vec.tile.name} x {vec.splits}",
                       "us": us, "wrong": wrong})
        best = min(steps, key=lambda s: us[f"few s={s}"])
        print(f"[{time.perf_counter() - t0:4.0f} s] {i + 1}/{len(todo)} {m}x{n}x{k}: plan {record[-1]['plan']} "
              f"{100 * us['cuBLAS'] / us['plan']:5.1f}% of cuBLAS, numba / C {us['plan'] / us['plan C']:.3f}; "
              f"before ({record[-1]['before']}) {100 * us['cuBLAS'] / us['before']:5.1f}%; {few.name} rule s={rule} "
              f"/ best s={best} {us[f'few s={rule}'] / us[f'few s={best}']:.3f}"
              + ("" if vec is None else f"; {vec.tile.name} / {few.name} at its rule "
                 f"{us['vec'] / us[f'few s={rule}']:.3f}")
              + (f"  WRONG: {wrong}" if wrong else ""), flush=True)
        with open(args.out, "w") as f:  # after every shape, so a run cut short keeps what it measured
            json.dump({"about": "one-row shapes: numba's plan and its C twin, the plan before ROW_FEW, ROW_FEW at a "
                                "ladder of slice counts and ROW_VEC (each forced), cuBLAS (scripts/sgemm_row_few_probe"
                                ".py); us: medians of one interleaved, verified run",
                       "device": util.device_name(), "sms": sms, "versions": util.versions_line(),
                       "command": f"python scripts/sgemm_row_few_probe.py --count {args.count} --seed {args.seed} "
                                  f"--runs {args.runs} --kmin {args.kmin} --kmax {args.kmax}"
                                  + (f" --widths {' '.join(map(str, args.widths))}" if args.widths else ""),
                       "shapes": record}, f, indent=0)

    ok = [r for r in record if not r["wrong"]]
    print(f"{len(record) - len(ok)} of {len(record)} shapes had a wrong variant"
          + "".join(f"\n  {r['shape']}: {r['wrong']}" for r in record if r["wrong"]))
    pct = [100 * r["us"]["cuBLAS"] / r["us"]["plan"] for r in ok]
    old = [100 * r["us"]["cuBLAS"] / r["us"]["before"] for r in ok]
    twin = [r["us"]["plan"] / r["us"]["plan C"] for r in ok]
    fit = [r["us"][f"few s={r['rule']}"] / min(r["us"][f"few s={s}"] for s in r["ladder"]) for r in ok]
    aa = [r["us"]["plan"] / r["us"][f"few s={r['rule']}"] for r in ok if r["plan"] == f"{r['few']} x {r['rule']}"]
    vs = [(r["us"]["vec"] / r["us"][f"few s={r['rule']}"], r) for r in ok if r["vec"]]
    print(f"plan: {geomean(pct):.1f}% of cuBLAS geomean, min {min(pct):.1f}%, {sum(p < 90 for p in pct)} below 90%; "
          f"before: {geomean(old):.1f}%, min {min(old):.1f}%; plan / before time: geomean "
          f"{geomean(r['us']['plan'] / r['us']['before'] for r in ok):.3f}")
    print(f"numba / C at the plan: geomean {geomean(twin):.3f}, max {max(twin):.3f}, {sum(t > 1.02 for t in twin)} "
          f"of {len(twin)} above 1.02")
    print(f"ROW_FEW at the rule's slices / the ladder's fastest: geomean {geomean(fit):.3f}, max {max(fit):.3f}")
    split = [r["us"][f"few s={r['rule']}"] / r["us"][f"few s={r['deep']}"] for r in ok if r["rule"] != r["deep"]]
    if split:
        print(f"one slice where a split saves at most {S.ROW_FEW_SPLIT_PASSES} passes, against one pass a slice, on "
              f"{len(split)} shapes: time geomean {geomean(split):.3f}, {min(split):.3f}..{max(split):.3f}")
    if aa:
        print(f"A/A (the plan and the ladder's same call): geomean {geomean(aa):.3f}, {min(aa):.3f}..{max(aa):.3f}, "
              f"{sum(abs(x - 1) > 0.02 for x in aa)} of {len(aa)} apart by more than 2%")
    for v, r in vs:
        print(f"  {r['shape']}: {r['vec']} / {r['few']} x {r['rule']} {v:.3f} (plan {r['plan']})")
    print("written:", args.out)


if __name__ == "__main__":
    main()
