"""The committed notebook's random shapes (seeds 2026, 2027: 48 + 24) before and after the 32 x 32 tile: each shape's
plan and numba % of cuBLAS from its progress line, in the run before (git revision REV's notebook) and in the
notebook as it is; % of cuBLAS is within each run (two runs, so shape by shape the figures carry run-to-run spread).
Run from the project root: python scratch/s32/random_compare.py REV"""
import json
import math
import re
import subprocess
import sys

LINE = re.compile(r"\] \((\d+), (\d+), (\d+)\) (\S+ x \d+):\s+([\d.]+)% of cuBLAS")
RANDOM_CELL = 19  # the cell that times the random shapes


def lines(text):
    nb = json.loads(text)
    out = {}
    for o in nb["cells"][RANDOM_CELL].get("outputs", []):
        for m in LINE.finditer("".join(o.get("text", ""))):
            out.setdefault(tuple(map(int, m.groups()[:3])), (m.group(4), float(m.group(5))))
    return out


def geo(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs))


def main(rev):
    old = lines(subprocess.run(["git", "show", f"{rev}:notebooks/sgemm_any_shape.ipynb"], capture_output=True,
                               text=True, check=True).stdout)
    new = lines(open("notebooks/sgemm_any_shape.ipynb").read())
    assert old.keys() == new.keys(), "the two runs timed other shapes"
    micro = [s for s in new if new[s][0].startswith("32x32")]
    for s in micro:
        print(f"{s}: {old[s][0]} {old[s][1]:.1f}% -> {new[s][0]} {new[s][1]:.1f}%")
    print(f"{len(micro)} of {len(new)} random shapes ran the 32 x 32 tile: geomean {geo([old[s][1] for s in micro]):.1f}% "
          f"-> {geo([new[s][1] for s in micro]):.1f}% of cuBLAS; at >= 90%: {sum(old[s][1] >= 90 for s in micro)} -> "
          f"{sum(new[s][1] >= 90 for s in micro)}")
    rest = [s for s in new if s not in micro]
    same = [s for s in rest if old[s][0] == new[s][0]]
    moved = [s for s in rest if old[s][0] != new[s][0]]
    print(f"the other {len(rest)}: same plan on {len(same)} (geomean {geo([old[s][1] for s in same]):.1f}% -> "
          f"{geo([new[s][1] for s in same]):.1f}%: the two runs' spread), another plan on {len(moved)} (geomean "
          f"{geo([old[s][1] for s in moved]):.1f}% -> {geo([new[s][1] for s in moved]):.1f}%)")
    for s in moved:
        print(f"  {s}: {old[s][0]} {old[s][1]:.1f}% -> {new[s][0]} {new[s][1]:.1f}%")


if __name__ == "__main__":
    main(sys.argv[1])
