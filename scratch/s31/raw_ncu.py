"""One launch each of the rule's C twin and the RAW twin (scratch/s31/gemm_raw.cu) on a shape, for Nsight Compute:
ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
    --section MemoryWorkloadAnalysis -k regex:gemm_c python scratch/s31/raw_ncu.py M N K
Each result checked against float64 after its launch. Run from the project root with PYTHONPATH=.:scratch/s30:scratch/s31."""
import sys


import util.sgemm as S
import util.timing as T
from util import cuda

from raw_probe import raw_launch

m, n, k = (int(x) for x in sys.argv[1:4])
plan = S.plan(m, n, k)
q = T.problem(m, n, k)
for name, launch in (("C", lambda p: S.sgemm(p.a, p.b, p.c, compiler="cuda_c")), ("C RAW3", raw_launch(plan, 3))):
    q.poison()
    launch(q)
    cuda.synchronize()
    print(name, plan.tile.name, plan.splits, "correct:", q.check(), flush=True)
