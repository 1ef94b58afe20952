"""Verified timing of SGEMM kernels: ``run_verified``, ``measure_runtime`` and ``cuda_mean_runtime``; and
``time_calls``, the unverified timing that ``util.sgemm``'s ``tune`` chooses among correct plans with.

Timers: ``"events"`` brackets each launch with CUDA events; ``"cupti"`` reads the same interval from the
kernels' own start and end times, recorded by CUPTI through torch.profiler (nanoseconds, where events resolve
about half a microsecond): from the first kernel's start, or with ``hide_launch`` the hold kernel's end, to the
launch's last kernel's end, so that a launch of several kernels (split-K and its sum) counts whole. Under numba's
simulator there is no device clock: the times are simulator wall time and are labelled so everywhere.

Before every timed launch the output is poisoned with NaN and, with ``flush=True`` (the default, as llm.c's
and Triton's benchmark harnesses do), the L2 cache is flushed by writing a buffer of twice its size, so that
every launch starts with its inputs in device memory, not in L2. Neither is inside the timed interval.
"""

from __future__ import annotations

import re
import statistics
import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Sequence

import numpy as np

from .backend import SIMULATED, cuda, device_name, kernel_name
from .launch import Launch, numba_launch
from .verify import Check, Problem, check_sizes

GPU_SIZE = 4092
SIM_SIZE = 48  # the simulator runs 48^3 in about a second
TIMERS = ("cupti", "events")
FLUSH_L2 = True  # flush L2 before every timed launch unless told otherwise (see docs/notes.md for the measurement)
QUANTILES = (0.2, 0.8)  # shown beside the median


@lru_cache(maxsize=2)
def problem(m: int, n: int, k: int, seed: int = 0, precision: str = "fp32", c_offset: int = 0) -> Problem:
    """A cached test problem (inputs, reference, tolerance), shared by every kernel timed on it."""
    return Problem(m, n, k, seed, precision, c_offset)


def default_sizes(m: int | None, n: int | None, k: int | None, *, quiet: bool = False) -> tuple[int, int, int]:
    """Fill in sizes not given: 4092 on a GPU, SIM_SIZE under the simulator (with a printed note)."""
    size = SIM_SIZE if SIMULATED else GPU_SIZE
    if SIMULATED and None in (m, n, k) and not quiet:
        print(f"[simulator] sizes not given shrink to {size} (the simulator is ~10^6x slower than a GPU); "
              "pass m, n, k to choose.")
    return (size if m is None else m, size if n is None else n, size if k is None else k)


@dataclass
class Result:
    """A verified timing: ``times`` in seconds, one per timed run (empty for a wrong kernel)."""

    name: str
    times: list[float]
    correct: bool
    device: str
    simulated: bool
    m: int
    n: int
    k: int
    timer: str
    check: Check | None = field(default=None, repr=False)
    kernel_times: list[float] = field(default_factory=list, repr=False)  # cupti: the call's kernels' own durations

    @property
    def seconds(self) -> float:
        """Mean over the timed runs (the number the original notebook printed)."""
        return statistics.fmean(self.times) if self.times else float("nan")

    @property
    def median(self) -> float:
        return statistics.median(self.times) if self.times else float("nan")

    @property
    def spread(self) -> float:
        """(max - min) / median of the timed runs."""
        return (max(self.times) - min(self.times)) / self.median if self.times else float("nan")

    def quantile(self, q: float) -> float:
        """The q-quantile of the timed runs (linear interpolation; 0.5 is the median)."""
        if not 0.0 <= q <= 1.0:
            raise ValueError(f"q must be in [0, 1], got {q!r}")
        return float(np.quantile(self.times, q)) if self.times else float("nan")

    @property
    def tflops(self) -> float:
        return 2.0 * self.m * self.n * self.k / self.median / 1e12

    @property
    def clock(self) -> str:
        return "simulator wall time, NOT GPU time" if self.simulated else f"{self.timer} device time"

    def summary(self) -> str:
        if not self.correct:
            return f"{self.name}: WRONG ({self.check}) — not timed"
        lo, hi = (self.quantile(q) for q in QUANTILES)
        return (f"{self.name}: median {_fmt(self.median)} (q{QUANTILES[0]:g}-q{QUANTILES[1]:g} {_fmt(lo)}–{_fmt(hi)}, "
                f"min-max {100 * self.spread:.1f}%) over {len(self.times)} runs, {self.clock} on {self.device}; "
                f"{self.check}")

    def __repr__(self) -> str:
        shown = "WRONG" if not self.correct else f"median={_fmt(self.median)} mean={_fmt(self.seconds)}"
        return (f"Result({self.name!r}, {shown}, runs={len(self.times)}, m,n,k={self.m},{self.n},{self.k}, "
                f"device={self.device!r}{', SIMULATED' if self.simulated else ''})")


