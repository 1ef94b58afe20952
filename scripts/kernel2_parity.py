"""Kernel 2 against CUDA C on several shapes: every loop-rewritten combination of util.kernel2's factors (plain
numba and with the no-wrap promise), verified and timed interleaved with CUDA C's kernel 2, into a data file.

    python scripts/kernel2_parity.py [--runs 15] [--out data/kernel2_parity_<gpu>.json]      (GPU machine)

For each shape (4092³, 4096³, 2000 x 3001 x 1537 by default) one interleaved run in a shuffled order: each
numba kernel's median over CUDA C kernel 2's median, with the spread of the rounds. numba_vs_cuda_c.ipynb reads
the file written on a second GPU for its "does the answer hold on another GPU" table.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHAPES = ((4092, 4092, 4092), (4096, 4096, 4096), (2000, 3001, 1537))
BASE = ("int32 sizes", "launch_bounds", "while loop")


def candidates() -> dict[str, frozenset[str]]:
    """Name -> factor set: the while loop, flat or walking 1-D indexing, with and without the other factors."""
    from util.kernel2 import FACTORS

    out = {}
    for extra in itertools.product((0, 1), repeat=4):
        i32, lb, unsigned, promise = extra
        for layout in (("flat 32-bit indexing",), ("walking indices",), ("flat 32-bit indexing", "walking indices")):
            if promise and unsigned:
                continue  # the promise is made on signed indices: unsigned changes nothing then
            on = {"while loop", *layout}
            on |= {f for f, x in zip(("int32 sizes", "launch_bounds", "unsigned indices", "no-wrap promise"),
                                     (i32, lb, unsigned, promise)) if x}
            out[" + ".join(f for f in FACTORS if f in on)] = frozenset(on)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--out", type=Path, default=None, help="default: data/kernel2_parity_<gpu>.json")
    args = ap.parse_args(argv)
    import util
    from util.bench import Registry
    from util.cuda_c import CudaC
    from util.kernel2 import grid, kernel2_c, kernel2_sig, make_kernel2

    if util.SIMULATED:
        print("kernel2_parity needs a GPU: simulator times say nothing about parity.")
        return 2
    device = util.device_name()
    reg = Registry()
    for name, on in candidates().items():
        reg.numba(name, make_kernel2(on), 1024, grid(32), flat=True, sig=kernel2_sig(on))
    reg.cuda_c("CUDA C kernel 2", CudaC(kernel2_c(), "kernel2"), 1024, grid(32))
    results = {}
    for shape in SHAPES:
        table = reg.run(*shape, runs=args.runs, shuffle=True, verbose=False)
        c = table["CUDA C kernel 2"]
        results["x".join(map(str, shape))] = {
            "cuda_c_ms": 1e3 * c.median,
            "ratio": {r.name: (r.median / c.median if r.correct else None) for r in table.results},
            "spread": {r.name: (r.spread if r.correct else None) for r in table.results},
            "wrong": [r.name for r in table.results if not r.correct]}
        best = min((n for n in candidates() if table[n].correct), key=lambda n: table[n].median)
        print(f"{shape}: CUDA C {1e3 * c.median:.2f} ms; best numba {best}: {table.ratio(best, 'CUDA C kernel 2'):.3f}")
    data = {"what": f"median(numba) / median(CUDA C kernel 2) over {args.runs} shuffled interleaved rounds per shape",
            "device": device, "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "command": "python scripts/kernel2_parity.py " + " ".join(argv or sys.argv[1:]),
            "versions": util.versions(), "factors": {n: sorted(on) for n, on in candidates().items()},
            "shapes": results}
    slug = re.sub(r"[^a-z0-9]+", "_", device.lower()).strip("_")
    out = args.out or REPO / "data" / f"kernel2_parity_{slug}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1, sort_keys=True))
    print(f"device: {device}; wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
