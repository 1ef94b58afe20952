"""Every variant a plan takes on util.sgemm.MICRO_TILE (``util.sgemm.plan_variants``: 16- or 4-byte loads of A and B,
32- or 64-bit offsets, 16-byte stores of C, C staged in shared memory, the shifted right edge of B and its loads along
rows, one loop), numba's kernel and the C twin, compiled for sm_90 at the tile's launch bounds: registers, local
memory, the hot loop's length.
Run from the project root: NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=. python scratch/s32/micro_static.py [ORDER ...]"""
import sys

import util  # noqa: F401
from util import sgemm as S
from util.compile import cubin_from_ptx, numba_ptx
from util.sass import analyze


def main(orders):
    t = S.MICRO_TILE
    for order in orders:
        for va, vb, wide, opts in S.plan_variants(t):
            kernel = S.numba_kernel(va, vb, wide, t, simulator=False, order=order, **opts)
            nb = analyze(cubin_from_ptx(numba_ptx(kernel, S.numba_sig(), launch_bounds=(t.NT, t.MINB))),
                         ffma_per_iteration=t.ffma)
            tw = analyze(S.c_twin(va, vb, wide, t, order, **opts).cubin("sm_90"), "gemm_c", ffma_per_iteration=t.ffma)
            name = S.variant_name(va, vb, wide) + "".join(f", {k}" for k, x in opts.items() if x)
            print(f"{order or t.order} [{name}]: numba {nb.registers} regs, spills {nb.spills}, loop {nb.hot_loop.size}; "
                  f"C {tw.registers} regs, spills {tw.spills}, loop {tw.hot_loop.size}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or [None])
