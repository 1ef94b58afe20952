"""util.intrinsics' tensor-core intrinsics: one warp's D = A @ B + C through mma.sync (TF32 m16n8k8, bf16 m16n8k16)
and one warpgroup's through wgmma (m64n16, A and B from 128-byte-swizzled shared memory) against float64 of the
rounded inputs, the roundings themselves, the SASS instruction each one emits (HMMA, HGMMA), and cp.async's copy of
float32 bits into the uint32 tiles the tensor-core kernels stage (LDGSTS), to an array element or a shared address.

The correctness tests run under the simulator (its fallbacks) and, unchanged, on a GPU (the hardware):
``python -m pytest tests/test_tensor_core_intrinsics.py`` on the GPU machine checks the fragment layouts there."""

import numpy as np
import pytest

import util  # noqa: F401  first: without a GPU it switches numba to its simulator
from numba import float32, uint32  # noqa: E402 - after util (the simulator or the compiler)
from util import cuda
from util.compile import cubin_from_ptx, numba_ptx
from util.backend import allow_dynamic_shared
from util.intrinsics import (cp_async, cp_async16, cp_async16_to, cp_async_commit, cp_async_wait, cvt_tf32,
                             fence_proxy_async, mma_bf16, mma_tf32, pack_bf16x2, smem_addr, sw128_desc, wgmma_bf16,
                             wgmma_commit, wgmma_fence, wgmma_tf32, wgmma_wait)
from util.sass import analyze

WARPS = 2  # warp w of the block computes tile w: the simulator's warps must not mix


@cuda.jit
def tf32_tiles(a, b, c, d):
    """Warp w: D[16w:16w+16] = A[16w:16w+16] (16 x 8) @ B (8 x 8) + C[16w:16w+16], fragments per the PTX layout."""
    lane = cuda.threadIdx.x % 32
    r0 = cuda.threadIdx.x // 32 * 16
    g = lane // 4
    t = lane % 4
    fa = (cvt_tf32(a[r0 + g, t]), cvt_tf32(a[r0 + g + 8, t]), cvt_tf32(a[r0 + g, t + 4]),
          cvt_tf32(a[r0 + g + 8, t + 4]))
    fb = (cvt_tf32(b[t, g]), cvt_tf32(b[t + 4, g]))
    fc = (c[r0 + g, 2 * t], c[r0 + g, 2 * t + 1], c[r0 + g + 8, 2 * t], c[r0 + g + 8, 2 * t + 1])
    d0, d1, d2, d3 = mma_tf32(fa, fb, fc)
    d[r0 + g, 2 * t] = d0
    d[r0 + g, 2 * t + 1] = d1
    d[r0 + g + 8, 2 * t] = d2
    d[r0 + g + 8, 2 * t + 1] = d3


@cuda.jit
def bf16_tiles(a, b, c, d):
    """Warp w: D[16w:16w+16] = A[16w:16w+16] (16 x 16) @ B (16 x 8) + C[16w:16w+16] in bf16 with float32 sums."""
    lane = cuda.threadIdx.x % 32
    r0 = cuda.threadIdx.x // 32 * 16
    g = lane // 4
    t = lane % 4
    fa = (pack_bf16x2(a[r0 + g, 2 * t], a[r0 + g, 2 * t + 1]),
          pack_bf16x2(a[r0 + g + 8, 2 * t], a[r0 + g + 8, 2 * t + 1]),
          pack_bf16x2(a[r0 + g, 2 * t + 8], a[r0 + g, 2 * t + 9]),
          pack_bf16x2(a[r0 + g + 8, 2 * t + 8], a[r0 + g + 8, 2 * t + 9]))
    fb = (pack_bf16x2(b[2 * t, g], b[2 * t + 1, g]), pack_bf16x2(b[2 * t + 8, g], b[2 * t + 9, g]))
    fc = (c[r0 + g, 2 * t], c[r0 + g, 2 * t + 1], c[r0 + g + 8, 2 * t], c[r0 + g + 8, 2 * t + 1])
    d0, d1, d2, d3 = mma_bf16(fa, fb, fc)
    d[r0 + g, 2 * t] = d0
    d[r0 + g, 2 * t + 1] = d1
    d[r0 + g + 8, 2 * t] = d2
    d[r0 + g + 8, 2 * t + 1] = d3


