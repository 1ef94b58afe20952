"""Static (sm_90): spills and hot-loop local memory of the sliced tile's shifted-B staged-C variants (two loops) and
their one-loop ones. NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=. python scratch/spill_check.py"""
import util  # noqa: F401
from util import sgemm as S
from util.compile import cubin_from_ptx, numba_ptx
from util.sass import analyze

t = S.TINY_TILE
for one_loop in (False, True):
    for va in (False, True):
        for sh in (False, True):
            k = S.numba_kernel(va, False, False, t, simulator=False, sc=True, shift_b=sh, one_loop=one_loop)
            r = analyze(cubin_from_ptx(numba_ptx(k, S.numba_sig(), launch_bounds=(t.NT, t.MINB))), ffma_per_iteration=t.ffma)
            ops = r.hot_loop.opcodes
            print(one_loop, va, sh, len(r.instructions), r.spills, {x: n for x, n in ops.items() if x.startswith(("LDL", "STL"))}, flush=True)
