"""Static (sm_90): a tiled variant, numba against its twin: instructions by region (split at each barrier), loops
(backward branches: start, length), registers. NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=. python scratch/tile_cmp.py
TILE VA VB [--shift] [--vc] [--sc] [--two] [--dump]"""
import re
import sys

import util  # noqa: F401
from util import sgemm as S
from util.compile import cubin_from_ptx, numba_ptx
from util.sass import analyze

tile = next(t for t in S.TILES if t.name == sys.argv[1])
va, vb = bool(int(sys.argv[2])), bool(int(sys.argv[3]))
kw = dict(shift_b="--shift" in sys.argv, vc="--vc" in sys.argv, sc="--sc" in sys.argv, one_loop="--two" not in sys.argv)
nb = analyze(cubin_from_ptx(numba_ptx(S.numba_kernel(va, vb, False, tile, simulator=False, **kw), S.numba_sig(),
                                      launch_bounds=(tile.NT, tile.MINB))))
tw = analyze(S.c_twin(va, vb, False, tile, **kw).cubin("sm_90"), "gemm_c")


def regions(r):
    out, n = [], 0
    for i in r.instructions:
        if i.opcode.startswith("BAR"):
            out.append(n)
            n = 0
        else:
            n += 1
    return out + [n]


def loops(r):
    found = []
    for line in r.sass.splitlines():
        m = re.search(r"/\*([0-9a-f]{4,})\*/.*\bBRA\b.*?0x([0-9a-f]+)", line)
        if m and int(m.group(2), 16) < int(m.group(1), 16):
            found.append((int(m.group(2), 16) // 16, (int(m.group(1), 16) - int(m.group(2), 16)) // 16 + 1))
    return found


for label, r in (("numba", nb), ("twin", tw)):
    print(f"{label:6s} r{r.registers} {len(r.instructions)} instr; regions {regions(r)}; loops (start, len) "
          f"{loops(r)}; {r.spills}")
if "--dump" in sys.argv:
    open("/tmp/tile_numba.txt", "w").write(nb.sass)
    open("/tmp/tile_twin.txt", "w").write(tw.sass)
