"""The variant registry, its table and plots, and util.intrinsics — in numba's simulator on a CPU."""

import math
import re

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import util  # noqa: E402
from util import cdiv, cuda  # noqa: E402
from util.bench import INTRINSICS, Registry, default_sig  # noqa: E402
from util.cuda_c import CudaC  # noqa: E402
from util.kernel2 import variant7  # noqa: E402
from util.intrinsics import add_nsw, at, ldg128_at, mul_nsw, nonneg, stg128_at  # noqa: E402
from util.plots import runtime_bars, sweep_lines, tflops_bars, waterfall  # noqa: E402

from numba import int32, int64  # noqa: E402  # isort: skip

BS = 16
LAUNCH = dict(nthreads=BS * BS, nblocks_fn=lambda s, nt: cdiv(s, (BS, BS)))
SIZES = (20, 18, 12)


@cuda.jit
def off_by_one(a, b, c, m, n, k):
    x = cuda.blockIdx.x * BS + cuda.threadIdx.x // BS
    y = cuda.blockIdx.y * BS + cuda.threadIdx.x % BS
    if x < m and y < n:
        tmp = np.float32(0)
        for i in range(1, k):
            tmp += a[x, i] * b[i, y]
        c[x, y] = tmp


@cuda.jit
def with_intrinsics(a, b, c, m, n, k):
    x = int32(cuda.blockIdx.x * BS + cuda.threadIdx.x // BS)
    y = int32(cuda.blockIdx.y * BS + cuda.threadIdx.x % BS)
    if x < m and y < n:
        tmp = np.float32(0)
        ia, ib, i = int32(x * k), y, int32(0)
        while i < k:
            tmp += a[nonneg(add_nsw(ia, i))] * b[nonneg(ib)]
            i = add_nsw(i, int32(1))
            ib = add_nsw(ib, n)
        c[x * n + y] = tmp


TWIN = r'''extern "C" __global__ void twin(const float* a, const float* b, float* c, int m, int n, int k) {
    int x = blockIdx.x * 16 + threadIdx.x / 16, y = blockIdx.y * 16 + threadIdx.x % 16;
    if (x < m && y < n) { float t = 0; for (int i = 0; i < k; ++i) t += a[x * k + i] * b[i * n + y]; c[x * n + y] = t; }
}'''


@pytest.fixture(scope="module")
def table():
    reg = Registry()
    reg.numba("good", variant7, **LAUNCH, kernel_args=[BS], note="the reference kernel")
    reg.numba("off by one", off_by_one, **LAUNCH)
    reg.numba("intrinsics", with_intrinsics, **LAUNCH, flat=True, tags={INTRINSICS})
    reg.cuda_c("CUDA C twin", CudaC(TWIN, "twin"), **LAUNCH)
    reg.cublas()
    return reg.run(*SIZES, runs=1, verbose=False)


def test_registry_verifies_times_and_skips(table):
    assert [r.name for r in table.results] == ["good", "off by one", "intrinsics"]
    assert table["good"].correct and table["intrinsics"].correct
    assert not table["off by one"].correct and table["off by one"].times == []
    assert set(table.skipped) == {"CUDA C twin", "cuBLAS (fp32, TF32 off)"}
    assert all("needs a GPU" in why for why in table.skipped.values())
    assert math.isclose(table.ratio("good", "good"), 1.0)
    with pytest.raises(KeyError, match="skipped"):
        table["CUDA C twin"]


def test_table_renders(table):
    text = str(table)
    assert "SIMULATOR wall time, NOT GPU time" in text
    assert "| good | numba | ✓ |" in text and "| off by one | numba | WRONG |" in text
    assert "% of cuBLAS" not in text  # no cuBLAS ran
    assert table._repr_html_().count("<tr>") == 4


def test_plots(table):
    ax = runtime_bars(table)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["good", "intrinsics"]  # the wrong kernel is not drawn
    assert "WRONG, not shown: off by one" in [t.get_text() for t in ax.texts]
    assert "NOT GPU time" in ax.get_xlabel()
    wf = waterfall([("start", 10.0), ("step", 7.0), ("end", 6.5)])
    assert len(wf.patches) == 3
    with pytest.raises(ValueError, match="at least a start and an end"):
        waterfall([("only", 1.0)])


def test_registry_rejects_duplicates_and_non_kernels():
    reg = Registry()
    reg.numba("good", variant7, **LAUNCH, kernel_args=[BS])
    with pytest.raises(ValueError, match="already registered"):
        reg.numba("good", variant7, **LAUNCH, kernel_args=[BS])
    with pytest.raises(TypeError, match="is not a CUDA kernel"):
        reg.numba("plain", lambda a, b, c, m, n, k: None, **LAUNCH)


def test_intrinsics_in_the_simulator():
    assert util.SIMULATED
    assert add_nsw(2, 3) == 5 and mul_nsw(4, 5) == 20 and nonneg(7) == 7
    with pytest.raises(IndexError, match="promised it is not"):
        nonneg(-1)
    arr = np.arange(5, dtype=np.float32)
    assert at(arr, 3) == 3.0
    with pytest.raises(IndexError, match="promised it is not"):
        at(arr, -1)


@cuda.jit
def with_at(a, b, c, m, n, k):
    """with_intrinsics with its loads written at(a, i) instead of a[nonneg(i)]."""
    x = int32(cuda.blockIdx.x * BS + cuda.threadIdx.x // BS)
    y = int32(cuda.blockIdx.y * BS + cuda.threadIdx.x % BS)
    if x < m and y < n:
        tmp = np.float32(0)
        ia, ib, i = int32(x * k), y, int32(0)
        while i < k:
            tmp += at(a, add_nsw(ia, i)) * at(b, ib)
            i = add_nsw(i, int32(1))
            ib = add_nsw(ib, n)
        c[x * n + y] = tmp


def test_at_is_nonneg_indexing_in_sass():
    """Under numba-cuda, at(a, i) compiles to exactly what a[nonneg(i)] does (its point is numba-cuda-mlir)."""
    from numba import float32

    from util.compile import cubin_from_ptx, numba_ptx
    from util.sass import analyze

    a1 = float32[::1]
    sig = (a1, a1, a1, int32, int32, int32)
    loops = [analyze(cubin_from_ptx(numba_ptx(kern, sig))).hot_loop for kern in (with_intrinsics, with_at)]
    assert loops[0].ffma > 0 and [l.split(None, 1)[1] for l in loops[0].lines] == [
        l.split(None, 1)[1] for l in loops[1].lines]


@cuda.jit
def row_sums4(a, out):
    """out[r] = sum of row r of a (columns a multiple of 4), 4 floats a load from a walking 32-bit offset."""
    r = int32(cuda.grid(1))
    if r < a.shape[0]:
        i = int32(r * a.shape[1])
        end = add_nsw(i, int32(a.shape[1]))
        s = np.float32(0)
        while i < end:
            x0, x1, x2, x3 = ldg128_at(a, i)
            s += (x0 + x1) + (x2 + x3)
            i = add_nsw(i, int32(4))
        out[r] = s


def test_ldg128_at_in_the_simulator():
    assert util.SIMULATED
    arr = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert ldg128_at(arr, 4) == (4.0, 5.0, 6.0, 7.0)
    for bad in (-1, 9):
        with pytest.raises(IndexError, match="are not all in an array of 12"):
            ldg128_at(arr, bad)
    with pytest.raises(ValueError, match="not 16-byte aligned"):
        ldg128_at(arr, 2)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 8)).astype(np.float32)
    out = np.full(5, np.nan, dtype=np.float32)
    d_out = cuda.to_device(out)
    row_sums4[1, 32](cuda.to_device(a), d_out)
    np.testing.assert_allclose(d_out.copy_to_host(), a.astype(np.float64).sum(axis=1), rtol=1e-5)


