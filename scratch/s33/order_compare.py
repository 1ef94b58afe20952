"""The committed notebook's random shapes (seeds 2026, 2027) in the run with the 32 x 32 tile's searched FMA orders
(scratch/s33/sgemm_any_shape_searched_orders_h200.ipynb) against the committed run with snake (the notebook at
git revision REV): numba's % of cuBLAS shape by shape (within each run) on the shapes that took the 32 x 32 tile, and
the run-to-run spread on the shapes whose plan and kernels did not change (rms of the log ratio, min and max).
Run from the project root: PYTHONPATH=scratch/s32 python scratch/s33/order_compare.py REV"""
import json
import math
import subprocess
import sys

from random_compare import lines


def main(rev):
    old = lines(subprocess.run(["git", "show", f"{rev}:notebooks/sgemm_any_shape.ipynb"], capture_output=True,
                               text=True, check=True).stdout)
    new = lines(open("scratch/s33/sgemm_any_shape_searched_orders_h200.ipynb").read())
    same = [s for s in new if old[s][0] == new[s][0] and not new[s][0].startswith("32x32")]
    logs = [math.log(new[s][1] / old[s][1]) for s in same]
    print(f"{len(same)} shapes with the same plan, off the 32 x 32 tile: % of cuBLAS searched-orders run / snake run, "
          f"rms of the log ratio {math.sqrt(sum(x * x for x in logs) / len(logs)):.3f}, "
          f"{math.exp(min(logs)):.3f}..{math.exp(max(logs)):.3f}")
    micro = [s for s in new if new[s][0].startswith("32x32") or old[s][0].startswith("32x32")]
    for s in micro:
        m, n, k = s
        loads = ("16-byte A" if k % 4 == 0 else "4-byte A") + (", 16-byte B" if n % 4 == 0 else ", 4-byte B")
        print(f"  {m}x{n}x{k} ({loads}): {old[s][0]} {old[s][1]:.1f}% -> {new[s][0]} {new[s][1]:.1f}% "
              f"({new[s][1] / old[s][1]:.3f})")
    print(f"{len(micro)} on the 32 x 32 tile: geomean {math.exp(sum(math.log(old[s][1]) for s in micro) / len(micro)):.1f}% "
          f"-> {math.exp(sum(math.log(new[s][1]) for s in micro) / len(micro)):.1f}%")


if __name__ == "__main__":
    main(sys.argv[1])
