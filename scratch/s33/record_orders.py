"""Record in util/sgemm_ffma_order.json the FMA orders of a search run's printed log (scripts/sgemm_ffma_order.py
run without --write; its log is scratch/s33/order_32x32_h200.txt): each line's chosen order (the fastest among
those with no local memory, as the search chose it), each order's time over the chosen one's as printed
(``relative_time``) and the local memory of the orders that had some (``local_bytes``).
Run from the project root: python scratch/s33/record_orders.py scratch/s33/order_32x32_h200.txt"""
import json
import re
import sys
from pathlib import Path

RECORD = Path("util/sgemm_ffma_order.json")
LINE = re.compile(r"^\[\s*\d+ s\] (?P<key>.+?)\s{2,}\d+x\d+x\d+(?:, C \+\d)?: (?P<orders>.+?)\s+-> (?P<chosen>\w+)$")
ORDER = re.compile(r"(\w+) ([\d.]+)(?: \((\d+) B local\))?")


def main(log):
    rec = json.loads(RECORD.read_text())
    found = 0
    for line in Path(log).read_text().splitlines():
        m = LINE.match(line)
        if not m:
            continue
        key = m["key"]
        times = {o: float(t) for o, t, _ in ORDER.findall(m["orders"])}
        local = {o: int(b) for o, _, b in ORDER.findall(m["orders"]) if b}
        assert set(times) == {"row", "col", "snake", "colsnake"} and m["chosen"] not in local, line
        assert times[m["chosen"]] == min(t for o, t in times.items() if o not in local), line
        rec["orders"][key] = m["chosen"]
        rec["relative_time"][key] = times
        rec["median_us"].pop(key, None)
        if local:
            rec["local_bytes"][key] = local
        found += 1
    assert found == sum(line.startswith("[") for line in Path(log).read_text().splitlines()), "a line not read"
    rec["relative_time_about"] = ("entries recorded from a search run's printed log (a run cut short by its time "
                                  "limit before it wrote, or one run without --write): each order's median over the "
                                  "chosen order's, as the log printed them")
    rec["command"] += (f"; the 32x32/2k tile's 32-bit two-loop entries: python scripts/sgemm_ffma_order.py --tiles "
                       f"32x32/2k --offsets 32 --runs 7, its log ({log}) recorded by scratch/s33/record_orders.py")
    RECORD.write_text(json.dumps(rec, indent=1) + "\n")
    print(f"{found} entries recorded from {log}")


if __name__ == "__main__":
    main(sys.argv[1])
