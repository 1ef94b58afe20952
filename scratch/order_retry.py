"""Does another FMA order give back what the 32-bit set-up (branch setup32-experiment, copied into scratch/setup32)
cost the 128 x 128 tile? CUPTI kernel times of main's kernel (scratch/oldutil, its recorded order) and the branch's
with each given order, interleaved, each verified.
PYTHONPATH=$PWD/scratch/setup32:$PYTHONPATH:$PWD/scratch python scratch/order_retry.py --runs 21"""
import argparse
import statistics
from collections import defaultdict

import numpy as np

import util
from util import cuda
from util import sgemm as S
from util.verify import Problem
import oldutil.sgemm as O

assert "setup32" in util.__file__, util.__file__
ap = argparse.ArgumentParser()
ap.add_argument("--runs", type=int, default=21)
args = ap.parse_args()
CASES = {(4096, 4096, 4096): ("colsnake", "col"), (777, 4100, 2048): ("colsnake", "col"),
         (2048, 2047, 2048): ("col", "colsnake")}  # the recorded order first, then the fewest bank pairs
for shape, orders in CASES.items():
    p = Problem(*shape, seed=1)
    calls = {"main": O.prepare(p.a, p.b, p.c)}
    for o in orders:
        calls[f"branch {o}"] = S.prepare(p.a, p.b, p.c, order=o)
    for c, g in calls.items():
        assert g.plan.tile.name == "128x128" and g.plan.splits == 1, (c, g.plan)
        p.poison()
        g()
        cuda.synchronize()
        assert p.check().correct, (shape, c, p.check())
    keys = list(calls)
    order_of = {}
    rng = np.random.default_rng(0)

    def run():
        for _ in range(args.runs):
            for c in rng.permutation(keys).tolist():
                order_of.setdefault(len(order_of), c)
                calls[c]()
        cuda.synchronize()

    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        run()
    ev = sorted((e for e in prof.events() if e.device_type == DeviceType.CUDA
                 and not e.name.startswith(("Memcpy", "Memset"))), key=lambda e: e.time_range.start)
    launched = [order_of[i] for i in range(len(order_of))]
    assert len(ev) == len(launched), (len(ev), len(launched))
    got = defaultdict(list)
    for c, e in zip(launched, ev):
        assert ("oldutil" in e.name) == (c == "main"), (c, e.name[:80])
        got[c].append(e.time_range.elapsed_us() / 1e6)
    med = {c: statistics.median(v) * 1e6 for c, v in got.items()}
    print(f"{'x'.join(map(str, shape))}: " + "  ".join(f"{c} {med[c]:.1f} us ({med[c] / med['main']:.3f})" for c in keys),
          flush=True)
