"""util.doctor on the project's own kernels, on small kernels for the other tags, and on bad input; no GPU.

The kernels are in tests/doctor_kernels.py, copied from the notebooks (a test checks they still match). Each
diagnosis compiles once (a compile child, ptxas, cuobjdump, nvdisasm: a few seconds) and is cached for the module.

What each kernel-2 step of numba_vs_cuda_c.ipynb removes, as the doctor sees it:
- 0 -> 1 (float32 accumulator): fp64.
- 1 -> 2 (int32 sizes): not one tag: int64-index stays (numba widens int32 arithmetic to 64 bits), but fewer of
  the hot loop's instructions are 64-bit only.
- 2 -> 3 (launch_bounds(1024, 2)): not a tag: registers stay at 32 or fewer and 2 blocks of 1024 fit either way
  (the notebook's own check: the gain came through the schedule), so register-occupancy is absent on both.
- 3 -> 4 (while loop): range-loop.
- 4 -> 5 (unsigned indices): wraparound-check.
- 5 -> 6 (flat uint32): not one tag: int64-index stays, with fewer 64-bit-only instructions per access.
- 6 -> 7 (walking indices): low-unroll (NVVM unrolls 16x).
- 7 -> 8 (no-wrap int32 intrinsics): int64-index.
"""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import util  # noqa: F401 - before numba: without a GPU, util switches numba to its simulator
from util.doctor import MEASURED, DoctorError, diagnose, main
from util import doctor_checks
from util.doctor_checks import CHECKS

import doctor_kernels as dk  # noqa: E402  # isort: skip
from numba import float32, int32  # noqa: E402  # isort: skip

ROOT = Path(__file__).resolve().parent.parent
LOOP_TAGS = ("fp64", "int64-index", "range-loop", "wraparound-check")
F1 = float32[::1]
STEP = {name.split()[0]: (kernel, sig, block) for name, kernel, sig, block in dk.STEPS}
_CACHE: dict[str, object] = {}


def diag(key: str):
    """The diagnosis of a fixture kernel, once per test session: ``v:<variant>``, ``s:<step>``, ``l:<ladder>``."""
    if key not in _CACHE:
        kind, name = key.split(":", 1)
        if kind == "v":
            kernel, sig, _ = dk.VARIANTS[name]
            _CACHE[key] = diagnose(kernel, sig, block=1024)
        elif kind == "s":
            kernel, sig, block = STEP[name]
            _CACHE[key] = diagnose(kernel, sig, block=block)
        else:
            full = next(n for n in dk.LADDER if n.split()[0] == name)
            kernel, block = dk.LADDER[full]
            _CACHE[key] = diagnose(kernel, dk.LADDER_SIG, block=block)
    return _CACHE[key]


def finding(d, tag: str):
    return next(f for f in d.findings if f.tag == tag)


# ---- the fixtures are the notebooks' kernels --------------------------------------------------------------

