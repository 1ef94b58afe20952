"""Where the row-class twin's cost comes from, on shapes whose rows are 16-byte aligned (k % 4 == 0): the twin as the
rule plans it; the RC twin with one class (its code, the same layout: RC4 where k % 4 == 0); with two classes forced
(rows two apart, no head: FORCEP=2); with rows 32-byte aligned (RC8: two classes where k % 8 == 4, one with a head of 4
k-steps); cuBLAS. One verified interleaved run a shape, events.
Run from the project root: PYTHONPATH=.:scratch/s30 python scratch/s30/rc_parts.py RUNS MxNxK ..."""
import sys
import time

import util.sgemm as S
import util.timing as T
from rc_probe import rc_launch
from util.bench import cublas_launch

runs = int(sys.argv[1])
t0 = time.perf_counter()
for m, n, k in [tuple(int(x) for x in a.split("x")) for a in sys.argv[2:]]:
    plan = S.plan(m, n, k)
    assert k % 4 == 0 and plan.va and not isinstance(plan.tile, S.Thin), (m, n, k)
    launches = {"C": lambda q: S.sgemm(q.a, q.b, q.c, compiler="cuda_c"), "cuBLAS": cublas_launch,
                "RC one class": rc_launch(plan, 4)[0], "RC two classes, no head": rc_launch(plan, 4, 2)[0]}
    if k % 8:
        launches["RC8"] = rc_launch(plan, 8)[0]
    res = T.run_verified(T.problem(m, n, k), runs, launches, shuffle=True, hide_launch=True)
    c = res["C"].median
    print(f"[{time.perf_counter() - t0:4.0f} s] {(m, n, k)} {plan.tile.name} x {plan.splits}: C "
          f"{100 * res['cuBLAS'].median / c:.1f}% of cuBLAS; time / C: " +
          ", ".join(f"{nm} {r.median / c:.3f}" if r.correct else f"{nm} WRONG" for nm, r in res.items()
                    if nm not in ("C", "cuBLAS")), flush=True)