def round_tf32(x):
    """float32 -> TF32 value: round to nearest, ties away from zero (cvt.rna), as float64."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x1000) & 0xFFFFE000).astype(np.uint32).view(np.float32).astype(np.float64)


def round_bf16(x):
    """float32 -> bf16 value: round to nearest even (cvt.rn), as float64."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


@pytest.mark.parametrize("kernel, k, rounding, mantissa", [(tf32_tiles, 8, round_tf32, 10),
                                                           (bf16_tiles, 16, round_bf16, 7)])
def test_one_warp_product_matches_float64_of_the_rounded_inputs(kernel, k, rounding, mantissa):
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (16 * WARPS, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, 8)).astype(np.float32)
    c = rng.uniform(-1, 1, (16 * WARPS, 8)).astype(np.float32)
    d = cuda.to_device(np.full((16 * WARPS, 8), np.nan, np.float32))
    kernel[1, 32 * WARPS](cuda.to_device(a), cuda.to_device(b), cuda.to_device(c), d)
    got = d.copy_to_host().astype(np.float64)
    ra, rb = rounding(a), rounding(b)
    want = ra @ rb + c
    tol = (k + 2) * 2.0**-23 * (np.abs(ra) @ np.abs(rb) + np.abs(c))  # float32 sums of exact products
    assert np.isfinite(got).all()
    assert (np.abs(got - want) <= tol).all(), np.abs(got - want).max()
    # unrounded inputs would differ by far more than that: the rounding is really there
    unrounded = a.astype(np.float64) @ b.astype(np.float64) + c
    assert np.abs(unrounded - want).max() > 2.0**-(mantissa + 4)


def test_roundings():
    if not util.SIMULATED:
        pytest.skip("the scalar roundings are checked through the simulator's fallbacks; on a GPU the product test "
                    "covers them")
    one_ulp_tf32 = 2.0**-10
    assert float(np.uint32(cvt_tf32(1.0 + one_ulp_tf32 / 2)).view(np.float32)) == 1.0 + one_ulp_tf32  # ties away
    assert float(np.uint32(cvt_tf32(-1.0 - one_ulp_tf32 / 2)).view(np.float32)) == -1.0 - one_ulp_tf32
    assert int(cvt_tf32(np.float32(np.inf))) == 0x7F800000
    assert int(pack_bf16x2(1.0, -2.0)) == 0xC0003F80  # lo in the low half
    assert int(pack_bf16x2(1.0 + 2.0**-8, 0.0)) & 0xFFFF == 0x3F80  # a tie rounds to even (down here)
    assert int(pack_bf16x2(1.0 + 3 * 2.0**-8, 0.0)) & 0xFFFF == 0x3F82  # ... and up here


@pytest.mark.parametrize("kernel, k, opcode", [(tf32_tiles, 8, "HMMA.1688.F32.TF32"),
                                               (bf16_tiles, 16, "HMMA.16816.F32.BF16")])
def test_the_tensor_core_instruction_is_emitted(kernel, k, opcode):
    from numba import float32

    report = analyze(cubin_from_ptx(numba_ptx(kernel, (float32[:, ::1],) * 4)))
    ops = [i.opcode for i in report.instructions]
    assert ops.count(opcode) == 1, sorted(set(ops))
    assert not any(op.startswith(("LDL", "STL")) for op in ops)


@pytest.mark.parametrize("precision, rounding", [("tf32", round_tf32), ("bf16", round_bf16)])
def test_problems_in_tensor_core_precisions(precision, rounding):
    """A Problem's inputs are rounded to the precision (so the reference multiplies what the tensor cores do): the
    exact product of the rounded inputs passes its check, the product of the unrounded ones fails it."""
    from util.verify import Problem, round_to

    if not util.SIMULATED:
        pytest.skip("rebuilds the simulator path's random inputs (NumPy's generator; a GPU Problem uses torch's)")
    p = Problem(24, 16, 40, seed=5, precision=precision)
    a, b = p.a.copy_to_host(), p.b.copy_to_host()
    assert (rounding(a) == a).all() and (rounding(b) == b).all()
    rng = np.random.default_rng(5)  # the unrounded inputs, drawn as Problem draws them
    raw_a = rng.uniform(-1.0, 1.0, a.shape).astype(np.float32)
    raw_b = rng.uniform(-1.0, 1.0, b.shape).astype(np.float32)
    assert (round_to(raw_a, precision) == a).all()
    for inputs, correct in (((a, b), True), ((raw_a, raw_b), False)):
        p.poison()
        p.c.copy_to_device((inputs[0].astype(np.float64) @ inputs[1].astype(np.float64)).astype(np.float32))
        assert p.check().correct is correct
    with pytest.raises(ValueError, match="precision"):
        Problem(4, 4, 4, precision="fp16")


