"""Where numba / C moves on short split-K calls: each timed call's span (hold kernel's end to last kernel's end) cut
into the lead (hold's end to the first kernel's start), the kernels' own durations, and the gaps between them.
Several repetitions of one interleaved run a shape in one process; CUPTI through util.timing's "cupti" timer.
With a third argument "flush": each repetition timed with the L2 flushed before each call and then without.
Run from the project root: PYTHONPATH=. python scratch/s26/cupti_parts.py REPS RUNS [flush]"""
import statistics
import sys
import time

import util.sgemm as S
import util.timing as T
from util.bench import Registry

SHAPES = [(71, 271, 501), (381, 104, 468), (387, 2, 904), (27, 1138, 448), (1, 7, 131072), (512, 512, 512)]
REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 6
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 21
FLUSHES = (True, False) if sys.argv[3:] == ["flush"] else (True,)
parts: dict[str, list[tuple[float, float, float]]] = {}
original = T.cupti_times


def recording(spans, order, signatures, hold=None):
    """cupti_times, and each launch's (lead, kernels, gaps) kept in ``parts``."""
    at = 0
    for name, tries in order:
        sig = signatures[name]
        for _ in range(tries):
            while spans[at][0] != hold:
                at += 1
            ks = spans[at + 1:at + 1 + len(sig)]
            lead = ks[0][1] - spans[at][2]
            kern = sum(e - s for _, s, e in ks)
            gaps = (ks[-1][2] - ks[0][1]) - kern
            at += 1 + len(sig)
        parts.setdefault(name, []).append((lead, kern, gaps))
    return original(spans, order, signatures, hold)


T.cupti_times = recording
t0 = time.perf_counter()
for s in SHAPES:
    reg = Registry()
    S.register(reg, tune=True)
    S.register(reg, "16 any shape, again", None, tune=True)
    p = S.tuned(*s) or S.plan(*s)
    for rep, flush in ((r, f) for r in range(REPS) for f in FLUSHES):
        parts.clear()
        tab = reg.run(*s, runs=RUNS, shuffle=True, hide_launch=True, timer="cupti", flush=flush, verbose=False)
        assert all(r.correct for r in tab.results), s
        med = {n: [statistics.median(x[i] for x in v) * 1e6 for i in range(3)] for n, v in parts.items()}
        nb, c = med["16 any shape"], med["16 C"]
        print(f"[{time.perf_counter() - t0:5.0f} s] {s} {p.tile.name} x {p.splits} rep {rep} flush {flush:d}: numba/C "
              f"{tab.twin_ratio('16 any shape'):.3f} A/A {tab.ratio('16 any shape, again', '16 any shape'):.3f} | "
              f"lead us numba {nb[0]:.2f} C {c[0]:.2f} | kernels us numba {nb[1]:.2f} C {c[1]:.2f} | "
              f"gaps us numba {nb[2]:.2f} C {c[2]:.2f}", flush=True)
