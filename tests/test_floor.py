"""util.floor's queueing model: mean value analysis against cases solved by hand, the asymptotic bounds every
closed network obeys, and the round trip it calibrates reproducing the reference kernel's time."""

import random

import pytest

from util.floor import LoopCost, Machine, calibrate_round_trip, mva, predict, times

H200_LIKE = Machine("test", sms=132, clock_hz=1.98e9, warps_per_sm=64, fp64_per_smsp=0.5, round_trip=600.0)


def test_one_queue_no_delay_runs_at_its_rate():
    # n customers, one queue of demand D, nothing else: each customer's pass takes n * D, the queue always busy
    cycles, util = mva([3.0], 0.0, 7)
    assert cycles == pytest.approx(21.0)
    assert util == [pytest.approx(1.0)]


def test_delay_alone_is_the_delay():
    cycles, util = mva([0.0, 0.0], 500.0, 16)
    assert cycles == pytest.approx(500.0)
    assert util == [0.0, 0.0]


def test_two_customers_by_hand():
    # one queue D = 2, delay Z = 6: n = 1: R = 2, X = 1/8, Q = 1/4; n = 2: R = 2 * 1.25 = 2.5, X = 2 / 8.5
    cycles, util = mva([2.0], 6.0, 2)
    assert cycles == pytest.approx(8.5)
    assert util[0] == pytest.approx(2 * 2.0 / 8.5)


def test_asymptotic_bounds():
    # any closed network: pass time >= max(sum(D) + Z, n * max(D)), and <= n * sum(D) + Z; utilizations <= 1
    rng = random.Random(1)
    for _ in range(200):
        demands = [rng.uniform(0, 10) for _ in range(rng.randint(1, 5))]
        delay, n = rng.uniform(0, 1000), rng.randint(1, 40)
        cycles, util = mva(demands, delay, n)
        assert cycles >= max(sum(demands) + delay, n * max(demands)) * (1 - 1e-12)
        assert cycles <= n * sum(demands) + delay + 1e-9
        assert all(0 <= u <= 1 + 1e-12 for u in util)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="customers"):
        mva([1.0], 1.0, 0)
    with pytest.raises(ValueError, match="non-negative"):
        mva([-1.0], 1.0, 4)


def test_prediction_is_at_least_the_floor_and_names_its_binding_resource():
    cost = LoopCost(issue=73, alu=2, imad=17, fp64=0, loads=32, generations=3)
    p = predict(cost, H200_LIKE, passes_per_warp=256, waves=62.0)
    bound = times(cost, H200_LIKE, 256, 62.0)
    assert p.seconds >= max(bound.values()) * (1 - 1e-12)
    assert p.binds == max(bound, key=bound.get)
    assert 0 < p.utilization["L1 load pipe"] <= 1


def test_calibrated_round_trip_reproduces_the_reference():
    ref = LoopCost(issue=9, alu=2, imad=2, fp64=0, loads=2, generations=1)
    seconds = 82.28e-3
    rt = calibrate_round_trip(ref, H200_LIKE, passes_per_warp=4092, waves=62.0, seconds=seconds)
    assert predict(ref, H200_LIKE.with_(round_trip=rt), 4092, 62.0).seconds == pytest.approx(seconds, rel=1e-9)
    with pytest.raises(ValueError, match="queues alone"):
        calibrate_round_trip(ref, H200_LIKE, 4092, 62.0, seconds=1e-9)
    with pytest.raises(ValueError, match="generation"):
        calibrate_round_trip(LoopCost(9, 2, 2, 0, 2, 0), H200_LIKE, 4092, 62.0, seconds)