@cuda.jit
def copy_bits(src, out):
    """src (float32, 8 values) -> a uint32 shared tile by cp.async (16 and 4 bytes) -> out: the floats' bit patterns."""
    tile = cuda.shared.array(8, uint32)
    if cuda.threadIdx.x == 0:
        cp_async16(tile, (0,), src, (0,), 16)
        for x in range(4):
            cp_async(tile, (4 + x,), src, (4 + x,), 4)
        cp_async_commit()
        cp_async_wait(0)
        for i in range(8):
            out[i] = tile[i]


def test_cp_async_copies_bytes():
    # a tensor-core kernel stages float32 inputs into uint32 tiles: the copy must keep their bits, not convert values
    src = np.array([1.5, -2.25, 3.0e-3, 7.0, -0.0, 1e30, 0.1, 123.456], dtype=np.float32)
    out = cuda.to_device(np.zeros(8, dtype=np.uint32))
    copy_bits[1, 32](cuda.to_device(src), out)
    assert np.array_equal(out.copy_to_host(), src.view(np.uint32))


def test_cp_async_emits_ldgsts():
    r = analyze(cubin_from_ptx(numba_ptx(copy_bits, (float32[::1], uint32[::1]))))
    ops = [i.opcode for i in r.instructions]
    assert sum(op.startswith("LDGSTS") for op in ops) == 5  # one 16-byte and four 4-byte copies
    assert any(op.startswith("LDGSTS.E.BYPASS.128") for op in ops)


def test_bf16_problems_carry_their_bf16_operands():
    # kernels that read bf16 take A's bits (m x k) and B's transposed (n x k) from the Problem: the same values
    from util.verify import Problem

    p = Problem(5, 7, 9, precision="bf16")
    a, b = p.a.copy_to_host(), p.b.copy_to_host()
    assert np.array_equal(p.a16.copy_to_host().view(np.uint16), (a.view(np.uint32) >> 16).astype(np.uint16))
    assert np.array_equal(p.bt16.copy_to_host().view(np.uint16), (b.T.copy().view(np.uint32) >> 16).astype(np.uint16))
    assert not (a.view(np.uint32) & 0xFFFF).any()  # the float32 values are bf16 values: nothing below 16 bits
    assert Problem(5, 7, 9, precision="tf32").a16 is None


