"""The numba PTX of every tiled variant the order search covers (32-bit two-loop, one-loop, 64-bit), hashed, with
one FMA order: run in trees of different code to see which variants compile to the same program.
NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=. python scratch/ptx_hash.py [sass] ORDER [tile names ...] > out"""
import hashlib
import re
import sys

import util  # noqa: F401
from util import sgemm as S
from util.compile import cubin_from_ptx, numba_ptx
from util.sass import analyze

SHAPES = {(True, True): (4096, 4096, 2048), (True, False): (4096, 4095, 2048), (False, True): (4096, 4096, 2047),
          (False, False): (4095, 4095, 2047)}
SASS = sys.argv[1] == 'sass'  # hash the sm_90 machine code instead
args = sys.argv[2:] if SASS else sys.argv[1:]
order, names = args[0], args[1:]


def norm(ptx):
    """Without comments and with numba's mangled names (unique ids) replaced by one token."""
    lines = [ln for ln in ptx.splitlines() if not ln.lstrip().startswith("//")]
    return re.sub(r"_Z[\w$]+", "NAME", "\n".join(lines))

for t in S.TILES:
    if names and t.name not in names:
        continue
    for wide, one_loop in ((False, False), (False, True), (True, False)):
        for (va, vb), shape in SHAPES.items():
            first = S.plan(*shape, tile=t, splits=1, wide=wide, one_loop=one_loop)
            for sh in sorted({first.shift_b, False}):
                for vc in sorted({first.vc, False}):
                    k = S.numba_kernel(va, vb, wide, t, simulator=False, shift_b=sh, vc=vc, sc=first.sc,
                                       one_loop=one_loop, order=order)
                    ptx = numba_ptx(k, S.numba_sig(), launch_bounds=(t.NT, t.MINB))
                    key = S.ffma_order_key("numba", t, va, vb, wide, sh, vc, first.sc, one_loop)
                    text = (" ".join(i.text for i in analyze(cubin_from_ptx(ptx)).instructions) if SASS else
                            norm(ptx))
                    print(f"{key}\t{hashlib.md5(text.encode()).hexdigest()[:10]}", flush=True)
