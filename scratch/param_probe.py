"""Per kernel device times (torch.profiler / CUPTI) of numba (this code and scratch/oldutil) and the C twin on the
rule's plan for each shape: each verified once, then --runs interleaved rounds (shuffled); a call's time is the
sum of its kernels' medians. PYTHONPATH=.:scratch python scratch/param_probe.py --runs 61 [MxNxK ...]"""
import argparse
import math
import statistics
from collections import defaultdict

import numpy as np

import util  # noqa: F401
from util import cuda
from util import sgemm as S
from util.timing import profiled_kernels
from util.verify import Problem
import oldutil.sgemm as O

ap = argparse.ArgumentParser()
ap.add_argument("--runs", type=int, default=61)
ap.add_argument("shapes", nargs="*")
args = ap.parse_args()


def who(name):
    if "oldutil" in name:
        return "numba old"
    if name.endswith("_c") or "_c(" in name or name.startswith(("gemm_c", "splitk_sum_c", "gemm_rows", "gemm_cols")):
        return "twin"
    return "numba new"


res = []
for text in args.shapes:
    m, n, k = map(int, text.split("x"))
    p = Problem(m, n, k, seed=1)
    calls = {"numba new": S.prepare(p.a, p.b, p.c), "numba old": O.prepare(p.a, p.b, p.c),
             "twin": S.prepare(p.a, p.b, p.c, compiler="cuda_c")}
    for c, g in calls.items():
        p.poison()
        g()
        cuda.synchronize()
        chk = p.check()
        assert chk.correct, (text, c, chk)
    rng = np.random.default_rng(0)

    def run():
        for _ in range(args.runs):
            for c in rng.permutation(list(calls)).tolist():
                calls[c]()
        cuda.synchronize()

    got = defaultdict(list)
    for name, d in profiled_kernels(run):
        got[(who(name), name)].append(d)
    tot = defaultdict(float)
    for (w, nm), v in got.items():
        tot[w] += statistics.median(v) * 1e6
    plan = calls["numba new"].plan
    r = dict(new_old=tot["numba new"] / tot["numba old"], new_c=tot["numba new"] / tot["twin"],
             old_c=tot["numba old"] / tot["twin"])
    res.append(r)
    print(f"{text} {plan.tile.name} x{plan.splits} {plan.variant}: numba new {tot['numba new']:.2f} old "
          f"{tot['numba old']:.2f} twin {tot['twin']:.2f} us | new/old {r['new_old']:.3f} numba/C new "
          f"{r['new_c']:.3f} old {r['old_c']:.3f} ({len(got)} kernels)", flush=True)
geo = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))  # noqa: E731
print(f"geomean new/old {geo([r['new_old'] for r in res]):.3f}; numba/C new {geo([r['new_c'] for r in res]):.3f} "
      f"old {geo([r['old_c'] for r in res]):.3f}; <= 1.02 new {sum(r['new_c'] <= 1.02 for r in res)} old "
      f"{sum(r['old_c'] <= 1.02 for r in res)} of {len(res)}")
