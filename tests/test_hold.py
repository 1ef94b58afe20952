"""util.timing's held timing (``hide_launch``): a launch the host was slow to enqueue is timed again behind a
longer hold, and a host too slow every time gets a clear error. The GPU is faked: events, the hold kernel and the
host's clock are stand-ins, so that the retry rule itself is checked on a CPU."""

import pytest

import util.timing as T


class FakeEvent:
    def record(self):
        pass

    def synchronize(self):
        pass


class FakeCuda:
    def event(self, timing=True):
        return FakeEvent()

    def event_elapsed_time(self, start, end):
        return 0.25  # ms


class FakeProblem:
    def __init__(self):
        self.poisoned = 0

    def poison(self):
        self.poisoned += 1


def run_held(monkeypatch, host_seconds):
    """_launch_held with the host taking host_seconds[i] to enqueue try i; returns ((seconds, tries), holds asked,
    the problem)."""
    holds, clock = [], {"t": 0.0, "try": 0}

    def hold_kernel():
        return {(1, 1): lambda ns: holds.append(ns / 1e9)}

    def perf_counter():
        return clock["t"]

    def launch(p):
        clock["t"] += host_seconds[clock["try"]]
        clock["try"] += 1

    monkeypatch.setattr(T, "cuda", FakeCuda())
    monkeypatch.setattr(T, "_hold_kernel", hold_kernel)
    monkeypatch.setattr(T, "_flush_l2", lambda: None)
    monkeypatch.setattr(T.time, "perf_counter", perf_counter)
    p = FakeProblem()
    return T._launch_held(p, launch, flush=True), holds, p


def test_a_quick_host_is_timed_at_once(monkeypatch):
    (seconds, tries), holds, p = run_held(monkeypatch, [1e-4])
    assert seconds == pytest.approx(0.25e-3) and tries == 1
    assert holds == [pytest.approx(T.HOLD_S)] and p.poisoned == 0


def test_a_slow_host_gets_a_longer_hold(monkeypatch):
    # 1.9 ms to enqueue (more than half of the 3 ms hold), then the same again: the second try holds 4 x 1.9 ms
    (seconds, tries), holds, p = run_held(monkeypatch, [1.9e-3, 1.9e-3])
    assert seconds == pytest.approx(0.25e-3) and tries == 2  # the launch ran twice: the second is the one timed
    assert holds[0] == pytest.approx(T.HOLD_S) and holds[1] == pytest.approx(4 * 1.9e-3)
    assert p.poisoned == 1  # C poisoned again before the second try


def test_a_host_too_slow_every_time_is_an_error(monkeypatch):
    with pytest.raises(RuntimeError, match="without hide_launch"):
        run_held(monkeypatch, [0.2] * T.HOLD_TRIES)