def _fmt(seconds: float) -> str:
    return f"{seconds:.4g}s"


# ---- timers -----------------------------------------------------------------------------------------

class L2Flush:
    """Evicts the GPU's L2 cache by writing a buffer of twice its size (a memset; no-op in the simulator)."""

    def __init__(self) -> None:
        self._buffer = None

    def __call__(self) -> None:
        if SIMULATED:
            return
        if self._buffer is None:
            import torch

            size = 2 * torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
            self._buffer = torch.empty(max(size, 1 << 20), dtype=torch.uint8, device="cuda")
        self._buffer.zero_()


_flush_l2 = L2Flush()


def _time_events(p: Problem, launch: Launch) -> float:
    start, end = cuda.event(timing=True), cuda.event(timing=True)
    start.record()
    launch(p)
    end.record()
    end.synchronize()
    return cuda.event_elapsed_time(start, end) / 1e3


HOLD_S = 3e-3  # how long the hold kernel first keeps the GPU busy while the host enqueues a timed launch
HOLD_TRIES = 4  # a launch the host took too long to enqueue is timed again (after a fresh poison and flush)...
HOLD_MAX_S = 0.1  # ...behind a longer hold each time (4x the host's time, at least 2x the last), up to this


@lru_cache(maxsize=1)
def _hold_kernel():
    @cuda.jit
    def hold(ns):
        """One thread sleeps about ns nanoseconds (cuda.nanosleep in steps of 1 us)."""
        t = 0
        while t < ns:
            cuda.nanosleep(1000)
            t += 1000

    return hold


def _launch_held(p: Problem, launch: Launch, flush: bool) -> tuple[float, int]:
    """Events around the launch, with the GPU kept busy (a sleeping kernel, as nvbench's blocking kernel) while
    the host enqueues them: the interval is GPU time only, without the host's launch overhead. A launch whose
    enqueueing took more than half the hold (a garbage collection, a busy host) is poisoned, flushed and timed
    again behind a longer hold (four times the host's time, at least twice the last hold). Returns (seconds, how
    many times the launch ran: the last one is timed)."""
    hold = HOLD_S
    for attempt in range(HOLD_TRIES):
        if attempt:
            p.poison()
            if flush:
                _flush_l2()
        start, end = cuda.event(timing=True), cuda.event(timing=True)
        _hold_kernel()[1, 1](int(hold * 1e9))
        t0 = time.perf_counter()
        start.record()
        launch(p)
        end.record()
        host = time.perf_counter() - t0
        end.synchronize()
        if host <= hold / 2:
            return cuda.event_elapsed_time(start, end) / 1e3, attempt + 1
        used, hold = hold, min(max(2 * hold, 4 * host), HOLD_MAX_S)
    raise RuntimeError(f"enqueuing the launch took {host * 1e6:.0f} us on the host {HOLD_TRIES} times, the last time "
                       f"behind a hold of {used * 1e6:.0f} us: too long to be sure the GPU never waited; time it "
                       f"without hide_launch, or find what keeps the host busy")


def _time_wall(p: Problem, launch: Launch) -> float:
    t0 = time.perf_counter()
    launch(p)
    cuda.synchronize()
    return time.perf_counter() - t0


