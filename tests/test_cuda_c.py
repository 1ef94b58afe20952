"""CUDA C twins (util.cuda_c): NVRTC compiles them on any machine; launches are checked like numba launches,
refused with a clear message in the simulator, and verified and timed like numba kernels on a GPU."""

import subprocess

import pytest
from cuda.pathfinder import find_nvidia_binary_utility

from util import SIMULATED, cdiv
from util.bench import Registry
from util.cuda_c import CudaC, CudaCCompileError
from util.kernel2 import KERNEL2_C, variant7
from util.launch import numba_launch
from util.timing import run_verified
from util.verify import Problem

needs_gpu = pytest.mark.skipif(SIMULATED, reason="launching a CUDA C twin needs a GPU (no CUDA driver here)")


# the same kernel, its block size an extra int parameter, staging each result through 64 KB of dynamic
# shared memory (above the 48 KB a kernel gets without opting in)
KERNEL2_C_SHMEM = r"""
extern "C" __global__ void sgemm_coalesce_shmem(const float* a, const float* b, float* c, int m, int n, int k,
                                                int bs) {
    extern __shared__ float stage[];
    const int x = blockIdx.x * bs + threadIdx.x / bs;
    const int y = blockIdx.y * bs + threadIdx.x % bs;
    float t = 0.0f;
    if (x < m && y < n)
        for (int i = 0; i < k; ++i) t += a[x * k + i] * b[i * n + y];
    stage[16383 - threadIdx.x] = t;  // the top of 64 KB
    __syncthreads();
    if (x < m && y < n) c[x * n + y] = stage[16383 - threadIdx.x];
}
"""
SHMEM = 64 * 1024


def grid32(outp_shape, nthreads):
    return cdiv(outp_shape, (32, 32))


@pytest.fixture(scope="module")
def twin():
    return CudaC(KERNEL2_C, "sgemm_coalesce")


# ---- NVRTC, no GPU needed ---------------------------------------------------------------------------------

def test_compiles_to_a_cached_sm90_cubin(twin):
    cubin = twin.cubin("sm_90")
    assert cubin[:4] == b"\x7fELF"
    assert twin.cubin() is cubin  # sm_90 is the default, and compiled once
    assert twin.name == twin.__name__ == "sgemm_coalesce" and twin.source == KERNEL2_C


def test_cubin_holds_sm90_sass_for_the_kernel(twin, tmp_path):
    cuobjdump = find_nvidia_binary_utility("cuobjdump")
    if cuobjdump is None:
        pytest.skip("cuobjdump not installed (pip install nvidia-cuda-cuobjdump)")
    path = tmp_path / "twin.cubin"
    path.write_bytes(twin.cubin("sm_90"))
    sass = subprocess.run([cuobjdump, "-sass", str(path)], capture_output=True, text=True, check=True).stdout
    assert "code for sm_90" in sass and "Function : sgemm_coalesce" in sass
    assert "FFMA" in sass


def test_syntax_error_reports_nvrtc_log():
    bad = CudaC(KERNEL2_C.replace("float tmp = 0.f;", "float tmp = 0.f"), "sgemm_coalesce")
    with pytest.raises(CudaCCompileError, match="could not compile sgemm_coalesce for sm_90 with NVRTC") as e:
        bad.cubin()
    assert 'error: expected a ";"' in str(e.value)
    assert "sgemm_coalesce.cu(" in str(e.value)  # NVRTC's log names the line


def test_mangled_kernel_is_reported():
    with pytest.raises(CudaCCompileError, match='declare it extern "C" __global__'):
        CudaC(KERNEL2_C.replace('extern "C" ', ""), "sgemm_coalesce").cubin()


def test_options_reach_nvrtc():
    src = "#ifndef BS\n#error BS not defined\n#endif\n" + KERNEL2_C.replace("32", "BS")
    assert b".debug_line" in CudaC(src, "sgemm_coalesce", options=["-lineinfo", "-DBS=32"]).cubin()
    assert b".debug_line" not in CudaC(src, "sgemm_coalesce", options=["--define-macro=BS=32"]).cubin()
    with pytest.raises(CudaCCompileError, match="BS not defined"):
        CudaC(src, "sgemm_coalesce").cubin()
    CudaC(KERNEL2_C, "sgemm_coalesce", options=["-maxrregcount=32", "--use_fast_math", "-ftz=true"]).cubin()


@pytest.mark.parametrize("kw, err, msg", [
    (dict(options=["-arch=sm_80"]), ValueError, "unsupported NVRTC option '-arch=sm_80'"),
    (dict(options=["-maxrregcount=lots"]), ValueError, "CudaC takes -lineinfo"),
    (dict(options="-lineinfo"), TypeError, "options must be a list of NVRTC flags"),
    (dict(arch="90"), ValueError, "arch must name a real GPU architecture"),
])
def test_bad_settings_rejected(kw, err, msg):
    with pytest.raises(err, match=msg):
        CudaC(KERNEL2_C, "sgemm_coalesce", **kw)


def test_bad_name_rejected():
    with pytest.raises(ValueError, match="the kernel's C identifier"):
        CudaC(KERNEL2_C, "sgemm coalesce")


