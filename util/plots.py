"""Plots of registry runs: runtime bars, TFLOP/s bars against cuBLAS, size sweeps, and a waterfall of factors.

Every compared bar carries its value; log axes carry plain numbers (1, 2, 5, 10, 20 ...), not powers of ten.
"""

from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from .bench import Sweep, Table

COLORS = {"numba": "tab:blue", "cuda_c": "tab:orange", "cublas": "tab:green"}


def plain_log_axis(axis) -> None:
    """A log axis labelled 1, 2, 5, 10, 20, 50 ... in plain numbers."""
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    axis.set_minor_formatter(NullFormatter())


def _simulated_note(table: Table) -> str:
    return " (simulator wall time, NOT GPU time)" if table.results and table.results[0].simulated else ""


def runtime_bars(table: Table, *, title: str = "", log: bool = False, ax=None):
    """Median runtime of each numba variant (q-quantile whiskers), CUDA C and cuBLAS as vertical lines."""
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 0.45 * len(table.results) + 1.8))
    bars = [(v, r) for v, r in zip(table.variants, table.results) if v.kind == "numba" and r.correct]
    refs = [(v, r) for v, r in zip(table.variants, table.results) if v.kind != "numba" and r.correct]
    names = [r.name for _, r in bars]
    med = [1e3 * r.median for _, r in bars]
    lo = [1e3 * (r.median - min(r.times)) for _, r in bars]
    hi = [1e3 * (max(r.times) - r.median) for _, r in bars]
    ax.barh(names, med, xerr=[lo, hi], color=COLORS["numba"], alpha=0.8, capsize=3)
    for y, m in enumerate(med):
        ax.text(m, y, f" {m:.1f}", va="center", fontsize=8)
    for (v, r), color in zip(refs, ("tab:red", "tab:green", "tab:purple", "tab:orange")):
        ax.axvline(1e3 * r.median, color=color, ls="--", lw=1.5, label=f"{r.name}: {1e3 * r.median:.2f} ms")
    wrong = [r.name for r in table.results if not r.correct]
    ax.invert_yaxis()
    ax.set_xlabel("median runtime, ms (whiskers: min-max)" + _simulated_note(table))
    if log:
        ax.set_xscale("log")
        plain_log_axis(ax.xaxis)
    ax.set_title(title or table.caption(), fontsize=9)
    if refs:
        ax.legend(loc="lower right", fontsize=8)
    if wrong:
        ax.text(0.99, 0.01, "WRONG, not shown: " + ", ".join(wrong), transform=ax.transAxes,
                ha="right", va="bottom", color="red", fontsize=8)
    ax.figure.tight_layout()
    return ax


def tflops_bars(table: Table, *, peak: float | None = None, title: str = "", ax=None):
    """TFLOP/s of every correct variant, coloured by kind, each bar labelled with its value and % of cuBLAS;
    cuBLAS (and the fp32 ``peak`` in FLOP/s, if given) as vertical lines."""
    rows = [(v, r) for v, r in zip(table.variants, table.results) if r.correct]
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 0.3 * len(rows) + 1.6))
    names = [r.name for _, r in rows]
    values = [r.tflops for _, r in rows]
    ax.barh(names, values, color=[COLORS[v.kind] for v, _ in rows])
    base = table.baseline
    for y, (v, r) in enumerate(rows):
        pct = table.percent_of_baseline(r.name)
        label = f" {r.tflops:.1f}" + (f" ({pct:.0f}%)" if base and pct == pct and v.kind != "cublas" else "")
        ax.text(r.tflops, y, label, va="center", fontsize=7)
    if base:
        ax.axvline(table[base].tflops, color=COLORS["cublas"], ls="--", lw=1.5,
                   label=f"{base}: {table[base].tflops:.1f} TFLOP/s")
    if peak:
        ax.axvline(peak / 1e12, color="black", ls=":", lw=1.5, label=f"fp32 peak {peak / 1e12:.0f} TFLOP/s")
    ax.invert_yaxis()
    ax.set_xlim(0, max(values + [peak / 1e12 if peak else 0]) * 1.15)
    ax.set_xlabel("TFLOP/s (blue numba, orange CUDA C, green cuBLAS; % of cuBLAS in brackets)"
                  + _simulated_note(table))
    ax.set_title(title or table.caption(), fontsize=9)
    if base or peak:
        ax.legend(loc="lower right", fontsize=8)
    ax.figure.tight_layout()
    return ax


def sweep_lines(sweep: Sweep, *, peak: float | None = None, title: str = "", ax=None):
    """TFLOP/s of each variant over the sweep's sizes (M = N = K on a log2 axis with plain labels)."""
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    sizes = [s[0] for s in sweep.shapes]
    if any(s != (x, x, x) for s, x in zip(sweep.shapes, sizes)):
        raise ValueError("sweep_lines plots square sizes; show other shapes with Sweep's table")
    kinds = {v.name: v.kind for v in sweep.tables[0].variants}
    for name in sweep.names:
        values = sweep.tflops(name)
        ax.plot(sizes, values, "o-", color=COLORS.get(kinds[name]), label=name)
        ax.annotate(f"{values[-1]:.1f}", (sizes[-1], values[-1]), textcoords="offset points", xytext=(4, 0),
                    fontsize=7, va="center")
    if peak:
        ax.axhline(peak / 1e12, color="black", ls=":", lw=1.5, label=f"fp32 peak {peak / 1e12:.0f} TFLOP/s")
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes, [str(s) for s in sizes])
    ax.set_xlabel("M = N = K")
    ax.set_ylabel("TFLOP/s")
    ax.set_ylim(bottom=0)
    ax.set_title(title or f"{sweep.tables[0].caption()}", fontsize=9)
    ax.legend(fontsize=8)
    ax.figure.tight_layout()
    return ax


def waterfall(steps: Sequence[tuple[str, float]], *, title: str = "", unit: str = "ms", ax=None):
    """A waterfall from the first step's value to the last: each bar is the change one step made.

    ``steps`` is ``[(label, value), ...]``: the first and last are drawn as totals.
    """
    if len(steps) < 2:
        raise ValueError("waterfall needs at least a start and an end step")
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 4.5))
    labels = [s for s, _ in steps]
    vals = [v for _, v in steps]
    for i, (label, v) in enumerate(steps):
        if i in (0, len(steps) - 1):
            ax.bar(i, v, color="tab:gray")
            ax.text(i, v, f"{v:.1f}", ha="center", va="bottom", fontsize=8)
        else:
            prev = vals[i - 1]
            delta = v - prev
            ax.bar(i, delta, bottom=prev, color="tab:green" if delta < 0 else "tab:red")
            ax.text(i, max(prev, v), f"{delta:+.1f}", ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(steps)), labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(unit)
    ax.set_title(title, fontsize=9)
    ax.figure.tight_layout()
    return ax
