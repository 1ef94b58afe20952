"""Offline: the rule before (whole waves, its constants) on the new record: its loss, its slice count on each tile
against the fastest of that tile, by alignment class; then its worst picks.

    NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=.:scripts python scratch/s25/ana.py
"""
import collections
import json
import math

from util import sgemm as S
import sgemm_rule_fit as F  # noqa: E402
from scratch.s25.rule_check import OLD

d = json.load(open(F.RECORD))
rec, sms = d["shapes"], d["sms"]
ls = F.losses(S, OLD, rec, sms)
print(F.report("the rule before, on the record", ls))
tiles = {t.name: t for t in S.TILES}


def pick(model, e):
    m, n, k = e["shape"]
    ch = [(key, tiles[key.split(" s=")[0]], int(key.split(" s=")[1])) for key in e["us"]]
    return min(ch, key=lambda c: (model.estimate(m, n, k, c[1], c[2], sms, S.stores16(c[1], n % 4 == 0, c[2], True)),
                                  S.TILES.index(c[1]), c[2]))[0]


g = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))  # noqa: E731
for name, model in (("before", OLD), ("COST", S.COST)):
    pr = [e["cublas_us"] / e["us"][pick(model, e)] for e in rec]
    print(f"{name}: picks at {100 * g(pr):.1f}% of cuBLAS, below 90: {sum(x < 0.9 for x in pr)}")
    cnt = collections.Counter()
    for e in rec:
        t, s = pick(model, e).split(" s=")
        bs = int(min((v, key) for key, v in e["us"].items() if key.startswith(t + " "))[1].split(" s=")[1])
        cnt[(t, "more" if int(s) > bs else "fewer" if int(s) < bs else "same")] += 1
    print("  slices against the fastest of the same tile:", sorted(cnt.items()))
pf = [e["cublas_us"] / min(e["us"].values()) for e in rec]
print(f"fastest timed: {100 * g(pf):.1f}% of cuBLAS, below 90: {sum(x < 0.9 for x in pf)}")
for e, loss in sorted(zip(rec, ls), key=lambda x: -x[1])[:20]:
    p, b = pick(OLD, e), min(e["us"], key=e["us"].get)
    print(f"{loss:.3f} {'x'.join(map(str, e['shape'])):18s} before {p:16s} {e['us'][p]:7.1f} us, fastest {b:16s} "
          f"{e['us'][b]:7.1f} us, cuBLAS {e['cublas_us']:7.1f} us")
unaligned = [e for e in rec if e["shape"][1] % 4 or e["shape"][2] % 4]
for name, model in (("before", OLD), ("COST", S.COST)):
    below = [e for e in unaligned if e["cublas_us"] / e["us"][pick(model, e)] < 0.9]
    lifted = [e for e in below if e["cublas_us"] / min(e["us"].values()) >= 0.9]
    print(f"{name}: {len(unaligned)} shapes with n or k not a multiple of 4, {len(below)} below 90% of cuBLAS at the "
          f"rule's pick; the fastest timed choice would lift {len(lifted)} of them")