# ---- launch settings: checked as numba launches check them -------------------------------------------------

@pytest.mark.parametrize("nthreads", [0, 2048, (32, 64), 1.5, (32, 32, 1, 1)])
def test_bad_nthreads_same_message_as_numba(twin, nthreads):
    with pytest.raises((TypeError, ValueError)) as from_numba:
        numba_launch(variant7, nthreads, grid32, [32])
    with pytest.raises(type(from_numba.value)) as from_twin:
        twin.launch(nthreads, grid32)
    assert str(from_twin.value) == str(from_numba.value)


@pytest.mark.parametrize("bad_grid", [(0, 3), (2.0, 3), "3", (1, 1, 1, 1)])
def test_bad_grid_same_message_as_numba(twin, bad_grid):
    p = Problem(8, 8, 8)
    with pytest.raises(ValueError) as from_numba:
        numba_launch(variant7, 1024, lambda shape, nt: bad_grid, [32])(p)
    with pytest.raises(ValueError) as from_twin:
        twin.launch(1024, lambda shape, nt: bad_grid)(p)
    assert str(from_twin.value) == str(from_numba.value)


@pytest.mark.parametrize("kw, err, msg", [
    (dict(nblocks_fn=32), TypeError, "nblocks_fn must be a function"),
    (dict(shmem=-1), ValueError, "shmem must be a number of bytes"),
    (dict(extra=[2**31]), TypeError, "extra must be a list of int32 values"),
    (dict(extra=[1.5]), TypeError, "extra must be a list of int32 values"),
])
def test_bad_launch_settings_rejected(twin, kw, err, msg):
    with pytest.raises(err, match=msg):
        twin.launch(**{"nthreads": 1024, "nblocks_fn": grid32, **kw})


# ---- the simulator ------------------------------------------------------------------------------------------

@pytest.mark.skipif(not SIMULATED, reason="checks the simulator's refusal; this machine has a GPU")
def test_simulator_refuses_to_launch(twin):
    launch = twin.launch(1024, grid32)
    assert callable(launch) and launch.__name__ == "sgemm_coalesce"
    with pytest.raises(RuntimeError, match="CUDA C twins need a GPU; the simulator runs numba kernels only"):
        launch(Problem(8, 8, 8))


@pytest.mark.skipif(not SIMULATED, reason="checks the simulator's skip; this machine has a GPU")
def test_registry_skips_twin_in_simulator(twin):
    reg = Registry()
    reg.numba("numba coalesce", variant7, 1024, grid32, [32])
    reg.cuda_c("CUDA C coalesce", twin, 1024, grid32)
    table = reg.run(8, 8, 8, runs=1, verbose=False)
    assert "numba coalesce" in table and table["numba coalesce"].correct
    assert "CUDA C coalesce" in table.skipped and "CUDA C coalesce" not in table


# ---- on a GPU ----------------------------------------------------------------------------------------------

@needs_gpu
def test_twin_verified_and_timed_beside_numba(twin):
    p = Problem(256, 192, 320)
    res = run_verified(p, 3, {"numba": numba_launch(variant7, 1024, grid32, [32]), "CUDA C": twin.launch(1024, grid32)})
    for r in res.values():
        assert r.correct, r.check
        assert len(r.times) == 3 and all(t > 0 for t in r.times)
        assert not r.simulated and r.timer == "events"


@needs_gpu
def test_twin_with_64kb_dynamic_shared_memory_and_extra_int():
    twin = CudaC(KERNEL2_C_SHMEM, "sgemm_coalesce_shmem")
    res = run_verified(Problem(100, 70, 50), 2, {"shmem": twin.launch(1024, grid32, shmem=SHMEM, extra=[32])})
    assert res["shmem"].correct, res["shmem"].check


@needs_gpu
def test_signature_mismatch_is_caught(twin):
    p = Problem(64, 64, 64)
    with pytest.raises(TypeError, match="make the C signature match"):
        twin.launch(1024, grid32, extra=[32])(p)
    long_m = CudaC(KERNEL2_C.replace("int M,", "long M,"), "sgemm_coalesce")
    with pytest.raises(TypeError, match=r"sizes \[8, 8, 8, 8, 4, 4\]"):
        long_m.launch(1024, grid32)(p)


@needs_gpu
def test_twin_runs_in_a_registry(twin):
    reg = Registry()
    reg.cuda_c("CUDA C coalesce", twin, 1024, grid32)
    table = reg.run(96, 64, 80, runs=2, verbose=False)
    assert table["CUDA C coalesce"].correct and not table.skipped


def test_twin_from_a_file_includes_its_folder(tmp_path):
    (tmp_path / "common.cuh").write_text("#define SIDE 32\n")
    (tmp_path / "k.cu").write_text('#include "common.cuh"\n' + KERNEL2_C.replace("32", "SIDE"))
    twin = CudaC.from_file(tmp_path / "k.cu", "sgemm_coalesce", options=["-lineinfo"])
    assert b"sgemm_coalesce" in twin.cubin() and f"-I{tmp_path}" in twin.options
    with pytest.raises(FileNotFoundError, match="no CUDA C source"):
        CudaC.from_file(tmp_path / "missing.cu", "sgemm_coalesce")