def test_stg128_at_in_the_simulator():
    assert util.SIMULATED
    arr = np.full((3, 4), np.nan, dtype=np.float32)
    stg128_at(arr, 8, np.float32(1), np.float32(2), np.float32(3), np.float32(4))
    assert np.isnan(arr[:2]).all() and arr[2].tolist() == [1.0, 2.0, 3.0, 4.0]
    for bad in (-1, 9):
        with pytest.raises(IndexError, match="stg128_at: elements .* are not all in an array of 12"):
            stg128_at(arr, bad, 0, 0, 0, 0)
    with pytest.raises(ValueError, match="this store would be misaligned"):
        stg128_at(arr, 2, 0, 0, 0, 0)
    assert np.isnan(arr[:2]).all()  # a refused store writes nothing


def test_ldg128_at_is_one_16_byte_load_from_a_walking_pointer():
    """The loop of row_sums4 loads with LDG.E.128 and advances one address: no scalar loads, no 64-bit multiply."""
    from numba import float32

    from util.compile import cubin_from_ptx, numba_ptx
    from util.sass import analyze

    loop = analyze(cubin_from_ptx(numba_ptx(row_sums4, (float32[:, ::1], float32[::1])))).hot_loop
    ops = [text.split()[1] if text.startswith("@") else text.split()[0]
           for text in (line.split(None, 1)[1] for line in loop.lines)]
    assert "LDG.E.128" in ops and "LDG.E" not in ops, loop.lines
    multiplies = [o for o in ops if o.split(".")[0] == "IMAD" and o.split(".")[1:2] in ([], ["WIDE"], ["HI"])]
    assert not multiplies, loop.lines  # the offset walks: no index * stride in the loop
    # ...by 16 bytes a trip (4 float32 elements: i counts elements, not bytes)
    assert any(re.search(r"\bIADD3\b.*, 0x10,", line) for line in loop.lines), loop.lines


