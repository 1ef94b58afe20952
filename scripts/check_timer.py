"""Cross-check measure_runtime's CUPTI timing against an independent CUDA-events timing (GPU only).

    python scripts/check_timer.py [--runs 10] [--size 4092]

Times the original notebook's variant7 three ways on the same problem: measure_runtime with CUPTI
(torch.profiler, the default), measure_runtime with numba's CUDA events, and torch.cuda.Event pairs
around launches made here directly. Prints each median and spread and the CUPTI/events ratio.
"""

from __future__ import annotations

import argparse
import statistics
import sys

import numpy as np

import util
from util import cdiv, cuda, measure_runtime
from util.timing import problem


@cuda.jit
def variant7(a, b, c, m, n, k, bs):
    x = cuda.blockIdx.x * bs + cuda.threadIdx.x // bs
    y = cuda.blockIdx.y * bs + cuda.threadIdx.x % bs
    if x < m and y < n:
        tmp = np.float32(0)
        for i in range(k):
            tmp += a[x, i] * b[i, y]
        c[x, y] = tmp


def torch_event_times(size: int, runs: int) -> list[float]:
    """Seconds per launch of variant7, bracketed by torch.cuda.Event (independent of util's timers)."""
    import torch

    p = problem(size, size, size)
    grid = cdiv((size, size), (32, 32))
    variant7[grid, 1024](p.a, p.b, p.c, size, size, size, 32)  # warm-up (compiled already)
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        variant7[grid, 1024](p.a, p.b, p.c, size, size, size, 32)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return times


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--size", type=int, default=4092)
    args = ap.parse_args(argv)
    if util.SIMULATED:
        print("check_timer needs a GPU: under the simulator there is no device clock to compare.")
        return 2
    print("device:", util.device_name())
    kw = dict(nthreads=32 * 32, nblocks_fn=lambda s, nt: cdiv(s, (32, 32)), kernel_args=[32],
              m=args.size, n=args.size, k=args.size, runs=args.runs)
    cupti = measure_runtime(variant7, timer="cupti", **kw)
    events = measure_runtime(variant7, timer="events", **kw)
    independent = torch_event_times(args.size, args.runs)
    if not (cupti.correct and events.correct):
        print("variant7 is WRONG on this device: no timing comparison")
        return 1
    rows = [("measure_runtime, CUPTI", cupti.times), ("measure_runtime, numba events", events.times),
            ("torch.cuda.Event, launched here", independent)]
    print(f"\n{'timer':34s} {'median ms':>10s} {'min ms':>8s} {'max ms':>8s} {'spread %':>9s}")
    for name, t in rows:
        med = statistics.median(t)
        print(f"{name:34s} {med * 1e3:10.3f} {min(t) * 1e3:8.3f} {max(t) * 1e3:8.3f} "
              f"{100 * (max(t) - min(t)) / med:9.2f}")
    ratio = cupti.median / statistics.median(independent)
    print(f"\nCUPTI / independent CUDA events = {ratio:.4f} ({100 * abs(ratio - 1):.2f}% apart; goal < 2%)")
    return 0 if abs(ratio - 1) < 0.02 else 1


if __name__ == "__main__":
    sys.exit(main())
