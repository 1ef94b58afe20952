"""Static check of the RAW twin (scratch/s31/gemm_raw.cu), sm_90: for the plans of a few shapes, the RAW variant's
registers, spills and hot loop beside the twin's own variant for the plan.
Run from the project root: NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=.:scratch/s30:scratch/s31 python scratch/s31/raw_static.py"""

import util.sgemm as S
from util.sass import analyze

from raw_probe import raw_twin

for m, n, k in [(3519, 563, 662), (1172, 3326, 246), (129, 5406, 6159), (4095, 4097, 4093), (3432, 1185, 620),
                (609, 657, 182), (2048, 2047, 2048)]:
    plan = S.plan(m, n, k, sms=132)  # the H200's SMs (the simulator pretends 4)
    for st in (2, 3):
        rw = analyze(raw_twin(plan, st).cubin("sm_90"), "gemm_c")
        print(f"{(m, n, k)} {plan.tile.name} x {plan.splits} RAW{st}: registers {rw.registers}, spills {rw.spills}, "
              f"hot loop {len(rw.hot_loop.instructions)}", flush=True)
    tw = analyze(S.c_twin(plan.va, plan.vb, plan.wide, plan.tile, None, plan.shift_b, plan.vc, plan.sc, plan.one_loop,
                          plan.row_b).cubin("sm_90"), "gemm_c")
    print(f"   twin {plan.variant}: {tw.registers}, {tw.spills}, {len(tw.hot_loop.instructions)}")
