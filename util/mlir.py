"""numba-cuda-mlir, the successor compiler, on the same kernels: compile, verify and time them in a process of
its own, and bring back times and cubins.

numba-cuda 0.30 needs NumPy < 2.5 and numba-cuda-mlir 0.6 runs with the GPU image's NumPy 2.5, so the two
compilers never share a process. The kernels stay written once: ``run_mlir`` ships each kernel's Python source
(with ``util.ship``, as ``util.compile.numba_ptx`` does for the simulator) to a child,
``python -m util.child_mlir`` started with ``UTIL_COMPILER=numba-cuda-mlir``,
where numba's types become numba-cuda-mlir's types of the same name. The child verifies and times them with
``util.bench.Registry`` (interleaved, CUDA events), with CUDA C twins in the same run as the common reference.

Where numba-cuda-mlir is: importable by ``python3`` as installed, or unpacked under ``$UTIL_MLIR_PATH``
(``../shared/device/fetch-mlir.sh`` packs it for the GPU machine). It has no simulator and needs a CUDA driver
even to compile: without one, ``mlir_unavailable()`` says so and nothing runs.
"""

from __future__ import annotations

import base64
import json
import os
import pickle
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from numba.core import types as nbtypes

from .backend import HAS_DRIVER
from .bench import Variant
from .ship import py_func, spec

REPO = Path(__file__).resolve().parent.parent


def _child_env(compiler: str = "numba-cuda-mlir") -> dict[str, str]:
    """The child's environment: numba-cuda-mlir selected, its path and the repository first; the parent's
    PYTHONPATH (which may carry numba-cuda's NumPy < 2.5) left out."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NUMBA_ENABLE_CUDASIM")}
    if compiler == "numba-cuda-mlir":
        paths = [p for p in (os.environ.get("UTIL_MLIR_PATH"), str(REPO)) if p]
    else:  # numba-cuda: the parent's own path (its NumPy)
        paths = [str(REPO), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env.update(UTIL_COMPILER=compiler, PYTHONPATH=os.pathsep.join(paths), PYTHONUNBUFFERED="1")
    return env


def _python() -> str:
    return os.environ.get("UTIL_MLIR_PYTHON", sys.executable)


def mlir_unavailable() -> str | None:
    """Why numba-cuda-mlir cannot run on this machine, or None when it can."""
    if not HAS_DRIVER:
        return ("no CUDA driver: numba-cuda-mlir 0.6 has no simulator and needs a driver even to compile, "
                "so its cells run on a GPU machine only")
    probe = "import numba_cuda_mlir, numpy; print(numba_cuda_mlir.__version__ if hasattr(numba_cuda_mlir, '__version__') else '?', numpy.__version__)"
    proc = subprocess.run([_python(), "-c", probe], env=_child_env(), capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return (f"numba_cuda_mlir is not importable ({last}); install it (`pip install numba-cuda-mlir`) or set "
                "UTIL_MLIR_PATH to where its wheel is unpacked (../shared/device/fetch-mlir.sh)")
    return None


@dataclass(frozen=True)
class MlirResult:
    """One variant as numba-cuda-mlir compiled and ran it."""

    name: str
    error: str | None  # why it did not compile or run; None when it ran
    correct: bool = False
    check: str = ""
    median: float = float("nan")  # seconds
    spread: float = float("nan")  # (max - min) / median
    registers: int | None = None  # what the driver reports for the compiled kernel
    cubin: bytes | None = None  # what ran: numba-cuda-mlir's own cubin


@dataclass(frozen=True)
class MlirRun:
    """A child run: its results by name, and what it ran on."""

    results: dict[str, MlirResult]
    device: str
    versions: dict[str, str]
    size: tuple[int, int, int]
    runs: int

    def __getitem__(self, name: str) -> MlirResult:
        return self.results[name]

    def ratio(self, name: str, baseline: str) -> float:
        """median(name) / median(baseline), both from this child's interleaved run."""
        return self.results[name].median / self.results[baseline].median