def _notebook_code(name: str) -> str:
    """The code cells of a notebook as committed at ``doctor_kernels.NOTEBOOKS_COMMIT`` (the notebooks change;
    the copies stay what the doctor's tests were written against)."""
    proc = subprocess.run(["git", "show", f"{dk.NOTEBOOKS_COMMIT}:notebooks/{name}.ipynb"], capture_output=True,
                          text=True, cwd=ROOT, check=False)
    if proc.returncode != 0:
        pytest.skip(f"git cannot show the notebooks at {dk.NOTEBOOKS_COMMIT}: {proc.stderr.strip()[:200]}")
    cells = json.loads(proc.stdout)["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


def test_fixture_kernels_match_the_notebooks():
    copied = {
        "matmul_variants": [k for k, _, _ in dk.VARIANTS.values()],
        "numba_vs_cuda_c": [dk.range_f64, dk.range_loop, dk.while_loop, dk.while_unsigned, dk.flat_u32,
                            dk.kernel2_numba, dk.kernel2_nsw, dk.kernel2_at_walk],
        "sgemm_ladder": [dk.naive, dk.coalesced, dk.make_smem_tiles, dk.make_blocktile_1d, dk.make_blocktile_2d,
                         dk.make_blocktile_2d_range, dk.row4, dk.load_row4, dk.make_vec4, dk.load_row4_ldg128,
                         dk.make_lean],
    }
    for notebook, functions in copied.items():
        code = _notebook_code(notebook)
        for fn in functions:
            source = textwrap.dedent(inspect.getsource(getattr(fn, "py_func", fn)))
            assert source.strip() in code, f"{fn.__name__} differs from {notebook}.ipynb: copy it again"


# ---- the original notebook's eight variants ----------------------------------------------------------------

@pytest.mark.parametrize("name", list(dk.VARIANTS))
def test_variants_float64_accumulator(name):
    kernel, _, is_f64 = dk.VARIANTS[name]
    d = diag(f"v:{name}")
    assert ("fp64" in d.tags) == is_f64, d
    if is_f64:
        f = finding(d, "fp64")
        init = next(line for line in inspect.getsource(kernel.py_func).splitlines() if "tmp" in line and "=" in line
                    and "+=" not in line).strip()
        assert "np.float32(0" in f.fix and init.split(" #")[0] in f.fix, f.fix  # names the line to change
        assert any("add.f64" in p or "cvt.f64.f32" in p for p in f.ptx) and any("DADD" in s for s in f.sass)
        assert f.lines and all(isinstance(n, int) for n in f.lines)


def test_variant_causes_are_named():
    assert "int literal" in finding(diag("v:original"), "fp64").summary
    assert "float literal" in finding(diag("v:variant4"), "fp64").summary
    assert "annotations" in finding(diag("v:variant6"), "fp64").summary


# ---- kernel 2 factor by factor (numba_vs_cuda_c.ipynb) ------------------------------------------------------

@pytest.mark.parametrize("before, after, tag", [("0", "1", "fp64"), ("3", "4", "range-loop"),
                                                ("4", "5", "wraparound-check"), ("6", "7", "low-unroll"),
                                                ("7", "8", "int64-index")])
def test_each_step_removes_its_tag(before, after, tag):
    assert tag in diag(f"s:{before}").tags
    assert tag not in diag(f"s:{after}").tags


def test_step2_int32_sizes_shrink_the_64bit_arithmetic():
    one, two = finding(diag("s:1"), "int64-index"), finding(diag("s:2"), "int64-index")
    assert two.numbers["wide_instructions"] < one.numbers["wide_instructions"]
    assert "int32" in one.fix and "k2-step2" in one.refs


def test_step3_launch_bounds_is_no_occupancy_change():
    for step in ("2", "3"):
        d = diag(f"s:{step}")
        assert "register-occupancy" not in d.tags and d.registers <= 32 and "register-occupancy" not in d.not_judged


def test_steps_5_to_7_keep_64bit_indexing_until_the_no_wrap_promise():
    shares = [finding(diag(f"s:{s}"), "int64-index").numbers for s in ("5", "6", "7")]
    assert all(n["wide_instructions"] >= 3 for n in shares)
    assert shares[1]["wide_instructions"] / shares[1]["region_instructions"] < \
        shares[0]["wide_instructions"] / shares[0]["region_instructions"]  # flat uint32: less 64-bit work


def test_range_loop_cost_and_fix():
    f = finding(diag("s:3"), "range-loop")
    assert "`i = 0`" in f.fix and "`while i < k:`" in f.fix and "`for i in range(k):`" in f.fix and "`i += 1`" in f.fix
    assert f.numbers["iterator_sass"] > 0 and any("selp" in p for p in f.ptx)
    assert "numba_vs_cuda_c.ipynb, step 4 (while loop): 1.28x on the H200" in str(diag("s:3"))


def test_wraparound_names_the_indices_and_the_fix():
    f = finding(diag("s:4"), "wraparound-check")
    assert "`x` in `a[x, i]`" in f.summary and "`y` in `b[i, y]`" in f.summary
    assert "x = uint32(" in f.fix and "nonneg" in f.fix


@pytest.mark.parametrize("key", ["s:8", "l:15"])
def test_fast_kernels_are_clean(key):
    d = diag(key)
    assert not set(LOOP_TAGS) & set(d.tags), d
    assert d.hot_loop is not None and d.hot_loop["fp_ops"] >= 16


# ---- the SGEMM ladder ----------------------------------------------------------------------------------------

def test_ladder_naive_is_uncoalesced_and_coalesced_is_not():
    f = finding(diag("l:1"), "uncoalesced")
    assert "a[row, i]" in f.summary and "ladder-2" in f.refs
    assert "uncoalesced" not in diag("l:2").tags


def test_ladder_5a_first_draft():
    d = diag("l:5a")
    assert {"range-loop", "wraparound-check", "register-occupancy"} <= set(d.tags)
    occ = finding(d, "register-occupancy")
    assert occ.numbers["blocks_per_sm"] == 1 and "launch_bounds=(256, 2)" in occ.fix
    assert "register-occupancy" not in diag("l:15").tags  # step 15 declares launch_bounds=(256, 2) and gets it


def test_ladder_scalar_loads_until_ldg128():
    f = finding(diag("l:6"), "scalar-loads")
    assert "ldg128" in f.fix and f.numbers["scalar_loads"] >= 4 and "ladder-6b" in f.refs
    assert "scalar-loads" not in diag("l:6b").tags


# ---- the other tags, on small kernels ------------------------------------------------------------------------

def test_kernel_without_loops_judges_what_it_can():
    d = diagnose(dk.scale_f64_literal, (F1, F1))
    assert d.tags == ["fp64"] and "np.float32(0.1)" in finding(d, "fp64").fix
    for tag in ("range-loop", "low-unroll", "int64-index"):
        assert "no loop" in d.not_judged[tag]
    assert "block=" in d.not_judged["register-occupancy"]
    assert diagnose(dk.scale_f32, (F1, F1)).tags == []


def test_spills_from_a_local_array():
    d = diagnose(dk.local_array_dynamic, (F1, F1, int32), block=256)
    f = finding(d, "spills")
    assert "`buf`" in f.summary and f.numbers["ldl_stl"] > 0 and any("LDL" in s for s in f.sass)
    assert "256 bytes apart" in finding(d, "uncoalesced").summary  # x[i * 64 + j]: one row of 64 per thread


def test_slow_math_and_fastmath():
    f = finding(diagnose(dk.normalize, (F1, F1, int32), block=256), "slow-math")
    assert "div.rn.f32" in f.cost and "fastmath=True" in f.fix
    assert "slow-math" not in diagnose(dk.normalize_fast, (F1, F1, int32), block=256).tags


def test_uncoalesced_follows_cuda_grid_and_the_layout():
    row_major = diagnose(dk.docs_matmul, "(float32[:, ::1], float32[:, ::1], float32[:, ::1])", block=256)
    assert "A[i, k]" in finding(row_major, "uncoalesced").summary
    col_major = diagnose(dk.docs_matmul, "(float32[::1, :], float32[::1, :], float32[::1, :])", block=256)
    assert "uncoalesced" not in col_major.tags


def test_atomics_and_grid_sync_are_judged_with_a_note():
    d = diagnose(dk.histogram_atomic, "(float32[::1], int32, int32[::1])", block=256)
    assert any("atomics" in n for n in d.notes) and "low-unroll" not in d.tags
    g = diagnose(dk.grid_sync_steps, "(float32[::1], int32)", block=256)
    assert g.registers and any("relocatable" in n for n in g.notes) and not g.tags


def test_register_occupancy_needs_the_block_size():
    d = diagnose(dk.LADDER["5a blocktile 2-D, range()"][0], dk.LADDER_SIG)  # the same kernel as l:5a, no block
    assert "register-occupancy" in d.not_judged and "register-occupancy" not in d.tags


# ---- output ----------------------------------------------------------------------------------------------

def test_json_text_and_html():
    d = diag("s:0")
    data = json.loads(d.to_json())
    assert data["kernel"] == "range_f64" and data == d.as_dict()
    tags = [f["tag"] for f in data["findings"]]
    assert tags == d.tags and "fp64" in tags
    first = data["findings"][0]
    assert {"tag", "summary", "cost", "fix", "lines", "measured", "evidence", "numbers"} <= set(first)
    assert first["measured"] and set(first["evidence"]) == {"source", "ptx", "sass"}
    text = str(d)
    assert "[fp64]" in text and "fix:" in text and "hot loop: line" in text
    html = d._repr_html_()
    assert "<details>" in html and "<table>" in html and html.count("<tr>") == len(d.findings) + 1


def test_measured_table_is_consistent():
    used = set(re.findall(r'"((?:k2|variants|ladder)-[\w-]+)"', inspect.getsource(doctor_checks)))
    assert used and used <= set(MEASURED)
    for m in MEASURED.values():
        assert m.tag in CHECKS and ".ipynb" in m.where and "x" in m.figure


# ---- bad input -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kernel, sig, message", [
    (dk.not_a_kernel, "(float32[::1],)", "@cuda.jit"),
    (dk.twice, "(float32,)", "device function"),
    (dk.scale_f32, "(float32[::1], flaot32[::1])", "numba's string form"),
    (dk.scale_f32, "(float32[::1],)", "takes 2 arguments"),
    (dk.scale_f32, 42, "numba's string form"),
])
def test_bad_input_is_a_clear_error(kernel, sig, message):
    with pytest.raises(DoctorError, match=re.escape(message)):
        diagnose(kernel, sig)


