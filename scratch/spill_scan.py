"""Static (sm_90): for every numba variant the order search covers (32-bit two-loop, and one-loop) and every FMA
order: spills and hot-loop local memory. NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=. python scratch/spill_scan.py [part npart]"""
import sys, time
import util  # noqa: F401
from util import sgemm as S
from util.compile import cubin_from_ptx, numba_ptx
from util.sass import analyze
SHAPES = {(True, True): (4096, 4096, 2048), (True, False): (4096, 4095, 2048), (False, True): (4096, 4096, 2047),
          (False, False): (4095, 4095, 2047)}
part, npart = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) > 2 else (0, 1)
WIDE = "wide" in sys.argv  # the 64-bit two-loop variants instead
import hashlib
cases = []
for one_loop in ((False,) if WIDE else (False, True)):
    for t in S.TILES:
        for (va, vb), shape in SHAPES.items():
            first = S.plan(*shape, tile=t, splits=1, wide=WIDE, one_loop=one_loop)
            for sh in {first.shift_b, False}:
                for vc in {first.vc, False}:
                    cases.append((t, va, vb, sh, vc, first.sc, one_loop))
t0 = time.time()
for i, (t, va, vb, sh, vc, sc, ol) in enumerate(cases):
    if i % npart != part:
        continue
    key = S.ffma_order_key("numba", t, va, vb, WIDE, sh, vc, sc, ol)
    out = []
    for order in S.FFMA_ORDERS:
        k = S.numba_kernel(va, vb, WIDE, t, simulator=False, shift_b=sh, vc=vc, sc=sc, one_loop=ol, order=order)
        cub = cubin_from_ptx(numba_ptx(k, S.numba_sig(), launch_bounds=(t.NT, t.MINB)))
        r = analyze(cub, ffma_per_iteration=t.ffma)
        h = hashlib.md5(' '.join(i.text for i in r.instructions).encode()).hexdigest()[:6]
        ldl = sum(n for x, n in r.hot_loop.opcodes.items() if x.startswith(("LDL", "STL")))
        out.append(f"{order} {r.spills} L{ldl} {h}")
    print(f"[{time.time()-t0:4.0f}s] {key}: " + " | ".join(out), flush=True)
