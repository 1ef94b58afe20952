"""On a GPU: sgemm on shapes whose plans launch fewer than 128 blocks, with numba's performance warnings raised as
errors; each result checked against float64. Run from the project root: PYTHONPATH=. python scratch/s30/no_grid_warning.py"""
import warnings

import numpy as np

import util  # noqa: F401
from util import cuda
from util import sgemm as S

warnings.filterwarnings("error", message=".*under-utilization")  # numba-cuda's own warning class, its text in bold
rng = np.random.default_rng(1)
for m, n, k in [(1, 7, 131072), (3, 2500, 389), (512, 512, 512), (7766, 73, 502), (1, 1, 1), (4096, 1, 4096),
                (71, 271, 501), (30, 30, 30)]:
    a, b = rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32)
    c = cuda.device_array((m, n), dtype=np.float32)
    S.sgemm(cuda.to_device(a), cuda.to_device(b), c)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    err = np.abs(c.copy_to_host() - ref).max() / (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)).max()
    p = S.plan(m, n, k)
    print(f"{(m, n, k)}: {p.tile.name} x {p.splits}, grid {p.grid}, max error / max |A||B| {err:.1e}")
    assert err < 1e-5
print("no NumbaPerformanceWarning raised")
