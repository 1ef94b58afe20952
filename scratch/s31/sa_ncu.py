"""One launch each of the rule's C twin and the SA twin (scratch/s31/gemm_sa.cu) on a shape, for Nsight Compute:
ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
    --metrics l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum \
    -k regex:gemm_c python scratch/s31/sa_ncu.py M N K
Each result checked against float64 after its launch. Run from the project root with PYTHONPATH=.:scratch/s30:scratch/s31."""
import sys

import util.sgemm as S
import util.timing as T
from util import cuda

from rc_probe import twin_launch
from sa_probe import sa_twin

m, n, k = (int(x) for x in sys.argv[1:4])
plan = S.plan(m, n, k)
q = T.problem(m, n, k)
for name, launch in (("C", lambda p: S.sgemm(p.a, p.b, p.c, compiler="cuda_c")),
                     ("C SA", twin_launch(sa_twin(plan), plan, plan.grid, plan.tile.NT))):
    q.poison()
    launch(q)
    cuda.synchronize()
    print(name, plan.tile.name, plan.splits, "correct:", q.check(), flush=True)
