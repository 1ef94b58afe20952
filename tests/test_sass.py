"""Static PTX/SASS analysis without a GPU: numba's PTX (compiled in a subprocess under the simulator),
ptxas/NVRTC cubins, the hot-loop finder, the comparison table and the sm_90 occupancy rule."""

import importlib.metadata
import linecache
import numpy as np
import pytest

import util  # before numba: without a GPU, util switches numba to its simulator
from util import compile as compile_, cuda, sass
from util.compile import PtxCompileError, cubin_from_ptx, cuda_c_cubin, numba_ptx
from util.occupancy import max_blocks_per_sm
from util.ptx import f64_ops, ptx_op_counts
from util.sass import analyze, category, find_loops, hot_loop, parse_sass, short_name, side_by_side
from util.kernel2 import KERNEL2_C, variant7
from util.toolchain import ToolchainError, tool

from numba import float32, int32  # isort: skip

SIG = (float32[:, ::1], float32[:, ::1], float32[:, ::1], int32, int32, int32)
SIG7 = SIG + (int32,)  # util.kernel2's variants take the block side bs too
TM = 8  # the register-tiled kernel's thread tile is TM x TM


def coalesced_f64(a, b, c, m, n, k):  # a plain function: numba_ptx takes those too
    x = cuda.blockIdx.x * 32 + cuda.threadIdx.x // 32
    y = cuda.blockIdx.y * 32 + cuda.threadIdx.x % 32
    if x < m and y < n:
        tmp = 0  # int, then float64 once float32 products are added: a float64 accumulator
        for i in range(k):
            tmp += a[x, i] * b[i, y]
        c[x, y] = tmp


@cuda.jit
def tiled(a, b, c, m, n, k):
    row = (cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y) * TM
    col = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) * TM
    acc = cuda.local.array((TM, TM), float32)
    for i in range(TM):
        for j in range(TM):
            acc[i, j] = 0
    for p in range(k):
        for i in range(TM):
            for j in range(TM):
                acc[i, j] += a[row + i, p] * b[p, col + j]
    for i in range(TM):
        for j in range(TM):
            c[row + i, col + j] = acc[i, j]




@pytest.fixture(scope="module")
def reports():
    assert util.SIMULATED, "these tests exercise the subprocess path numba_ptx takes under the simulator"
    numba = analyze(cubin_from_ptx(numba_ptx(variant7, SIG7)))
    twin = analyze(cuda_c_cubin(KERNEL2_C, "sgemm_coalesce"), "sgemm_coalesce")
    return {"numba": numba, "CUDA C": twin}


# ---- the numba kernel against its CUDA C twin -----------------------------------------------------------

def test_numba_and_cuda_c_twin_compile_and_compare(reports):
    numba, twin = reports["numba"], reports["CUDA C"]
    assert numba.name == "variant7" and numba.symbol.startswith("_ZN") and twin.name == "sgemm_coalesce"
    assert numba.arch == twin.arch == "sm_90"
    assert numba.registers > 0 and twin.registers > 0
    assert numba.hot_loop is not None and twin.hot_loop is not None
    assert twin.hot_loop.ffma > numba.hot_loop.ffma >= 1  # nvcc unrolls deeper
    assert numba.hot_loop.instr_per_ffma > 2 * twin.hot_loop.instr_per_ffma  # numba's index arithmetic
    assert numba.hot_loop.count("int") > twin.hot_loop.count("int")
    for r in (numba, twin):
        loop = r.hot_loop
        assert loop.unroll == loop.ffma and loop.count("LDG") == 2 * loop.ffma  # a[x, i] and b[i, y] per FMA
        assert loop.count("f64") == 0 and r.spills == "none"
        assert len(loop.lines) == loop.size and "BRA" in loop.lines[-1] and "FFMA" in "".join(loop.lines)
        assert loop.size == (loop.end - loop.start) // 16 + 1
        assert f"{loop.ffma} FFMA" in str(r)


def test_bank_pairs_counts_same_bank_sources_not_read_from_the_reuse_cache():
    from util.sass import HotLoop, Instruction

    texts = ["FFMA R1, R2, R4, R6",           # three sources in bank 0: 2
             "FFMA R1, R2.reuse, R4, R7",     # R2 from the reuse cache; R4, R7 in banks 0, 1: 0
             "@P0 FFMA R8, R3, R5, R8",       # R3, R5 in bank 1: 1
             "FFMA R9, R3, 2, R10",           # an immediate: R3, R10 in banks 1, 0: 0
             "LDS.128 R4, [R2+0x10]"]         # not an FFMA
    loop = HotLoop(0, 64, [Instruction(16 * i, t.split()[1] if t.startswith("@") else t.split()[0], t)
                           for i, t in enumerate(texts)])
    assert loop.bank_pairs == 3


