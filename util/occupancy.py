"""How many blocks of a kernel fit on one sm_90 SM (H100/H200): registers, threads and shared memory."""

from __future__ import annotations

import numpy as np

# sm_90 (H100/H200) limits, as in CUDA's cuda_occupancy.h
SM90_REGS_PER_SM = 65536
SM90_REG_ALLOC_UNIT = 256  # registers are given to a warp in blocks of 256
SM90_SUB_PARTITIONS = 4
SM90_MAX_REGS_PER_THREAD = 255
SM90_MAX_THREADS_PER_SM = 2048
SM90_MAX_THREADS_PER_BLOCK = 1024
SM90_MAX_BLOCKS_PER_SM = 32
SM90_SHARED_PER_SM = 228 * 1024
SM90_SHARED_PER_BLOCK = 227 * 1024  # with opt-in; 48 KB without
SM90_SHARED_RESERVED_PER_BLOCK = 1024  # taken by the driver from every block
SM90_SHARED_ALLOC_UNIT = 128


def max_blocks_per_sm(registers: int, threads_per_block: int, shared_bytes: int = 0) -> int:
    """How many blocks of a kernel fit on one sm_90 SM at once: the least of three limits.

    - threads: 2048 per SM (64 warps), at most 32 blocks; a block takes ceil(threads / 32) warps.
    - registers: a warp gets ``registers * 32`` rounded up to 256; each of the 4 SM sub-partitions has
      65536 / 4 registers, so an SM holds 4 * floor(16384 / regs_per_warp) warps; blocks = that // warps.
    - shared memory: a block takes its shared bytes + 1 KB reserved, rounded up to 128 B, of 228 KB per SM
      (at most 227 KB per block, above 48 KB only with opt-in).
    0 when one block does not fit (over 255 registers, 1024 threads or 227 KB of shared memory).
    """
    for name, v in (("registers", registers), ("threads_per_block", threads_per_block), ("shared_bytes", shared_bytes)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise ValueError(f"{name} must be a non-negative int, got {v!r}")
    if threads_per_block == 0:
        raise ValueError("threads_per_block must be at least 1")
    if (registers > SM90_MAX_REGS_PER_THREAD or threads_per_block > SM90_MAX_THREADS_PER_BLOCK
            or shared_bytes > SM90_SHARED_PER_BLOCK):
        return 0
    warps = -(-threads_per_block // 32)
    by_threads = min(SM90_MAX_THREADS_PER_SM // 32 // warps, SM90_MAX_BLOCKS_PER_SM)
    regs_per_warp = -(-registers * 32 // SM90_REG_ALLOC_UNIT) * SM90_REG_ALLOC_UNIT
    if regs_per_warp * -(-warps // SM90_SUB_PARTITIONS) * SM90_SUB_PARTITIONS > SM90_REGS_PER_SM:
        return 0  # the hardware's per-block register check
    by_regs = (SM90_REGS_PER_SM // SM90_SUB_PARTITIONS // regs_per_warp * SM90_SUB_PARTITIONS // warps
               if regs_per_warp else by_threads)
    units = -(-(shared_bytes + SM90_SHARED_RESERVED_PER_BLOCK) // SM90_SHARED_ALLOC_UNIT)
    by_shared = SM90_SHARED_PER_SM // (units * SM90_SHARED_ALLOC_UNIT)
    return min(by_threads, by_regs, by_shared)
