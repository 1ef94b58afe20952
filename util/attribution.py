"""Order-free attribution of a runtime gap to factors measured in a full factorial design.

A factorial run times one kernel for every subset of ``n`` factors (``2**n`` kernels). Removing the factors one
at a time in a fixed order (a waterfall) credits each with what it gained *at that point of that order*; with
interactions, another order tells another story. The Shapley value credits each factor with its gain averaged
over every order in which the factors could be added, so the credits sum to the whole gain and depend on no
order. Main effects and interactions are the usual factorial contrasts.

    runs = {frozenset(s): [t_round0, t_round1, ...] for s in subsets}    # seconds, one per interleaved round
    shares = shapley_shares(runs, factors)                                # {factor: share of the gain}
    ci = bootstrap(runs, factors, shapley_shares, rounds=1000)           # {factor: (lo, hi)}
"""

from __future__ import annotations

import itertools
import math
import statistics
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

Subset = frozenset


def _check(values: Mapping[Subset, float], factors: Sequence[str]) -> None:
    if len(set(factors)) != len(factors) or not factors:
        raise ValueError(f"factors must be distinct names, got {list(factors)}")
    want = {frozenset(s) for r in range(len(factors) + 1) for s in itertools.combinations(factors, r)}
    missing = want - set(values)
    if missing:
        example = sorted(sorted(s) for s in missing)[:3]
        raise ValueError(f"a full factorial over {len(factors)} factors needs all {len(want)} subsets; "
                         f"{len(missing)} are missing, e.g. {example}")


def medians(runs: Mapping[Subset, Sequence[float]]) -> dict[Subset, float]:
    """The median of each subset's timed rounds."""
    return {s: statistics.median(t) for s, t in runs.items()}


def shapley(values: Mapping[Subset, float], factors: Sequence[str]) -> dict[str, float]:
    """Each factor's Shapley value of the *decrease* of ``values`` (e.g. seconds) from the empty set to the
    full set: the mean, over all orders of adding the factors, of what adding it saved. They sum to
    ``values[empty] - values[full]``."""
    _check(values, factors)
    n = len(factors)
    out = {}
    for f in factors:
        others = [g for g in factors if g != f]
        total = 0.0
        for r in range(n):
            weight = math.factorial(r) * math.factorial(n - r - 1) / math.factorial(n)
            for s in itertools.combinations(others, r):
                s = frozenset(s)
                total += weight * (values[s] - values[s | {f}])
        out[f] = total
    return out


def shapley_shares(runs: Mapping[Subset, Sequence[float]], factors: Sequence[str],
                   gap: float | None = None) -> dict[str, float]:
    """Shapley values of the median times as shares of ``gap`` (default: empty-set time - full-set time)."""
    values = medians(runs)
    phi = shapley(values, factors)
    whole = values[frozenset()] - values[frozenset(factors)] if gap is None else gap
    return {f: v / whole for f, v in phi.items()}


def effects(values: Mapping[Subset, float], factors: Sequence[str], order: int = 2) -> dict[Subset, float]:
    """Factorial effects up to ``order``: for a set E of factors, the mean of values over subsets where an even
    number of E's factors is off minus the mean where an odd number is off (with ``order=1`` the main effect
    of f is mean(values | f on) - mean(values | f off); negative means the factor lowers the value)."""
    _check(values, factors)
    subsets = list(values)
    out = {}
    for r in range(1, order + 1):
        for e in itertools.combinations(factors, r):
            signs = [(-1) ** sum(f not in s for f in e) for s in subsets]
            out[frozenset(e)] = 2 * sum(sg * values[s] for sg, s in zip(signs, subsets)) / len(subsets)
    return out


@dataclass(frozen=True)
class Interval:
    """A bootstrap percentile interval around a point estimate."""

    estimate: float
    lo: float
    hi: float

    def __format__(self, spec: str) -> str:
        return f"{format(self.estimate, spec)} [{format(self.lo, spec)}, {format(self.hi, spec)}]"


def bootstrap(runs: Mapping[Subset, Sequence[float]], statistic: Callable[[Mapping[Subset, Sequence[float]]], dict],
              *, resamples: int = 1000, level: float = 0.95, seed: int = 0) -> dict[str, Interval]:
    """Percentile intervals of ``statistic(runs)`` (a dict of numbers) over resampled rounds.

    Rounds are resampled whole (round r of every subset together), which keeps what a round shares (clock,
    temperature, neighbours) together, as an interleaved run measured it."""
    lengths = {len(t) for t in runs.values()}
    if len(lengths) != 1:
        raise ValueError(f"every subset needs the same number of rounds, got {sorted(lengths)}")
    n_rounds = lengths.pop()
    if n_rounds < 2:
        raise ValueError("bootstrap needs at least 2 rounds")
    rng = np.random.default_rng(seed)
    point = statistic(runs)
    draws = {k: [] for k in point}
    for _ in range(resamples):
        pick = rng.integers(0, n_rounds, n_rounds)
        sample = {s: [t[i] for i in pick] for s, t in runs.items()}
        for k, v in statistic(sample).items():
            draws[k].append(v)
    tail = (1 - level) / 2 * 100
    return {k: Interval(point[k], float(np.percentile(draws[k], tail)), float(np.percentile(draws[k], 100 - tail)))
            for k in point}
