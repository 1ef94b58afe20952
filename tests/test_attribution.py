"""util.attribution: Shapley shares, factorial effects and bootstrap intervals on made-up factorial data."""

import itertools
import math

import pytest

from util.attribution import bootstrap, effects, medians, shapley, shapley_shares

FACTORS = ("a", "b", "c")
SUBSETS = [frozenset(s) for r in range(4) for s in itertools.combinations(FACTORS, r)]


def additive(s):
    """a saves 6, b saves 3, c saves 1, each whatever else is on."""
    return 20.0 - 6 * ("a" in s) - 3 * ("b" in s) - 1 * ("c" in s)


def test_shapley_of_an_additive_design_is_each_factors_own_saving():
    phi = shapley({s: additive(s) for s in SUBSETS}, FACTORS)
    assert phi == pytest.approx({"a": 6, "b": 3, "c": 1})


def test_shapley_splits_an_interaction_evenly_and_sums_to_the_whole_gain():
    # a and b only help together (either one alone: nothing): each gets half, in every order
    values = {s: 10.0 - 8 * ({"a", "b"} <= s) - 1 * ("c" in s) for s in SUBSETS}
    phi = shapley(values, FACTORS)
    assert phi == pytest.approx({"a": 4, "b": 4, "c": 1})
    assert sum(phi.values()) == pytest.approx(values[frozenset()] - values[frozenset(FACTORS)])
    # a waterfall in the order a, b, c would credit a with 0 and b with 8
    assert values[frozenset()] - values[frozenset("a")] == 0


def test_effects_main_and_interaction():
    values = {s: 10.0 - 8 * ({"a", "b"} <= s) - 1 * ("c" in s) for s in SUBSETS}
    e = effects(values, FACTORS)
    assert e[frozenset("c")] == pytest.approx(-1) and e[frozenset("a")] == pytest.approx(-4)
    assert e[frozenset("ab")] == pytest.approx(-4) and e[frozenset("ac")] == pytest.approx(0)


def test_shares_and_bootstrap_from_rounds():
    runs = {s: [additive(s) * f for f in (1.0, 1.02, 0.98, 1.01)] for s in SUBSETS}
    shares = shapley_shares(runs, FACTORS)
    assert shares == pytest.approx({"a": 0.6, "b": 0.3, "c": 0.1})
    assert medians(runs)[frozenset()] == pytest.approx(20 * 1.005)
    ci = bootstrap(runs, lambda r: shapley_shares(r, FACTORS), resamples=200)
    for f, share in shares.items():  # a common scale factor per round leaves the shares alone
        assert ci[f].lo <= share <= ci[f].hi and ci[f].hi - ci[f].lo < 1e-9
    assert f"{ci['a']:.2f}" == "0.60 [0.60, 0.60]"


def test_incomplete_designs_and_ragged_rounds_are_refused():
    with pytest.raises(ValueError, match="8 subsets; 1 are missing"):
        shapley({s: 1.0 for s in SUBSETS[:-1]}, FACTORS)
    runs = {s: [1.0, 2.0] for s in SUBSETS}
    runs[frozenset()] = [1.0]
    with pytest.raises(ValueError, match="same number of rounds"):
        bootstrap(runs, lambda r: {"x": 0.0})
    assert math.isclose(shapley_shares({s: [additive(s)] for s in SUBSETS}, FACTORS, gap=20.0)["a"], 0.3)
