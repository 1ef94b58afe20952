"""What numba-cuda 0.30 cannot say in Python source, as small ``@intrinsic``s (plain Python under the simulator).

1. Index arithmetic that tells LLVM what CUDA C's signed ``int`` tells it: this does not overflow.

In C, signed overflow is undefined, so ``i * n + y`` on ``int`` may be assumed not to wrap; the compiler then
keeps one 64-bit pointer per array and advances it with a single ``IMAD.WIDE``. numba has no way to say that:
unsigned indices wrap by definition, and signed ones pay NumPy's negative-index check. These two intrinsics
say it. Under numba's simulator they are plain Python arithmetic.

    i = add_nsw(i, n)      # i + n, with LLVM's "no signed wrap" flag (the caller promises no overflow)
    j = mul_nsw(i, n)      # i * n, likewise (numba would widen int32 * int32 to int64)
    a[nonneg(i)]           # index with i, promised >= 0: no negative-index check, sign-extended to 64 bits
    at(a, i)               # a[i] for a C-contiguous 1-D array, i promised >= 0: one address add per load
                           # (as a[nonneg(i)] here; under numba-cuda-mlir it also skips the stride multiply)
    at_nc(a, i)            # the same through the read-only data path (``ld.global.nc``, SASS LDG.E.CONSTANT):
                           # what CUDA C's ``const float* __restrict__`` gives; the caller promises that nothing
                           # writes a while the kernel runs. numba has no way to say so of an array argument.
    at_cs(a, i)            # a streaming load (``ld.global.cs``, SASS LDG.E.EF; CUDA C's ``__ldcs``): cached
                           # evict-first, for data read once, a line by one load
    at_cs(a, (i, j))       # the same at i + j, added to the address one by one as C's __ldcs(p + i + j)
    at_cg(a, i)            # a load cached in L2 only (``ld.global.cg``, CUDA C's ``__ldcg``): what other blocks
                           # of the same kernel wrote (behind a fence), never a stale line of this SM's L1

2. A 16-byte global load (``LDG.E.128``, CUDA C's ``float4``): NVVM merges four scalar loads only when it can
   prove 16-byte alignment, which a numba array's pointer never carries.

    v0, v1, v2, v3 = ldg128(arr, r, q)   # arr[r, q:q+4]; the caller guarantees &arr[r, q] is 16-byte aligned
    v0, v1, v2, v3 = ldg128_at(arr, i)   # the 4 floats at flat element i of a C-contiguous array (i >= 0, and
                                         # aligned): C's *(float4*)(p + i), one address add per load when i walks
    v0, v1, v2, v3 = ldg128_cs_at(arr, i)  # the same, streamed (``ld.global.cs.v4``, CUDA C's __ldcs of a float4)
    v0, v1, v2, v3 = ldg128_nc_at(arr, i)  # the same through the read-only path (``ld.global.nc.v4``, as a C
                                           # ``const float* __restrict__`` float4 load)
    stg128_at(arr, i, v0, v1, v2, v3)      # the 16-byte store (``st.global.v4``, C's *(float4*)(p + i) = ...)

3. Asynchronous global -> shared copies (``cp.async``, SASS ``LDGSTS``), as inline PTX:

    cp_async16(smem, (s, r, q), arr, (gr, gq), 16)   # start a 16-byte copy (0 bytes: zero-fill)
    cp_async(smem, (s, r, q), arr, (gr, gq), 4)      # 4 bytes
    cp_async_commit()                                # close the group of copies started so far
    cp_async_wait(1)                                 # wait until at most 1 group is in flight (a constant)

4. Tensor cores, warp-level (``mma.sync``, SASS ``HMMA``), as inline PTX with several outputs. Every lane of the
   warp passes its fragments (uint32 bit patterns for the inputs, float32 accumulators) and gets its part of D:

    x = cvt_tf32(v)                       # float32 -> its TF32 bit pattern (round to nearest, ties away)
    p = pack_bf16x2(lo, hi)               # two float32 -> two bf16 (round to nearest even) in one uint32
    d0, d1, d2, d3 = mma_tf32((a0, a1, a2, a3), (b0, b1), (c0, c1, c2, c3))   # m16n8k8, D = A @ B + C
    d0, d1, d2, d3 = mma_bf16((a0, a1, a2, a3), (b0, b1), (c0, c1, c2, c3))   # m16n8k16, bf16 inputs

   Lane l holds, with g = l // 4 and t = l % 4 (PTX ISA, "Matrix Fragments for mma.m16n8k8 / m16n8k16"; checked on
   an H200, docs/tensor_cores_research.md): TF32 a0..a3 = A[g, t], A[g+8, t], A[g, t+4], A[g+8, t+4]; b0, b1 =
   B[t, g], B[t+4, g]; BF16 a0..a3 = A[g, 2t:2t+2], A[g+8, 2t:2t+2], A[g, 2t+8:2t+10], A[g+8, 2t+8:2t+10] and
   b0, b1 = B[2t:2t+2, g], B[2t+8:2t+10, g] (lower index in the low half); both: c0..c3 = C[g, 2t], C[g, 2t+1],
   C[g+8, 2t], C[g+8, 2t+1]. Under the simulator the 32 lanes meet (a barrier per warp), and each computes the
   product in float64 from the rounded inputs and rounds it to float32: the same result up to the accumulation's
   rounding, which the hardware does in float32.

5. Hopper's warpgroup MMA (``wgmma.mma_async``, SASS ``HGMMA``; sm_90a, which numba-cuda builds every kernel it
   launches on an H100/H200 for). The 4 warps of a warpgroup issue it together; A (64 x k) and B (n x k, K-major)
   come from shared memory through 64-bit descriptors; each thread's n / 2 float32 accumulators live in a local array
   that the intrinsics pass through the inline PTX tied in and out (so they stay in registers):

    addr = smem_addr(tile, (0,))                   # the 32-bit shared address of an element of a shared array
    cp_async16_to(addr + off, arr, i, 16)          # cp.async of 16 bytes to a shared address
    fence_proxy_async()                            # make shared-memory writes visible to wgmma's reads
    d = sw128_desc(addr)                           # descriptor of a K-major tile: rows of 128 bytes, 16-byte chunk c
                                                   # of row r at c ^ (r % 8), 8-row groups 1024 bytes apart
    wgmma_fence()                                  # before the first wgmma that reads registers written since
    wgmma_tf32(acc, da, db, 256)                   # acc += A (64 x 8) @ B (8 x 256): m64n256k8 (bf16: k16)
    wgmma_commit()                                 # close the group
    wgmma_wait(1, acc, 256)                        # at most 1 group still in flight; acc passes through

   Accumulator i of a thread (warp w of the warpgroup, lane (g, t)) is D[16 w + g + 8 (i // 2 % 2), 8 (i // 4) +
   2 t + i % 2] (PTX ISA, "wgmma register fragment layout for the accumulator"; checked on an H200). Under the
   simulator wgmma is synchronous: each thread decodes the descriptors (128-byte swizzle only) from the shared array
   it last named in ``smem_addr`` and adds its part of the product, in float64 of the TF32/bf16 inputs.

6. A warp shuffle that numba's simulator lacks (``cuda.shfl_xor_sync`` on a GPU; under the simulator the 32 lanes
   meet, as for ``mma_tf32``):

    y = shfl_xor(x, mask)                 # x of lane (this lane ^ mask), the whole warp taking part
    y = shfl_idx(x, src)                  # x of lane src (0..31), the whole warp taking part

Under numba-cuda-mlir (``UTIL_COMPILER=numba-cuda-mlir``) the same source compiles for the no-wrap promise:
``add_nsw``, ``mul_nsw``, ``nonneg`` and ``at`` are written there as MLIR (``arith.addi``/``arith.muli`` with
``overflow<nsw>``, ``arith.extsi``; ``at`` loads through the array's data pointer, because numba-cuda-mlir 0.6
lowers every array, C-contiguous or not, to a memref with a run-time offset and stride that each access adds and
multiplies by).
The others have no numba-cuda-mlir version yet; using one is a clear error.
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

from .backend import COMPILER, SIMULATED


# What the index intrinsics accept, the same under both compilers (``types``: that compiler's numba types module).
def _signed(types, i) -> bool:
    return isinstance(i, types.Integer) and i.signed


def _same_signed(types, a, b) -> bool:
    return _signed(types, a) and a == b


def _at_args(types, arr, i) -> bool:
    return isinstance(arr, types.Array) and arr.ndim == 1 and arr.layout == "C" and _signed(types, i)


def _at_parts_args(types, arr, i) -> bool:
    """_at_args, or the same array and a tuple of signed indices (their sum, each added to the address in turn)."""
    if isinstance(i, types.BaseTuple):
        return len(i.types) > 0 and all(_at_args(types, arr, x) for x in i.types)
    return _at_args(types, arr, i)


if SIMULATED:

    def add_nsw(a, b):
        """a + b (the simulator runs plain Python)."""
        return a + b

    def mul_nsw(a, b):
        """a * b (the simulator runs plain Python)."""
        return a * b

    def nonneg(i):
        """i as an index (the simulator runs plain Python)."""
        if i < 0:
            raise IndexError(f"nonneg: index {i} is negative, which the caller promised it is not")
        return int(i)

    def at(arr, i):
        """arr[i] (the simulator checks the promise that i >= 0)."""
        return arr[nonneg(i)]

    def at_nc(arr, i):
        """arr[i] (the simulator has one data path; it checks that i >= 0)."""
        return arr[nonneg(i)]

    def at_cs(arr, i):
        """arr[i] (the simulator has no cache; it checks that i >= 0; a tuple i: each part, and takes their sum)."""
        return arr[sum(map(nonneg, i)) if isinstance(i, tuple) else nonneg(i)]

    def at_cg(arr, i):
        """arr[i] (the simulator has no cache; it checks that i >= 0)."""
        return arr[nonneg(i)]

    def ldg128(arr, r, q):
        """arr[r, q:q+4] as four values (the simulator loads them one by one)."""
        return arr[r, q], arr[r, q + 1], arr[r, q + 2], arr[r, q + 3]

    def _flat4(arr, i, name, access):
        """arr flattened, after the checks that elements i..i+3 are in it and i % 4 == 0 (16-byte aligned)."""
        flat = arr.reshape(-1)
        if not 0 <= i <= flat.size - 4:
            raise IndexError(f"{name}: elements {i}..{i + 3} are not all in an array of {flat.size}")
        if i % 4:
            raise ValueError(f"{name}: element {i} is not 16-byte aligned (i must be a multiple of 4 floats); "
                             f"on a GPU this {access} would be misaligned")
        return flat

    def ldg128_at(arr, i):
        """arr.flat[i:i+4] as four values (the simulator checks that the four are in the array, and i % 4 == 0)."""
        flat = _flat4(arr, i, "ldg128_at", "load")
        return flat[i], flat[i + 1], flat[i + 2], flat[i + 3]

    def ldg128_cs_at(arr, i):
        """ldg128_at (the simulator has no cache)."""
        return ldg128_at(arr, i)

    def ldg128_nc_at(arr, i):
        """ldg128_at (the simulator has one data path)."""
        return ldg128_at(arr, i)

    def stg128_at(arr, i, v0, v1, v2, v3):
        """arr.flat[i:i+4] = v0..v3 (the simulator stores them one by one after the checks of ldg128_at)."""
        flat = _flat4(arr, i, "stg128_at", "store")
        flat[i], flat[i + 1], flat[i + 2], flat[i + 3] = v0, v1, v2, v3

    def _copy(dst, di, src, si, size, nbytes):
        """cp.async's effect: ``size`` bytes of src from element si on (along its last index) -> dst from di on,
        the bytes past ``nbytes`` zero; bytes, not values (float32 into a uint32 tile keeps its bits, 8 int16 make 4
        uint32)."""
        di, si = (di if isinstance(di, tuple) else (di,)), (si if isinstance(si, tuple) else (si,))
        raw = np.zeros(size, dtype=np.uint8)
        if nbytes > 0:  # only the bytes the copy reads: -(-nbytes // itemsize) elements
            got = [src[si[:-1] + (si[-1] + x,)] for x in range(-(-nbytes // src.dtype.itemsize))]
            raw[:nbytes] = np.array(got, dtype=src.dtype).view(np.uint8)[:nbytes]
        for x, v in enumerate(raw.view(dst.dtype)):
            dst[di[:-1] + (di[-1] + x,)] = v

    def cp_async(dst, di, src, si, nbytes):
        """dst[di] = src[si] (its 4 bytes), or 0 when nbytes == 0 (synchronous in the simulator)."""
        _copy(dst, di, src, si, 4, nbytes)

    def cp_async16(dst, di, src, si, nbytes):
        """16 bytes from src[si] on -> dst[di] on, along the last index; zeros past nbytes (synchronous)."""
        _copy(dst, di, src, si, 16, nbytes)

    def cp_async_commit():
        """Nothing to do: the simulator's copies are synchronous."""

    def cp_async_wait(pending):
        """Nothing to wait for: the simulator's copies are synchronous."""

    def cvt_tf32(v):
        """float32 -> TF32 bit pattern: round to nearest, ties away from zero, the low 13 bits zero (cvt.rna)."""
        bits = int(np.float32(v).view(np.uint32))
        if (bits >> 23) & 0xFF != 0xFF:  # finite: add half of the dropped part, then drop it
            bits = (bits + 0x1000) & 0xFFFFE000
        return np.uint32(bits & 0xFFFFFFFF)

    def pack_bf16x2(lo, hi):
        """Two float32 -> two bf16 (round to nearest even) in one uint32, lo in the low half (cvt.rn.bf16x2)."""
        def bf16(v):
            bits = int(np.float32(v).view(np.uint32))
            if (bits >> 23) & 0xFF == 0xFF:
                return (bits >> 16) | (0x40 if bits & 0x7FFFFF else 0)  # inf stays inf, NaN stays NaN
            return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF
        return np.uint32(bf16(lo) | bf16(hi) << 16)

    class _Warp:
        """The lanes of one simulated warp meeting at collectives: a barrier, their contributions and the result
        (computed once, by the first lane to get there), for even and odd collectives apart: a lane can be one
        collective ahead of another (reading), never two (the barrier of the one between holds it)."""

        def __init__(self, width):
            self.barrier = threading.Barrier(width, timeout=WARP_TIMEOUT_S)  # a lane that died must not hang the rest
            self.lock = threading.Lock()
            self.slots = ({}, {})
            self.results = [None, None]
            self.entered = [0] * width  # collectives each lane has entered

    WARP_TIMEOUT_S = 120.0
    _warps: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # block manager -> {(block, warp): _Warp}
    _warps_lock = threading.Lock()

    def _warp_collective(mine, combine, pick):
        """Every lane of the calling warp contributes ``mine``; ``combine(contributions)`` runs once and each lane
        gets ``pick(result, lane)``."""
        th = threading.current_thread()
        dims = th._manager._block_dim
        lane, warp = th.thread_id % 32, th.thread_id // 32
        width = min(32, dims[0] * dims[1] * dims[2] - 32 * warp)
        if width != 32:
            raise RuntimeError(f"warp-wide operations (mma.sync, shuffles) need a whole warp of 32 threads; warp "
                               f"{warp} of this block has {width}")
        with _warps_lock:
            w = _warps.setdefault(th._manager, {}).setdefault((tuple(th.blockIdx), warp), _Warp(width))
        parity = w.entered[lane] % 2
        w.entered[lane] += 1
        w.slots[parity][lane] = mine
        w.barrier.wait()
        with w.lock:
            if w.results[parity] is None:
                w.results[parity] = combine(w.slots[parity])
                w.results[1 - parity] = None  # every lane has read the one before: it passed this barrier
        return pick(w.results[parity], lane)

    def _tf32_value(bits):
        return float(_tf32_values(np.array([bits], dtype=np.uint32))[0])

    def _bf16_pair(bits):
        lo, hi = _bf16_values(np.array([bits], dtype=np.uint32).view(np.uint8))  # the low half is the lower index
        return float(lo), float(hi)

    def _mma_pick(D, lane):
        """This lane's 4 floats of D (16 x 8): rows g and g + 8, columns 2t and 2t + 1."""
        g, t = lane // 4, lane % 4
        return D[g, 2 * t], D[g, 2 * t + 1], D[g + 8, 2 * t], D[g + 8, 2 * t + 1]

    def _mma_combine(k, a_of, b_of):
        """D (16 x 8) = A (16 x k) @ B (k x 8) + C in float64 from every lane's fragments, rounded to float32;
        a_of(lane, regs) / b_of(lane, regs) yield ((row, col), value) for that lane's A / B registers."""
        def combine(slots):
            A, B, C = np.zeros((16, k)), np.zeros((k, 8)), np.zeros((16, 8))
            for ln, (a, b, c) in slots.items():
                g, t = ln // 4, ln % 4
                for (r, q), v in a_of(ln, a):
                    A[r, q] = v
                for (r, q), v in b_of(ln, b):
                    B[r, q] = v
                C[g, 2 * t], C[g, 2 * t + 1], C[g + 8, 2 * t], C[g + 8, 2 * t + 1] = c
            return (A @ B + C).astype(np.float32)
        return combine

    def _tf32_a(ln, a):
        g, t = ln // 4, ln % 4
        return zip(((g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4)), map(_tf32_value, a))

    def _tf32_b(ln, b):
        g, t = ln // 4, ln % 4
        return zip(((t, g), (t + 4, g)), map(_tf32_value, b))

    def _bf16_a(ln, a):
        g, t = ln // 4, ln % 4
        out = []
        for (r, q), bits in zip(((g, 2 * t), (g + 8, 2 * t), (g, 2 * t + 8), (g + 8, 2 * t + 8)), a):
            lo, hi = _bf16_pair(bits)
            out += [((r, q), lo), ((r, q + 1), hi)]
        return out

    def _bf16_b(ln, b):
        g, t = ln // 4, ln % 4
        out = []
        for (r, q), bits in zip(((2 * t, g), (2 * t + 8, g)), b):
            lo, hi = _bf16_pair(bits)
            out += [((r, q), lo), ((r + 1, q), hi)]
        return out

    def mma_tf32(a, b, c):
        """D = A (16 x 8, TF32) @ B (8 x 8, TF32) + C across the warp; this lane's 4 floats of D."""
        return _warp_collective((tuple(a), tuple(b), tuple(c)), _mma_combine(8, _tf32_a, _tf32_b), _mma_pick)

    def mma_bf16(a, b, c):
        """D = A (16 x 16, bf16) @ B (16 x 8, bf16) + C across the warp; this lane's 4 floats of D."""
        return _warp_collective((tuple(a), tuple(b), tuple(c)), _mma_combine(16, _bf16_a, _bf16_b), _mma_pick)

    _window = threading.local()  # the shared array the calling thread last asked the address of (its "shared window")
    WINDOW_BASE = 16  # the simulated address of a window's first byte: not 1024-aligned, so that a kernel must align

    def smem_addr(arr, idx):
        """The shared-memory address of arr[idx]: WINDOW_BASE + its byte offset in arr, which becomes the thread's
        window that cp_async16_to and wgmma descriptors point into."""
        if not arr.flags.c_contiguous:
            raise ValueError("smem_addr: the simulator needs a C-contiguous shared array")
        _window.bytes = arr.reshape(-1).view(np.uint8)
        flat = np.ravel_multi_index(idx if isinstance(idx, tuple) else (idx,), arr.shape)
        return np.uint32(WINDOW_BASE + flat * arr.dtype.itemsize)

    def cp_async16_to(addr, src, si, nbytes):
        """16 bytes from src[si] on -> shared address addr (an smem_addr value: a byte offset in the thread's window);
        zeros past nbytes (synchronous)."""
        raw = np.zeros(16, dtype=np.uint8)
        _copy(raw, 0, src, si, 16, nbytes)
        at = int(addr) - WINDOW_BASE
        _window.bytes[at:at + 16] = raw

    def sw128_desc(addr):
        """The wgmma descriptor of a K-major tile at shared address addr (1024-byte aligned, rows of 128 bytes, the
        16-byte chunk c of row r at c ^ (r % 8), 8-row groups 1024 bytes apart)."""
        return np.uint64((int(addr) & 0x3FFFF) >> 4 | 1 << 16 | (1024 >> 4) << 32 | 1 << 62)

    def _kmajor(desc, rows):
        """The rows x 32 bytes a descriptor (128-byte swizzle) names: one k-step of a K-major tile."""
        desc = int(desc)
        if desc >> 62 != 1:
            raise NotImplementedError("the simulator's wgmma reads 128-byte swizzled tiles only (mode 1)")
        start, sbo = (desc & 0x3FFF) << 4, ((desc >> 32) & 0x3FFF) << 4
        if (start & ~0x7F) % 1024:
            raise ValueError(f"wgmma: the tile at shared address {start & ~0x7F:#x} is not 1024-byte aligned; a "
                             "128-byte swizzled tile must be (the descriptor's base offset is 0)")
        r, b = np.arange(rows)[:, None], np.arange(32)[None, :]
        logical = start + (r // 8) * sbo + (r % 8) * 128 + b  # the swizzle XORs bits 4-6 of the address with 7-9
        return _window.bytes[(logical ^ (((logical >> 7) & 7) << 4)) - WINDOW_BASE]

    def _wgmma(acc, da, db, n, values):
        """acc += A (64 x k, this warpgroup's) @ B^T (n x k), both read through their descriptors; this thread's part
        (row 16 w + g + 8 (i // 2 % 2), column 8 (i // 4) + 2 t + i % 2 of its i-th value), summed in float64."""
        if n % 8 or not 8 <= n <= 256 or acc.size != n // 2:
            raise ValueError(f"wgmma: n must be a multiple of 8 in 8..256 and acc must hold n / 2 floats, "
                             f"got n = {n}, {acc.size} accumulators")
        tid = threading.current_thread().thread_id % 128
        w, g, t = tid // 32, tid % 32 // 4, tid % 4
        A, B = values(_kmajor(da, 64)), values(_kmajor(db, n))
        i = np.arange(n // 2)
        rows, cols = 16 * w + g + 8 * (i // 2 % 2), 8 * (i // 4) + 2 * t + i % 2
        d = acc.reshape(-1)
        d[:] = (d + np.einsum("ik,ik->i", A[rows], B[cols])).astype(np.float32)

    def _tf32_values(raw):
        """float32 bit patterns -> the values the tensor cores read: their TF32 part (the low 13 mantissa bits cut)."""
        return (raw.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)

    def _bf16_values(raw):
        """bf16 bit patterns (bytes, little-endian pairs) -> their values."""
        return (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)

    def wgmma_tf32(acc, da, db, n):
        """wgmma m64nNk8 TF32 from shared memory: acc (n / 2 float32 of this thread) += A @ B for one k-step of 8."""
        _wgmma(acc, da, db, n, _tf32_values)

    def wgmma_bf16(acc, da, db, n):
        """wgmma m64nNk16 bf16 from shared memory: acc (n / 2 float32 of this thread) += A @ B for one k-step of 16."""
        _wgmma(acc, da, db, n, _bf16_values)

    def wgmma_fence():
        """Nothing to order: the simulator's wgmma is synchronous."""

    def wgmma_commit():
        """Nothing to close: the simulator's wgmma is synchronous."""

    def wgmma_wait(pending, acc, n):
        """Nothing to wait for: the simulator's wgmma is synchronous."""

    def fence_proxy_async():
        """Nothing to order: the simulator's shared memory has one view."""

    def shfl_xor(x, mask):
        """x of lane (this lane ^ mask): every lane of the warp contributes its x."""
        return _warp_collective(x, dict, lambda xs, lane: xs[lane ^ mask])

    def shfl_idx(x, src):
        """x of lane ``src`` (0..31): every lane of the warp contributes its x."""
        if not 0 <= src < 32:
            raise IndexError(f"shfl_idx: source lane {src} is not one of the warp's 32")
        return _warp_collective(x, dict, lambda xs, lane: xs[int(src)])

elif COMPILER == "numba-cuda-mlir":  # pragma: no cover - needs a GPU and the optional numba-cuda-mlir
    from numba_cuda_mlir._mlir import ir as mlir_ir
    from numba_cuda_mlir._mlir.dialects import arith, llvm
    from numba_cuda_mlir._mlir.extras import types as T
    from numba_cuda_mlir.extending import intrinsic, refresh_registries
    from numba_cuda_mlir.lowering_utilities import (GEP_DYNAMIC_INDEX, constant, memref_data_pointer,
                                                    memref_llvm_address_space, storage_to_value)
    from numba_cuda_mlir.numba_cuda import types

    def _operand(builder, var):
        """The MLIR value of an argument (a module-level constant arrives as a Python number)."""
        value = builder.load_var(var)
        if isinstance(value, mlir_ir.Value):
            return value
        return constant(int(value), builder.get_mlir_type(builder.get_numba_type(var.name)))

    def _nsw(op):
        def codegen(builder, target, args, kwargs):
            lhs, rhs = (_operand(builder, v) for v in args)
            builder.store_var(target, op(lhs, rhs, overflow_flags="nsw"))

        return codegen

    @intrinsic
    def add_nsw(typingctx, a, b):
        """a + b for two signed ints of one type, ``arith.addi ... overflow<nsw>``."""
        if not _same_signed(types, a, b):
            return None
        return a(a, b), _nsw(arith.addi)

    @intrinsic
    def mul_nsw(typingctx, a, b):
        """a * b for two signed ints of one type, ``arith.muli ... overflow<nsw>``."""
        if not _same_signed(types, a, b):
            return None
        return a(a, b), _nsw(arith.muli)

    @intrinsic
    def nonneg(typingctx, i):
        """A signed int index the caller promises is >= 0, sign-extended to uint64 (no wraparound check)."""
        if not _signed(types, i):
            return None

        def codegen(builder, target, args, kwargs):
            value = _operand(builder, args[0])
            builder.store_var(target, arith.extsi(T.i64(), value) if i.bitwidth < 64 else value)

        return types.uint64(i), codegen

    @intrinsic
    def at(typingctx, arr, i):
        """arr[i] as CUDA C's p[i]: one pointer (data + offset, loop-invariant) and a sign-extended index."""
        if not _at_args(types, arr, i):
            return None

        def codegen(builder, target, args, kwargs):
            array = builder.load_var(args[0])
            index = _operand(builder, args[1])
            if i.bitwidth < 64:
                index = arith.extsi(T.i64(), index)
            ptr_type = llvm.PointerType.get(memref_llvm_address_space(array.type))
            base = llvm.addrspacecast(ptr_type, memref_data_pointer(array))
            element = array.type.element_type
            ptr = llvm.getelementptr(ptr_type, base, [index], [GEP_DYNAMIC_INDEX], element,
                                     llvm.GEPNoWrapFlags.inbounds)
            builder.store_var(target, storage_to_value(arr.dtype, llvm.load(element, ptr)))

        return arr.dtype(arr, i), codegen

    refresh_registries()  # a kernel compiled before this import would otherwise leave these names untyped

else:
    from llvmlite import ir
    from numba.core import types
    from numba.cuda import cgutils
    from numba.cuda.extending import intrinsic

    def _nsw(op: str):
        def codegen(context, builder, sig, args):
            return getattr(builder, op)(args[0], args[1], flags=["nsw"])

        return codegen

    @intrinsic
    def add_nsw(typingctx, a, b):
        """a + b for two signed ints of one type, flagged ``nsw``: the caller promises it does not overflow."""
        if not _same_signed(types, a, b):
            return None
        return a(a, b), _nsw("add")

    @intrinsic
    def mul_nsw(typingctx, a, b):
        """a * b for two signed ints of one type, flagged ``nsw``: the caller promises it does not overflow."""
        if not _same_signed(types, a, b):
            return None
        return a(a, b), _nsw("mul")

    @intrinsic
    def nonneg(typingctx, i):
        """A signed int index the caller promises is >= 0, sign-extended to uint64 (no wraparound check)."""
        if not _signed(types, i):
            return None

        def codegen(context, builder, sig, args):
            return builder.sext(args[0], ir.IntType(64)) if i.bitwidth < 64 else args[0]

        return types.uint64(i), codegen

    @intrinsic
    def at(typingctx, arr, i):
        """arr[i] for a C-contiguous 1-D array and a signed index the caller promises is >= 0 (= arr[nonneg(i)])."""
        if not _at_args(types, arr, i):
            return None

        def codegen(context, builder, sig, args):
            aryty, ity = sig.args
            ptr = _element_pointer(context, builder, aryty, args[0], ity, args[1])  # index sign-extended to intp
            return context.unpack_value(builder, aryty.dtype, ptr)

        return arr.dtype(arr, i), codegen

    @intrinsic
    def at_nc(typingctx, arr, i):
        """arr[i] of a C-contiguous float32 array through the read-only data path: a load from the data pointer plus
        the sign-extended i, in the global address space and marked ``!invariant.load``, which NVVM emits as
        ``ld.global.nc`` (i >= 0 and no writer during the kernel are the caller's promise). A plain LLVM load: the
        compiler folds constant offsets into it and schedules it as any other (inline PTX would hide both)."""
        if not (_at_args(types, arr, i) and arr.dtype == types.float32):
            return None

        def codegen(context, builder, sig, args):
            return _invariant(builder, builder.load(_global_pointer(context, builder, sig, args), align=4))

        return types.float32(arr, i), codegen

    @intrinsic
    def at_cs(typingctx, arr, i):
        """arr[i] of a C-contiguous float32 array as a streaming load, ``ld.global.cs`` (CUDA C's ``__ldcs``: the
        line is cached evict-first in L1 and L2), for data read once: it evicts itself before lines that will be
        read again or are still to be written back. Inline PTX, as ``__ldcs`` is (NVVM drops LLVM's
        ``!nontemporal`` on a load). i >= 0 is the caller's promise. i may be a tuple of signed indices, (i0, i1,
        ...), each >= 0: their sum, each sign-extended and added to the address in turn, as C's ``__ldcs(p + i0 + i1)``
        does; the compiler may then keep p + i0 as a 64-bit pointer that walks, where one 32-bit sum per load must
        be widened for each."""
        if not (_at_parts_args(types, arr, i) and arr.dtype == types.float32):
            return None

        def codegen(context, builder, sig, args):
            return _ptx_load(context, builder, sig, args, "cs", 1)

        return types.float32(arr, i), codegen

    @intrinsic
    def at_cg(typingctx, arr, i):
        """arr[i] of a C-contiguous float32 array cached in L2 only, ``ld.global.cg`` (CUDA C's ``__ldcg``): L1 is
        not coherent across SMs, so what other blocks wrote during this kernel (and made visible with a fence) is
        read where they wrote it. Inline PTX, as ``__ldcg`` is. i >= 0 is the caller's promise."""
        if not (_at_args(types, arr, i) and arr.dtype == types.float32):
            return None

        def codegen(context, builder, sig, args):
            return _ptx_load(context, builder, sig, args, "cg", 1, side_effect=True)

        return types.float32(arr, i), codegen

    @intrinsic
    def ldg128(typingctx, arr, r, q):
        """arr[r, q:q+4] with ONE 16-byte load; the caller guarantees that &arr[r, q] is 16-byte aligned."""
        if not (isinstance(arr, types.Array) and arr.dtype == types.float32 and arr.ndim == 2):
            return None
        sig = types.UniTuple(types.float32, 4)(arr, r, q)

        def codegen(context, builder, sig, args):
            aryty = sig.args[0]
            ary = context.make_array(aryty)(context, builder, args[0])
            idx = [context.cast(builder, v, ty, types.intp) for v, ty in zip(args[1:], sig.args[1:])]
            return _load_float4(context, builder, sig, cgutils.get_item_pointer(context, builder, aryty, ary, idx))

        return sig, codegen

    @intrinsic
    def ldg128_at(typingctx, arr, i):
        """The 4 floats at flat element i of a C-contiguous float32 array, ONE 16-byte load from the data pointer
        plus the sign-extended i (``getelementptr inbounds``): i >= 0 and 16-byte alignment are the caller's promise."""
        if not (isinstance(arr, types.Array) and arr.dtype == types.float32 and arr.layout == "C"
                and _signed(types, i)):
            return None
        sig = types.UniTuple(types.float32, 4)(arr, i)

        def codegen(context, builder, sig, args):
            return _load_float4(context, builder, sig, _flat_pointer(context, builder, sig, args))

        return sig, codegen

    @intrinsic
    def ldg128_cs_at(typingctx, arr, i):
        """ldg128_at as a streaming load, ``ld.global.cs.v4.f32`` (CUDA C's ``__ldcs`` of a float4: cached
        evict-first, for data read once). Inline PTX; i >= 0 and 16-byte alignment are the caller's promise."""
        if not (_at_args(types, arr, i) and arr.dtype == types.float32):
            return None
        sig = types.UniTuple(types.float32, 4)(arr, i)

        def codegen(context, builder, sig, args):
            return _ptx_load(context, builder, sig, args, "cs", 4)

        return sig, codegen

    @intrinsic
    def ldg128_nc_at(typingctx, arr, i):
        """ldg128_at through the read-only data path: the 16-byte load in the global address space and marked
        ``!invariant.load`` (as ``at_nc``), which NVVM emits as ``ld.global.nc.v4.f32``, as nvcc does for a ``const
        float* __restrict__`` float4 load. i >= 0, 16-byte alignment and no writer during the kernel are the
        caller's promise."""
        if not (_at_args(types, arr, i) and arr.dtype == types.float32):
            return None
        sig = types.UniTuple(types.float32, 4)(arr, i)

        def codegen(context, builder, sig, args):
            return _load_float4(context, builder, sig, _global_pointer(context, builder, sig, args), invariant=True)

        return sig, codegen

    @intrinsic
    def stg128_at(typingctx, arr, i, v0, v1, v2, v3):
        """arr.flat[i:i+4] = (v0, v1, v2, v3) with ONE 16-byte store (``st.global.v4.f32``) at ``_global_pointer``
        (i signed, or unsigned of 64 bits): i >= 0 and 16-byte alignment are the caller's promise."""
        if not (isinstance(arr, types.Array) and arr.ndim == 1 and arr.layout == "C" and arr.dtype == types.float32
                and isinstance(i, types.Integer) and (i.signed or i.bitwidth == 64)
                and all(v == types.float32 for v in (v0, v1, v2, v3))):
            return None
        sig = types.void(arr, i, v0, v1, v2, v3)

        def codegen(context, builder, sig, args):
            vec = ir.Constant(ir.VectorType(ir.FloatType(), 4), ir.Undefined)
            for x, v in enumerate(args[2:]):
                vec = builder.insert_element(vec, v, ir.Constant(ir.IntType(32), x))
            ptr = _global_pointer(context, builder, sig, args)
            builder.store(vec, builder.bitcast(ptr, ir.VectorType(ir.FloatType(), 4).as_pointer(1)), align=16)
            return context.get_dummy_value()

        return sig, codegen

    def _flat_pointer(context, builder, sig, args):
        """A pointer to flat element i of a C-contiguous array (args: the array, i): its data pointer plus the
        sign-extended i (``getelementptr inbounds``; i >= 0 is the caller's promise); a tuple i: plus each of its
        parts in turn."""
        ptr = context.make_array(sig.args[0])(context, builder, args[0]).data
        ity = sig.args[1]
        parts = (zip(cgutils.unpack_tuple(builder, args[1]), ity.types) if isinstance(ity, types.BaseTuple)
                 else [(args[1], ity)])
        for index, t in parts:
            ptr = builder.gep(ptr, [builder.sext(index, ir.IntType(64)) if t.bitwidth < 64 else index], inbounds=True)
        return ptr

    def _global_pointer(context, builder, sig, args):
        """``_flat_pointer`` in the global address space (NVVM emits ``ld.global`` from it; with ``_invariant``,
        ``ld.global.nc``)."""
        return builder.addrspacecast(_flat_pointer(context, builder, sig, args), ir.PointerType(ir.FloatType(), 1))

    def _invariant(builder, load):
        """``load`` marked ``!invariant.load`` (no writer during the kernel: the read-only data path)."""
        load.set_metadata("invariant.load", builder.module.add_metadata([]))
        return load

    def _ptx_load(context, builder, sig, args, cache, count, side_effect=False):
        """Inline PTX ``ld.global.<cache>`` of ``count`` (1 or 4) floats at flat element i of the array (args: the
        array, i): a float, or sig's 4-tuple. ``side_effect``: the compiler keeps the load where it is written
        (behind the fences and barriers before it)."""
        address = builder.ptrtoint(_flat_pointer(context, builder, sig, args), ir.IntType(64))
        outs = ", ".join(f"${x}" for x in range(count))
        if count == 1:
            text, ret = f"ld.global.{cache}.f32 {outs}, [$1];", ir.FloatType()
        else:
            text, ret = f"ld.global.{cache}.v4.f32 {{{outs}}}, [$4];", ir.LiteralStructType([ir.FloatType()] * 4)
        load = ir.InlineAsm(ir.FunctionType(ret, [ir.IntType(64)]), text, "=f," * count + "l",
                            side_effect=side_effect)
        value = builder.call(load, [address])
        if count == 1:
            return value
        return context.make_tuple(builder, sig.return_type, [builder.extract_value(value, x) for x in range(count)])

    def _load_float4(context, builder, sig, ptr, invariant=False):
        """The 4 floats at ptr as ONE 16-byte load (``align 16``: the caller's promise), as sig's 4-tuple;
        ``invariant``: marked ``!invariant.load`` (no writer during the kernel)."""
        space = ptr.type.addrspace
        vec = builder.load(builder.bitcast(ptr, ir.VectorType(ir.FloatType(), 4).as_pointer(space)), align=16)
        if invariant:
            _invariant(builder, vec)
        items = [builder.extract_element(vec, ir.Constant(ir.IntType(32), x)) for x in range(4)]
        return context.make_tuple(builder, sig.return_type, items)

    def _element_pointer(context, builder, aryty, ary, idxty, idx):
        """A pointer to ary[idx] (idx an integer or a tuple of integers)."""
        if isinstance(idxty, types.BaseTuple):
            vals = [context.cast(builder, v, t, types.intp) for v, t in zip(cgutils.unpack_tuple(builder, idx), idxty)]
        else:
            vals = [context.cast(builder, idx, idxty, types.intp)]
        return cgutils.get_item_pointer(context, builder, aryty, context.make_array(aryty)(context, builder, ary), vals)

    def _cp_async_codegen(size: int, cache: str):
        asm = ("{ .reg .u64 s64; .reg .u32 s32; cvta.to.shared.u64 s64, $0; cvt.u32.u64 s32, s64; "
               f"cp.async.{cache}.shared.global [s32], [$1], {size}, $2; }}")

        def codegen(context, builder, sig, args):
            dty, dity, sty, sity, nty = sig.args
            dptr = _element_pointer(context, builder, dty, args[0], dity, args[1])
            sptr = _element_pointer(context, builder, sty, args[2], sity, args[3])
            i64, i32 = ir.IntType(64), ir.IntType(32)
            fn = ir.InlineAsm(ir.FunctionType(ir.VoidType(), [i64, i64, i32]), asm, "l,l,r,~{memory}",
                              side_effect=True)
            builder.call(fn, [builder.ptrtoint(dptr, i64), builder.ptrtoint(sptr, i64),
                              context.cast(builder, args[4], nty, types.int32)])
            return context.get_dummy_value()

        return codegen

    def _asm_statement(text: str):
        def codegen(context, builder, sig, args):
            fn = ir.InlineAsm(ir.FunctionType(ir.VoidType(), []), text, "~{memory}", side_effect=True)
            builder.call(fn, [])
            return context.get_dummy_value()

        return codegen

    @intrinsic
    def cp_async(typingctx, dst, di, src, si, nbytes):
        """Start copying src[si] -> dst[di] (dst in shared memory, 4 bytes; zeros if nbytes == 0)."""
        return types.void(dst, di, src, si, nbytes), _cp_async_codegen(4, "ca")

    @intrinsic
    def cp_async16(typingctx, dst, di, src, si, nbytes):
        """Start copying 16 bytes from src[si] on -> dst[di] on (both 16-byte aligned; zeros past nbytes)."""
        return types.void(dst, di, src, si, nbytes), _cp_async_codegen(16, "cg")

    @intrinsic
    def cp_async_commit(typingctx):
        """Close the group of copies started since the last commit."""
        return types.void(), _asm_statement("cp.async.commit_group;")

    @intrinsic
    def cp_async_wait(typingctx, pending):
        """Wait until at most ``pending`` (a compile-time constant) committed groups are in flight."""
        if not isinstance(pending, types.IntegerLiteral):
            return None  # numba retries with the literal value
        return types.void(pending), _asm_statement(f"cp.async.wait_group {pending.literal_value};")

    _F4 = types.UniTuple(types.float32, 4)
    _U4, _U2 = types.UniTuple(types.uint32, 4), types.UniTuple(types.uint32, 2)
    _MMA = {"tf32": "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
            "bf16": "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"}

    def _asm_values(builder, outs, ins, text, constraints, args):
        """Inline PTX with len(outs) results (a struct return when more than one): the list of results."""
        ret = ir.LiteralStructType(outs) if len(outs) > 1 else outs[0]
        fn = ir.InlineAsm(ir.FunctionType(ret, ins), text, constraints, side_effect=True)
        res = builder.call(fn, args)
        return [builder.extract_value(res, i) for i in range(len(outs))] if len(outs) > 1 else [res]

    def _mma_codegen(kind: str):
        text = _MMA[kind] + " {$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, {$10,$11,$12,$13};"
        f32, i32 = ir.FloatType(), ir.IntType(32)

        def codegen(context, builder, sig, args):
            regs = [builder.extract_value(args[j], i) for j, n in ((0, 4), (1, 2), (2, 4)) for i in range(n)]
            d = _asm_values(builder, [f32] * 4, [i32] * 6 + [f32] * 4, text, "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f",
                            regs)
            return context.make_tuple(builder, sig.return_type, d)

        return codegen

    def _mma_args(a, b, c) -> bool:
        return a == _U4 and b == _U2 and isinstance(c, types.UniTuple) and c.count == 4 and c.dtype == types.float32

    @intrinsic
    def mma_tf32(typingctx, a, b, c):
        """mma.sync m16n8k8 TF32 (HMMA.1688.F32.TF32): a 4 x uint32, b 2 x uint32 (TF32 bit patterns), c 4 x
        float32 -> this lane's 4 floats of D = A @ B + C (fragment layout: the module's docstring)."""
        if not _mma_args(a, b, c):
            return None
        return _F4(a, b, c), _mma_codegen("tf32")

    @intrinsic
    def mma_bf16(typingctx, a, b, c):
        """mma.sync m16n8k16 bf16 (HMMA.16816.F32.BF16): a 4 x uint32, b 2 x uint32 (bf16 pairs), c 4 x float32
        -> this lane's 4 floats of D = A @ B + C."""
        if not _mma_args(a, b, c):
            return None
        return _F4(a, b, c), _mma_codegen("bf16")

    @intrinsic
    def cvt_tf32(typingctx, v):
        """cvt.rna.tf32.f32: a float32's TF32 bit pattern (round to nearest, ties away; low 13 bits zero)."""
        if v != types.float32:
            return None

        def codegen(context, builder, sig, args):
            return _asm_values(builder, [ir.IntType(32)], [ir.FloatType()], "cvt.rna.tf32.f32 $0, $1;", "=r,f",
                               [args[0]])[0]

        return types.uint32(v), codegen

    @intrinsic
    def pack_bf16x2(typingctx, lo, hi):
        """cvt.rn.bf16x2.f32: two float32 -> two bf16 (round to nearest even) in one uint32, lo in the low half."""
        if lo != types.float32 or hi != types.float32:
            return None

        def codegen(context, builder, sig, args):
            f32 = ir.FloatType()
            return _asm_values(builder, [ir.IntType(32)], [f32, f32], "cvt.rn.bf16x2.f32 $0, $1, $2;", "=r,f,f",
                               [args[1], args[0]])[0]

        return types.uint32(lo, hi), codegen

    # Hopper's warpgroup MMA (sm_90a; SASS HGMMA). The 4 warps of a warpgroup issue it together; A and B come from
    # shared memory through 64-bit descriptors; the accumulators (a float32 local array of n / 2 per thread, n the
    # tile's columns, a constant) are tied through the asm so that they stay in registers and no use moves above a wait.
    _WGMMA = {"tf32": ("k8.f32.tf32.tf32", "1, 1, 1"), "bf16": ("k16.f32.bf16.bf16", "1, 1, 1, 0, 0")}

    def _acc_pointers(context, builder, aryty, ary, count):
        data = context.make_array(aryty)(context, builder, ary).data
        return [builder.gep(data, [ir.Constant(ir.IntType(64), i)], inbounds=True) for i in range(count)]

    def _tied(context, builder, acc_type, acc, n, text, lead, lead_types):
        """Run text with the n / 2 accumulators of the local array acc as tied outputs/inputs after the inputs
        ``lead``; store the results back."""
        count = n // 2
        ptrs = _acc_pointers(context, builder, acc_type, acc, count)
        f32 = ir.FloatType()
        constraints = ",".join(["=f"] * count + lead_types + [str(i) for i in range(count)] + ["~{memory}"])
        out = _asm_values(builder, [f32] * count, [x.type for x in lead] + [f32] * count, text, constraints,
                          lead + [builder.load(p) for p in ptrs])
        for p, v in zip(ptrs, out):
            builder.store(v, p)
        return context.get_dummy_value()

    def _acc_args(acc, n) -> bool:
        return (isinstance(acc, types.Array) and acc.dtype == types.float32 and acc.layout == "C"
                and isinstance(n, types.IntegerLiteral) and n.literal_value % 8 == 0 and 8 <= n.literal_value <= 256)

    def _wgmma_intrinsic(kind, doc):
        shape, tail = _WGMMA[kind]

        def typer(typingctx, acc, da, db, n):
            if not (_acc_args(acc, n) and isinstance(da, types.Integer) and isinstance(db, types.Integer)):
                return None
            count = n.literal_value // 2
            regs = ",".join(f"${i}" for i in range(count))
            text = (f"wgmma.mma_async.sync.aligned.m64n{n.literal_value}{shape} {{{regs}}}, ${count}, ${count + 1}, "
                    f"{tail};")

            def codegen(context, builder, sig, args):
                descs = [context.cast(builder, args[j], sig.args[j], types.uint64) for j in (1, 2)]
                return _tied(context, builder, acc, args[0], n.literal_value, text, descs, ["l", "l"])

            return types.void(acc, da, db, n), codegen

        typer.__name__, typer.__doc__ = f"wgmma_{kind}", doc
        return intrinsic(typer)

    wgmma_tf32 = _wgmma_intrinsic("tf32", """wgmma.mma_async m64nNk8 TF32, A and B from shared memory
        (HGMMA.64xNx8.F32.TF32): acc (this thread's n / 2 floats) += A (64 x 8, descriptor da) @ B (8 x n, descriptor
        db of B^T: n x 8, K-major).""")
    wgmma_bf16 = _wgmma_intrinsic("bf16", """wgmma.mma_async m64nNk16 bf16 (HGMMA.64xNx16.F32.BF16): as wgmma_tf32
        for one k-step of 16.""")

    @intrinsic
    def wgmma_wait(typingctx, pending, acc, n):
        """wgmma.wait_group pending (a constant): at most that many committed groups still run; acc passes through."""
        if not (isinstance(pending, types.IntegerLiteral) and _acc_args(acc, n)):
            return None
        text = f"wgmma.wait_group.sync.aligned {pending.literal_value};"

        def codegen(context, builder, sig, args):
            return _tied(context, builder, acc, args[1], n.literal_value, text, [], [])

        return types.void(pending, acc, n), codegen

    @intrinsic
    def wgmma_fence(typingctx):
        """wgmma.fence: order the accumulator registers written before it ahead of the next wgmma (shared memory
        written by other instructions needs fence_proxy_async)."""
        return types.void(), _asm_statement("wgmma.fence.sync.aligned;")

    @intrinsic
    def wgmma_commit(typingctx):
        """wgmma.commit_group: close the group of wgmma issued since the last commit."""
        return types.void(), _asm_statement("wgmma.commit_group.sync.aligned;")

    @intrinsic
    def fence_proxy_async(typingctx):
        """fence.proxy.async.shared::cta: shared-memory writes (cp.async, stores) become visible to wgmma."""
        return types.void(), _asm_statement("fence.proxy.async.shared::cta;")

    @intrinsic
    def smem_addr(typingctx, arr, idx):
        """The 32-bit shared-memory address of arr[idx] (arr in shared memory)."""
        def codegen(context, builder, sig, args):
            ptr = _element_pointer(context, builder, sig.args[0], args[0], sig.args[1], args[1])
            i64 = ir.IntType(64)
            return _asm_values(builder, [ir.IntType(32)], [i64],
                               "{ .reg .u64 t; cvta.to.shared.u64 t, $1; cvt.u32.u64 $0, t; }", "=r,l",
                               [builder.ptrtoint(ptr, i64)])[0]

        return types.uint32(arr, idx), codegen

    @intrinsic
    def cp_async16_to(typingctx, addr, src, si, nbytes):
        """Start copying 16 bytes from src[si] on -> the 32-bit shared address addr (smem_addr arithmetic: no 64-bit
        pointer per copy); zeros past nbytes."""
        if not isinstance(addr, types.Integer):
            return None

        def codegen(context, builder, sig, args):
            aty, sty, sity, nty = sig.args
            sptr = _element_pointer(context, builder, sty, args[1], sity, args[2])
            i64, i32 = ir.IntType(64), ir.IntType(32)
            fn = ir.InlineAsm(ir.FunctionType(ir.VoidType(), [i32, i64, i32]),
                              "cp.async.cg.shared.global [$0], [$1], 16, $2;", "r,l,r,~{memory}", side_effect=True)
            builder.call(fn, [context.cast(builder, args[0], aty, types.uint32), builder.ptrtoint(sptr, i64),
                              context.cast(builder, args[3], nty, types.int32)])
            return context.get_dummy_value()

        return types.void(addr, src, si, nbytes), codegen

    @intrinsic
    def sw128_desc(typingctx, addr):
        """The wgmma descriptor of a K-major tile at shared address addr (1024-byte aligned, rows of 128 bytes, the
        16-byte chunk c of row r at c ^ (r % 8), 8-row groups 1024 bytes apart): bits 0-13 addr >> 4, 16-29 the
        leading offset (unused: 1), 32-45 1024 >> 4, 62-63 mode 1 (128-byte swizzle)."""
        if not isinstance(addr, types.Integer):
            return None

        def codegen(context, builder, sig, args):
            i64 = ir.IntType(64)
            a = context.cast(builder, args[0], sig.args[0], types.uint64)
            field = builder.lshr(builder.and_(a, ir.Constant(i64, 0x3FFFF)), ir.Constant(i64, 4))
            return builder.or_(field, ir.Constant(i64, 1 << 16 | (1024 >> 4) << 32 | 1 << 62))

        return types.uint64(addr), codegen

    from .backend import cuda as _cuda

    @_cuda.jit(device=True)
    def shfl_xor(x, mask):
        """x of lane (this lane ^ mask), the whole warp taking part (``cuda.shfl_xor_sync`` over all 32 lanes)."""
        return _cuda.shfl_xor_sync(0xFFFFFFFF, x, mask)

    @_cuda.jit(device=True)
    def shfl_idx(x, src):
        """x of lane ``src`` (0..31), the whole warp taking part (``cuda.shfl_sync`` over all 32 lanes)."""
        return _cuda.shfl_sync(0xFFFFFFFF, x, src)
