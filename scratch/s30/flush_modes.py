"""Does the L2 flush's dirty lines bring the longer waits of short calls? Each shape's twins (and an A/A control) are
timed with the L2 flushed by writing a buffer twice its size (util.timing's flush: it leaves L2 full of written
lines), flushed by reading such a buffer (it leaves clean lines), and not flushed; CUPTI through util.timing's
"cupti" timer, the GPU held while the host enqueues each call. Each call's span is cut into the wait (span less the
kernels' own durations) and the kernels; per mode: numba / C by the span and by the kernels, the median waits, and
how many calls of each twin waited more than 0.5 us beyond that mode's shortest wait.
Run from the project root: PYTHONPATH=. python scratch/s30/flush_modes.py REPS RUNS"""
import statistics
import sys
import time

import torch

import util.sgemm as S
import util.timing as T
from util.bench import Registry

SHAPES = [(71, 271, 501), (381, 104, 468), (387, 2, 904), (27, 1138, 448), (1, 7, 131072), (512, 512, 512),
          (4096, 1, 4096), (1, 4096, 4096), (1, 8192, 1024)]
REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 21


class ReadFlush:
    """Evicts L2 by reading a buffer of twice its size (a sum): L2 is left holding clean lines."""

    def __init__(self) -> None:
        size = 2 * torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
        self._buffer = torch.zeros(max(size, 1 << 20) // 8, dtype=torch.int64, device="cuda")
        self._out = torch.empty((), dtype=torch.int64, device="cuda")

    def __call__(self) -> None:
        torch.sum(self._buffer, dim=0, out=self._out)


WRITE = T._flush_l2
MODES = {"write": (True, WRITE), "read": (True, ReadFlush()), "none": (False, WRITE)}
calls: dict[str, list[tuple[float, float]]] = {}  # name -> (wait, kernels) a timed call, seconds
original = T.cupti_times


def recording(spans, order, signatures, hold=None):
    """cupti_times, and each call's (wait, kernels) kept in ``calls``."""
    got = original(spans, order, signatures, hold)
    for name, v in got.items():
        calls.setdefault(name, []).extend((span - own, own) for span, own in v)
    return got


T.cupti_times = recording
t0 = time.perf_counter()
tally = {m: {"numba": [0, 0], "C": [0, 0]} for m in MODES}  # mode -> twin -> [long waits, calls]
for s in SHAPES:
    reg = Registry()
    S.register(reg, tune=True)
    S.register(reg, "16 any shape, again", None, tune=True)
    p = S.tuned(*s) or S.plan(*s)
    for rep in range(REPS):
        for mode, (flush, flusher) in MODES.items():
            T._flush_l2 = flusher
            calls.clear()
            tab = reg.run(*s, runs=RUNS, shuffle=True, hide_launch=True, timer="cupti", flush=flush, verbose=False)
            assert all(r.correct for r in tab.results), s
            floor = min(w for v in calls.values() for w, _ in v)
            med = {}
            for name, twin in (("16 any shape", "numba"), ("16 C", "C")):
                waits = [w for w, _ in calls[name]]
                tally[mode][twin][0] += sum(w > floor + 0.5e-6 for w in waits)
                tally[mode][twin][1] += len(waits)
                med[twin] = (statistics.median(waits) * 1e6, statistics.median(k for _, k in calls[name]) * 1e6)
            own = med["numba"][1] / med["C"][1]
            print(f"[{time.perf_counter() - t0:5.0f} s] {s} {p.tile.name} x {p.splits} rep {rep} {mode:5}: numba/C "
                  f"{tab.twin_ratio('16 any shape'):.3f} (kernels {own:.3f}) A/A "
                  f"{tab.ratio('16 any shape, again', '16 any shape'):.3f} | waits us numba {med['numba'][0]:.2f} "
                  f"C {med['C'][0]:.2f} | kernels us numba {med['numba'][1]:.2f} C {med['C'][1]:.2f}", flush=True)
T._flush_l2 = WRITE
for mode, t in tally.items():
    print(f"{mode:5}: calls waiting > 0.5 us beyond the mode's shortest wait: numba {t['numba'][0]} of "
          f"{t['numba'][1]}, C {t['C'][0]} of {t['C'][1]}")
