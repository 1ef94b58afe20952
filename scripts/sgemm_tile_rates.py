"""The recorded search behind util.sgemm's tile choice: each tile's FMA rate on large squares, relative to the
128 x 128 tile, which ``Tile.speed`` holds and ``plan()``'s cost rule divides by.

    python scripts/sgemm_tile_rates.py [--runs 7] [--sizes 6144 8192]      (GPU machine)

For each size, one verified, interleaved run (shuffled, L2 flushed, launch overhead hidden) of the numba kernel
forced to each tile of util.sgemm.TILES with one slice, and cuBLAS; prints each tile's % of cuBLAS and its rate
over the 128 x 128 tile's, and their geomean over the sizes (the figure to record as ``speed``). Squares large
enough for many waves of blocks, so that wave quantization changes the rates by little.
"""

from __future__ import annotations

import argparse

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--sizes", type=int, nargs="+", default=[6144, 8192])
    args = ap.parse_args()

    import util
    from util import sgemm as S
    from util.bench import Registry

    if util.SIMULATED:
        raise SystemExit("needs a GPU: the simulator's wall time says nothing about a tile's rate")
    print("device:", util.device_name())
    print(util.versions_line())
    rates: dict[str, list[float]] = {t.name + f" x{t.MINB}": [] for t in S.TILES}
    for size in args.sizes:
        reg = Registry()
        for t in S.TILES:
            S.register(reg, f"{t.name} x{t.MINB}", f"{t.name} x{t.MINB} C", tile=t, splits=1)
        reg.cublas()
        names = [f"{t.name} x{t.MINB}" for t in S.TILES]
        tab = reg.run(size, size, size, runs=args.runs, only=names + [reg.names("cublas")[0]], shuffle=True,
                      hide_launch=True, verbose=False)
        base = tab[names[0]].median
        for name in names:
            rates[name].append(base / tab[name].median)
        print(f"{size}^3: " + ", ".join(f"{n}: {tab.percent_of_baseline(n):.1f}% of cuBLAS, rate "
                                        f"{base / tab[n].median:.3f}" for n in names))
    for name, r in rates.items():
        print(f"{name}: speed {float(np.exp(np.mean(np.log(r)))):.3f} (geomean over {args.sizes})")


if __name__ == "__main__":
    main()
