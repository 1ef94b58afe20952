"""Static check of the RC twin (scratch/s30/gemm_rc.cu), sm_90: for the plans of a few shapes with k % 4 != 0, the RC
variant's registers, spills and hot loop beside the twin's own variant for the plan.
Run from the project root: NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=.:scratch/s30 python scratch/s30/rc_static.py"""
import dataclasses

import util.sgemm as S
from util.sass import analyze

from rc_probe import rc_twin

for m, n, k in [(3519, 563, 662), (1172, 3326, 246), (129, 5406, 6159), (4095, 4097, 4093), (3432, 1185, 620),
                (609, 657, 182), (5000, 3000, 7001)]:
    plan = S.plan(m, n, k)
    rc = analyze(rc_twin(dataclasses.replace(plan, va=True)).cubin("sm_90"), "gemm_c")
    tw = analyze(S.c_twin(plan.va, plan.vb, plan.wide, plan.tile, None, plan.shift_b, plan.vc, plan.sc, plan.one_loop,
                          plan.row_b).cubin("sm_90"), "gemm_c")
    print(f"{(m, n, k)} {plan.tile.name} x {plan.splits}: RC registers {rc.registers}, spills {rc.spills}, hot loop "
          f"{len(rc.hot_loop.instructions)}; twin {tw.registers}, {tw.spills}, {len(tw.hot_loop.instructions)}")