def test_kernel_that_does_not_compile_shows_numbas_message():
    with pytest.raises(DoctorError) as e:
        diagnose(dk.does_not_type, "(float32[::1],)")
    text = str(e.value)
    assert "undefined_name" in text and "TypingError" in text and "Traceback" not in text and len(text) < 1500


def test_bad_arch_and_block():
    with pytest.raises(DoctorError, match="sm_90"):
        diagnose(dk.scale_f32, "(float32[::1], float32[::1])", arch="hopper")
    with pytest.raises(DoctorError, match="threads per block"):
        diagnose(dk.scale_f32, "(float32[::1], float32[::1])", block=4096)


# ---- command line ------------------------------------------------------------------------------------------

USER_FILE = '''
from numba import cuda


@cuda.jit
def axpy(a, x, y):
    i = cuda.grid(1)
    if i < x.shape[0]:
        acc = 0
        for k in range(4):
            acc += a * x[i]
        y[i] = acc
'''


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    path = tmp_path / "user_kernels.py"
    path.write_text(USER_FILE)
    return subprocess.run([sys.executable, "-m", "util.doctor", f"{path}:axpy", *args], capture_output=True,
                          text=True, cwd=ROOT, check=False)


def test_cli_json_on_a_file_that_imports_numba_directly(tmp_path):
    proc = _cli(tmp_path, "--sig", "(float32, float32[::1], float32[::1])", "--block", "256", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["kernel"] == "axpy" and isinstance(data["findings"], list)
    assert all("tag" in f for f in data["findings"])


def test_cli_bad_signature_is_one_paragraph(tmp_path):
    proc = _cli(tmp_path, "--sig", "(float32, float32[::1]")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "numba's string form" in proc.stderr and proc.stderr.count("\n") <= 2


def test_cli_missing_kernel_lists_the_file_kernels(tmp_path, capsys):
    path = tmp_path / "user_kernels.py"
    path.write_text(USER_FILE)
    assert main([f"{path}:nope", "--sig", "(float32,)"]) == 2
    assert "axpy" in capsys.readouterr().err
