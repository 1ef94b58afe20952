"""util.kernel2's factorial family: every combination is a correct kernel 2, its corners compile to the
notebook's steps (the same hot loop), and bad factor names are refused."""

import itertools

import pytest

import util  # noqa: F401  first: without a GPU it switches numba to its simulator
from util.bench import Registry
from util.compile import cubin_from_ptx, numba_ptx
from util.kernel2 import F64, FACTORS, grid, kernel2_sig, make_kernel2
from util.sass import analyze

STEPS = [set(FACTORS[:i]) for i in range(1, 7)]  # numba_vs_cuda_c.ipynb steps 2-7: one factor more each
# hot loop of each step as numba_vs_cuda_c.ipynb's SASS table shows it: (instructions, FFMA) per pass
STEP_LOOPS = {0: (137, 4), 1: (120, 4), 2: (119, 4), 3: (33, 4), 4: (30, 4), 5: (28, 4), 6: (88, 16)}
STEP8 = {"int32 sizes", "launch_bounds", "while loop", "flat 32-bit indexing", "no-wrap promise"}


@pytest.mark.parametrize("i", sorted(STEP_LOOPS))
def test_corners_compile_to_the_steps_hot_loops(i):
    on = set(FACTORS[:i])
    loop = analyze(cubin_from_ptx(numba_ptx(make_kernel2(on), kernel2_sig(on)))).hot_loop
    assert (loop.size, loop.ffma) == STEP_LOOPS[i]


def test_the_promise_gives_step_8s_loop():
    loop = analyze(cubin_from_ptx(numba_ptx(make_kernel2(STEP8), kernel2_sig(STEP8)))).hot_loop
    assert (loop.size, loop.ffma) == (70, 16) and loop.count("f64") == 0
    wide = sum(i.opcode.startswith("IMAD.WIDE") for i in loop.instructions)
    assert wide == 16  # B's pointer moves with one IMAD.WIDE a load, as in CUDA C


def test_float64_accumulator_is_float64():
    loop = analyze(cubin_from_ptx(numba_ptx(make_kernel2({F64}), kernel2_sig()))).hot_loop
    assert loop.count("f64") > 0 and loop.ffma == 0


def test_combinations_are_correct_in_the_simulator():
    reg = Registry()
    combos = [set(), {F64}, *STEPS, STEP8, set(FACTORS), {"walking indices"}, {"unsigned indices", "walking indices"},
              {"no-wrap promise"}, {"no-wrap promise", "walking indices"}]
    for j, on in enumerate(combos):
        reg.numba(f"{j}: {sorted(on)}", make_kernel2(on), 1024, grid(32),
                  flat=bool(on & {"flat 32-bit indexing", "walking indices"}), sig=kernel2_sig(on))
    check = reg.check_shapes([(37, 45, 29)])
    assert check.ok, str(check)


def test_unknown_factors_are_refused():
    with pytest.raises(ValueError, match="unknown factor.*'range loop'"):
        make_kernel2({"range loop"})
    assert len({frozenset(s) for r in range(8) for s in itertools.combinations(FACTORS, r)}) == 2 ** len(FACTORS)
