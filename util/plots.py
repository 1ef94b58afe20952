"""Plots of a registry run: runtime bars with reference lines, and a waterfall of factors."""

from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt

from .bench import Table


def runtime_bars(table: Table, *, title: str = "", log: bool = False, ax=None):
    """Median runtime of each numba variant (min-max whiskers), CUDA C and cuBLAS as horizontal lines."""
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 0.45 * len(table.results) + 1.8))
    bars = [(v, r) for v, r in zip(table.variants, table.results) if v.kind == "numba" and r.correct]
    refs = [(v, r) for v, r in zip(table.variants, table.results) if v.kind != "numba" and r.correct]
    names = [r.name for _, r in bars]
    med = [1e3 * r.median for _, r in bars]
    lo = [1e3 * (r.median - min(r.times)) for _, r in bars]
    hi = [1e3 * (max(r.times) - r.median) for _, r in bars]
    ax.barh(names, med, xerr=[lo, hi], color="tab:blue", alpha=0.8, capsize=3)
    for y, m in enumerate(med):
        ax.text(m, y, f" {m:.1f}", va="center", fontsize=8)
    for (v, r), color in zip(refs, ("tab:red", "tab:green", "tab:purple", "tab:orange")):
        ax.axvline(1e3 * r.median, color=color, ls="--", label=f"{r.name}: {1e3 * r.median:.2f} ms")
    wrong = [r.name for r in table.results if not r.correct]
    ax.invert_yaxis()
    ax.set_xlabel("median runtime, ms" + (" (simulator wall time, NOT GPU time)" if table.results and table.results[0].simulated else ""))
    if log:
        ax.set_xscale("log")
    ax.set_title(title or table.caption(), fontsize=9)
    if refs:
        ax.legend(loc="lower right", fontsize=8)
    if wrong:
        ax.text(0.99, 0.01, "WRONG, not shown: " + ", ".join(wrong), transform=ax.transAxes,
                ha="right", va="bottom", color="red", fontsize=8)
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
