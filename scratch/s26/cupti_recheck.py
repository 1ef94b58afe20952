"""numba / C and the A/A control on short calls, timed with events and with CUPTI spans, 41 runs each, one process.
Run from the project root: PYTHONPATH=. python scratch/s26/cupti_recheck.py"""
import sys
import time

import util.sgemm as S
from util.bench import Registry

SHAPES = [(4096, 1, 4096), (1, 7, 131072), (71, 271, 501), (381, 104, 468), (203, 1635, 237), (27, 1138, 448),
          (387, 2, 904), (2, 5490, 1056), (1, 4096, 4096), (512, 512, 512), (2048, 2048, 2048)]
RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 41
t0 = time.perf_counter()
for s in SHAPES:
    reg = Registry()
    S.register(reg, tune=True)
    S.register(reg, "16 any shape, again", None, tune=True)
    out = []
    for timer in ("events", "cupti", "events", "cupti"):
        tab = reg.run(*s, runs=RUNS, shuffle=True, hide_launch=True, timer=timer, verbose=False)
        assert all(r.correct for r in tab.results), s
        out.append(f"{timer} C {tab['16 C'].median * 1e6:7.2f} us numba/C {tab.twin_ratio('16 any shape'):.3f} "
                   f"A/A {tab.ratio('16 any shape, again', '16 any shape'):.3f}")
    p = S.tuned(*s) or S.plan(*s)
    print(f"[{time.perf_counter() - t0:5.0f} s] {s} {p.tile.name} x {p.splits}: " + " | ".join(out), flush=True)
