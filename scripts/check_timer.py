"""Cross-check measure_runtime's CUPTI timing against an independent CUDA-events timing (GPU only).

    python scripts/check_timer.py [--runs 10] [--size 4092]

Times the original notebook's variant7 three ways on the same problem: measure_runtime with CUPTI
(torch.profiler, the default), measure_runtime with numba's CUDA events, and torch.cuda.Event pairs
around launches made here directly (no L2 flush, as in the first two). Prints each median and spread and the
CUPTI/events ratio; then what flushing the L2 cache before each launch changes (measure_runtime's default).
"""

from __future__ import annotations

import argparse
import statistics
import sys

import util
from util import measure_runtime
from util.kernel2 import grid, variant7
from util.timing import problem


def torch_event_times(size: int, runs: int) -> list[float]:
    """Seconds per launch of variant7, bracketed by torch.cuda.Event (independent of util's timers)."""
    import torch

    p = problem(size, size, size)
    blocks = grid(32)((size, size), 1024)
    variant7[blocks, 1024](p.a, p.b, p.c, size, size, size, 32)  # warm-up (compiled already)
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        variant7[blocks, 1024](p.a, p.b, p.c, size, size, size, 32)
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
    kw = dict(nthreads=32 * 32, nblocks_fn=grid(32), kernel_args=[32],
              m=args.size, n=args.size, k=args.size, runs=args.runs)
    cupti = measure_runtime(variant7, timer="cupti", flush=False, **kw)
    events = measure_runtime(variant7, timer="events", flush=False, **kw)
    flushed = measure_runtime(variant7, timer="events", flush=True, **kw)
    independent = torch_event_times(args.size, args.runs)
    if not (cupti.correct and events.correct and flushed.correct):
        print("variant7 is WRONG on this device: no timing comparison")
        return 1
    rows = [("measure_runtime, CUPTI", cupti.times), ("measure_runtime, numba events", events.times),
            ("torch.cuda.Event, launched here", independent),
            ("measure_runtime, events, L2 flushed", flushed.times)]
    print(f"\n{'timer':34s} {'median ms':>10s} {'min ms':>8s} {'max ms':>8s} {'spread %':>9s}")
    for name, t in rows:
        med = statistics.median(t)
        print(f"{name:34s} {med * 1e3:10.3f} {min(t) * 1e3:8.3f} {max(t) * 1e3:8.3f} "
              f"{100 * (max(t) - min(t)) / med:9.2f}")
    ratio = cupti.median / statistics.median(independent)
    print(f"\nCUPTI / independent CUDA events = {ratio:.4f} ({100 * abs(ratio - 1):.2f}% apart; they agree when < 2%)")
    print(f"L2 flushed / not flushed (numba events) = {flushed.median / events.median:.4f}")
    return 0 if abs(ratio - 1) < 0.02 else 1


if __name__ == "__main__":
    sys.exit(main())
