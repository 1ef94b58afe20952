import sys, os; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
if not hasattr(np, "row_stack"): np.row_stack = np.vstack
from numba import cuda, uint64, uint32, float32, uint16
from tc_intrinsics import *
mk = cuda.jit(device=True, inline=True)(make_desc)
NSM = cuda.get_current_device().MULTIPROCESSOR_COUNT

def mma_kernel(op):
    @cuda.jit
    def k(A, out, iters):
        tid = cuda.grid(1)
        a = (A[0], A[1], A[2], A[3]); b = (A[4], A[5])
        z = float32(0); c0 = (z, z, z, z); c1 = c0; c2 = c0; c3 = c0; c4 = c0; c5 = c0; c6 = c0; c7 = c0
        for i in range(iters):
            c0 = op(a, b, c0); c1 = op(a, b, c1); c2 = op(a, b, c2); c3 = op(a, b, c3)
            c4 = op(a, b, c4); c5 = op(a, b, c5); c6 = op(a, b, c6); c7 = op(a, b, c7)
        out[tid] = tsum(c0) + tsum(c1) + tsum(c2) + tsum(c3) + tsum(c4) + tsum(c5) + tsum(c6) + tsum(c7)
    return k

def wg_kernel(op, kstep_bytes):
    @cuda.jit
    def k(G, out, iters):
        tid = cuda.threadIdx.x
        s = cuda.shared.array(20480, uint16, alignment=1024)
        for i in range(tid, 20480, 128): s[i] = G[i]
        fence_proxy_async(); cuda.syncthreads()
        da = mk(smem_addr(s, (0,)), 16, 1024, 1); db = mk(smem_addr(s, (4096,)), 16, 1024, 1)
        acc = fzeros(128)
        wgmma_fence()
        for i in range(iters):
            for ks in range(4):
                acc = op(da + uint64(ks * kstep_bytes // 16), db + uint64(ks * kstep_bytes // 16), acc)
            wgmma_commit(); acc = wgmma_wait(0, acc)
        out[cuda.blockIdx.x * 128 + tid] = tsum(acc)
    return k

def timeit(fn, reps=5):
    fn(); cuda.synchronize(); e0, e1 = cuda.event(), cuda.event(); ts = []
    for _ in range(reps):
        e0.record(); fn(); e1.record(); e1.synchronize(); ts.append(cuda.event_elapsed_time(e0, e1) * 1e-3)
    return min(ts)

rng = np.random.default_rng(0)
A = cuda.to_device((rng.integers(0, 2**16, 8, dtype=np.uint64) * 0x10001 & 0x3F803F80).astype(np.uint32))
G = cuda.to_device((rng.integers(0, 2**7, 20480) | 0x3C00).astype(np.uint16))
for name, op, flops_per in (("mma.sync m16n8k16 bf16", mma_bf16, 4096), ("mma.sync m16n8k8 tf32", mma_tf32, 2048)):
    k = mma_kernel(op); nb, nt, it = NSM * 4, 256, 4000
    out = cuda.device_array(nb * nt, np.float32)
    t = timeit(lambda: k[nb, nt](A, out, it)); fl = nb * nt // 32 * it * 8 * flops_per
    print(f"{name}: {fl / t / 1e12:.1f} TFLOP/s ({nb}x{nt} threads, 8 independent accumulators/warp)")
for name, op, flops_per, ksb in (("wgmma m64n256k16 bf16 (SS, 128B swizzle)", wgmma_bf16, 2 * 64 * 256 * 16, 32),
                                 ("wgmma m64n256k8 tf32 (SS, 128B swizzle)", wgmma_tf32, 2 * 64 * 256 * 8, 32)):
    k = wg_kernel(op, ksb)
    for bps in (1, 2):
        nb, it = NSM * bps, 2000
        out = cuda.device_array(nb * 128, np.float32)
        t = timeit(lambda: k[nb, 128](G, out, it)); fl = nb * it * 4 * flops_per
        print(f"{name}: {fl / t / 1e12:.1f} TFLOP/s ({nb} warpgroups, {bps}/SM)")
sass = k.inspect_sass(k.signatures[0]); print("wgmma kernel SASS:", [l.strip()[:60] for l in sass.splitlines() if "GMMA" in l][:2], "serialized-warning check n/a")
