"""What the 32 x 32 tile buys on the rule's record (util/sgemm_rule_fit.json, timed on the H200): per shape, the time
of util.sgemm.COST's choice among every timed (tile, slices) over the time of the choice the rule before the tile
(its constants as they were, the three tiles) takes among the three tiles' timed choices, both from the same
interleaved run; and each as % of cuBLAS; then the shapes with n or k not a multiple of 4 below 90% of cuBLAS at the
rule's picks and at the fastest timed choice.
Run from the project root: NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=.:scripts python scratch/s32/rule_gain.py"""
import dataclasses
import json
import math

import util  # noqa: F401
from util import sgemm as S

import sgemm_rule_fit as fit

BEFORE = dataclasses.replace(S.COST, second_launch_s=4e-6, operand_bytes_per_s=16e12,
                             wave_seconds=(("128x128", 8e-6), ("64x128", 4e-6), ("64x64/2k", 0.5e-6)),
                             partial_round=(("128x128", 0.8), ("64x128", 0.8), ("64x64/2k", 0.8)))


def geo(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs))


data = json.loads(fit.RECORD.read_text())
sms = data["sms"]
ratios, now_pct, before_pct, took = [], [], [], 0
for e in data["shapes"]:
    (m, n, k), us = e["shape"], e["us"]
    now = fit.pick(S, S.COST, e, sms)
    before = fit.pick(S, BEFORE, e, sms, S.TILES[:3])
    took += now.startswith("32x32")
    ratios.append(us[before] / us[now])
    now_pct.append(100 * e["cublas_us"] / us[now])
    before_pct.append(100 * e["cublas_us"] / us[before])
    if now != before and abs(math.log(us[before] / us[now])) > 0.03:
        print(f"{m}x{n}x{k}: {before} {us[before]:.1f} us ({before_pct[-1]:.1f}%) -> {now} {us[now]:.1f} us "
              f"({now_pct[-1]:.1f}%)")

print(f"{len(ratios)} shapes; the rule takes 32x32/2k on {took}; speed-up of the rule's choice (before / now): geomean "
      f"{geo(ratios):.3f}, min {min(ratios):.3f}, max {max(ratios):.3f}; % of cuBLAS geomean {geo(before_pct):.1f} -> "
      f"{geo(now_pct):.1f}; at >= 90%: {sum(x >= 90 for x in before_pct)} -> {sum(x >= 90 for x in now_pct)}")
unaligned = [e for e in data["shapes"] if e["shape"][1] % 4 or e["shape"][2] % 4]
at_rule = sum(100 * e["cublas_us"] / e["us"][fit.pick(S, S.COST, e, sms)] < 90 for e in unaligned)
at_best = sum(100 * e["cublas_us"] / min(e["us"].values()) < 90 for e in unaligned)
print(f"n or k not a multiple of 4: {len(unaligned)} shapes, below 90% of cuBLAS at the rule's picks {at_rule}, at the "
      f"fastest timed choice {at_best}")
