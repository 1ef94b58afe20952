"""Static (sm_90): the sliced tile's two-loop shifted-B staged-C variants, every order: spills, hot-loop local memory.
NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=. python scratch/spill_two.py"""
import sys
import util  # noqa: F401
from util import sgemm as S
from util.compile import cubin_from_ptx, numba_ptx
from util.sass import analyze
t = S.TINY_TILE
for va in (False, True):
    out = []
    for order in (sys.argv[1:] or S.FFMA_ORDERS):
        k = S.numba_kernel(va, False, False, t, simulator=False, shift_b=True, sc=True, order=order)
        r = analyze(cubin_from_ptx(numba_ptx(k, S.numba_sig(), launch_bounds=(t.NT, t.MINB))), ffma_per_iteration=t.ffma)
        ldl = sum(n for x, n in r.hot_loop.opcodes.items() if x.startswith(("LDL", "STL")))
        out.append(f"{order} {r.spills} L{ldl} r{r.registers}")
    print(va, " | ".join(out), flush=True)
