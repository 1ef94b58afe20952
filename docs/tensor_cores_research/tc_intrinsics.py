"""Tensor-core intrinsics for numba-cuda 0.30 via llvmlite inline PTX (multi-output asm)."""
from llvmlite import ir
from numba import cuda
from numba.core import types
from numba.cuda.extending import intrinsic
from numba.cuda import cgutils

F32, I32, I64 = ir.FloatType(), ir.IntType(32), ir.IntType(64)

def _asm(builder, outs, ins, text, cons, args):
    """Call inline asm with len(outs) outputs; return list of output values."""
    ret = ir.LiteralStructType(outs) if len(outs) > 1 else (outs[0] if outs else ir.VoidType())
    fn = ir.InlineAsm(ir.FunctionType(ret, ins), text, cons, side_effect=True)
    r = builder.call(fn, args)
    if len(outs) > 1:
        return [builder.extract_value(r, i) for i in range(len(outs))]
    return [r] if outs else []

def _unpack(builder, tup, n):
    return [builder.extract_value(tup, i) for i in range(n)]

U4, U2, F4 = types.UniTuple(types.uint32, 4), types.UniTuple(types.uint32, 2), types.UniTuple(types.float32, 4)

def _mma(text, tied):
    cons_in = "0,1,2,3" if tied else "f,f,f,f"
    cons = "=f,=f,=f,=f,r,r,r,r,r,r," + cons_in
    def codegen(context, builder, sig, args):
        a = _unpack(builder, args[0], 4); b = _unpack(builder, args[1], 2); c = _unpack(builder, args[2], 4)
        d = _asm(builder, [F32]*4, [I32]*6 + [F32]*4, text, cons, a + b + c)
        return context.make_tuple(builder, sig.return_type, d)
    return codegen

MMA_TF32 = ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
            "{$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, {$10,$11,$12,$13};")
MMA_BF16 = ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
            "{$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, {$10,$11,$12,$13};")

@intrinsic
def mma_tf32(typingctx, a, b, c):
    """d = A(16x8 tf32) @ B(8x8 tf32) + C, per-lane fragments: a 4xu32, b 2xu32, c 4xf32 -> 4xf32."""
    return F4(U4, U2, F4), _mma(MMA_TF32, tied=False)

@intrinsic
def mma_tf32_tied(typingctx, a, b, c):
    return F4(U4, U2, F4), _mma(MMA_TF32, tied=True)

@intrinsic
def mma_bf16(typingctx, a, b, c):
    """d = A(16x16 bf16) @ B(16x8 bf16) + C; a 4xu32 (bf16x2), b 2xu32, c 4xf32 -> 4xf32."""
    return F4(U4, U2, F4), _mma(MMA_BF16, tied=False)

@intrinsic
def cvt_tf32(typingctx, x):
    """cvt.rna.tf32.f32: float32 -> uint32 bit pattern (low 13 bits zero)."""
    def codegen(context, builder, sig, args):
        return _asm(builder, [I32], [F32], "cvt.rna.tf32.f32 $0, $1;", "=r,f", [args[0]])[0]
    return types.uint32(types.float32), codegen

def _ptr(context, builder, aryty, ary, idxty, idx):
    vals = [context.cast(builder, v, t, types.intp) for v, t in zip(cgutils.unpack_tuple(builder, idx), idxty)]
    return cgutils.get_item_pointer(context, builder, aryty, context.make_array(aryty)(context, builder, ary), vals)

def _ldmatrix(n, trans):
    outs = ",".join(f"${i}" for i in range(n))
    text = ("{ .reg .u64 t; .reg .u32 s; cvta.to.shared.u64 t, $%d; cvt.u32.u64 s, t; "
            "ldmatrix.sync.aligned.m8n8.x%d%s.shared.b16 {%s}, [s]; }" % (n, n, ".trans" if trans else "", outs))
    cons = ",".join(["=r"] * n) + ",l"
    def codegen(context, builder, sig, args):
        p = _ptr(context, builder, sig.args[0], args[0], sig.args[1], args[1])
        r = _asm(builder, [I32] * n, [I64], text, cons, [builder.ptrtoint(p, I64)])
        return context.make_tuple(builder, sig.return_type, r)
    return codegen

@intrinsic
def ldmatrix_x4(typingctx, smem, idx):
    """4 x b32 from ldmatrix.x4: lane L gives the address of row L%8 of matrix L//8 (smem[idx])."""
    return U4(smem, idx), _ldmatrix(4, False)

@intrinsic
def ldmatrix_x4_trans(typingctx, smem, idx):
    return U4(smem, idx), _ldmatrix(4, True)

@intrinsic
def ldmatrix_x2(typingctx, smem, idx):
    return U2(smem, idx), _ldmatrix(2, False)

# ---------------- Hopper wgmma (needs sm_90a) ----------------
def _void(text):
    def codegen(context, builder, sig, args):
        _asm(builder, [], [], text, "~{memory}", [])
        return context.get_dummy_value()
    return codegen

