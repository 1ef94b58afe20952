"""The rule's picks on util/sgemm_rule_fit.json, % of cuBLAS, by alignment: the rule before this entry (its constants
as util.sgemm had them, no 4-byte factors), the constants fitted again with the factors held at 1.0, and
util.sgemm.COST (fitted with the factors). Offline: NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=. python scratch/s29/record_check.py"""
import dataclasses
import importlib.util
import json
import math
from pathlib import Path

from util import sgemm as S

root = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("sgemm_rule_fit", root / "scripts" / "sgemm_rule_fit.py")
F = importlib.util.module_from_spec(spec)
spec.loader.exec_module(F)
data = json.loads(F.RECORD.read_text())
record, sms = data["shapes"], data["sms"]
BEFORE = dataclasses.replace(S.COST, block_overhead_tiles=0.0, workspace_bytes_per_s=6e12, second_launch_s=4e-6,
                             operand_bytes_per_s=16e12, wave_vc_seconds=0.0,
                             wave_seconds=(("128x128", 8e-6), ("64x128", 4e-6), ("64x64/2k", 0.5e-6)),
                             partial_round=tuple((t.name, 0.8) for t in S.TILES),
                             loads4_a=tuple((t.name, 1.0) for t in S.TILES),
                             loads4_b=tuple((t.name, 1.0) for t in S.TILES))
F.LOADS4 = (1.0,)  # the fit with the factors held at 1.0
NO_FACTORS = F.fit(S, record, sms)


def best(e):
    return 100 * e["cublas_us"] / min(e["us"].values())


def line(label, model, part):
    p = [best(e) / loss for e, loss in zip(part, F.losses(S, model, part, sms))]  # the pick's time: loss x fastest
    g = math.exp(sum(map(math.log, p)) / len(p))
    return f"{label}: geomean {g:.1f}% of cuBLAS, below 90% on {sum(x < 90 for x in p)} of {len(p)}"


print("record:", data["device"], data["command"], len(record), "shapes")
print("fitted with the factors held at 1.0:", NO_FACTORS)
for name, part in (("n and k multiples of 4", [e for e in record if e["shape"][1] % 4 == 0 and e["shape"][2] % 4 == 0]),
                   ("n or k not a multiple of 4", [e for e in record if e["shape"][1] % 4 or e["shape"][2] % 4])):
    print(f"{name} ({len(part)} shapes)")
    for label, model in (("  the rule before", BEFORE), ("  refit, no factors", NO_FACTORS),
                         ("  refit with factors (COST)", S.COST)):
        print(line(label, model, part), f"loss {F.score(F.losses(S, model, part, sms)):.4f}")
    p = [best(e) for e in part]
    print(f"  the fastest timed choice: geomean {math.exp(sum(map(math.log, p)) / len(p)):.1f}%, below 90% on "
          f"{sum(x < 90 for x in p)} of {len(p)}")