def run_verified(p: Problem, runs: int, launches: dict[str, Launch], *, timer: str = "events",
                 flush: bool | None = None, shuffle: bool = False, hide_launch: bool = False) -> dict[str, Result]:
    """Warm up and check each launch, then time the correct ones ``runs`` times, interleaved.

    Before every launch C is poisoned with NaN (and, with ``flush``, default ``FLUSH_L2``, the L2 cache is
    flushed); after every launch every element is checked. A launch that is ever wrong is reported WRONG with
    no time. Each round launches every kernel once, in registry order, or with ``shuffle`` in an order drawn
    afresh each round (seeded), so that no kernel always follows the same neighbour. ``times[r]`` of every
    result is round r. With ``hide_launch`` a sleeping kernel keeps the GPU busy while the host enqueues each
    timed launch, so that the time is the GPU's alone, without the host's launch overhead (which a launch of
    several kernels, or numba's dispatcher, adds on small problems). With ``timer="cupti"`` each launch's kernels
    are first recorded once on their own (its signature), then found in the timed runs' profile in launch order.
    """
    check_sizes(runs=runs)
    flush = FLUSH_L2 if flush is None else flush
    if not isinstance(flush, bool):
        raise TypeError(f"flush must be True or False, got {flush!r}")
    if timer not in TIMERS:
        raise ValueError(f"timer must be one of {TIMERS}, got {timer!r}")
    dev = device_name()
    times: dict[str, list[float]] = {name: [] for name in launches}
    kernels: dict[str, list[float]] = {}  # cupti: each timed call's kernels' own durations, summed
    checks: dict[str, Check] = {}
    for name, launch in launches.items():  # warm-up: JIT compile, then verify
        p.poison()
        launch(p)
        cuda.synchronize()
        checks[name] = p.check()
    alive = [name for name in launches if checks[name].correct]

    rng = np.random.default_rng(0)

    order: list[str] = []  # the timed launches, in the order they ran

    def timed_loop(clock: Callable[[Problem, Launch], float]) -> None:
        for _ in range(runs):
            for name in rng.permutation(alive).tolist() if shuffle else list(alive):
                p.poison()
                if flush:
                    _flush_l2()
                order.append(name)
                times[name].append(clock(p, launches[name]))
                c = p.check()
                if not c.correct or c.max_err_over_tol > checks[name].max_err_over_tol:
                    checks[name] = c
                if not c.correct:  # wrong on a later run (a race?): report it, time nothing
                    alive.remove(name)
                    times[name].clear()

    if SIMULATED:
        timed_loop(_time_wall)
    elif timer == "events":
        timed_loop((lambda q, launch: _launch_held(q, launch, flush)[0]) if hide_launch else _time_events)
    else:
        hold = profiled_spans(lambda: _hold_kernel()[1, 1](0))[0][0] if hide_launch else None
        signatures = {}
        for name in alive:
            p.poison()
            cuda.synchronize()
            signatures[name] = tuple(kn for kn, _, _ in profiled_spans(lambda launch=launches[name]: launch(p)))

        tries: list[int] = []  # how many times each timed launch ran (a held one may run again)

        def clock(q: Problem, launch: Launch) -> float:
            if hide_launch:
                tries.append(_launch_held(q, launch, flush)[1])
            else:
                launch(q)
                cuda.synchronize()
                tries.append(1)
            return float("nan")  # read from the profile below

        spans = profiled_spans(lambda: timed_loop(clock))
        got = cupti_times(spans, list(zip(order, tries)), signatures, hold)
        for name in alive:
            times[name] = [span for span, _ in got[name]]
            kernels[name] = [own for _, own in got[name]]
    return {name: Result(name, times[name], name in alive, dev, SIMULATED, p.m, p.n, p.k,
                         "wall" if SIMULATED else timer, checks[name], kernels.get(name, []))
            for name in launches}


class _NoReset:
    """Stands in for a Problem where a launch needs no poisoning before a retimed try (``time_calls``)."""

    def poison(self) -> None:
        pass