def test_side_by_side_table(reports):
    table = side_by_side(reports)
    rows = {row["kernel"]: row for row in table.rows()}
    assert rows["CUDA C"]["FFMA"] == reports["CUDA C"].hot_loop.ffma
    assert rows["numba"]["registers"] == reports["numba"].registers
    text = str(table)
    for col in ("registers", "spills", "hot-loop instr", "FFMA", "instr/FFMA", "unroll", "LDG", "LDS",
                "int arith", "conversions", "branches", "f64"):
        assert f"| {col} |" in text
    assert "| numba |" in text and "| CUDA C |" in text
    assert table._repr_html_().count("<tr>") == 3
    with pytest.raises(TypeError, match="analyze"):
        side_by_side({"x": "not a report"})


def test_float64_accumulator_shows_in_ptx_and_sass():
    ptx64 = numba_ptx(coalesced_f64, SIG)
    assert {"add.f64", "fma.rn.f64", "cvt.f64.f32"} & set(f64_ops(ptx64))
    assert not f64_ops(numba_ptx(variant7, SIG7))
    loop = analyze(cubin_from_ptx(ptx64)).hot_loop
    assert loop.count("f64") > 0 and loop.count("conversion") > 0  # DADD and F2F.F64.F32 in the loop


def test_numba_types_reports_the_accumulator_type():
    t64 = compile_.numba_types(coalesced_f64, SIG)
    assert "float64" in t64.types_of("tmp")
    assert any(line.endswith(":: float64") for line in t64.lines_about("tmp"))
    t32 = compile_.numba_types(variant7, SIG7)
    assert t32.types_of("tmp") == ["float32"]
    assert "tmp" in t32.annotation
    with pytest.raises(TypeError, match="sig must be a tuple of numba types"):
        compile_.numba_types(variant7, "float32")


def test_results_are_cached(monkeypatch):
    first = numba_ptx(variant7, SIG7)

    def no_subprocess(*args, **kwargs):
        raise AssertionError("compiled again")

    monkeypatch.setattr(compile_.subprocess, "run", no_subprocess)
    assert numba_ptx(variant7, SIG7) == first
    assert ".maxnreg 40" in numba_ptx(variant7, SIG7, max_registers=40)  # a directive on the cached PTX


def test_launch_bounds_and_max_registers_cap_registers():
    free = analyze(cubin_from_ptx(numba_ptx(tiled, SIG)), ffma_per_iteration=TM * TM)
    assert free.registers > 64 and free.hot_loop.unroll == 1
    bounded_ptx = numba_ptx(tiled, SIG, launch_bounds=(1024, 1))
    assert ".maxntid 1024, 1, 1" in bounded_ptx and ".minnctapersm 1" in bounded_ptx
    bounded = analyze(cubin_from_ptx(bounded_ptx))
    assert bounded.registers <= 64  # 65536 registers / 1024 threads
    capped_ptx = numba_ptx(tiled, SIG, max_registers=40)
    assert ".maxnreg 40" in capped_ptx
    capped = analyze(cubin_from_ptx(capped_ptx))
    assert capped.registers <= 40 and capped.local_stores > 0 and capped.hot_loop.count("LDL") > 0
    assert capped.spills.endswith("LDL)") and capped.stack_bytes > 0
    assert max_blocks_per_sm(capped.registers, 256) > max_blocks_per_sm(free.registers, 256)


def test_decorator_options_reach_the_compiler():
    @cuda.jit(opt=False, fastmath=True)  # the simulator drops opt: numba_ptx reads it from the source
    def sumsq(a, n):
        s = np.float32(0)
        for i in range(n):
            s += a[i] * a[i]
        a[0] = s

    ops = ptx_op_counts(numba_ptx(sumsq, (float32[::1], int32)))
    assert any(".ftz." in op for op in ops)  # fastmath
    assert sum(n for op, n in ops.items() if op.startswith("st.")) > 10  # unoptimised: locals go to memory


# ---- kernels defined in a notebook cell -----------------------------------------------------------------

CELL = '''
import numpy as np
from math import sqrt

SHIFT = np.float32(0.5)


@cuda.jit(device=True)
def scaled(x, factor):
    return x * factor + SHIFT


def make(factor):
    @cuda.jit
    def cell_kernel(a, n):
        i = cuda.grid(1)
        if i < n:
            a[i] = scaled(a[i], factor) + sqrt(np.float32(2.0))
    return cell_kernel
'''


