"""Prototype: the k-loop's time by the most blocks an SM runs (its last round's blocks below MINB cost
max(r, sat * MINB) blocks' worth), against whole waves."""
import json, math, sys
from dataclasses import dataclass, replace
import util
from util import sgemm as S
from util.sgemm import cdiv
import sgemm_rule_fit as F

@dataclass(frozen=True)
class M2(S.CostModel):
    saturation: float = 1.0
    def estimate(self, m, n, k, t, s, sms, vc):
        step = self.tile_seconds * (t.BM * t.BN * t.MINB * t.BK) / (128 * 128 * 2 * 8) / t.speed
        tiles = cdiv(m, t.BM) * cdiv(n, t.BN)
        per_sm = cdiv(tiles * s, sms)
        full, last = divmod(per_sm, t.MINB)
        rounds = full + (last > 0)
        blocks = full * t.MINB + (max(last, self.saturation * t.MINB) if last else 0)
        est = (cdiv(cdiv(k, t.BK), s) + self.block_overhead_tiles) * step * blocks / t.MINB + rounds * self.wave_cost(t, vc)
        est += tiles * (t.BM + t.BN) * cdiv(k, t.BK) * t.BK * 4 / self.operand_bytes_per_s
        if s > 1:
            est += (2 * s + 1) * m * n * 4 / self.workspace_bytes_per_s + self.second_launch_s
        return est

S.COST = M2(**{f: getattr(S.COST, f) for f in S.COST.__dataclass_fields__})
F.GRID = {**F.GRID, "saturation": (0.25, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)}
rec_path = sys.argv[1] if len(sys.argv) > 1 else 'util/sgemm_rule_fit.json'
d = json.load(open(rec_path)); rec, sms = d['shapes'], d['sms']
print(F.report("COST structure M2 sat=1", F.losses(S, S.COST, rec, sms)))
fitted = F.fit(S, rec, sms)
print("fitted:", fitted)
print(F.report("fitted", F.losses(S, fitted, rec, sms)))
halves = (rec[0::2], rec[1::2])
for i, (train, test) in enumerate((halves, halves[::-1])):
    held = F.fit(S, train, sms)
    print(F.report(f"half {i+1} -> other", F.losses(S, held, test, sms)), held.saturation)
