"""Timing probe of smaller tiles for tall, narrow shapes with short K (K too short to split, so the sliced 64 x 64
tile launches 1-3 blocks an SM), in the C twin only: util/sgemm_any_shape.cu with a 32 x 64 tile (6 blocks an SM)
and a 32 x 32 one (8), each two groups of one warp (sliced K as the 64 x 64 tile; a lane's 8 x 8 or 8 x 4 results,
FMAs in snake order), on 1 and 2 slices (numba's kernel on them too, one slice), against the rule's plan in numba
and C, and cuBLAS. One verified interleaved run a shape.
Run from the project root: PYTHONPATH=.:scratch/s30:scratch/s31 python scratch/s31/small_probe.py RUNS MxNxK ..."""
import sys
import time

import numpy as np

import util.sgemm as S
from util.memory import cdiv

from raw_probe import time_shape  # one verified interleaved run and its line
from rc_probe import twin_launch  # the split-K launch of a twin-signature kernel

SMALL = {
    "32x64/2k": S.Tile(BM=32, BN=64, BK=16, WM=32, WN=64, MINB=6, KG=2, VC=True, SC=True, S32=True, TA=True,
                       order="snake"),
    "32x32/2k": S.Tile(BM=32, BN=32, BK=16, WM=32, WN=32, WMI=2, WNI=1, MINB=8, KG=2, VC=True, SC=True, S32=True,
                       TA=True, order="snake"),
}


def small_launch(m, n, k, tile, splits):
    kslice = cdiv(cdiv(k, splits), tile.BK) * tile.BK
    p = S.Plan(m, n, k, splits=cdiv(k, kslice), kslice=kslice, va=k % 4 == 0, vb=n % 4 == 0, wide=False, tile=tile)
    twin = S.c_twin(p.va, p.vb, p.wide, tile, None, p.shift_b, p.vc, p.sc, False, p.row_b)
    return twin_launch(twin, p, p.grid, tile.NT), p


def numba_small_launch(m, n, k, tile):
    """numba's kernel on ``tile``, one slice (as sgemm's Prepared launches a tiled plan)."""
    kslice = cdiv(k, tile.BK) * tile.BK
    p = S.Plan(m, n, k, splits=1, kslice=kslice, va=k % 4 == 0, vb=n % 4 == 0, wide=False, tile=tile)
    kernel = S.numba_kernel(p.va, p.vb, p.wide, tile, shift_b=p.shift_b, row_b=p.row_b, vc=p.vc, sc=p.sc)
    flags = S._counters_for(1)

    def launch(q):
        cf = q.c.reshape(m * n)
        kernel[p.grid, tile.NT](np.int32(m), np.int32(n), np.int32(k), np.int32(min(kslice, k)), q.a.reshape(m * k),
                                q.b.reshape(k * n), cf, cf, flags)
    return launch


def main(runs, shapes):
    t0 = time.perf_counter()
    for m, n, k in shapes:
        plan = S.plan(m, n, k)
        extra = {}
        for name, tile in SMALL.items():
            for s in (1, 2):
                launch, p = small_launch(m, n, k, tile, s)
                extra[f"C {name} x{p.splits}"] = launch
            extra[f"numba {name} x1"] = numba_small_launch(m, n, k, tile)
        res, line = time_shape(plan, runs, extra, t0)
        best = min((nm for nm in extra if nm.startswith("C ") and res[nm].correct), key=lambda nm: res[nm].median,
                   default=None)
        if best and res["C"].correct:
            line += f"; best small {best}: / C {res[best].median / res['C'].median:.3f}"
        for name in SMALL:
            nb, cc = res[f"numba {name} x1"], res[f"C {name} x1"]
            if nb.correct and cc.correct:
                line += f"; numba / C {name} x1 {nb.median / cc.median:.3f}"
        print(line, flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), [tuple(int(x) for x in a.split("x")) for a in sys.argv[2:]])
