"""One registry of kernel variants: it holds what each variant is, and verification, timing, tables, static
analysis, extra-shape checks and size sweeps all loop over it.

    reg = Registry()
    reg.numba("coalesced", coalesced, nthreads=1024, nblocks_fn=grid32, note="same as naive but ...")
    reg.cuda_c("CUDA C kernel 2", twin, nthreads=1024, nblocks_fn=grid32, twin_of="coalesced")
    reg.cublas()
    table = reg.run(m=4092, n=4092, k=4092, runs=10)   # verify all, time interleaved, one table
    reg.sass_table()                                   # every variant's SASS, one table
    reg.check_shapes([(1000, 777, 513)])               # every variant verified on odd shapes
    sweep = reg.sweep([1024, 2048, 4096], only=[...])  # TFLOP/s over sizes
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Sequence

from .backend import SIMULATED, cuda, device_name
from .launch import Launch, numba_launch
from .occupancy import max_blocks_per_sm
from .timing import QUANTILES, Result, default_sizes, problem, run_verified
from .verify import Check, Problem

KINDS = ("numba", "cuda_c", "cublas")
INTRINSICS = "intrinsics"  # the tag of numba variants built on util.intrinsics (what numba-cuda cannot say)


@dataclass(frozen=True)
class Variant:
    """One kernel to verify and time: how to launch it on a Problem, and what it is."""

    name: str
    launch: Launch
    kind: str = "numba"  # "numba" | "cuda_c" | "cublas"
    note: str = ""  # one line: what changed from the previous variant, and why
    kernel: Any = None  # the numba kernel or the CUDA C twin (util.cuda_c.CudaC), for static analysis
    gpu_only: bool = False  # cannot run in the simulator (CUDA C, cuBLAS)
    threads: int = 0  # threads per block (for occupancy); 0 for cuBLAS
    sig: tuple | None = None  # numba argument types the launch passes (numba variants), for PTX/SASS
    jit_options: dict = field(default_factory=dict)  # options a numba kernel was jitted with (shipped to mlir)
    flat: bool = False  # numba variant takes 1-D row-major arrays
    twin: str | None = None  # the name of this variant's CUDA C twin, if registered
    tags: frozenset[str] = frozenset()  # e.g. {"intrinsics"}
    ffma: int = 1  # FFMA one thread does per k-step: turns the hot loop's FFMA count into an unroll factor


def cublas_launch(p: Problem, tf32: bool = False, wt: bool = False) -> None:
    """C = A @ B through torch (cuBLAS) in strict fp32 (TF32 off), or with TF32 tensor cores (``tf32``); with ``wt``
    from B transposed (``p.bt``, n x k: C = A @ W^T, the layout of the kernels that read K-contiguous B)."""
    import torch

    if wt and p.bt is None:
        raise ValueError("cuBLAS on W = B^T needs a Problem made with precision='tf32'")
    before = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = tf32
    try:
        a, b, c = (torch.as_tensor(x, device="cuda") for x in (p.a, p.bt if wt else p.b, p.c))
        torch.mm(a, b.t() if wt else b, out=c)
    finally:  # the caller's own matmuls keep their setting
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = before


def cublas_tf32_launch(p: Problem) -> None:
    """C = A @ B through torch (cuBLAS) with TF32 tensor cores allowed."""
    cublas_launch(p, tf32=True)


def cublas_tf32_wt_launch(p: Problem) -> None:
    """C = A @ W^T (W = B^T, ``p.bt``) through torch (cuBLAS) with TF32 tensor cores allowed."""
    cublas_launch(p, tf32=True, wt=True)


def cublas_bf16_launch(p: Problem) -> None:
    """C = A @ W^T through torch (cuBLAS) from the bf16 operands of a ``precision="bf16"`` Problem (``a16``,
    ``bt16``), accumulated and written in float32."""
    import torch

    if p._tensors16 is None:
        raise ValueError("cuBLAS in bf16 needs a Problem made with precision='bf16' on a GPU")
    a16, w16 = p._tensors16
    torch.mm(a16, w16.t(), out_dtype=torch.float32, out=torch.as_tensor(p.c, device="cuda"))


def default_sig(flat: bool) -> tuple:
    """The argument types a Registry launch passes: C-contiguous float32 arrays and three Python ints."""
    from numba import float32, int64

    array = float32[::1] if flat else float32[:, ::1]
    return (array,) * 3 + (int64,) * 3


def _threads(nthreads: Any) -> int:
    dims = nthreads if isinstance(nthreads, tuple) else (nthreads,)
    out = 1
    for d in dims:
        out *= int(d)
    return out


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

    def variant(self, name: str) -> Variant:
        return next(v for v in self.variants if v.name == name)

    def percent_of_baseline(self, name: str) -> float:
        """100 * median(cuBLAS) / median(name): NaN when either is wrong or missing."""
        base = self.baseline
        if base is None or not (self[name].correct and self[base].correct):
            return float("nan")
        return 100 * self[base].median / self[name].median

    def twin_ratio(self, name: str) -> float:
        """median(numba variant) / median(its CUDA C twin): NaN without a correct twin in this run."""
        twin = self.variant(name).twin
        if twin is None or twin not in self or not (self[name].correct and self[twin].correct):
            return float("nan")
        return self.ratio(name, twin)

    def best(self, kind: str = "numba", *, without: str | None = None) -> str:
        """The fastest correct variant of a kind (optionally without a tag, e.g. INTRINSICS)."""
        names = [v.name for v in self.variants if v.kind == kind and v.name in self and self[v.name].correct
                 and (without is None or without not in v.tags)]
        if not names:
            raise ValueError(f"no correct {kind} variant in this table")
        return min(names, key=lambda n: self[n].median)

    def rows(self) -> list[dict[str, Any]]:
        base = self.baseline
        lo, hi = QUANTILES
        rows = []
        for v, r in zip(self.variants, self.results):
            row = {"variant": r.name, "kind": v.kind, "correct": r.correct,
                   "median ms": r.median * 1e3, f"q{lo:g}-q{hi:g} ms": (r.quantile(lo) * 1e3, r.quantile(hi) * 1e3),
                   "TFLOP/s": r.tflops if r.correct else float("nan")}
            if base and not SIMULATED:
                row["% of cuBLAS"] = self.percent_of_baseline(r.name)
            if any(x.twin for x in self.variants):
                row["/ C twin"] = self.twin_ratio(r.name) if v.kind == "numba" else float("nan")
            row["note"] = v.note
            rows.append(row)
        return rows

    def _cells(self) -> tuple[list[str], list[list[str]]]:
        rows = self.rows()
        cols = list(rows[0]) if rows else []
        return cols, [[_fmt_cell(row[c]) for c in cols] for row in rows]

    def markdown(self) -> str:
        cols, cells = self._cells()
        out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        out += ["| " + " | ".join(r) + " |" for r in cells]
        return "\n".join(out)

    def caption(self) -> str:
        r0 = self.results[0] if self.results else None
        size = f"m,n,k = {r0.m},{r0.n},{r0.k}, " if r0 else ""
        timer = "CUPTI kernel times" if r0 and r0.timer == "cupti" else "CUDA events"
        clock = "SIMULATOR wall time, NOT GPU time" if SIMULATED else f"{timer}, median of interleaved runs"
        skipped = "".join(f"; {n} skipped: {why}" for n, why in self.skipped.items())
        return f"{size}{self.device} ({clock}){skipped}"

    def __str__(self) -> str:
        return self.caption() + "\n" + self.markdown()

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return _html_table(self.caption(), *self._cells())


def _fmt_cell(x: Any) -> str:
    if isinstance(x, tuple):
        return "–".join(_fmt_cell(v) for v in x)
    if x is True:
        return "✓"
    if x is False:
        return "WRONG"
    if isinstance(x, float):
        return "—" if x != x else f"{x:.3f}"
    return str(x)


def _html_table(caption: str, cols: list[str], cells: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(x)}</td>" for x in r) + "</tr>" for r in cells)
    return f"<p><b>{html.escape(caption)}</b></p><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


@dataclass(repr=False)
class ShapeCheck:
    """Every variant verified on extra shapes: which (variant, shape) pairs were wrong."""

    names: list[str]
    shapes: list[tuple[int, int, int]]
    wrong: dict[tuple[str, tuple[int, int, int]], Check]
    skipped: dict[str, str]

    @property
    def ok(self) -> bool:
        return not self.wrong

    def __str__(self) -> str:
        head = (f"{len(self.names)} kernels x {len(self.shapes)} shapes {self.shapes}: "
                + ("all correct" if self.ok else f"{len(self.wrong)} WRONG"))
        lines = [f"  WRONG {name} at {shape}: {check}" for (name, shape), check in self.wrong.items()]
        if self.skipped:
            lines.append(f"  not run in the simulator: {', '.join(self.skipped)}")
        return "\n".join([head, *lines])

    __repr__ = __str__


@dataclass(repr=False)
class Sweep:
    """One interleaved, verified run per problem shape: TFLOP/s and % of cuBLAS over shapes."""

    shapes: list[tuple[int, int, int]]
    tables: list[Table]

    @property
    def names(self) -> list[str]:
        return [r.name for r in self.tables[0].results] if self.tables else []

    def tflops(self, name: str) -> list[float]:
        return [t[name].tflops if name in t and t[name].correct else float("nan") for t in self.tables]

    def percent(self, name: str) -> list[float]:
        return [t.percent_of_baseline(name) if name in t else float("nan") for t in self.tables]

    def __str__(self) -> str:
        cols = ["M, N, K", *[f"{n} TFLOP/s" for n in self.names]]
        if self.tables and self.tables[0].baseline:
            cols += [f"{n} % of cuBLAS" for n in self.names if n != self.tables[0].baseline]
        lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        for i, shape in enumerate(self.shapes):
            cells = [", ".join(map(str, shape)), *[_fmt_cell(self.tflops(n)[i]) for n in self.names]]
            if self.tables[0].baseline:
                cells += [_fmt_cell(self.percent(n)[i]) for n in self.names if n != self.tables[0].baseline]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)

    __repr__ = __str__


class Registry:
    """An ordered set of variants; ``run`` verifies every one and times the correct ones, interleaved."""

    def __init__(self) -> None:
        self.variants: dict[str, Variant] = {}
        self._reports: dict[str, Any] = {}

    def add(self, variant: Variant) -> Variant:
        if variant.name in self.variants:
            raise ValueError(f"a variant named {variant.name!r} is already registered")
        if variant.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {variant.kind!r}")
        self.variants[variant.name] = variant
        return variant

    def numba(self, name: str, kernel: Any, nthreads: Any, nblocks_fn: Callable, kernel_args: Sequence = (), *,
              flat: bool = False, sig: Sequence | None = None, jit_options: dict | None = None,
              tags: Iterable[str] = (), ffma: int = 1, note: str = "", launch: Launch | None = None) -> Variant:
        """A numba kernel ``kernel(a, b, c, m, n, k, *kernel_args)``. ``sig``: its argument types for static
        analysis (default: what the launch passes, C-contiguous float32 arrays and int64 sizes); ``jit_options``:
        the options it was jitted with when the kernel itself does not keep them (``cuda.jit(sig, **options)``);
        ``tags``: e.g. ``{INTRINSICS}``; ``ffma``: FFMA one thread does per k-step. ``launch``: a function
        ``launch(problem)`` that runs it, for a kernel the standard launch cannot start (one that picks its
        grid per shape, or launches a second kernel); ``kernel`` is then what the static analysis reads."""
        launch = launch or numba_launch(kernel, nthreads, nblocks_fn, kernel_args, flat)
        return self.add(Variant(name, launch, "numba", note, kernel, threads=_threads(nthreads),
                                sig=tuple(sig) if sig is not None else default_sig(flat),
                                jit_options=dict(jit_options or {}), flat=flat, tags=frozenset(tags),
                                ffma=ffma))

    def cuda_c(self, name: str, twin: Any, nthreads: Any, nblocks_fn: Callable, *, shmem: int = 0,
               twin_of: str | Sequence[str] = (), ffma: int = 1, note: str = "",
               launch: Launch | None = None) -> Variant:
        """A CUDA C twin (util.cuda_c.CudaC) launched like the numba kernels, on the same arrays; ``twin_of``
        names the numba variant(s) whose twin it is; ``launch`` as for ``numba``."""
        twin_of = (twin_of,) if isinstance(twin_of, str) else tuple(twin_of)
        for of in twin_of:
            if of not in self.variants or self.variants[of].kind != "numba":
                raise ValueError(f"twin_of={of!r}: no numba variant of that name is registered (register it first)")
        variant = self.add(Variant(name, launch or twin.launch(nthreads, nblocks_fn, shmem=shmem), "cuda_c", note, twin,
                                   gpu_only=True, threads=_threads(nthreads), ffma=ffma))
        for of in twin_of:
            self.variants[of] = replace(self.variants[of], twin=name)
        return variant

    def cublas(self, name: str | None = None, note: str = "the ceiling", *, tf32: bool = False,
               bf16: bool = False, wt: bool = False) -> Variant:
        """cuBLAS through torch: strict fp32 (TF32 off), TF32 tensor cores with ``tf32=True`` (from B transposed,
        C = A @ W^T, with ``wt=True``: ``precision="tf32"`` runs only), or bf16 operands with float32 sums and output
        with ``bf16=True`` (``precision="bf16"`` runs only)."""
        if tf32 and bf16:
            raise ValueError("choose tf32 or bf16, not both")
        if wt and not tf32:
            raise ValueError("wt=True is cuBLAS in TF32 on B transposed: give tf32=True too")
        launch, default = ((cublas_bf16_launch, "cuBLAS (BF16, fp32 out)") if bf16 else
                           (cublas_tf32_wt_launch, "cuBLAS (TF32, A @ W^T)") if wt else
                           (cublas_tf32_launch, "cuBLAS (TF32)") if tf32 else (cublas_launch, "cuBLAS (fp32, TF32 off)"))
        return self.add(Variant(name or default, launch, "cublas", note, gpu_only=True))

    def __iter__(self):
        return iter(self.variants.values())

    def __len__(self) -> int:
        return len(self.variants)

    def __getitem__(self, name: str) -> Variant:
        return self.variants[name]

    def names(self, kind: str | None = None, *, tag: str | None = None) -> list[str]:
        """Variant names in registry order, of one kind and/or with one tag."""
        return [v.name for v in self if (kind is None or v.kind == kind) and (tag is None or tag in v.tags)]

    def _chosen(self, only: Sequence[str] | None) -> list[Variant]:
        if only is not None:
            unknown = [n for n in only if n not in self.variants]
            if unknown:
                raise KeyError(f"not registered: {unknown}; registered: {list(self.variants)}")
        return [v for v in self if only is None or v.name in only]

    def run(self, m: int | None = None, n: int | None = None, k: int | None = None, *, runs: int = 10,
            seed: int = 0, only: Sequence[str] | None = None, flush: bool | None = None, shuffle: bool = False,
            hide_launch: bool = False, precision: str = "fp32", c_offset: int = 0, timer: str = "events",
            verbose: bool = True) -> Table:
        """Verify each variant on one random problem, then time them ``runs`` times, interleaved (in a new
        random order each round with ``shuffle``); ``precision``: the inputs rounded to "tf32" or "bf16" values
        (util.verify.Problem), for tensor-core kernels; ``c_offset``: C starts that many floats past its
        allocation (1-3: not 16-byte aligned); ``timer``: "events" or "cupti" (``util.timing.run_verified``)."""
        m, n, k = default_sizes(m, n, k, quiet=not verbose)
        chosen = self._chosen(only)
        skipped = {v.name: "needs a GPU (the simulator runs numba kernels only)"
                   for v in chosen if v.gpu_only and SIMULATED}
        todo = [v for v in chosen if v.name not in skipped]
        res = run_verified(problem(m, n, k, seed, precision, c_offset), runs, {v.name: v.launch for v in todo},
                           timer=timer, flush=flush, shuffle=shuffle, hide_launch=hide_launch)
        table = Table([res[v.name] for v in todo], todo, device_name(), skipped)
        if verbose:
            for v in todo:
                if not res[v.name].correct:
                    print(f"WRONG: {v.name}: {res[v.name].check}")
            for name, why in skipped.items():
                print(f"[simulator] {name} not run: {why}")
        return table

    def check_shapes(self, shapes: Sequence[tuple[int, int, int]], *, only: Sequence[str] | None = None,
                     seed: int = 1, precision: str = "fp32") -> ShapeCheck:
        """Run every variant once on each shape (C poisoned with NaN) and check every element (``precision``: as
        for ``run``)."""
        chosen = self._chosen(only)
        skipped = {v.name: "needs a GPU" for v in chosen if v.gpu_only and SIMULATED}
        todo = [v for v in chosen if v.name not in skipped]
        wrong = {}
        for shape in shapes:
            p = Problem(*shape, seed=seed, precision=precision)
            for v in todo:
                p.poison()
                v.launch(p)
                cuda.synchronize()
                check = p.check()
                if not check.correct:
                    wrong[(v.name, tuple(shape))] = check
        return ShapeCheck([v.name for v in todo], [tuple(s) for s in shapes], wrong, skipped)

    def sweep(self, shapes: Sequence[int | tuple[int, int, int]], *, only: Sequence[str] | None = None,
              runs: int = 5, flush: bool | None = None, shuffle: bool = False, hide_launch: bool = False) -> Sweep:
        """One verified, interleaved run per shape (an int s means s x s x s) of the chosen variants."""
        full = [(s, s, s) if isinstance(s, int) else tuple(s) for s in shapes]
        tables = [self.run(*shape, runs=runs, only=only, flush=flush, shuffle=shuffle, hide_launch=hide_launch,
                           verbose=False) for shape in full]
        return Sweep(full, tables)

    # ---- static analysis ---------------------------------------------------------------------------------

    def report(self, name: str):
        """The SASS report (util.sass.KernelReport) of a numba variant or a CUDA C twin, compiled for sm_90."""
        if name not in self._reports:
            from .compile import cubin_from_ptx, numba_ptx
            from .sass import analyze

            v = self.variants[name]
            if v.kind == "numba":
                cubin = cubin_from_ptx(numba_ptx(v.kernel, v.sig, **v.jit_options))
            elif v.kind == "cuda_c":
                cubin = v.kernel.cubin("sm_90")
            else:
                raise ValueError(f"{name} is {v.kind}: it has no source here to compile")
            self._reports[name] = analyze(cubin, ffma_per_iteration=v.ffma)
        return self._reports[name]

    def blocks_per_sm(self, name: str) -> int:
        """How many blocks of the variant fit on one sm_90 SM (registers, threads, static shared memory)."""
        r = self.report(name)
        return max_blocks_per_sm(r.registers, self.variants[name].threads, r.shared_bytes)

    def sass_table(self, only: Sequence[str] | None = None):
        """One table of every numba variant and CUDA C twin: registers, blocks per SM, spills, hot loop."""
        from .sass import side_by_side

        names = [v.name for v in self._chosen(only) if v.kind != "cublas"]
        return side_by_side({n: self.report(n) for n in names},
                            extra={n: {"threads": self.variants[n].threads, "blocks/SM": self.blocks_per_sm(n)}
                                   for n in names})
