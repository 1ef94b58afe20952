"""Index arithmetic that tells LLVM what CUDA C's signed ``int`` tells it: this does not overflow.

In C, signed overflow is undefined, so ``i * n + y`` on ``int`` may be assumed not to wrap; the compiler then
keeps one 64-bit pointer per array and advances it with a single ``IMAD.WIDE``. numba has no way to say that:
unsigned indices wrap by definition, and signed ones pay NumPy's negative-index check. These two intrinsics
say it. Under numba's simulator they are plain Python arithmetic.

    i = add_nsw(i, n)      # i + n, with LLVM's "no signed wrap" flag (the caller promises no overflow)
    j = mul_nsw(i, n)      # i * n, likewise (numba would widen int32 * int32 to int64)
    a[nonneg(i)]           # index with i, promised >= 0: no negative-index check, sign-extended to 64 bits
"""

from __future__ import annotations

from .backend import SIMULATED

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

else:
    from llvmlite import ir
    from numba.core import types
    from numba.cuda.extending import intrinsic

    def _same_signed(a, b) -> bool:
        return isinstance(a, types.Integer) and a.signed and a == b

    @intrinsic
    def add_nsw(typingctx, a, b):
        """a + b for two signed ints of one type, flagged ``nsw``: the caller promises it does not overflow."""
        if not _same_signed(a, b):
            return None

        def codegen(context, builder, sig, args):
            return builder.add(args[0], args[1], flags=["nsw"])

        return a(a, b), codegen

    @intrinsic
    def mul_nsw(typingctx, a, b):
        """a * b for two signed ints of one type, flagged ``nsw``: the caller promises it does not overflow."""
        if not _same_signed(a, b):
            return None

        def codegen(context, builder, sig, args):
            return builder.mul(args[0], args[1], flags=["nsw"])

        return a(a, b), codegen

    @intrinsic
    def nonneg(typingctx, i):
        """A signed int index the caller promises is >= 0, sign-extended to uint64 (no wraparound check)."""
        if not (isinstance(i, types.Integer) and i.signed):
            return None

        def codegen(context, builder, sig, args):
            return builder.sext(args[0], ir.IntType(64)) if i.bitwidth < 64 else args[0]

        return types.uint64(i), codegen
