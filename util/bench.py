"""One registry of kernel variants that verification, timing, tables and plots all loop over.

    reg = Registry()
    reg.numba("coalesced", coalesced, nthreads=1024, nblocks_fn=grid32, note="same as naive but ...")
    reg.cuda_c("CUDA C kernel 2", twin, nthreads=1024, nblocks_fn=grid32)
    reg.cublas()
    table = reg.run(m=4092, n=4092, k=4092, runs=10)   # verify all, time interleaved, one table
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from .backend import SIMULATED, device_name
from .launch import Launch, numba_launch
from .timing import Result, default_sizes, problem, run_verified
from .verify import Problem


@dataclass(frozen=True)
class Variant:
    """One kernel to verify and time: how to launch it on a Problem, and what it is."""

    name: str
    launch: Launch
    kind: str = "numba"  # "numba" | "cuda_c" | "cublas"
    note: str = ""  # one line: what changed from the previous variant, and why
    kernel: Any = None  # the numba kernel or the CUDA C twin, for static (PTX/SASS) analysis
    gpu_only: bool = False  # cannot run in the simulator (CUDA C, cuBLAS)


def cublas_launch(p: Problem) -> None:
    """C = A @ B through torch (cuBLAS) in strict fp32: TF32 off."""
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    a, b, c = (torch.as_tensor(x, device="cuda") for x in (p.a, p.b, p.c))
    torch.matmul(a, b, out=c)


@dataclass(repr=False)
class Table:
    """Results of one run of a registry, in registry order, with ratios against a baseline."""

    results: list[Result]
    variants: list[Variant]
    device: str
    skipped: dict[str, str] = field(default_factory=dict)  # name -> why it did not run

    def __getitem__(self, name: str) -> Result:
        for r in self.results:
            if r.name == name:
                return r
        raise KeyError(f"{name!r} not in this table; it has {[r.name for r in self.results]}"
                       + (f"; skipped: {list(self.skipped)}" if self.skipped else ""))

    def __contains__(self, name: str) -> bool:
        return any(r.name == name for r in self.results)

    def ratio(self, name: str, baseline: str) -> float:
        """median(name) / median(baseline), both from this run."""
        return self[name].median / self[baseline].median

    @property
    def baseline(self) -> str | None:
        return next((v.name for v in self.variants if v.kind == "cublas" and v.name in self), None)

    def rows(self) -> list[dict[str, Any]]:
        base = self.baseline
        rows = []
        for v, r in zip(self.variants, self.results):
            row = {"variant": r.name, "kind": v.kind, "correct": r.correct,
                   "median ms": r.median * 1e3, "spread %": r.spread * 100,
                   "TFLOP/s": r.tflops if r.correct else float("nan")}
            if base and not SIMULATED:
                row["% of cuBLAS"] = 100 * self[base].median / r.median if r.correct else float("nan")
            row["note"] = v.note
            rows.append(row)
        return rows

    def _cells(self) -> tuple[list[str], list[list[str]]]:
        rows = self.rows()
        cols = list(rows[0]) if rows else []
        fmt = lambda x: (f"{x:.3f}" if isinstance(x, float) else ("✓" if x is True else "WRONG" if x is False else str(x)))
        return cols, [[fmt(row[c]) for c in cols] for row in rows]

    def markdown(self) -> str:
        cols, cells = self._cells()
        out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        out += ["| " + " | ".join(r) + " |" for r in cells]
        return "\n".join(out)

    def caption(self) -> str:
        r0 = self.results[0] if self.results else None
        size = f"m,n,k = {r0.m},{r0.n},{r0.k}, " if r0 else ""
        clock = "SIMULATOR wall time, NOT GPU time" if SIMULATED else "CUDA events, median of interleaved runs"
        skipped = "".join(f"; {n} skipped: {why}" for n, why in self.skipped.items())
        return f"{size}{self.device} ({clock}){skipped}"

    def __str__(self) -> str:
        return self.caption() + "\n" + self.markdown()

    __repr__ = __str__

    def _repr_html_(self) -> str:
        cols, cells = self._cells()
        head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(x)}</td>" for x in r) + "</tr>" for r in cells)
        return (f"<p><b>{html.escape(self.caption())}</b></p>"
                f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


class Registry:
    """An ordered set of variants; ``run`` verifies every one and times the correct ones, interleaved."""

    def __init__(self) -> None:
        self.variants: dict[str, Variant] = {}

    def add(self, variant: Variant) -> Variant:
        if variant.name in self.variants:
            raise ValueError(f"a variant named {variant.name!r} is already registered")
        self.variants[variant.name] = variant
        return variant

    def numba(self, name: str, kernel: Any, nthreads: Any, nblocks_fn: Callable, kernel_args: Sequence = (),
              *, flat: bool = False, note: str = "") -> Variant:
        return self.add(Variant(name, numba_launch(kernel, nthreads, nblocks_fn, kernel_args, flat),
                                "numba", note, kernel))

    def cuda_c(self, name: str, twin: Any, nthreads: Any, nblocks_fn: Callable, *, shmem: int = 0,
               note: str = "") -> Variant:
        """A CUDA C twin (util.cuda_c.CudaC) launched like the numba kernels, on the same arrays."""
        return self.add(Variant(name, twin.launch(nthreads, nblocks_fn, shmem=shmem), "cuda_c", note, twin,
                                gpu_only=True))

    def cublas(self, name: str = "cuBLAS (fp32, TF32 off)", note: str = "the ceiling") -> Variant:
        return self.add(Variant(name, cublas_launch, "cublas", note, gpu_only=True))

    def __iter__(self):
        return iter(self.variants.values())

    def __len__(self) -> int:
        return len(self.variants)

    def __getitem__(self, name: str) -> Variant:
        return self.variants[name]

    def run(self, m: int | None = None, n: int | None = None, k: int | None = None, *, runs: int = 10,
            seed: int = 0, only: Sequence[str] | None = None, verbose: bool = True) -> Table:
        """Verify each variant on one random problem, then time them ``runs`` times, interleaved."""
        m, n, k = default_sizes(m, n, k, quiet=not verbose)
        chosen = [v for v in self if only is None or v.name in only]
        skipped = {v.name: "needs a GPU (the simulator runs numba kernels only)"
                   for v in chosen if v.gpu_only and SIMULATED}
        todo = [v for v in chosen if v.name not in skipped]
        res = run_verified(problem(m, n, k, seed), runs, {v.name: v.launch for v in todo}, timer="events")
        table = Table([res[v.name] for v in todo], todo, device_name(), skipped)
        if verbose:
            for v in todo:
                if not res[v.name].correct:
                    print(f"WRONG: {v.name}: {res[v.name].check}")
            for name, why in skipped.items():
                print(f"[simulator] {name} not run: {why}")
        return table
