"""Timing probe of the RAW twin (scratch/s31/gemm_raw.cu, RAW=1: every whole k-tile of A and B copied by 16-byte
cp.async as its rows lie in memory, then moved to the tiles at each row's shift) against the rule's plan in numba and
in C, and cuBLAS. The RAW twin takes the rule's tile and slices, the 4-byte variant's macros (util.sgemm.c_twin with
va = vb = False; its FMA order, stores of C) and the right-edge block shifted left to end at column n.
One verified interleaved run a shape (NaN-poisoned C, every launch checked, L2 flushed, the GPU held while the host
enqueues), events.
Run from the project root: PYTHONPATH=.:scratch/s30:scratch/s31 python scratch/s31/raw_probe.py RUNS MxNxK ..."""
import statistics
import sys
import time
from pathlib import Path

import util.sgemm as S
import util.timing as T
from util.bench import cublas_launch
from util.cuda_c import CudaC

from rc_probe import twin_launch  # the split-K launch of a twin-signature kernel

SRC = Path(__file__).with_name("gemm_raw.cu")


def raw_twin(p, stages=3):
    """The RAW twin for plan p's tile: the twin's macros of the variant without 16-byte loads, SHIFT_B on."""
    shift = S.b_by_pieces(False, p.tile) and p.n >= p.tile.BN
    base = S.c_twin(False, False, p.wide, p.tile, None, shift, False, p.tile.SC, False,
                    shift and S.b_by_rows(False, p.tile))
    opts = [o.replace("-DSHIFT_B=0", "-DSHIFT_B=1") for o in base.options]
    return CudaC.from_file(SRC, "gemm_c", options=[*opts, "-DRAW=1", f"-DRAWS={stages}"])


def raw_launch(p, stages=3):
    return twin_launch(raw_twin(p, stages), p, p.grid, p.tile.NT)


def time_shape(plan, runs, extra, t0):
    """One verified interleaved run of plan's shape: numba and C through sgemm, cuBLAS, and the ``extra`` launches
    (name -> launch); the results and a line of % of cuBLAS (also used by sa_probe.py)."""
    m, n, k = plan.m, plan.n, plan.k
    launches = {"numba": lambda q: S.sgemm(q.a, q.b, q.c), "C": lambda q: S.sgemm(q.a, q.b, q.c, compiler="cuda_c"),
                "cuBLAS": cublas_launch, **extra}
    res = T.run_verified(T.problem(m, n, k), runs, launches, shuffle=True, hide_launch=True)
    cub = res["cuBLAS"].median
    parts = [f"{nm} {100 * cub / r.median:.1f}%" if r.correct else f"{nm} WRONG" for nm, r in res.items()
             if nm != "cuBLAS"]
    return res, (f"[{time.perf_counter() - t0:5.0f} s] {(m, n, k)} {plan.tile.name} x {plan.splits} {plan.variant}: "
                 f"cuBLAS {cub * 1e6:.1f} us; " + ", ".join(parts))


def main(runs, shapes, stages=(3,)):
    t0 = time.perf_counter()
    ratios = {}
    for m, n, k in shapes:
        plan = S.plan(m, n, k)
        if isinstance(plan.tile, S.Thin) or n < plan.tile.BN:
            print(f"{(m, n, k)}: the rule takes {plan.tile.name}; skipped")
            continue
        res, line = time_shape(plan, runs, {f"C RAW{st}": raw_launch(plan, st) for st in stages}, t0)
        for st in stages:
            nm = f"C RAW{st}"
            if res[nm].correct and res["C"].correct:
                ratios.setdefault((st, plan.variant), []).append(res[nm].median / res["C"].median)
                line += f"; {nm} / C {ratios[st, plan.variant][-1]:.3f}"
        print(line, flush=True)
    for (st, v), r in sorted(ratios.items()):
        print(f"C RAW{st} / C (time), {v}: geomean over {len(r)} shapes {statistics.geometric_mean(r):.3f} "
              f"({min(r):.3f}..{max(r):.3f})")


if __name__ == "__main__":
    args = sys.argv[2:]
    st = (3,)
    if args and args[0].startswith("--stages="):
        st = tuple(int(x) for x in args.pop(0).split("=")[1].split(","))
    main(int(sys.argv[1]), [tuple(int(x) for x in a.split("x")) for a in args], st)
