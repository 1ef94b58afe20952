"""Static (sm_90): the 128 x 128 tile's two-loop variants, each FMA order: hot-loop same-bank pairs and length.
Run in this worktree and in main's to compare: NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=. python scratch/order_pairs.py"""
import util  # noqa: F401
from util import sgemm as S
from util.compile import cubin_from_ptx, numba_ptx
from util.sass import analyze

t = S.TILE
for va, vb in ((True, True), (True, False)):
    rec = S.ffma_order("numba", t, va, vb, False)
    row = []
    for o in S.FFMA_ORDERS:
        k = S.numba_kernel(va, vb, False, t, simulator=False, order=o)
        r = analyze(cubin_from_ptx(numba_ptx(k, S.numba_sig(), launch_bounds=(t.NT, t.MINB))), ffma_per_iteration=t.ffma)
        row.append(f"{o}{'*' if o == rec else ''} {r.hot_loop.bank_pairs} pairs {len(r.hot_loop.instructions)}")
    print(S.variant_name(va, vb, False), " | ".join(row), flush=True)