@intrinsic
def wgmma_fence(typingctx):
    return types.void(), _void("wgmma.fence.sync.aligned;")

@intrinsic
def wgmma_commit(typingctx):
    return types.void(), _void("wgmma.commit_group.sync.aligned;")

@intrinsic
def fence_proxy_async(typingctx):
    return types.void(), _void("fence.proxy.async.shared::cta;")

@intrinsic
def wgmma_wait(typingctx, n, acc):
    """wgmma.wait_group n; the accumulators flow through the asm (tied) so no use moves above the wait."""
    if not isinstance(n, types.IntegerLiteral):
        return None
    cnt = acc.count
    def codegen(context, builder, sig, args):
        a = _unpack(builder, args[1], cnt)
        cons = ",".join(["=f"] * cnt + [str(i) for i in range(cnt)]) + ",~{memory}"
        d = _asm(builder, [F32] * cnt, [F32] * cnt, f"wgmma.wait_group.sync.aligned {n.literal_value};", cons, a)
        return context.make_tuple(builder, sig.return_type, d)
    return acc(n, acc), codegen

def _wgmma(kind, nacc):
    regs = ",".join(f"${i}" for i in range(nacc))
    tail = "1, 1, 1" if kind == "tf32" else "1, 1, 1, 0, 0"   # scale-d, imm-scale-a, imm-scale-b[, imm-trans-a, imm-trans-b]
    k = 8 if kind == "tf32" else 16
    text = (f"wgmma.mma_async.sync.aligned.m64n{2*nacc}k{k}.f32.{kind}.{kind} "
            f"{{{regs}}}, ${nacc}, ${nacc+1}, {tail};")
    cons = ",".join(["=f"] * nacc + ["l", "l"] + [str(i) for i in range(nacc)]) + ",~{memory}"
    def codegen(context, builder, sig, args):
        a = _unpack(builder, args[2], nacc)
        d = _asm(builder, [F32] * nacc, [I64, I64] + [F32] * nacc, text, cons, [args[0], args[1]] + a)
        return context.make_tuple(builder, sig.return_type, d)
    return codegen

@intrinsic
def wgmma_tf32(typingctx, desc_a, desc_b, acc):
    """acc += A(64x8 tf32, smem desc) @ B(8xN, smem desc); N = 2*len(acc)."""
    return acc(types.uint64, types.uint64, acc), _wgmma("tf32", acc.count)

@intrinsic
def wgmma_bf16(typingctx, desc_a, desc_b, acc):
    return acc(types.uint64, types.uint64, acc), _wgmma("bf16", acc.count)

@intrinsic
def smem_addr(typingctx, smem, idx):
    """32-bit shared-window address of smem[idx] (as uint64 for descriptor arithmetic)."""
    def codegen(context, builder, sig, args):
        p = _ptr(context, builder, sig.args[0], args[0], sig.args[1], args[1])
        return _asm(builder, [I64], [I64], "cvta.to.shared.u64 $0, $1;", "=l,l", [builder.ptrtoint(p, I64)])[0]
    return types.uint64(smem, idx), codegen

@intrinsic
def ldmatrix_x2_trans(typingctx, smem, idx):
    return U2(smem, idx), _ldmatrix(2, True)

@intrinsic
def pack2(typingctx, lo, hi):
    """uint32 = lo | hi << 16 (two b16 values; lo = lower-index element)."""
    def codegen(context, builder, sig, args):
        l = builder.zext(builder.trunc(args[0], ir.IntType(16)), I32)
        h = builder.zext(builder.trunc(args[1], ir.IntType(16)), I32)
        return builder.or_(l, builder.shl(h, ir.Constant(I32, 16)))
    return types.uint32(types.uint16, types.uint16), codegen

def make_desc(addr, lbo, sbo, swz):
    """wgmma smem descriptor: bits 0-13 addr>>4, 16-29 lbo>>4, 32-45 sbo>>4, 62-63 swizzle (1=128B)."""
    return (((addr & 0x3FFFF) >> 4) | (((lbo & 0x3FFFF) >> 4) << 16) | (((sbo & 0x3FFFF) >> 4) << 32)
            | (swz << 62))

@intrinsic
def fzeros(typingctx, n):
    """A UniTuple of n float32 zeros (n a literal)."""
    if not isinstance(n, types.IntegerLiteral):
        return None
    ty = types.UniTuple(types.float32, n.literal_value)
    def codegen(context, builder, sig, args):
        return context.make_tuple(builder, ty, [ir.Constant(F32, 0.0)] * n.literal_value)
    return ty(n), codegen

@intrinsic
def tsum(typingctx, acc):
    def codegen(context, builder, sig, args):
        v = _unpack(builder, args[0], acc.count); s = v[0]
        for x in v[1:]:
            s = builder.fadd(s, x)
        return s
    return types.float32(acc), codegen
