"""util.timing.cupti_times: each timed launch's time read from a profile's kernels (the ``"cupti"`` timer), on
made-up profiles, so that the walk itself is checked on a CPU: kernels between launches passed over, a launch of
two kernels counted whole, a held launch timed from the hold kernel's end, a launch that ran twice counted once."""

import pytest

from util.timing import cupti_times

SIGS = {"numba": ("gemm_a", "sum"), "C": ("gemm_c",)}


def test_a_launch_runs_from_its_first_kernel_to_its_last():
    spans = [("fill", 0.0, 1.0), ("gemm_a", 2.0, 5.0), ("sum", 5.5, 6.0), ("check", 7.0, 8.0),
             ("fill", 9.0, 10.0), ("gemm_c", 11.0, 15.0), ("check", 16.0, 17.0)]
    got = cupti_times(spans, [("numba", 1), ("C", 1)], SIGS)
    assert got == {"numba": [(4.0, 3.5)], "C": [(4.0, 4.0)]}


def test_a_held_launch_runs_from_the_hold_kernels_end():
    spans = [("fill", 0.0, 1.0), ("hold", 1.0, 4.0), ("gemm_c", 4.25, 6.0), ("check", 7.0, 8.0),
             ("hold", 9.0, 12.0), ("gemm_a", 12.5, 13.0), ("sum", 13.5, 14.0)]
    got = cupti_times(spans, [("C", 1), ("numba", 1)], SIGS, hold="hold")
    assert got == {"C": [(2.0, 1.75)], "numba": [(2.0, 1.0)]}


def test_a_launch_that_ran_twice_counts_its_last_run():
    spans = [("hold", 0.0, 1.0), ("gemm_c", 1.5, 9.0), ("fill", 10.0, 11.0), ("hold", 11.0, 12.0),
             ("gemm_c", 12.5, 14.0), ("hold", 15.0, 16.0), ("gemm_c", 16.5, 17.0)]
    got = cupti_times(spans, [("C", 2), ("C", 1)], SIGS, hold="hold")
    assert got == {"C": [(2.0, 1.5), (1.0, 0.5)]}


def test_a_profile_that_does_not_show_the_launch_raises():
    spans = [("hold", 0.0, 1.0), ("gemm_a", 1.5, 2.0), ("check", 2.5, 3.0)]  # numba's sum is missing
    with pytest.raises(RuntimeError, match="does not show 'numba'"):
        cupti_times(spans, [("numba", 1)], SIGS, hold="hold")
    with pytest.raises(RuntimeError, match="no more kernels"):
        cupti_times([("fill", 0.0, 1.0)], [("C", 1)], SIGS)


def test_a_launch_without_kernels_cannot_be_timed():
    with pytest.raises(RuntimeError, match="launched no kernel"):
        cupti_times([("fill", 0.0, 1.0)], [("none", 1)], {"none": ()})