def test_kernel_from_a_notebook_cell(tmp_path):
    """IPython compiles a cell under a made-up file name and registers its text in linecache."""
    filename = str(tmp_path / "ipykernel_1" / "3141592.py")  # does not exist on disk, like ipykernel's
    linecache.cache[filename] = (len(CELL), None, CELL.splitlines(True), filename)
    try:
        ns = {"__name__": "__main__", "cuda": cuda}
        exec(compile(CELL, filename, "exec"), ns)
        kernel = ns["make"](np.float32(3.0))
        ptx = numba_ptx(kernel, (float32[::1], int32))
    finally:
        del linecache.cache[filename]
    assert "cell_kernel" in ptx and ptx_op_counts(ptx)["fma.rn.f32"] == 1  # the device function, inlined
    assert "0f40400000" in ptx  # factor = 3.0, from the closure
    assert "0f3F000000" in ptx  # SHIFT = 0.5, a global of the cell
    assert "0f3FB504F3" in ptx  # sqrt(2), with sqrt from `from math import sqrt`
    assert analyze(cubin_from_ptx(ptx)).name == "cell_kernel"


# ---- bad input -------------------------------------------------------------------------------------------

CONFIG = {"tile": 32}


def test_bad_input_to_numba_ptx():
    with pytest.raises(TypeError, match="@cuda.jit kernel or a Python function"):
        numba_ptx(42, SIG)
    with pytest.raises(TypeError, match="tuple of numba types"):
        numba_ptx(variant7, (float32, "int32"))
    with pytest.raises(TypeError, match="takes 7 arguments but sig has 2"):
        numba_ptx(variant7, (float32, int32))
    with pytest.raises(TypeError, match="unknown jit option"):
        numba_ptx(variant7, SIG7, max_regs=32)
    with pytest.raises(ValueError, match="max_registers"):
        numba_ptx(variant7, SIG7, max_registers=0)

    def uses_dict(a):
        a[0] = CONFIG["tile"]

    with pytest.raises(TypeError, match="'CONFIG'.*pass it to the kernel as an argument"):
        numba_ptx(uses_dict, (float32[::1],))

    def plain_helper(x):  # not @cuda.jit: numba cannot call it, and it cannot be shipped
        return x

    def uses_helper(a):
        a[0] = plain_helper(a[0])

    with pytest.raises(TypeError, match="'plain_helper'"):
        numba_ptx(uses_helper, (float32[::1],))

    def calls_kernel(a):
        variant7(a, a, a, 1, 1, 1, 1)

    with pytest.raises(TypeError, match="calls the kernel variant7.*device=True"):
        numba_ptx(calls_kernel, (float32[::1],))

    @cuda.jit(device=True)
    def helper(x):
        return x

    with pytest.raises(TypeError, match="device function"):
        numba_ptx(helper, (float32,))

    def untyped(a):
        a[0] = undefined_name  # noqa: F821

    with pytest.raises(PtxCompileError, match="could not compile untyped"):
        numba_ptx(untyped, (float32[::1],))


def test_bad_input_to_the_cubin_tools():
    two = cuda_c_cubin('extern "C" __global__ void f(float* x) { x[0] = 1.f; }\n'
                       'extern "C" __global__ void g(float* x) { x[1] = 2.f; }', ["f", "g"])
    with pytest.raises(ValueError, match=r"2 functions .*pass kernel="):
        analyze(two)
    with pytest.raises(ValueError, match=r"no function named 'h'.*'f'"):
        analyze(two, "h")
    assert analyze(two, "g").hot_loop is None  # no loop
    with pytest.raises(TypeError, match="looks like PTX"):
        analyze(".version 9.0\n.entry f() {}")
    with pytest.raises(ValueError, match="ffma_per_iteration"):
        analyze(two, "f", ffma_per_iteration=0)
    with pytest.raises(TypeError, match="PTX text"):
        cubin_from_ptx(two)
    with pytest.raises(ValueError, match="unsupported NVRTC option '-fast'"):
        cuda_c_cubin(KERNEL2_C, "sgemm_coalesce", options=["-fast"])
    with pytest.raises(TypeError, match="kernel name"):
        cuda_c_cubin(KERNEL2_C, [])


