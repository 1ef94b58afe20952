"""util.backend under numba's simulator: a launch's threads keep to one CPU, and the launching thread gets its
CPUs back afterwards."""

import os

import numpy as np
import pytest

import util  # noqa: F401  first: without a GPU it switches numba to its simulator
from util import cuda

pytestmark = [
    pytest.mark.skipif(not util.SIMULATED, reason="the one-CPU launch is the simulator's; a GPU runs no host threads"),
    pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="CPU affinity is Linux's"),
]


@cuda.jit
def _cpus_seen(out):
    # the simulator runs this body as Python, in one host thread per CUDA thread
    out[cuda.blockIdx.x, cuda.threadIdx.x] = min(os.sched_getaffinity(0)) * 1000 + len(os.sched_getaffinity(0))


def test_a_launch_runs_on_one_cpu_and_gives_the_cpus_back():
    before = os.sched_getaffinity(0)
    seen = np.full((3, 8), -1, dtype=np.int64)
    _cpus_seen[3, 8](seen)
    assert (seen % 1000 == 1).all(), seen  # every thread of every block: one CPU
    assert len(np.unique(seen)) == 1 and seen[0, 0] // 1000 in before  # the same one, one the process may use
    assert os.sched_getaffinity(0) == before
