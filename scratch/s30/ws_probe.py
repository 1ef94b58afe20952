"""Timing probe of the warp-specialized twin (scratch/s30/gemm_ws.cu: a copier warp a block, 4-byte cp.async into
STAGES buffers, the compute threads' k-tiles unchanged) against the rule's plan in numba and in C, and cuBLAS. The WS
variant takes the rule's tile, slices and grid (its copies are 4 bytes whatever the alignment; C stored by the
tile's own path, 4-byte stores). One verified interleaved run a shape (every launch checked, NaN-poisoned C, L2
flushed, the GPU held while the host enqueues), events.
Run from the project root: PYTHONPATH=.:scratch/s30 python scratch/s30/ws_probe.py RUNS MxNxK ..."""
import statistics
import sys
import time


import util.sgemm as S
import util.timing as T
from util.bench import cublas_launch

from rc_probe import twin_launch
from ws_static import ws_twin

RUNS = int(sys.argv[1])
SHAPES = [tuple(int(x) for x in a.split("x")) for a in sys.argv[2:]]
CONFIGS = [(3, 1, 1), (3, 1, 2), (3, 1, 4), (4, 2, 2)]  # (stages, lag, copier warps)


def ws_launch(plan, stages, lag, cw):
    tile = plan.tile
    threads = tile.NT + 32 * cw  # blocks an SM with 96 registers a thread at least, at most the tile's own
    minb = max(1, min(tile.MINB, 65536 // (threads * 96)))
    return twin_launch(ws_twin(tile, stages, lag, minb, sc=tile.SC, cw=cw), plan, plan.grid, threads)


t0 = time.perf_counter()


def tile_sc(tile):
    return tile.SC


summary = []
for m, n, k in SHAPES:
    plan = S.plan(m, n, k)
    if isinstance(plan.tile, S.Thin):
        print(f"{(m, n, k)}: the rule takes {plan.tile.name}; skipped")
        continue
    p = T.problem(m, n, k)
    launches = {"numba": lambda q: S.sgemm(q.a, q.b, q.c), "C": lambda q: S.sgemm(q.a, q.b, q.c, compiler="cuda_c"),
                "cuBLAS": cublas_launch}
    for st, lag, cw in CONFIGS:
        if st == 4 and tile_sc(plan.tile):
            continue  # 4 stages and C's staging tile pass 48 KB of static shared memory
        launches[f"WS s{st} l{lag} w{cw}"] = ws_launch(plan, st, lag, cw)
    res = T.run_verified(p, RUNS, launches, shuffle=True, hide_launch=True)
    cub = res["cuBLAS"].median
    loads = "vec A,B" if plan.va and plan.vb else "vec A" if plan.va else "vec B" if plan.vb else "scalar"
    parts = []
    for name, r in res.items():
        if name == "cuBLAS":
            continue
        parts.append(f"{name} {100 * cub / r.median:.1f}%" if r.correct else f"{name} WRONG")
    best = min((r.median for nm, r in res.items() if nm.startswith("WS") and r.correct), default=float("nan"))
    summary.append((m, n, k, plan.tile.name, plan.splits, loads, res["numba"].median / best if res["numba"].correct
                    else float("nan")))
    print(f"[{time.perf_counter() - t0:5.0f} s] {(m, n, k)} {plan.tile.name} x {plan.splits} {loads}: "
          f"cuBLAS {cub * 1e6:.1f} us; " + ", ".join(parts) + f"; numba / best WS {summary[-1][-1]:.3f}", flush=True)
r = [s[-1] for s in summary if s[-1] == s[-1]]
if r:
    print(f"numba rule / best WS config, geomean over {len(r)} shapes: {statistics.geometric_mean(r):.3f}")
