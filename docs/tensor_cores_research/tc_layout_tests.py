import sys, os; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
if not hasattr(np, "row_stack"): np.row_stack = np.vstack
from numba import cuda, uint64, uint32, int32, float32, uint16
from tc_intrinsics import *
mk = cuda.jit(device=True, inline=True)(make_desc)
def f(x): return np.ascontiguousarray(x, dtype=np.float32)
def bf(x): return (f(x).view(np.uint32) >> 16).astype(np.uint16)  # exact for small ints
def tf32_rna(x):
    u = f(x).view(np.uint32).astype(np.uint64); u = ((u + 0x1000) & 0xFFFFE000).astype(np.uint32); return u.view(np.float32)
def tf32_rz(x): return (f(x).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
rng = np.random.default_rng(0); R = lambda *s: rng.integers(-4, 5, s).astype(np.float32)
res = {}
def chk(name, got, ref): e = float(np.abs(got - ref).max()); res[name] = e; print(f"{name}: max|err| = {e:.3g}")

@cuda.jit
def k_tf32(A, B, Au, Bu, C, D, mode):
    lane = cuda.threadIdx.x; g = lane >> 2; t = lane & 3
    if mode == 1:
        a = (Au[g, t], Au[g + 8, t], Au[g, t + 4], Au[g + 8, t + 4]); b = (Bu[t, g], Bu[t + 4, g])
    else:
        a = (cvt_tf32(A[g, t]), cvt_tf32(A[g + 8, t]), cvt_tf32(A[g, t + 4]), cvt_tf32(A[g + 8, t + 4]))
        b = (cvt_tf32(B[t, g]), cvt_tf32(B[t + 4, g]))
    c = (C[g, 2 * t], C[g, 2 * t + 1], C[g + 8, 2 * t], C[g + 8, 2 * t + 1])
    d = mma_tf32_tied(a, b, c) if mode == 2 else mma_tf32(a, b, c)
    D[g, 2 * t] = d[0]; D[g, 2 * t + 1] = d[1]; D[g + 8, 2 * t] = d[2]; D[g + 8, 2 * t + 1] = d[3]

A, B, C = R(16, 8), R(8, 8), R(16, 8)
for mode in (0, 2):
    D = cuda.device_array((16, 8), np.float32)
    k_tf32[1, 32](A, B, A.view(np.uint32), B.view(np.uint32), C, D, mode); chk(f"mma_tf32 mode{mode} (global loads, formula)", D.copy_to_host(), A @ B + C)
Af, Bf = rng.standard_normal((16, 8)).astype(np.float32), rng.standard_normal((8, 8)).astype(np.float32)
for mode in (0, 1):
    D = cuda.device_array((16, 8), np.float32); k_tf32[1, 32](Af, Bf, Af.view(np.uint32), Bf.view(np.uint32), C * 0, D, mode); D = D.copy_to_host()
    for nm, fn in (("rna", tf32_rna), ("rz", tf32_rz), ("fp32", f)):
        chk(f"mma_tf32 mode{mode} random vs {nm}-rounded inputs", D, (fn(Af).astype(np.float64) @ fn(Bf).astype(np.float64)))

@cuda.jit
def k_bf16(A, B, C, D):       # A 16x16 u16 (bf16 bits), B 16x8 (K x N)
    lane = cuda.threadIdx.x; g = lane >> 2; t = lane & 3; k = 2 * t
    a = (pack2(A[g, k], A[g, k + 1]), pack2(A[g + 8, k], A[g + 8, k + 1]),
         pack2(A[g, k + 8], A[g, k + 9]), pack2(A[g + 8, k + 8], A[g + 8, k + 9]))
    b = (pack2(B[k, g], B[k + 1, g]), pack2(B[k + 8, g], B[k + 9, g]))
    c = (C[g, 2 * t], C[g, 2 * t + 1], C[g + 8, 2 * t], C[g + 8, 2 * t + 1])
    d = mma_bf16(a, b, c)
    D[g, 2 * t] = d[0]; D[g, 2 * t + 1] = d[1]; D[g + 8, 2 * t] = d[2]; D[g + 8, 2 * t + 1] = d[3]
A, B = R(16, 16), R(16, 8); D = cuda.device_array((16, 8), np.float32)
k_bf16[1, 32](bf(A), bf(B), C, D); chk("mma_bf16 (global loads, formula)", D.copy_to_host(), A @ B + C)

@cuda.jit
def k_ldsm_bf16(A, B, Bt, C, D, trans):   # A 16x16, Bt = B^T (8x16, N x K), B 16x8
    lane = cuda.threadIdx.x; g = lane >> 2; t = lane & 3
    sA = cuda.shared.array((16, 16), uint16, alignment=128); sB = cuda.shared.array((16, 8), uint16, alignment=128)
    sBt = cuda.shared.array((8, 16), uint16, alignment=128)
    for i in range(lane, 256, 32): sA[i // 16, i % 16] = A[i // 16, i % 16]
    for i in range(lane, 128, 32): sB[i // 8, i % 8] = B[i // 8, i % 8]; sBt[i // 16, i % 16] = Bt[i // 16, i % 16]
    cuda.syncwarp()
    a = ldmatrix_x4(sA, (lane % 16, (lane // 16) * 8))
    if trans == 1:
        b = ldmatrix_x2_trans(sB, (lane % 16, 0))
    else:
        b = ldmatrix_x2(sBt, (lane % 8, ((lane // 8) % 2) * 8))
    c = (C[g, 2 * t], C[g, 2 * t + 1], C[g + 8, 2 * t], C[g + 8, 2 * t + 1])
    d = mma_bf16(a, b, c)
    D[g, 2 * t] = d[0]; D[g, 2 * t + 1] = d[1]; D[g + 8, 2 * t] = d[2]; D[g + 8, 2 * t + 1] = d[3]
for tr in (0, 1):
    D = cuda.device_array((16, 8), np.float32); k_ldsm_bf16[1, 32](bf(A), bf(B), bf(B.T), C, D, tr)
    chk(f"ldmatrix.x4 A + ldmatrix.x2{'.trans (B KxN)' if tr else ' (B^T NxK)'} -> mma_bf16", D.copy_to_host(), A @ B + C)

@cuda.jit
def k_ldsm_tf32(A, Bt, C, D):   # A 16x8 u32 (tf32 bits), Bt 8x8 (N x K)
    lane = cuda.threadIdx.x; g = lane >> 2; t = lane & 3
    sA = cuda.shared.array((16, 8), uint32, alignment=128); sB = cuda.shared.array((8, 8), uint32, alignment=128)
    for i in range(lane, 128, 32): sA[i // 8, i % 8] = A[i // 8, i % 8]
    for i in range(lane, 64, 32): sB[i // 8, i % 8] = Bt[i // 8, i % 8]
    cuda.syncwarp()
    a = ldmatrix_x4(sA, (lane % 16, (lane // 16) * 4))
    b = ldmatrix_x2(sB, (lane % 8, ((lane // 8) % 2) * 4))
    c = (C[g, 2 * t], C[g, 2 * t + 1], C[g + 8, 2 * t], C[g + 8, 2 * t + 1])
    d = mma_tf32(a, b, c)
    D[g, 2 * t] = d[0]; D[g, 2 * t + 1] = d[1]; D[g + 8, 2 * t] = d[2]; D[g + 8, 2 * t + 1] = d[3]
A, B = R(16, 8), R(8, 8); D = cuda.device_array((16, 8), np.float32)
k_ldsm_tf32[1, 32](A.view(np.uint32), np.ascontiguousarray(B.T).view(np.uint32), C, D)
chk("ldmatrix.x4/.x2 (b16) on tf32 data -> mma_tf32", D.copy_to_host(), A @ B + C)

N = 16
@cuda.jit
def k_wg_tf32(A, Bt, D, lbo, sbo):  # A 64x8, Bt 16x8 (N x K), no swizzle, core matrices 8 rows x 16 B
    tid = cuda.threadIdx.x; warp = tid // 32; lane = tid % 32; g = lane >> 2; t = lane & 3
    sA = cuda.shared.array(512, uint32, alignment=1024); sB = cuda.shared.array(128, uint32, alignment=1024)
    for i in range(tid, 512, 128):
        m = i // 8; k = i % 8; sA[(m // 8) * 64 + (k // 4) * 32 + (m % 8) * 4 + k % 4] = A[m, k]
    for i in range(tid, 128, 128):
        n = i // 8; k = i % 8; sB[(n // 8) * 64 + (k // 4) * 32 + (n % 8) * 4 + k % 4] = Bt[n, k]
    fence_proxy_async(); cuda.syncthreads()
    da = mk(smem_addr(sA, (0,)), lbo, sbo, 0); db = mk(smem_addr(sB, (0,)), lbo, sbo, 0)
    z = float32(0); acc = (z, z, z, z, z, z, z, z)
    wgmma_fence(); acc = wgmma_tf32(da, db, acc); wgmma_commit(); acc = wgmma_wait(0, acc)
    for i in range(8):
        D[16 * warp + g + 8 * ((i >> 1) & 1), 8 * (i >> 2) + 2 * t + (i & 1)] = acc[i]
A, B = R(64, 8), R(8, N)
for lbo, sbo in ((128, 256), (256, 128)):
    D = cuda.device_array((64, N), np.float32); k_wg_tf32[1, 128](A.view(np.uint32), np.ascontiguousarray(B.T).view(np.uint32), D, lbo, sbo)
    chk(f"wgmma m64n{N}k8 tf32 no-swizzle K-major LBO={lbo} SBO={sbo} (+acc layout)", D.copy_to_host(), A @ B)

@cuda.jit
def k_wg_bf16(A, Bt, D):  # A 64x64 bf16, Bt 16x64 (N x K), K-major 128B swizzle, 4 k16 steps
    tid = cuda.threadIdx.x; warp = tid // 32; lane = tid % 32; g = lane >> 2; t = lane & 3
    sA = cuda.shared.array(4096, uint16, alignment=1024); sB = cuda.shared.array(1024, uint16, alignment=1024)
    for i in range(tid, 4096, 128):
        r = i // 64; c = i % 64; sA[r * 64 + (((c // 8) ^ (r % 8)) * 8) + c % 8] = A[r, c]
    for i in range(tid, 1024, 128):
        r = i // 64; c = i % 64; sB[r * 64 + (((c // 8) ^ (r % 8)) * 8) + c % 8] = Bt[r, c]
    fence_proxy_async(); cuda.syncthreads()
    da = mk(smem_addr(sA, (0,)), 16, 1024, 1); db = mk(smem_addr(sB, (0,)), 16, 1024, 1)
    z = float32(0); acc = (z, z, z, z, z, z, z, z)
    wgmma_fence()
    for ks in range(4):                       # advance start address by 32 B (= 2 in desc units) per k16 step
        acc = wgmma_bf16(da + uint64(2 * ks), db + uint64(2 * ks), acc)
    wgmma_commit(); acc = wgmma_wait(0, acc)
    for i in range(8):
        D[16 * warp + g + 8 * ((i >> 1) & 1), 8 * (i >> 2) + 2 * t + (i & 1)] = acc[i]
A, B = R(64, 64), R(64, N); D = cuda.device_array((64, N), np.float32)
k_wg_bf16[1, 128](bf(A), bf(np.ascontiguousarray(B.T)), D)
chk(f"wgmma m64n{N}k16 bf16 x4 K-major 128B-swizzle SBO=1024 (+acc layout)", D.copy_to_host(), A @ B)
print("ptx target of k_wg_bf16:", [l for l in k_wg_bf16.inspect_asm(k_wg_bf16.signatures[0]).splitlines() if l.startswith(".target")])
sass = k_wg_bf16.inspect_sass(k_wg_bf16.signatures[0]); print("HGMMA in SASS:", "HGMMA" in sass, [l.strip() for l in sass.splitlines() if "HGMMA" in l][:2])
sass = k_tf32.inspect_sass(k_tf32.signatures[0]); print("HMMA in SASS:", [l.strip()[:90] for l in sass.splitlines() if "HMMA" in l][:3])
print("ALL_RESULTS", res)
