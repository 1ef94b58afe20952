"""Timing probe of A's 4-byte loads spread over consecutive threads (scratch/s31/gemm_sa.cu, SA=1: a warp's load BK
adjacent floats of 32 / BK rows, a thread's elements NT / BK rows apart from one walking offset and a row step, the
bottom-edge block shifted up) against the rule's plan in numba and in C, and cuBLAS. The SA twin is the rule's plan's
twin (util.sgemm.c_twin: variant, tile, slices, FMA order, stores) with SA on; only where A takes 4-byte loads and
m >= BM. One verified interleaved run a shape (NaN-poisoned C, every launch checked, L2 flushed, the GPU held while
the host enqueues), events.
Run from the project root: PYTHONPATH=.:scratch/s30:scratch/s31 python scratch/s31/sa_probe.py RUNS MxNxK ..."""
import statistics
import sys
import time
from pathlib import Path

import util.sgemm as S
from util.cuda_c import CudaC

from raw_probe import time_shape  # one verified interleaved run and its line
from rc_probe import twin_launch  # the split-K launch of a twin-signature kernel

SRC = Path(__file__).with_name("gemm_sa.cu")


def sa_twin(p):
    base = S.c_twin(p.va, p.vb, p.wide, p.tile, None, p.shift_b, p.vc, p.sc, p.one_loop, p.row_b)
    return CudaC.from_file(SRC, "gemm_c", options=[*base.options, "-DSA=1"])


def main(runs, shapes):
    t0 = time.perf_counter()
    ratios = {}
    for m, n, k in shapes:
        plan = S.plan(m, n, k)
        if isinstance(plan.tile, S.Thin) or plan.va or m < plan.tile.BM:
            print(f"{(m, n, k)}: the rule takes {plan.tile.name}, {plan.variant}; skipped")
            continue
        res, line = time_shape(plan, runs, {"C SA": twin_launch(sa_twin(plan), plan, plan.grid, plan.tile.NT)}, t0)
        if res["C SA"].correct and res["C"].correct:
            ratios.setdefault(plan.tile.name, []).append(res["C SA"].median / res["C"].median)
            line += f"; C SA / C {ratios[plan.tile.name][-1]:.3f}"
        print(line, flush=True)
    for t, r in sorted(ratios.items()):
        print(f"C SA / C (time), {t}: geomean over {len(r)} shapes {statistics.geometric_mean(r):.3f} "
              f"({min(r):.3f}..{max(r):.3f})")


if __name__ == "__main__":
    main(int(sys.argv[1]), [tuple(int(x) for x in a.split("x")) for a in sys.argv[2:]])
