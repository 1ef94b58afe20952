"""Static (sm_90): tiled variants' hot-loop opcode counts and lengths to a JSON file, to compare two versions of util
(run, git stash, run again). NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=. python scratch/hotloop_dump.py OUT.json"""
import json
import sys
from collections import Counter

import util  # noqa: F401
from util import sgemm as S
from util.compile import cubin_from_ptx, numba_ptx
from util.sass import analyze

res = {}
for t in S.TILES[:1]:
    for va, vb in ((True, True), (True, False), (False, True), (False, False)):
        k = S.numba_kernel(va, vb, False, t, simulator=False)
        r = analyze(cubin_from_ptx(numba_ptx(k, S.numba_sig(), launch_bounds=(t.NT, t.MINB))), ffma_per_iteration=t.ffma)
        res[S.ffma_order_key("numba", t, va, vb, False)] = dict(n=len(r.hot_loop.instructions), regs=r.registers,
                                                               ops=Counter(i.opcode for i in r.hot_loop.instructions),
                                                               sass=[i.text for i in r.hot_loop.instructions])
        print(t.name, va, vb, len(r.hot_loop.instructions), flush=True)
json.dump(res, open(sys.argv[1], "w"))
