"""Timing probe of A's row classes (scratch/s30/gemm_rc.cu, RC=1: where k % 4 != 0, A's rows in classes of equal
alignment, each slice's first s < 4 k-steps a partial tile, the rest 16-byte loads of A) against the rule's plan in
numba and in C, and cuBLAS. The RC twin takes the rule's tile and slices, with the variant plan() gives where A takes
16-byte loads (``dataclasses.replace(plan, va=True)``: its B loads, stores of C, FMA order) and P times the row
tiles (P = 4 / gcd(k, 4)). One verified interleaved run a shape (NaN-poisoned C, every launch checked, L2 flushed,
the GPU held while the host enqueues), events.
Run from the project root: PYTHONPATH=. python scratch/s30/rc_probe.py RUNS MxNxK ...
(`rc_probe_v1_h200.txt` was run with the RC twin's rows 4 floats aligned only; now each shape also with 8, RC8.)"""
import dataclasses
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import util.sgemm as S
import util.timing as T
from util.bench import cublas_launch
from util.cuda_c import CudaC
from util.memory import cdiv

SRC = Path(__file__).with_name("gemm_rc.cu")


def rc_twin(p, align=4, force_p=0):
    """The RC twin of plan p's variant with A's 16-byte loads, its classes' rows starting every ``align`` floats:
    the twin's macros for that variant (S.c_twin's), and the classes'."""
    base = S.c_twin(p.va, p.vb, p.wide, p.tile, None, p.shift_b, p.vc, p.sc, p.one_loop, p.row_b)
    return CudaC.from_file(SRC, "gemm_c", options=[*base.options, "-DRC=1", f"-DRCA={align}", f"-DFORCEP={force_p}"])


def twin_launch(twin, p, grid, threads):
    """``launch(problem)``: ``twin`` (the twin's signature) on ``grid`` x ``threads`` with plan p's slices, into the
    split-K workspace and then summed as sgemm does where p has several."""
    m, n, k = p.m, p.n, p.k
    ws = S._workspace_for(p.workspace_floats) if p.splits > 1 else None
    flags = S._counters_for(1)
    kslice = np.int32(min(p.kslice, k))
    vec = p.splits > 1 and S.sum_vec(m * n, True)
    lanes = p.splits > 1 and not vec and S.sum_lanes(m * n)

    def launch(q):
        twin.call(grid, threads, q.a, q.b, ws if ws is not None else q.c, q.c, flags, np.int32(m), np.int32(n),
                  np.int32(k), kslice)
        if ws is not None:
            S.c_splitk_sum(vec, lanes).call(S._sum_blocks(m * n, vec, lanes), S.SUM_THREADS, ws, q.c,
                                            np.int64(m * n), np.int32(p.splits))
    return launch


def rc_launch(plan, align=4, force_p=0):
    p = dataclasses.replace(plan, va=True)
    period = force_p or align // math.gcd(p.k, align)
    grid = (cdiv(p.n, p.tile.BN), period * cdiv(cdiv(p.m, period), p.tile.BM), p.splits)
    return twin_launch(rc_twin(p, align, force_p), p, grid, p.tile.NT), p


def main(runs, shapes):
    t0 = time.perf_counter()
    ratios = {}
    for m, n, k in shapes:
        plan = S.plan(m, n, k)
        if isinstance(plan.tile, S.Thin):
            print(f"{(m, n, k)}: the rule takes {plan.tile.name}; skipped")
            continue
        launches = {"numba": lambda q: S.sgemm(q.a, q.b, q.c), "C": lambda q: S.sgemm(q.a, q.b, q.c, compiler="cuda_c"),
                    "cuBLAS": cublas_launch}
        for align in ALIGNS:
            if k % align:
                launches[f"C RC{align}"], rc = rc_launch(plan, align)
        res = T.run_verified(T.problem(m, n, k), runs, launches, shuffle=True, hide_launch=True)
        cub = res["cuBLAS"].median
        loads = "vec A,B" if plan.va and plan.vb else "vec A" if plan.va else "vec B" if plan.vb else "scalar"
        parts = [f"{nm} {100 * cub / r.median:.1f}%" if r.correct else f"{nm} WRONG" for nm, r in res.items()
                 if nm != "cuBLAS"]
        line = f"[{time.perf_counter() - t0:5.0f} s] {(m, n, k)} {plan.tile.name} x {plan.splits} {loads}: cuBLAS {cub * 1e6:.1f} us; " + ", ".join(parts)
        for align in ALIGNS:
            nm = f"C RC{align}"
            if nm in res and res[nm].correct and res["C"].correct:
                ratios.setdefault(align, []).append(res[nm].median / res["C"].median)
                line += f"; {nm} / C {ratios[align][-1]:.3f}"
        if any(nm.startswith("C RC") for nm in res):
            line += f" (RC variant {S.variant_name(rc.va, rc.vb, rc.wide)}, row_b {rc.row_b})"
        print(line, flush=True)
    for align, r in ratios.items():
        print(f"C RC{align} / C (time), geomean over {len(r)} shapes with k % {align} != 0: "
              f"{statistics.geometric_mean(r):.3f} ({min(r):.3f}..{max(r):.3f})")


ALIGNS = (4, 8)

if __name__ == "__main__":
    main(int(sys.argv[1]), [tuple(int(x) for x in a.split("x")) for a in sys.argv[2:]])
