"""The child of ``util.mlir.run_mlir``: compile shipped kernels with the compiler ``UTIL_COMPILER`` names
(numba-cuda-mlir, or numba-cuda for tests), verify and time them with CUDA C twins in one interleaved run.

    UTIL_COMPILER=numba-cuda-mlir python -m util.child_mlir < job.pickle

Reads the pickled job ``run_mlir`` writes; prints one JSON line: results by name (error, correct, check, median,
spread, registers, cubin as base64), the device and the versions of the packages it ran with.
"""

from __future__ import annotations

import base64
import importlib
import json
import math
import pickle
import sys
from importlib import metadata

import util
from util import cuda
from util.bench import Registry
from util.cuda_c import CudaC
from util.ship import Hooks, build

SCALARS = ("float32", "float64", "int32", "int64", "uint32", "uint64", "int8", "int16", "uint8", "uint16")


def _attr(compiler: str):
    def attr(module: str, name: str):
        found = getattr(importlib.import_module(module), name, None)
        if found is None and module == "util.intrinsics":
            raise NotImplementedError(f"uses util.intrinsics.{name}, which has no {compiler} version "
                                      f"(numba-cuda only: an llvmlite @intrinsic)")
        if found is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        return found

    return attr


def _cubin_and_registers(kernel, entry: dict) -> None:
    try:
        meta = kernel.get_metadata()
    except AttributeError:  # numba-cuda 0.30 has the call but no metadata on its kernels
        meta = None
    cubin = next(iter(meta.values()))["cubin"] if meta else None
    entry["cubin"] = base64.b64encode(bytes(cubin)).decode() if cubin else None
    try:
        regs = kernel.get_regs_per_thread()
        entry["registers"] = int(next(iter(regs.values())) if isinstance(regs, dict) else regs)
    except Exception:
        entry["registers"] = None


def main() -> int:
    job = pickle.load(sys.stdin.buffer)
    assert util.backend.COMPILER == job["compiler"], (util.backend.COMPILER, job["compiler"])
    types = {name: getattr(cuda, name) for name in SCALARS}
    hooks = Hooks(device_jit=lambda options: cuda.jit(device=True), attr=_attr(job["compiler"]),
                  typ=lambda expr: eval(expr, {"__builtins__": {}}, types),
                  modules={"numba.cuda": cuda, "numba": cuda})
    m, n, k = job["size"]
    grid = tuple(job["grid"])
    reg, kernels, results = Registry(), {}, {}
    for name, kj in job["kernels"].items():
        try:
            sig = tuple(hooks.typ(t) for t in kj["sig"])
            kernel = cuda.jit(sig, **kj["options"])(build(kj["spec"], hooks))
            reg.numba(name, kernel, job["nthreads"], lambda mn, nt: grid, flat=kj["flat"])
            kernels[name] = kernel
        except Exception as e:
            lines = [line.strip() for line in str(e).strip().splitlines() if line.strip()]
            why = " / ".join(lines[:1] + lines[-4:]) if len(lines) > 5 else " / ".join(lines)
            results[name] = {"error": f"{type(e).__name__}: {why}"[:1500]}
    for name, (source, kname) in job["twins"].items():
        reg.cuda_c(name, CudaC(source, kname), job["nthreads"], lambda mn, nt: grid)
    table = reg.run(m, n, k, runs=job["runs"], verbose=False)
    for r in table.results:
        entry = {"error": None, "correct": bool(r.correct), "check": str(r.check),
                 "median": r.median if r.correct else math.nan, "spread": r.spread if r.correct else math.nan}
        if r.name in kernels and not util.SIMULATED:
            _cubin_and_registers(kernels[r.name], entry)
        results[r.name] = entry
    versions = {}
    for package in (job["package"], "numpy", "cuda-core"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:  # an unpacked wheel without its dist-info
            versions[package] = "?"
    print(json.dumps({"results": results, "device": util.device_name(), "versions": versions}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
