"""Time util.doctor.diagnose on the project's kernels (tests/doctor_kernels.py: the notebooks' kernel 2 variants
and steps, and SGEMM ladder steps) and print one table: seconds per kernel, registers, hot loop, findings.

    python scripts/bench_doctor.py                  # every kernel
    python scripts/bench_doctor.py --only s0 l15    # some of them (v_<variant>, s<step>, l<ladder step>)

Each diagnosis is a cold compile (numba's compile child for the PTX, ptxas, cuobjdump, nvdisasm, and numba's
typing when a float64 needs explaining): the time a user waits. No GPU needed. The budget is 10 s per kernel on a
2-core CPU; the load average is printed because other work on the machine slows every compile.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path

import util  # noqa: F401 - before numba: without a GPU, util switches numba to its simulator
from util.doctor import diagnose

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "doctor_kernels.py"


def fixtures():
    """tests/doctor_kernels.py as a module (the tests' copies of the notebooks' kernels)."""
    spec = importlib.util.spec_from_file_location("doctor_kernels", FIXTURES)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BUDGET_S = 10.0


def kernels() -> list[tuple[str, str, object, object, int]]:
    """(key, description, kernel, signature, threads per block) for every kernel of the fixture module."""
    dk = fixtures()
    out = [(f"v_{name}", f"matmul_variants {name}", k, sig, 1024) for name, (k, sig, _) in dk.VARIANTS.items()]
    out += [(f"s{name.split()[0]}", f"kernel 2 step {name}", k, sig, block) for name, k, sig, block in dk.STEPS]
    out += [(f"l{name.split()[0]}", f"ladder {name}", k, dk.LADDER_SIG, block)
            for name, (k, block) in dk.LADDER.items()]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", default=None, help="keys to time, e.g. s0 s8 l15 v_original")
    args = parser.parse_args(argv)
    chosen = [k for k in kernels() if args.only is None or k[0] in args.only]
    if not chosen:
        print(f"no kernel matches {args.only}; keys: {' '.join(k[0] for k in kernels())}", file=sys.stderr)
        return 2
    print(f"util.doctor.diagnose, cold, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start")
    print("| key | kernel | seconds | registers | hot loop (SASS instr / fp ops) | findings |")
    print("|---|---|---|---|---|---|")
    times = []
    for key, what, kernel, sig, block in chosen:
        start = time.perf_counter()
        d = diagnose(kernel, sig, block=block)
        seconds = time.perf_counter() - start
        times.append(seconds)
        hot = d.hot_loop
        loop = f"{hot['sass_instructions']} / {hot['fp_ops']}" if hot else "no loop"
        flag = "" if seconds <= BUDGET_S else " (over budget)"
        print(f"| {key} | {what} | {seconds:.1f}{flag} | {d.registers} | {loop} | {', '.join(d.tags) or '-'} |")
    over = sum(t > BUDGET_S for t in times)
    print(f"\n{len(times)} kernels: median {statistics.median(times):.1f} s, max {max(times):.1f} s, total "
          f"{sum(times):.0f} s; {over} over the {BUDGET_S:.0f} s budget; load average now {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
