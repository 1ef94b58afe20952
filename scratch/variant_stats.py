"""Static (sm_90): every tiled numba variant (one loop and two loops, 32-bit offsets), its twin's
instruction count beside it: instructions, instructions before the first barrier, spills, hot-loop length.
NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=. python scratch/variant_stats.py > out.txt"""
import util  # noqa: F401
from util import sgemm as S
from util.compile import cubin_from_ptx, numba_ptx
from util.sass import analyze


def first_region(r):
    n = 0
    for i in r.instructions:
        if i.opcode.startswith("BAR"):
            return n
        n += 1
    return n


for t in S.TILES:
    for one_loop, wides in ((True, (False,)), (False, (False,))):
        for wide in wides:
            for va in (False, True):
                for vb in (False, True):
                    for sh in ((False, True) if S.b_by_pieces(vb, t) else (False,)):
                        vc, sc = bool(t.VC and vb), bool(t.SC and not vb)
                        kw = dict(shift_b=sh, vc=vc, sc=sc, one_loop=one_loop)
                        k = S.numba_kernel(va, vb, wide, t, simulator=False, **kw)
                        r = analyze(cubin_from_ptx(numba_ptx(k, S.numba_sig(), launch_bounds=(t.NT, t.MINB))),
                                    ffma_per_iteration=t.ffma)
                        tw = analyze(S.c_twin(va, vb, wide, t, **kw).cubin("sm_90"), "gemm_c")
                        print(f"{S.ffma_order_key('', t, va, vb, wide, sh, vc, sc, one_loop).strip():55s} "
                              f"numba {len(r.instructions)} pre {first_region(r)} loop {len(r.hot_loop.instructions)} "
                              f"r{r.registers} {r.spills} | twin {len(tw.instructions)} pre {first_region(tw)}",
                              flush=True)