def test_intrinsics_give_imad_wide_in_sass():
    from numba import float32

    from util.compile import cubin_from_ptx, numba_ptx
    from util.sass import analyze

    a1 = float32[::1]
    loop = analyze(cubin_from_ptx(numba_ptx(with_intrinsics, (a1, a1, a1, int32, int32, int32)))).hot_loop
    assert sum("IMAD.WIDE" in line for line in loop.lines) >= loop.ffma  # one per B element, as in CUDA C


# ---- what the Registry offers the notebooks: static analysis, extra shapes, sweeps, twins ----------------

@pytest.fixture(scope="module")
def family():
    reg = Registry()
    reg.numba("good", variant7, **LAUNCH, kernel_args=[BS], sig=default_sig(False) + (int64,), ffma=1)
    reg.numba("off by one", off_by_one, **LAUNCH)
    reg.numba("intrinsics", with_intrinsics, **LAUNCH, flat=True, tags={INTRINSICS},
              sig=default_sig(True)[:3] + (int32,) * 3)
    reg.cuda_c("CUDA C twin", CudaC(TWIN, "twin"), **LAUNCH, twin_of=["good", "intrinsics"])
    return reg


def test_registry_keeps_each_variants_metadata(family):
    assert family["good"].twin == family["intrinsics"].twin == "CUDA C twin" and family["off by one"].twin is None
    assert family.names("numba", tag=INTRINSICS) == ["intrinsics"]
    assert family.names("cuda_c") == ["CUDA C twin"]
    assert family["good"].threads == BS * BS and family["intrinsics"].sig[0].ndim == 1
    with pytest.raises(ValueError, match="no numba variant of that name"):
        family.cuda_c("orphan", CudaC(TWIN, "twin"), **LAUNCH, twin_of="missing")


def test_sass_table_covers_numba_and_c(family):
    table = family.sass_table()
    rows = {row["kernel"]: row for row in table.rows()}
    assert set(rows) == {"good", "off by one", "intrinsics", "CUDA C twin"}
    assert rows["good"]["threads"] == BS * BS and rows["good"]["blocks/SM"] == family.blocks_per_sm("good") >= 1
    assert family.report("good").hot_loop.ffma >= 1 and "global loads (kernel)" in rows["good"]


def test_check_shapes_finds_the_wrong_kernel_only(family):
    check = family.check_shapes([(17, 19, 5), (3, 1, 1)])
    assert not check.ok and {name for name, _ in check.wrong} == {"off by one"}
    assert check.skipped == {"CUDA C twin": "needs a GPU"}
    assert "WRONG off by one at (17, 19, 5)" in str(check)


def test_sweep_and_its_plot(family):
    sweep = family.sweep([8, 16], only=["good", "intrinsics"], runs=1)
    assert sweep.shapes == [(8, 8, 8), (16, 16, 16)] and sweep.names == ["good", "intrinsics"]
    assert all(t > 0 for t in sweep.tflops("good")) and math.isnan(sweep.percent("good")[0])  # no cuBLAS
    assert "| 16, 16, 16 |" in str(sweep)
    ax = sweep_lines(sweep, peak=1e12)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["8", "16"] and "peak" in ax.get_legend_handles_labels()[1][-1]


def test_tflops_bars_label_every_bar(table):
    ax = tflops_bars(table)
    labels = [t.get_text().strip() for t in ax.texts]
    assert labels == [f"{table[n].tflops:.1f}" for n in ("good", "intrinsics")]  # each correct kernel, its value


def test_twin_ratio_and_quantiles(table):
    r = table["good"]
    assert r.quantile(0.0) == min(r.times) and r.quantile(1.0) == max(r.times)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        r.quantile(2)
    assert math.isnan(table.twin_ratio("good"))  # no twin registered in that table
    assert table.best() in ("good", "intrinsics") and table.best(without=INTRINSICS) == "good"
