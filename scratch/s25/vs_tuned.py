import json, re
from dataclasses import replace
from util import sgemm as S
nb = json.load(open('notebooks/sgemm_any_shape.ipynb'))
tuned = {}
for i in (15, 21):
    for o in nb['cells'][i]['outputs']:
        for line in ''.join(o.get('text', '')).splitlines():
            m = re.match(r'\[\d+/\d+ +\d+ s\] \((\d+), (\d+), (\d+)\) (\S+) x (\d+):', line)
            if m:
                tuned[tuple(map(int, m.group(1, 2, 3)))] = (m.group(4), int(m.group(5)))
OLD = replace(S.COST, workspace_bytes_per_s=3e12, wave_vc_seconds=0.5e-6,
              wave_seconds=(("128x128", 12e-6), ("64x128", 6e-6), ("64x64/2k", 2e-6)),
              partial_round=tuple((n, 1.0) for n, _ in S.COST.partial_round))
new = {s: (p.tile.name, p.splits) for s in tuned for p in [S.plan(*s, sms=132)]}
S.COST = OLD; S.plan.cache_clear()
old = {s: (p.tile.name, p.splits) for s in tuned for p in [S.plan(*s, sms=132)]}
tiled = [s for s in tuned if S.plan(*s, sms=132).tile in S.TILES]
print(len(tuned), 'shapes parsed;', len(tiled), 'on TILES')
d_old = [s for s in tiled if old[s] != tuned[s]]
print('tuning took another plan than the old rule on', len(d_old), '; the new rule matches tuning on', sum(new[s] == tuned[s] for s in d_old), 'of them')
print('new rule differs from tuning on', sum(new[s] != tuned[s] for s in tiled), 'of', len(tiled), '(old:', len(d_old), ')')
for s in d_old: print(s, 'old', old[s], 'tuned', tuned[s], 'new', new[s])
