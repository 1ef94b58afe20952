"""Hardware counters of kernel 2's steps and CUDA C's, read by Nsight Compute, into one committed data file.

    python scripts/kernel2_counters.py [--size 4092] [--out data/kernel2_counters.json]      (GPU machine)

Runs itself under ``ncu --clock-control none`` (the clocks as the GPU sets them), profiling one launch of each
kernel: numba's kernel 2 at each step of numba_vs_cuda_c.ipynb (util.kernel2.make_kernel2, the factorial
family's corners) and the worklog's CUDA C kernel 2 with its three one-line variants. Every kernel is verified
(NaN-poisoned output, every element checked) before the profiled launch. Also measures, with ``clock64()``
chases in CUDA C, the latency of a dependent load that hits L1 and one that hits L2 (the floor model's
latencies). Writes a JSON file with the device, the versions, the command and, per kernel, its metrics
(Nsight Compute's raw names, numbers only), its static SASS counts and its CUDA-events time.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parent.parent
SECTIONS = ("SpeedOfLight", "Occupancy", "LaunchStats", "WarpStateStats", "InstructionStats", "SchedulerStats",
            "MemoryWorkloadAnalysis", "MemoryWorkloadAnalysis_Tables", "ComputeWorkloadAnalysis")
# numba_vs_cuda_c.ipynb's steps as factor sets of util.kernel2 (step 0: the float64 accumulator alone)
STEP_FACTORS = {
    "0 float64 accumulator": ("float64 accumulator",),
    "1 float32, range(), int64 sizes": (),
    "2 + int32 sizes": ("int32 sizes",),
    "3 + launch_bounds(1024, 2)": ("int32 sizes", "launch_bounds"),
    "4 + while loop": ("int32 sizes", "launch_bounds", "while loop"),
    "5 + unsigned indices": ("int32 sizes", "launch_bounds", "while loop", "unsigned indices"),
    "6 + flat uint32 indexing": ("int32 sizes", "launch_bounds", "while loop", "unsigned indices",
                                 "flat 32-bit indexing"),
    "7 + walking indices": ("int32 sizes", "launch_bounds", "while loop", "unsigned indices",
                            "flat 32-bit indexing", "walking indices"),
    "8 + no-wrap int32 indices": ("int32 sizes", "launch_bounds", "while loop", "flat 32-bit indexing",
                                  "no-wrap promise"),
}
C_VARIANTS = {"CUDA C kernel 2": ("int", ""), "C: no unrolling": ("int", "#pragma unroll 1"),
              "C: unsigned indices": ("unsigned", ""), "C: 64-bit indices": ("long long", "")}

CHASE_C = r"""
// One thread follows a chain of indices through a[0:n): each load's address is the previous load's value, so
// the loads cannot overlap and clock64() over `hops` of them gives the latency of one. c[0]: cycles per hop.
extern "C" __global__ void chase(const float* a, const float* b, float* c, int unused, int n, int hops) {
    const unsigned* next = reinterpret_cast<const unsigned*>(a);
    unsigned j = 0, sink = 0;
    for (int h = 0; h < hops; ++h) j = next[j];          // warm the level the chain fits in
    sink += j;
    long long t0 = clock64();
    for (int h = 0; h < hops; ++h) j = __ldcg(next + j);  // .cg: cached in L2 only (the L2 chase)
    long long t1 = clock64();
    sink += j;
    for (int h = 0; h < hops; ++h) j = next[j];           // default caching: L1 hits once warmed
    long long t2 = clock64();
    sink += j;
    c[0] = (float)(t1 - t0) / hops;
    c[1] = (float)(t2 - t1) / hops;
    c[2] = (float)sink;                                    // keeps every chain alive
}
"""


def build():
    """The Registry of profiled kernels (numba steps, C variants), each verified, and the chase kernel."""
    import util  # noqa: F401  first: picks the compiler
    from util.bench import Registry
    from util.cuda_c import CudaC
    from util.kernel2 import grid, kernel2_c, kernel2_sig, make_kernel2

    reg = Registry()
    for name, on in STEP_FACTORS.items():
        flat = bool(set(on) & {"flat 32-bit indexing", "walking indices"})
        reg.numba(name, make_kernel2(on), 1024, grid(32), flat=flat, sig=kernel2_sig(on))
    for name, (index_type, pragma) in C_VARIANTS.items():
        reg.cuda_c(name, CudaC(kernel2_c(index_type, pragma), "kernel2"), 1024, grid(32))
    return reg


def chase_latencies() -> dict[str, float]:
    """Cycles per dependent load hitting L2 (.cg over 16 MB) and hitting L1 (16 KB, default caching)."""
    import numpy as np
    import torch

    from util.cuda_c import CudaC

    kernel = CudaC(CHASE_C, "chase")
    out = {}
    for label, words in (("L1 hit", 4096), ("L2 hit", 4 << 20)):
        stride = 32 + 1  # 132 bytes: a new 128-byte line every hop
        order = (np.arange(words, dtype=np.int64) * stride) % words
        nxt = np.empty(words, dtype=np.uint32)
        nxt[order] = np.roll(order, -1)
        a = torch.from_numpy(nxt.view(np.float32)).cuda()
        c = torch.zeros(4, device="cuda")
        hops = 4096 if label == "L1 hit" else 1 << 16
        # one thread; the launch reads a, b, c and the ints m, n, k of a Problem: here n = words, k = hops
        kernel.launch(1, lambda mn, nt: (1,))(SimpleNamespace(a=a, b=a, c=c, m=1, n=words, k=hops))
        torch.cuda.synchronize()
        out[label] = float(c[1] if label == "L1 hit" else c[0])
    return out


def target(size: int) -> None:
    """Under ncu: verify every kernel, then profile exactly one launch of each (profiler on only for those)."""
    from util import cuda
    from util.timing import problem

    reg = build()
    table = reg.run(size, size, size, runs=5, verbose=False)  # verifies every kernel and times it
    wrong = [r.name for r in table.results if not r.correct]
    if wrong:
        raise SystemExit(f"wrong kernels, not profiled: {wrong}")
    p = problem(size, size, size)
    order = [v.name for v in reg]
    print("PROFILED ORDER " + json.dumps(order), flush=True)
    print("EVENTS MS " + json.dumps({n: 1e3 * table[n].median for n in order}), flush=True)
    cuda.profile_start()
    for v in reg:
        p.poison()
        v.launch(p)
        cuda.synchronize()
    cuda.profile_stop()


def parse_raw_csv(text: str) -> list[dict[str, float]]:
    """ncu's ``--csv --page raw`` output -> one dict of numeric metrics per profiled kernel, in launch order."""
    lines = [line for line in text.splitlines() if line.startswith('"')]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    if len(rows) < 3:
        raise SystemExit("ncu printed no metrics: " + text[-2000:])
    header, units, data = rows[0], rows[1], rows[2:]
    out = []
    for row in data:
        metrics = {"Kernel Name": row[header.index("Kernel Name")]}
        for name, unit, value in zip(header, units, row):
            try:
                number = float(value.replace(",", ""))
            except ValueError:
                continue
            metrics[name + (f" [{unit}]" if unit else "")] = number
        out.append(metrics)
    return out


