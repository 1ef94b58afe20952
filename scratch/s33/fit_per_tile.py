"""The rule's fit (scripts/sgemm_rule_fit.py) with more freedom, offline on its record: ``partial``, the last
partial round's fraction (CostModel.partial_round) fitted per tile instead of one for all (candidates 0.25..1.0);
``over``, a block's fixed cost in tiles (block_overhead_tiles) per tile. Prints the fitted constants, the loss
against the fastest timed choice on the whole record and fitted on each half, tested on the other (as the script's
own report), then for the whole-record fit: % of cuBLAS of its picks and shapes below 90% (all; n or k not a
multiple of 4), and on the 32 x 32 tile how often it picks more slices than that tile's fastest timed count.
Run from the project root (a few minutes each):
NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=.:scripts python scratch/s33/fit_per_tile.py partial [over]"""
import dataclasses
import functools
import json
import math
import sys

from util import sgemm as S

import sgemm_rule_fit as F

PER_TILE_PARTIAL = "partial" in sys.argv[1:]
PER_TILE_OVERHEAD = "over" in sys.argv[1:]
PARTIAL = (0.25, 0.375, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
OVERHEAD = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)


@dataclasses.dataclass(frozen=True)
class PerTile(S.CostModel):
    """S.CostModel with a block's fixed cost per tile (``overhead``: (tile name, tiles)); empty: the shared one.
    Each tile's estimate is S.CostModel's, with that tile's block_overhead_tiles."""
    overhead: tuple = ()

    @functools.cached_property
    def _by_tile(self):
        shared = {f.name: getattr(self, f.name) for f in dataclasses.fields(S.CostModel)}
        return {name: S.CostModel(**{**shared, "block_overhead_tiles": tiles}) for name, tiles in self.overhead}

    def estimate(self, m, n, k, t, s, sms, vc):
        model = self._by_tile[t.name] if self.overhead else super()
        return model.estimate(m, n, k, t, s, sms, vc)


def grid(S):
    g = dict(F.GRID)
    if PER_TILE_PARTIAL:
        del g["partial_round"]
        g.update({f"partial {t.name}": PARTIAL for t in S.TILES})
    if PER_TILE_OVERHEAD:
        del g["block_overhead_tiles"]
        g.update({f"over {t.name}": OVERHEAD for t in S.TILES})
    return {**g, **{f"wave {t.name}": F.WAVE_SECONDS for t in S.TILES}}


def model_of(S, v):
    fields = {f.name: getattr(S.COST, f.name) for f in dataclasses.fields(S.CostModel)}
    fields.update({k: x for k, x in v.items() if k in fields and k != "partial_round"})
    fields["wave_seconds"] = tuple((t.name, v[f"wave {t.name}"]) for t in S.TILES)
    fields["partial_round"] = tuple((t.name, v[f"partial {t.name}"] if PER_TILE_PARTIAL else v["partial_round"])
                                    for t in S.TILES)
    if PER_TILE_OVERHEAD:
        fields["overhead"] = tuple((t.name, v[f"over {t.name}"]) for t in S.TILES)
    return PerTile(**fields)


def geo(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs))


F.grid, F.model_of = grid, model_of  # the script's fit and losses, over these constants
data = json.loads(F.RECORD.read_text())
record, sms = data["shapes"], data["sms"]
fitted = F.fit(S, record, sms)
print(sys.argv[1:], fitted)
print(F.report("fitted", F.losses(S, fitted, record, sms)))
halves = (record[0::2], record[1::2])
for i, (train, test) in enumerate((halves, halves[::-1])):
    print(F.report(f"fitted on half {i + 1}, tested on the other", F.losses(S, F.fit(S, train, sms), test, sms)))
for label, model in (("util.sgemm.COST", S.COST), ("fitted", fitted)):
    picks = [F.pick(S, model, e, sms) for e in record]
    pct = [100 * e["cublas_us"] / e["us"][p] for e, p in zip(record, picks)]
    unaligned = [x for e, x in zip(record, pct) if e["shape"][1] % 4 or e["shape"][2] % 4]
    micro = [(e, p) for e, p in zip(record, picks) if p.startswith("32x32")]
    over = [1 for e, p in micro if int(p.split(" s=")[1]) > int(min(
        (key for key in e["us"] if key.startswith("32x32")), key=e["us"].get).split(" s=")[1])]
    print(f"{label}: picks {geo(pct):.2f}% of cuBLAS, below 90% on {sum(x < 90 for x in pct)} (n or k not a multiple "
          f"of 4: {sum(x < 90 for x in unaligned)} of {len(unaligned)}); the 32 x 32 tile picked on {len(micro)}, "
          f"with more slices than its fastest count on {len(over)}")
