import math, numpy as np
from dataclasses import replace
from util import sgemm as S
import json, re
nb = json.load(open('notebooks/sgemm_any_shape.ipynb'))
params = ''.join(c['source'] if isinstance(c['source'], str) else ''.join(c['source']) for c in nb['cells'] if 'parameters' in c.get('metadata', {}).get('tags', []))
ns = {}
exec("import math\n" + params.replace("SIM = util.SIMULATED", "SIM = False"), ns)
study = [(mn, mn, k) for mn in ns['GRID_MN'] for k in ns['GRID_K']] + [tuple(s) for s in ns['MORE']]
rng = np.random.default_rng(2026); R = []
while len(R) < 48:
    m, n, k = (int(x) for x in 2 ** rng.uniform([6, 6, 7], [13, 13, 14]))
    if m * n * k <= 2**33: R.append((m, n, k))
fr = np.random.default_rng(2027); F = []
while len(F) < 24:
    few, big, k = (int(x) for x in 2 ** fr.uniform([0, 8, 8], [6, 14, 14]))
    sh = (few, big, k) if len(F) % 2 == 0 else (big, few, k)
    if math.prod(sh) <= 2**33: F.append(sh)
shapes = study + R + F
OLD = replace(S.COST, workspace_bytes_per_s=3e12, wave_vc_seconds=0.5e-6,
              wave_seconds=(("128x128", 12e-6), ("64x128", 6e-6), ("64x64/2k", 2e-6)),
              partial_round=tuple((n, 1.0) for n, _ in S.COST.partial_round))
def keys():
    out = set(); plans = {}
    for s in shapes:
        ps = [S.plan(*s, sms=132)]
        if isinstance(ps[0].tile, S.Tile):
            ps += S.choices(*s, sms=132)
        plans[s] = ps[0]
        for p in ps:
            if isinstance(p.tile, S.Tile):
                out.add((p.tile.name, p.va, p.vb, p.wide, p.shift_b, p.vc, p.sc, p.one_loop))
    return out, plans
new, pn = keys()
S.COST = OLD; S.plan.cache_clear()
old, po = keys()
print(len(shapes), 'shapes; variants new', len(new), 'old', len(old), 'only new', len(new - old), 'only old', len(old - new))
print(sorted(new - old))
print('plans differ on', sum((pn[s].tile, pn[s].splits) != (po[s].tile, po[s].splits) for s in shapes))
for s in shapes:
    if (pn[s].tile, pn[s].splits) != (po[s].tile, po[s].splits):
        print(s, 'study' if s in study else 'random' if s in R else 'few', po[s].tile.name, po[s].splits, '->', pn[s].tile.name, pn[s].splits)
