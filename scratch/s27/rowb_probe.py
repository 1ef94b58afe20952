"""B's shifted 4-byte loads spread along rows (Plan.row_b: a warp's load reads 32 adjacent floats of a row) against
whole pieces of 4 columns (the kernels before it), numba and the C twin, on the rule's plan, cuBLAS beside; one
interleaved run a shape, the launch hidden, every run verified.
Run from the project root: PYTHONPATH=. python scratch/s27/rowb_probe.py RUNS COUNT SEED [M,N,K ...]
(COUNT random shapes, drawn as the notebook's, whose plan spreads B along rows, after the shapes given)."""
import math
import sys

import numpy as np

import util.sgemm as S
from util.bench import Registry

RUNS, COUNT, SEED = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
SHAPES = [tuple(int(x) for x in s.split(",")) for s in sys.argv[4:]]
rng = np.random.default_rng(SEED)
while COUNT > 0:
    s = tuple(int(x) for x in 2 ** rng.uniform([6, 6, 7], [13, 13, 14]))
    if math.prod(s) <= 2**33 and S.plan(*s).row_b:
        SHAPES.append(s)
        COUNT -= 1
_rule = S.Plan.row_b
ROWS = {"on": True}
S.Plan.row_b = property(lambda self: ROWS["on"] and _rule.fget(self))
_cache = {}


def call(p, compiler, rows):
    key = (id(p), compiler, rows)
    if key not in _cache:
        ROWS["on"] = rows
        try:
            _cache[key] = S.prepare(p.a, p.b, p.c, compiler=compiler)
            assert _cache[key].plan.row_b == rows
        finally:
            ROWS["on"] = True
    return _cache[key]()


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs))


numba_r, c_r = [], []
for s in SHAPES:
    p = S.plan(*s)
    reg = Registry()
    kern, twin = S.numba_kernel(True, True, False, simulator=False), S.c_twin(True, True, False)
    for name, rows in (("pieces", False), ("rows", True)):
        reg.numba(name, kern, S.TILE.NT, lambda mn, nt: 1, flat=True, sig=S.numba_sig(),
                  jit_options={"launch_bounds": (S.TILE.NT, S.TILE.MINB)}, launch=lambda q, r=rows: call(q, "numba", r))
        reg.cuda_c(f"C {name}", twin, S.TILE.NT, lambda mn, nt: 1, twin_of=name,
                   launch=lambda q, r=rows: call(q, "cuda_c", r))
    reg.cublas()
    tab = reg.run(*s, runs=RUNS, shuffle=True, hide_launch=True, verbose=False)
    wrong = [r.name for r in tab.results if not r.correct]
    assert not wrong, (s, wrong)
    numba_r.append(tab.ratio("rows", "pieces"))
    c_r.append(tab.ratio("C rows", "C pieces"))
    print(f"{s} {p.tile.name} x {p.splits} {p.variant}: rows / pieces numba {numba_r[-1]:.3f} C {c_r[-1]:.3f}; "
          f"% of cuBLAS numba {tab.percent_of_baseline('pieces'):.1f} -> {tab.percent_of_baseline('rows'):.1f}, "
          f"C {tab.percent_of_baseline('C pieces'):.1f} -> {tab.percent_of_baseline('C rows'):.1f}; numba / C "
          f"{tab.ratio('pieces', 'C pieces'):.3f} -> {tab.ratio('rows', 'C rows'):.3f}", flush=True)
    _cache.clear()
print(f"rows / pieces over {len(SHAPES)} shapes: numba geomean {geomean(numba_r):.3f} ({min(numba_r):.3f}.."
      f"{max(numba_r):.3f}), C {geomean(c_r):.3f} ({min(c_r):.3f}..{max(c_r):.3f})")