def test_template_kernel_by_name_expression():
    cubin = cuda_c_cubin("template <int T> __global__ void scale(float* x) { x[threadIdx.x] *= T; }",
                         "scale<4>", options=["-use_fast_math", "-maxrregcount=32"])
    report = analyze(cubin, "scale")
    assert report.symbol == "_Z5scaleILi4EEvPf" and report.registers > 0


# ---- the hot-loop finder on hand-written SASS ------------------------------------------------------------

SASS = """
        /*0000*/                   LDC R1, c[0x0][0x28] ;                        /* 0x00000a00ff017b82 */
                                                                                 /* 0x000fe20000000800 */
        /*0010*/                   ISETP.GE.AND P0, PT, R0, 0x1, PT ;
        /*0020*/              @!P0 BRA 0x130 ;
        /*0030*/                   LDG.E.128 R4, desc[UR4][R2.64] ;
        /*0040*/                   LDS.128 R8, [R3] ;
        /*0050*/                   FFMA R12, R4, R8, R12 ;
        /*0060*/                   FFMA R13, R5, R9, R13 ;
        /*0070*/                   IADD3 R3, R3, 0x10, RZ ;
        /*0080*/                   ISETP.NE.AND P1, PT, R3, R6, PT ;
        /*0090*/               @P1 BRA 0x40 ;
        /*00a0*/                   FFMA R14, R4, R4, R14 ;
        /*00b0*/                   LDS R9, [R3+0x4] ;
        /*00c0*/                   F2F.F64.F32 R16, R9 ;
        /*00d0*/                   DADD R16, R16, R18 ;
        /*00e0*/                   ISETP.NE.AND P2, PT, R0, RZ, PT ;
        /*00f0*/               @P2 BRA 0x30 ;
        /*0100*/                   FFMA R20, R4, R4, R20 ;
        /*0110*/               @P3 BRA 0x100 ;
        /*0120*/                   STG.E desc[UR4][R2.64], R12 ;
        /*0130*/                   EXIT ;
        /*0140*/                   BRA 0x140;
"""


def test_hot_loop_on_hand_written_sass():
    ins = parse_sass(SASS)
    assert len(ins) == 21 and ins[2].opcode == "BRA" and ins[2].branch_target == 0x130
    assert find_loops(ins) == [(0x30, 0xF0), (0x40, 0x90), (0x100, 0x110)]  # not the BRA-to-itself at 0x140
    loop = hot_loop(ins, ffma_per_iteration=2)
    assert (loop.start, loop.end, loop.size) == (0x40, 0x90, 6)  # the inner loop: most FFMA of its own
    assert loop.mix == {"LDS.128": 1, "FFMA": 2, "int": 2, "branch": 1}
    assert loop.ffma == 2 and loop.unroll == 1 and loop.instr_per_ffma == 3 and loop.vector_load_share == 1
    assert loop.lines[0] == "/*0040*/ LDS.128 R8, [R3]" and loop.opcodes["ISETP.NE.AND"] == 1
    # without the inner loop the outer one holds the FFMA; its mix counts every instruction of its body
    outer_only = [i for i in ins if i.address != 0x90]
    outer = hot_loop(outer_only)
    assert (outer.start, outer.end) == (0x30, 0xF0) and outer.ffma == 3
    assert outer.count("f64") == 1 and outer.count("conversion") == 1 and outer.count("LDG") == 1
    assert outer.vector_load_share == pytest.approx(2 / 3)  # LDG.128, LDS.128, LDS.32
    assert hot_loop(parse_sass(SASS.split("/*0030*/")[0])) is None


def test_categories_and_names():
    assert [category(op) for op in ("LDG.E", "LDG.E.128", "LDG.E.64.CONSTANT", "LDS.U8", "STS.128", "STL")] == [
        "LDG.32", "LDG.128", "LDG.64", "LDS.8", "STS.128", "STL.32"]
    assert [category(op) for op in ("FFMA.FTZ", "FMUL", "DFMA", "IMAD.WIDE.U32", "UIADD3", "SEL", "I2F.S64",
                                    "BSSY", "MOV")] == [
        "FFMA", "fp32 other", "f64", "int", "int", "int", "conversion", "branch", "other"]
    assert short_name("_ZN8__main__8variant8B2v1B92cw51cXTLSUwv1sDUaKthqaE5ArrayIfLi2EEiii") == "variant8"
    assert short_name("_ZN6module5outer12_3clocals_3e1kB2v1E5ArrayIfEi") == "k"
    assert short_name("_Z5scaleILi4EEvPf") == "scale" and short_name("sgemm_coalesce") == "sgemm_coalesce"