def static_sass() -> dict[str, dict]:
    """Per kernel: registers and the hot loop's instructions, FFMA, LDG and load-to-use distance per pass."""
    reg = build()
    out = {}
    for v in reg:
        loop = reg.report(v.name).hot_loop
        out[v.name] = {"registers": reg.report(v.name).registers, "hot_loop_instructions": loop.size,
                       "hot_loop_ffma": loop.ffma, "hot_loop_ldg": loop.count("LDG"),
                       "hot_loop_f64": loop.count("f64"), "load_to_use": loop.load_to_use,
                       "blocks_per_sm": reg.blocks_per_sm(v.name)}
    return out


def versions() -> dict[str, str]:
    import util

    out = util.versions()
    lines = subprocess.run([ncu_path(), "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    out["ncu"] = lines[-1] if lines else "?"
    return out


def ncu_path() -> str:
    found = shutil.which("ncu") or next((str(p) for p in Path("/opt/nvidia").glob("nsight-compute/*/ncu")), None)
    if not found:
        raise SystemExit("ncu (Nsight Compute) not found: run this on the GPU machine, where it is installed")
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=4092)
    ap.add_argument("--out", type=Path, default=REPO / "data" / "kernel2_counters.json")
    ap.add_argument("--target", action="store_true", help=argparse.SUPPRESS)  # the profiled child
    args = ap.parse_args(argv)
    if args.target:
        target(args.size)
        return 0
    import util

    if util.SIMULATED:
        print("kernel2_counters needs a GPU and Nsight Compute: there are no hardware counters in the simulator.")
        return 2
    command = [ncu_path(), "--clock-control", "none", "--profile-from-start", "off", "--kernel-name", "regex:kernel2",
               "--csv", "--page", "raw",
               *[x for s in SECTIONS for x in ("--section", s)], sys.executable, str(Path(__file__).resolve()),
               "--target", "--size", str(args.size)]
    proc = subprocess.run(command, capture_output=True, text=True, cwd=REPO, env=os.environ)
    if proc.returncode != 0:
        print(proc.stdout[-3000:], proc.stderr[-3000:])
        return 1
    order = json.loads(next(line for line in proc.stdout.splitlines() if line.startswith("PROFILED ORDER "))[15:])
    events = json.loads(next(line for line in proc.stdout.splitlines() if line.startswith("EVENTS MS "))[10:])
    rows = [r for r in parse_raw_csv(proc.stdout) if "kernel2" in r["Kernel Name"]]  # not torch's NaN fill
    if len(rows) != len(order):
        print(f"ncu profiled {len(rows)} kernels, expected {len(order)}: {[r['Kernel Name'] for r in rows]}")
        return 1
    sass = static_sass()
    data = {
        "what": "Nsight Compute metrics (raw names) of one launch of each kernel 2 variant, M = N = K = "
                f"{args.size}; static SASS of the same kernels (sm_90); CUDA-events medians of 5 interleaved runs; "
                "dependent-load latencies in cycles",
        "device": util.device_name(),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": "python scripts/kernel2_counters.py " + " ".join(argv or sys.argv[1:]),
        "ncu_command": " ".join(command[:-4]) + " <this script> --target",
        "versions": versions(),
        "size": args.size,
        "latency_cycles": chase_latencies(),
        "kernels": {name: {"events_ms": events[name], "sass": sass[name], "metrics": row}
                    for name, row in zip(order, rows)},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=1, sort_keys=True))
    print(f"device: {data['device']}; wrote {args.out} ({len(rows)} kernels)")
    keys = ("gpu__time_duration.sum", "smsp__inst_executed.sum", "smsp__issue_active.avg.pct_of_peak_sustained_active",
            "l1tex__throughput.avg.pct_of_peak_sustained_active", "sm__warps_active.avg.pct_of_peak_sustained_active")
    for name, row in zip(order, rows):
        vals = [next((v for k, v in row.items() if k.startswith(key)), float("nan")) for key in keys]
        print(f"{name:34s} " + " ".join(f"{v:14.4g}" for v in vals))
    print("latency (cycles):", data["latency_cycles"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