def time_calls(calls: dict[str, Callable[[], None]], runs: int, *, flush: bool = True) -> dict[str, float]:
    """The median GPU time (seconds) of each call over ``runs`` interleaved rounds, unverified: a selection
    among calls already known to be correct (``util.sgemm``'s ``tune``), not a figure to report (``run_verified``
    is). Each call is warmed up once; round r starts at call r (mod their number), so that none always follows the
    same one; before each timed launch the L2 cache is flushed (``flush``) and the GPU is held while the host
    enqueues it, as ``run_verified(hide_launch=True)`` does. In the simulator: wall time."""
    check_sizes(runs=runs)
    names = list(calls)
    for name in names:
        calls[name]()
    cuda.synchronize()
    times: dict[str, list[float]] = {name: [] for name in names}
    reset = _NoReset()
    for r in range(runs):
        for name in names[r % len(names):] + names[:r % len(names)]:
            launch = lambda _p, call=calls[name]: call()  # noqa: E731 - the timers' launch(p) form
            if SIMULATED:
                times[name].append(_time_wall(reset, launch))
                continue
            if flush:
                _flush_l2()
            times[name].append(_launch_held(reset, launch, flush)[0])
    return {name: statistics.median(ts) for name, ts in times.items()}


# ---- the API of the original notebook ---------------------------------------------------------------

def measure_runtime(kernel: Any, nthreads: Any, nblocks_fn: Callable, kernel_args: Sequence = (), *,
                    m: int | None = None, n: int | None = None, k: int | None = None, runs: int = 3,
                    flat: bool = False, timer: str = "cupti", flush: bool | None = None, seed: int = 0,
                    verbose: bool = True) -> Result:
    """Verify ``kernel`` on random float32 inputs, then time ``runs`` launches on the device.

    ``kernel(a, b, c, m, n, k, *kernel_args)`` computes C = A @ B for a (m x k), b (k x n), c (m x n)
    (1-D row-major with ``flat=True``) and is launched as ``kernel[nblocks_fn((m, n), nthreads), nthreads]``.
    Sizes default to 4092 on a GPU and shrink under the simulator. Returns a :class:`Result`.
    """
    launch = numba_launch(kernel, nthreads, nblocks_fn, kernel_args, flat)
    m, n, k = default_sizes(m, n, k, quiet=not verbose)
    check_sizes(m=m, n=n, k=k, runs=runs)
    name = kernel_name(kernel)
    if verbose:
        print(f"Measuring runtime of kernel {name} for m,n,k = {m},{n},{k}, averaging over {runs} runs.")
    res = run_verified(problem(m, n, k, seed), runs, {name: launch}, timer=timer, flush=flush)[name]
    if verbose:
        if res.correct:
            print(_fmt(res.seconds) + (" (simulator wall time, NOT GPU time)" if res.simulated else ""))
        print(res.summary())
    return res


def profiled_kernels(run: Callable[[], None]) -> list[tuple[str, float]]:
    """(kernel name, device seconds) for every GPU kernel launch that ``run()`` makes, under torch.profiler (one
    profiling cycle; memsets and copies left out); ``run`` synchronizes before it returns."""
    return [(name, end - start) for name, start, end in profiled_spans(run)]


def profiled_spans(run: Callable[[], None]) -> list[tuple[str, float, float]]:
    """(kernel name, start, end) in device seconds for every GPU kernel launch that ``run()`` makes, in order of
    start, under torch.profiler (one profiling cycle; memsets and copies left out); ``run`` synchronizes."""
    import warnings

    from torch.profiler import ProfilerActivity, profile

    cuda.synchronize()
    with warnings.catch_warnings():  # torch warns that a profile keeps only its last cycle: we use one cycle
        warnings.filterwarnings("ignore", message=".*Profiler clears events at the end of each cycle")
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            run()
            cuda.synchronize()
    return sorted(((e.name, e.time_range.start / 1e6, e.time_range.end / 1e6) for e in _kernel_events(prof)),
                  key=lambda r: r[1])