def test_ptx_op_counts_on_hand_written_ptx():
    ptx = """
.visible .entry k(
\t.param .u64 k_param_0
)
.maxntid 256, 1, 1
{
\t.reg .f32 \t%f<4>;
$L__BB0_1:
\tld.global.f32 \t%f1, [%rd1];
\tcvt.f64.f32 \t%fd1, %f1;
\tfma.rn.f64 \t%fd2, %fd1, %fd1, %fd2;
\tfma.rn.f32 \t%f2, %f1, %f1, %f2;
\t@%p1 bra \t$L__BB0_1;
\t@!%p2 bra.uni \t$L__BB0_1;
\tret;
}
"""
    assert ptx_op_counts(ptx) == {"ld.global.f32": 1, "cvt.f64.f32": 1, "fma.rn.f64": 1, "fma.rn.f32": 1,
                                  "bra": 1, "bra.uni": 1, "ret": 1}
    assert f64_ops(ptx) == {"cvt.f64.f32": 1, "fma.rn.f64": 1}


# ---- occupancy and the toolchain -------------------------------------------------------------------------

@pytest.mark.parametrize("registers, threads, shared, blocks", [
    (32, 1024, 0, 2),  # 32 regs x 2048 threads fill the 64K register file: full occupancy
    (42, 1024, 0, 1),  # 42*32 -> 1536 regs/warp; 16384 // 1536 = 10 warps per sub-partition, 40 per SM
    (64, 256, 0, 4),  # 2048 regs/warp -> 32 warps per SM -> 4 blocks of 8 warps
    (16, 32, 0, 32),  # the 32-blocks-per-SM limit
    (32, 128, 100 * 1024, 2),  # (100 KB + 1 KB reserved) per block, 228 KB per SM
    (32, 128, 228 * 1024, 0),  # over the 227 KB a block may have
    (255, 1024, 0, 0),  # 255*32 -> 8192 regs/warp x 32 warps > 64K: the block does not fit
    (32, 1025, 0, 0),  # over 1024 threads per block
])
def test_max_blocks_per_sm(registers, threads, shared, blocks):
    assert max_blocks_per_sm(registers, threads, shared) == blocks


def test_max_blocks_per_sm_rejects_bad_input():
    with pytest.raises(ValueError, match="threads_per_block"):
        max_blocks_per_sm(32, 0)
    with pytest.raises(ValueError, match="registers"):
        max_blocks_per_sm(-1, 128)


def test_toolchain_finds_tools_and_names_missing_packages(monkeypatch):
    for name in ("ptxas", "cuobjdump", "nvdisasm"):
        assert tool(name).is_file()
    with pytest.raises(ValueError, match="unknown CUDA tool"):
        tool("nvcc-x")

    def missing(package):
        raise importlib.metadata.PackageNotFoundError(package)

    tool.cache_clear()
    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    try:
        with pytest.raises(ToolchainError, match="pip install 'nvidia-cuda-cuobjdump"):
            tool("cuobjdump")
    finally:
        tool.cache_clear()



def test_load_to_use_distance_follows_registers_around_the_loop():
    text = """
        /*0000*/                   LDG.E R2, desc[UR4][R4.64] ;
        /*0010*/                   IADD3 R4, R4, 0x4, RZ ;
        /*0020*/                   IADD3 R6, R6, 0x1, RZ ;
        /*0030*/                   FFMA R8, R2, R3, R8 ;
        /*0040*/                   LDG.E R3, desc[UR4][R10.64] ;
        /*0050*/                   ISETP.NE.AND P0, PT, R6, R7, PT ;
        /*0060*/               @P0 BRA 0x0 ;
    """
    loop = sass.hot_loop(sass.parse_sass(text))
    # R2: loaded at 0, read 3 later; R3: loaded at 4, read by the FFMA of the next trip, 6 later
    assert loop.load_to_use == pytest.approx(4.5)


def test_simulator_jit_keeps_options_from_an_enclosing_function() -> None:
    """A factory's launch_bounds (a variable of the enclosing function, not of the kernel) reaches the PTX."""
    from numba import float32, int64

    from util import cuda
    from util.compile import numba_ptx

    def make(lb):
        @cuda.jit(launch_bounds=lb)
        def scale(a, n):
            i = cuda.grid(1)
            if i < n:
                a[i] *= float32(2.0)
        return scale

    ptx = numba_ptx(make((128, 3)), (float32[::1], int64))
    assert ".maxntid 128" in ptx and ".minnctapersm 3" in ptx
