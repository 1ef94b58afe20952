"""The orders of a search run cut short before it wrote (scratch/ffma_order_setup32_two_loop32_h200.txt) into the
record: orders, local_bytes, and each order's time over the chosen one's (the log printed ratios, not times; the
stale median_us of those entries removed). python scratch/orders_from_log.py LOG JSON"""
import json
import re
import sys

log, path = sys.argv[1:3]
rec = json.load(open(path))
rel = rec.setdefault("relative_time", {})
for line in open(log):
    m = re.match(r"\[\s*\d+ s\] (.+?)\s{2,}\S+(?:, C \+\d)?: (.*)  -> (\w+)$", line.rstrip())
    if not m:
        continue
    key, body, chosen = m.groups()
    ratios, local = {}, {}
    for o, r, b in re.findall(r"(\w+) ([\d.]+)(?: \((\d+) B local\))?", body):
        ratios[o] = float(r)
        if b:
            local[o] = int(b)
    rec["orders"][key] = chosen
    rec["median_us"].pop(key, None)
    rel[key] = ratios
    rec.setdefault("local_bytes", {}).pop(key, None)
    if local:
        rec["local_bytes"][key] = local
    print(key, chosen, ratios, local)
rec["relative_time"] = dict(sorted(rel.items()))
rec["relative_time_about"] = ("entries of a search run cut short by its time limit before it wrote: each order's "
                              "median over the chosen order's, as its log printed them")
json.dump(rec, open(path, "w"), indent=1)
open(path, "a").write("\n")
