"""Static check of the SA twin (scratch/s31/gemm_sa.cu), sm_90: registers, spills and hot loop beside the twin's.
Run from the project root: NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=.:scratch/s30:scratch/s31 python scratch/s31/sa_static.py"""
from collections import Counter

import util.sgemm as S
from util.sass import analyze

from sa_probe import sa_twin

for m, n, k in [(3519, 563, 662), (3432, 1186, 622), (4095, 4097, 4093), (4096, 4096, 1023), (3001, 2999, 3003),
                (5654, 332, 215)]:
    p = S.plan(m, n, k, sms=132)  # the H200's SMs (the simulator pretends 4)
    sa = analyze(sa_twin(p).cubin("sm_90"), "gemm_c")
    tw = analyze(S.c_twin(p.va, p.vb, p.wide, p.tile, None, p.shift_b, p.vc, p.sc, p.one_loop, p.row_b).cubin("sm_90"),
                 "gemm_c")
    mix = lambda r: {o: c for o, c in Counter(i.opcode for i in r.hot_loop.instructions).items() if o != "FFMA"}
    print(f"{(m, n, k)} {p.tile.name} x {p.splits} {p.variant}: SA {sa.registers} regs, spills {sa.spills}, hot loop "
          f"{len(sa.hot_loop.instructions)}; twin {tw.registers}, {tw.spills}, {len(tw.hot_loop.instructions)}")
    print("   SA  ", mix(sa))
    print("   twin", mix(tw))
