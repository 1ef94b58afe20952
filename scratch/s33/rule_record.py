"""Three questions to the rule's record (util/sgemm_rule_fit.json, H200; offline, from its timed choices):
1. tune=True times the rule's first TUNE_CHOICES picks: % of cuBLAS and shapes below 90% when the fastest of the
   first c picks is taken, c = 1..8 and all, over all shapes, those with n or k not a multiple of 4, and the others;
2. within the tile the rule picks, how often it takes more or fewer slices than that tile's fastest timed count,
   and what that costs (time of its pick / that tile's fastest);
3. a minimum slice depth (k-steps a slice) for every tile or for the 32 x 32 tile only: the loss against the
   fastest timed choice (both halves of the record), % of cuBLAS, shapes below 90%.
Run from the project root: NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=.:scripts python scratch/s33/rule_record.py"""
import json
import math

from util import sgemm as S
from util.sgemm import cdiv

import sgemm_rule_fit as fit

data = json.loads(fit.RECORD.read_text())
sms, shapes = data["sms"], data["shapes"]
by_name = {t.name: t for t in S.TILES}


def geo(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs))


def parse(key):
    name, s = key.split(" s=")
    return by_name[name], int(s)


def shallow(key, k, kmin, only):
    """Whether timed choice ``key`` cuts K into slices of fewer than kmin k-steps on tile ``only`` (None: any)."""
    t, s = parse(key)
    return s > 1 and cdiv(cdiv(k, t.BK), s) * t.BK < kmin and only in (None, t.name)


def ranked(e, kmin=0, only=None):
    """The entry's timed choices, the rule's cheapest first (sgemm_rule_fit.ranked), without the ``shallow`` ones."""
    us = {key: t for key, t in e["us"].items() if not shallow(key, e["shape"][2], kmin, only)}
    return fit.ranked(S, S.COST, {**e, "us": us}, sms)


print("1. the fastest of the rule's first c picks")
for label, keep in (("all", lambda e: True), ("n or k not a multiple of 4", lambda e: e["shape"][1] % 4 or e["shape"][2] % 4),
                    ("n and k multiples of 4", lambda e: not (e["shape"][1] % 4 or e["shape"][2] % 4))):
    es = [e for e in shapes if keep(e)]
    for c in (1, 2, 3, 4, 5, 6, 8, None):
        pct = [100 * e["cublas_us"] / min(e["us"][x] for x in ranked(e)[:c]) for e in es]
        print(f"  {label} ({len(es)}), c = {c or 'all'}: {geo(pct):.1f}% of cuBLAS, below 90% on {sum(p < 90 for p in pct)}")

print("2. the rule's slices against its tile's fastest timed count")
rows = []
for e in shapes:
    pick = ranked(e)[0]
    t, s = parse(pick)
    same = {key: us for key, us in e["us"].items() if parse(key)[0] == t}
    best = min(same, key=same.get)
    rows.append((t.name, s, parse(best)[1], e["us"][pick] / same[best], tuple(e["shape"])))
for t in S.TILES:
    r = [x for x in rows if x[0] == t.name]
    over, under = [x for x in r if x[1] > x[2]], [x for x in r if x[1] < x[2]]
    print(f"  {t.name}: picked on {len(r)}, loss within the tile {geo([x[3] for x in r]):.3f}; more slices than its "
          f"fastest on {len(over)} (loss {geo([x[3] for x in over]) if over else 1:.3f}), fewer on {len(under)} "
          f"(loss {geo([x[3] for x in under]) if under else 1:.3f}); worst: " +
          ", ".join(f"{'x'.join(map(str, x[4]))} {x[1]} for {x[2]} {x[3]:.3f}" for x in sorted(r, key=lambda x: -x[3])[:4]))

print("3. a minimum slice depth")
for only in (None, "32x32/2k"):
    for kmin in (0, 16, 32, 48, 64, 96, 128):
        picks = [ranked(e, kmin, only)[0] for e in shapes]
        ls = [e["us"][p] / min(e["us"].values()) for e, p in zip(shapes, picks)]
        pct = [100 * e["cublas_us"] / e["us"][p] for e, p in zip(shapes, picks)]
        print(f"  {only or 'every tile'}, slices of at least {kmin} k-steps: loss {geo(ls):.4f} (halves "
              f"{geo(ls[0::2]):.4f}, {geo(ls[1::2]):.4f}), worst {max(ls):.3f}; {geo(pct):.2f}% of cuBLAS, below 90% on "
              f"{sum(p < 90 for p in pct)}")