def make_wgmma_tile(mma):
    @cuda.jit
    def wgmma_tile(a, w, d):
        """One warpgroup: D (64 x 16) = A (64 rows of 128 bytes of K) @ W^T (W: 16 rows of 128 bytes), the rows'
        32 words staged with the 128-byte swizzle (word q of row r in chunk (q // 4) ^ (r % 8)), 4 k-steps."""
        sm = cuda.shared.array(80 * 32 + 256, uint32)  # 80 rows of 32 words, and room to align them to 1024 bytes
        tid = cuda.threadIdx.x
        addr0 = smem_addr(sm, 0)
        pad = (1024 - (addr0 & 1023)) & 1023
        for f in range(tid, 80 * 32, 128):
            r, q = f // 32, f % 32
            sm[pad // 4 + r * 32 + ((q // 4) ^ (r % 8)) * 4 + q % 4] = a[r, q] if r < 64 else w[r - 64, q]
        fence_proxy_async()
        cuda.syncthreads()
        acc = cuda.local.array((2, 4), float32)
        for j in range(2):
            for e in range(4):
                acc[j, e] = float32(0.0)
        da, db = sw128_desc(addr0 + pad), sw128_desc(addr0 + pad + 64 * 128)
        wgmma_fence()
        for j in range(4):
            mma(acc, da + 2 * j, db + 2 * j, 16)
        wgmma_commit()
        wgmma_wait(0, acc, 16)
        row, t = tid // 32 * 16 + tid % 32 // 4, tid % 4  # warp w, lane (g, t): rows 16 w + g (+ 8)
        for j in range(2):
            for e in range(4):
                d[row + 8 * (e // 2), 8 * j + 2 * t + e % 2] = acc[j, e]

    return wgmma_tile


WGMMA_TILE = {"tf32": make_wgmma_tile(wgmma_tf32), "bf16": make_wgmma_tile(wgmma_bf16)}


def words(x, precision):
    """Rows of float32 values (already rounded to the precision) as the uint32 words a stage row holds: the float32
    bits (TF32), or two bf16 a word, the lower index in the low half."""
    if precision == "tf32":
        return np.ascontiguousarray(x.astype(np.float32)).view(np.uint32)
    bits = (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return np.ascontiguousarray(bits).view(np.uint32)


@pytest.mark.parametrize("precision, rounding", [("tf32", round_tf32), ("bf16", round_bf16)])
def test_one_warpgroup_wgmma_matches_float64_of_the_rounded_inputs(precision, rounding):
    k = 32 if precision == "tf32" else 64  # 128 bytes of K
    rng = np.random.default_rng(2)
    a = rounding(rng.uniform(-1, 1, (64, k))).astype(np.float32)
    w = rounding(rng.uniform(-1, 1, (16, k))).astype(np.float32)
    d = cuda.to_device(np.full((64, 16), np.nan, np.float32))
    WGMMA_TILE[precision][1, 128](cuda.to_device(words(a, precision)), cuda.to_device(words(w, precision)), d)
    got = d.copy_to_host().astype(np.float64)
    want = a.astype(np.float64) @ w.astype(np.float64).T
    tol = (k + 2) * 2.0**-23 * (np.abs(a).astype(np.float64) @ np.abs(w).astype(np.float64).T)
    assert np.isfinite(got).all()
    assert (np.abs(got - want) <= tol).all(), np.abs(got - want).max()


@pytest.mark.parametrize("precision, opcode", [("tf32", "HGMMA.64x16x8.F32.TF32"), ("bf16", "HGMMA.64x16x16.F32.BF16")])
def test_wgmma_emits_hgmma(precision, opcode):
    sig = (uint32[:, ::1], uint32[:, ::1], float32[:, ::1])
    report = analyze(cubin_from_ptx(numba_ptx(WGMMA_TILE[precision], sig, cc=(9, 0, "a")), arch="sm_90a"))
    ops = [i.opcode for i in report.instructions]
    assert ops.count(opcode) == 4, sorted(set(ops))
    assert not any(op.startswith(("LDL", "STL")) for op in ops)  # the accumulators stay in registers


@cuda.jit
def copy_to_address(src, out):
    """src (float32, 4 values) -> a uint32 shared tile by a 16-byte cp.async to a 32-bit shared address -> out."""
    tile = cuda.shared.array(8, uint32)
    if cuda.threadIdx.x == 0:
        for i in range(8):
            tile[i] = 0
        cp_async16_to(smem_addr(tile, 4), src, 0, 16)
        cp_async_commit()
        cp_async_wait(0)
        for i in range(8):
            out[i] = tile[i]


def test_cp_async16_to_copies_bytes_to_the_address():
    src = np.array([1.5, -2.25, 3.0e-3, 1e30], dtype=np.float32)
    out = cuda.to_device(np.full(8, 7, dtype=np.uint32))
    copy_to_address[1, 32](cuda.to_device(src), out)
    assert np.array_equal(out.copy_to_host(), np.r_[np.zeros(4, np.uint32), src.view(np.uint32)])
    r = analyze(cubin_from_ptx(numba_ptx(copy_to_address, (float32[::1], uint32[::1]))))
    assert sum(i.opcode.startswith("LDGSTS.E.BYPASS.128") for i in r.instructions) == 1


def test_allow_dynamic_shared_checks_its_input():
    with pytest.raises(ValueError, match="nbytes"):
        allow_dynamic_shared(copy_to_address, (float32[::1], uint32[::1]), 300 * 1024)
    with pytest.raises(TypeError, match="kernel"):
        allow_dynamic_shared(len, (), 1024)