def _type_names(value: Any) -> Any:
    """numba types inside a shipped kernel spec -> ("type", repr) that the child rebuilds with mlir's types."""
    if isinstance(value, dict):
        return {k: _type_names(v) for k, v in value.items()}
    if isinstance(value, tuple) and len(value) == 2 and value[0] == "value" and isinstance(value[1], nbtypes.Type):
        return ("type", _type_expr(value[1]))
    return value


def _type_expr(t: nbtypes.Type) -> str:
    """A numba type as an expression over scalar type names: ``float32[:, ::1]``, ``int32``."""
    if isinstance(t, nbtypes.Array):
        if t.layout not in "CA":
            raise ValueError(f"only C-contiguous or any-layout arrays are shipped to numba-cuda-mlir, got {t}")
        dims = [":"] * t.ndim
        if t.layout == "C":
            dims[-1] = "::1"
        return f"{t.dtype}[{', '.join(dims)}]"
    if isinstance(t, (nbtypes.Integer, nbtypes.Float)):
        return str(t)
    raise ValueError(f"cannot ship numba type {t} to numba-cuda-mlir (scalars and arrays only)")


def run_mlir(variants: Sequence[Variant], nthreads: int,
             nblocks_fn: Callable[[tuple[int, int], int], tuple[int, ...]], m: int, n: int, k: int, *,
             runs: int = 10, timeout: float = 900, compiler: str = "numba-cuda-mlir") -> MlirRun:
    """Compile the numba ``variants`` (a Registry's: each one's Python function, signature, jit options and
    layout) with numba-cuda-mlir in a child process, verify each against a float64 reference and time them,
    interleaved with the CUDA C variants among them, on one random problem of m x k times k x n, every one
    launched with ``nthreads`` and ``nblocks_fn``.

    A kernel that does not compile (numba-cuda-mlir lacks a feature it uses, e.g. a ``util.intrinsics`` name
    written only as a numba-cuda llvmlite ``@intrinsic``) comes back with its ``error`` and no time. Raises
    RuntimeError when numba-cuda-mlir cannot run here (``mlir_unavailable()``) or the child fails as a whole. ``compiler="numba-cuda"`` runs the
    same child with numba-cuda (the simulator without a GPU): the shipping path, testable on a CPU.
    """
    if compiler == "numba-cuda-mlir":
        why = mlir_unavailable()
        if why:
            raise RuntimeError(why)
    shipped, errors, twins = {}, {}, {}
    for v in variants:
        if v.kind == "cuda_c":
            twins[v.name] = (v.kernel.source, v.kernel.name)
        elif v.kind != "numba":
            raise ValueError(f"{v.name} is {v.kind}: run_mlir takes numba variants and CUDA C twins")
        else:
            try:
                shipped[v.name] = {"spec": _type_names(spec(py_func(v.kernel))), "sig": [_type_expr(t) for t in v.sig],
                                   "options": dict(v.jit_options), "flat": v.flat}
            except (TypeError, ValueError) as e:
                errors[v.name] = f"not shipped to numba-cuda-mlir: {e}"
    package = "numba-cuda-mlir" if compiler == "numba-cuda-mlir" else "numba-cuda"
    job = {"compiler": compiler, "package": package, "kernels": shipped, "twins": twins, "nthreads": nthreads, "grid": tuple(nblocks_fn((m, n), nthreads)),
           "size": (m, n, k), "runs": runs}
    proc = subprocess.run([_python(), "-m", "util.child_mlir"], input=pickle.dumps(job), env=_child_env(compiler), cwd=REPO,
                          capture_output=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"the {compiler} child failed (exit {proc.returncode}):\n"
                           f"{proc.stderr.decode(errors='replace')[-4000:]}")
    out = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    results = {name: MlirResult(name, error) for name, error in errors.items()}
    for name, r in out["results"].items():
        cubin = base64.b64decode(r.pop("cubin")) if r.get("cubin") else None
        results[name] = MlirResult(name=name, cubin=cubin, **{k: v for k, v in r.items() if k != "cubin"})
    ordered = {v.name: results[v.name] for v in variants if v.name in results}
    return MlirRun(ordered, out["device"], out["versions"], (m, n, k), runs)