def cupti_times(spans: Sequence[tuple[str, float, float]], order: Sequence[tuple[str, int]],
                signatures: dict[str, tuple[str, ...]], hold: str | None = None
                ) -> dict[str, list[tuple[float, float]]]:
    """Each timed launch's seconds from a profile's kernels (``spans``: name, start, end, in order of start), and
    its kernels' own durations summed (the span less the wait before the first kernel and between kernels).

    ``order``: the launches in the order they ran, each with how many times it ran (the last one counts: a held
    launch the host was slow to enqueue runs again); ``signatures``: the kernels each launch makes, in order;
    ``hold``: the hold kernel's name where the GPU was held while the host enqueued each launch. A launch's time
    runs from its first kernel's start (or the hold kernel's end just before it) to its last kernel's end; other
    kernels between launches (poisoning, flushing, checking) are passed over. A launch whose kernels are not found
    in that order raises: the profile does not show what the timing assumes."""
    at, out = 0, {name: [] for name, _ in order}
    for name, tries in order:
        sig = signatures[name]
        if not sig:
            raise RuntimeError(f"{name!r} launched no kernel when recorded on its own: nothing to time")
        for _ in range(tries):
            first = hold if hold is not None else sig[0]
            while at < len(spans) and spans[at][0] != first:
                at += 1
            lead = 1 if hold is not None else 0
            got = tuple(s[0] for s in spans[at + lead:at + lead + len(sig)])
            if at >= len(spans) or got != sig:
                raise RuntimeError(f"the profile does not show {name!r}'s kernels {sig}"
                                   + (f" after the hold kernel {hold!r}" if hold is not None else "")
                                   + f" where expected (found {got or 'no more kernels'})")
            start = spans[at][2] if hold is not None else spans[at][1]
            end = spans[at + lead + len(sig) - 1][2]
            own = sum(e - b for _, b, e in spans[at + lead:at + lead + len(sig)])
            at += lead + len(sig)
        out[name].append((end - start, own))
    return out


def kernel_durations(prof: Any) -> list[tuple[str, float]]:
    """(kernel name, device seconds) for every GPU kernel launch in a torch.profiler profile."""
    try:
        from torch.autograd.profiler import profile as _legacy
        from torch.profiler import profile as _profile
    except ImportError as e:  # pragma: no cover
        raise TypeError("cuda_mean_runtime needs torch.profiler") from e
    if not isinstance(prof, (_profile, _legacy)):
        raise TypeError(f"expected a torch.profiler.profile (the object of `with profile(...) as p`), "
                        f"got {type(prof).__name__}")
    return [(e.name, e.time_range.elapsed_us() / 1e6) for e in _kernel_events(prof)]


def _kernel_events(prof: Any) -> list[Any]:
    """A torch.profiler profile's GPU kernel events (memsets and copies left out)."""
    from torch.autograd import DeviceType

    return [e for e in prof.events() or []
            if e.device_type == DeviceType.CUDA and not e.name.startswith(("Memcpy", "Memset"))]


def matches(profiled_name: str, python_name: str) -> bool:
    """Whether a profiler's kernel name (demangled ``mod::name[abi:v5](...)``, mangled
    ``_ZN8__main__8name...`` or a plain C name) is the kernel with this Python name."""
    if profiled_name == python_name:
        return True
    n = re.escape(python_name)
    # demangled: "__main__::variant8[abi:v5](...)"; Itanium-mangled: the length prefix makes it exact
    return bool(re.search(rf"(^|::){n}(\[|\(|<|$)", profiled_name)
                or re.search(rf"(?<!\d){len(python_name)}{n}", profiled_name))


def cuda_mean_runtime(prof: Any, kernel_name: str, do_print: bool = False) -> float:
    """Mean device seconds of the launches of ``kernel_name`` (the Python name) in a torch.profiler profile."""
    durations = kernel_durations(prof)
    got = [d for name, d in durations if matches(name, kernel_name)]
    if not got:
        raise KeyError(f"no kernel named {kernel_name!r} in the profile; kernels seen: "
                       f"{sorted({name for name, _ in durations}) or 'none (was ProfilerActivity.CUDA on?)'}")
    mean = statistics.fmean(got)
    if do_print:
        print(_fmt(mean))
    return mean
