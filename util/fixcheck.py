"""A kernel before and after a fix, each verified against a float64 reference and timed, interleaved.

For any kernel, not only SGEMM: a ``Case`` says how to make inputs, how to launch a kernel on them, which array
is the output, and what it must equal (a float64 reference computed on the host), with a tolerance::

    case = Case("docs matmul", make=lambda: {"A": a, "B": b, "C": np.empty((m, n), np.float32)},
                launch=lambda kernel, d: kernel[grid, (16, 16)](d["A"], d["B"], d["C"]),
                output="C", reference=lambda h: h["A"].astype(np.float64) @ h["B"], reduction=k)
    fix = compare(case, {"as published": matmul, "fixed": matmul_fixed}, runs=10)
    # a value may also be a launch of its own, d -> None, for a kernel that needs another grid or other inputs
    fix            # a table: each kernel's check, median and quantiles, and its speed-up over the first

Before every launch the output is filled with NaN, after every launch every element is checked; a kernel that is
ever wrong is reported WRONG and not timed. The tolerance is scaled to the output's precision and the length of
the reduction behind each element (``reduction``): ``16 * eps * sqrt(reduction) * scale``, where ``scale`` is the
reference's largest magnitude unless given.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .backend import SIMULATED, cuda, device_name, is_kernel
from .timing import QUANTILES, Result, run_verified
from .verify import Check

TOL_FACTOR = 16.0


@dataclass
class Case:
    """What a kernel computes, independently of how it is written."""

    name: str
    make: Callable[[], dict[str, np.ndarray]]  # host inputs and output buffer, by argument name
    launch: Callable[[Any, dict[str, Any]], None]  # (kernel, device arrays) -> launches it
    output: str  # which array the kernel writes
    reference: Callable[[dict[str, np.ndarray]], np.ndarray]  # float64 expected output from the host inputs
    reduction: int = 1  # terms summed into each output element (for the tolerance)
    scale: float | None = None  # magnitude the rounding error scales with (default: max |reference|)


class _Problem:
    """One case's device arrays, poisoned and checked as util.timing.run_verified expects of a problem."""

    def __init__(self, case: Case) -> None:
        host = case.make()
        if case.output not in host:
            raise KeyError(f"{case.name}: make() returned no array named {case.output!r} (the output); "
                           f"it returned {sorted(host)}")
        self.case, self.host = case, host
        self.device = {k: cuda.to_device(np.ascontiguousarray(v)) if isinstance(v, np.ndarray) else v
                       for k, v in host.items()}
        out = host[case.output]
        if out.dtype.kind != "f":
            raise TypeError(f"{case.name}: the output must be floating point (it is poisoned with NaN), got {out.dtype}")
        self.expected = np.asarray(case.reference(host), dtype=np.float64)
        if self.expected.shape != out.shape:
            raise ValueError(f"{case.name}: reference shape {self.expected.shape} != output shape {out.shape}")
        eps = float(np.finfo(out.dtype).eps) / 2
        scale = case.scale if case.scale is not None else float(np.max(np.abs(self.expected))) or 1.0
        self.tol = TOL_FACTOR * eps * np.sqrt(max(case.reduction, 1)) * scale + np.finfo(out.dtype).tiny
        self._nan = cuda.to_device(np.full(out.shape, np.nan, dtype=out.dtype))
        self.m = self.n = self.k = 0  # not a matrix product: no FLOP count

    def poison(self) -> None:
        self.device[self.case.output].copy_to_device(self._nan)

    def check(self) -> Check:
        got = self.device[self.case.output].copy_to_host().astype(np.float64)
        err = np.abs(got - self.expected)
        finite = np.isfinite(got)
        ratio = np.where(finite, err / self.tol, np.inf)
        worst = int(np.argmax(ratio))
        idx = np.unravel_index(worst, got.shape)
        return Check(bool((ratio <= 1).all()), int((~finite).sum()), int((ratio > 1).sum()),
                     f"{self.case.output}{list(idx)} = {got[idx]:.7g}, expected {self.expected[idx]:.7g} "
                     f"(tolerance {self.tol:.2g})", float(ratio.max()))


@dataclass(repr=False)
class Comparison:
    """The kernels of one case, verified and timed in one interleaved run."""

    case: str
    results: list[Result]
    device: str
    first: str = field(default="")

    def speedup(self, name: str) -> float:
        """median(first kernel) / median(name): > 1 means name is faster."""
        a, b = self[self.first], self[name]
        return a.median / b.median if a.correct and b.correct else float("nan")

    def __getitem__(self, name: str) -> Result:
        return next(r for r in self.results if r.name == name)

    def rows(self) -> list[dict[str, Any]]:
        lo, hi = QUANTILES
        return [{"kernel": r.name, "check": str(r.check) if r.check else "", "median ms": 1e3 * r.median,
                 f"q{lo:g}-q{hi:g} ms": f"{1e3 * r.quantile(lo):.3f}–{1e3 * r.quantile(hi):.3f}",
                 f"speed-up over {self.first!r}": self.speedup(r.name)} for r in self.results]

    def caption(self) -> str:
        clock = "SIMULATOR wall time, NOT GPU time" if SIMULATED else "CUDA events, median of interleaved runs"
        return f"{self.case}: {self.device} ({clock})"

    def __str__(self) -> str:
        rows = self.rows()
        cols = list(rows[0])
        fmt = lambda x: f"{x:.3f}" if isinstance(x, float) else str(x)
        return "\n".join([self.caption(), "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
                         + ["| " + " | ".join(fmt(r[c]) for c in cols) + " |" for r in rows])

    __repr__ = __str__

    def _repr_html_(self) -> str:
        rows = self.rows()
        cols = list(rows[0])
        fmt = lambda x: f"{x:.3f}" if isinstance(x, float) else str(x)
        head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(fmt(r[c]))}</td>" for c in cols) + "</tr>" for r in rows)
        return (f"<p><b>{html.escape(self.caption())}</b></p>"
                f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


def compare(case: Case, kernels: dict[str, Any], *, runs: int = 10, flush: bool | None = None) -> Comparison:
    """Verify every kernel on the case's inputs and time the correct ones ``runs`` times, interleaved."""
    if not kernels:
        raise ValueError("compare needs at least one kernel, e.g. {'as published': k, 'fixed': k2}")
    problem = _Problem(case)
    launches = {}
    for name, kernel in kernels.items():
        if is_kernel(kernel):
            launches[name] = (lambda k: lambda p: case.launch(k, p.device))(kernel)
        elif callable(kernel):
            launches[name] = (lambda f: lambda p: f(p.device))(kernel)
        else:
            raise TypeError(f"{name}: expected a @cuda.jit kernel or a launch function d -> None, got {kernel!r}")
    res = run_verified(problem, runs, launches, timer="events", flush=flush)
    return Comparison(case.name, [res[n] for n in kernels], device_name(), first=next(iter(kernels)))
