"""VOP3P instructions: packed 16-bit math, packed f32 (v_pk_*_f32), v_fma_mix*, dot products,
AGPR moves and MFMA (arithmetic delegated to mfma.py)."""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedInstruction
from ..isa.instruction import Instruction
from ..isa.operands import Operand
from . import mfma
from .access import vector_reader, vector_writer
from .ops import Context, Op
from .float_mode import f32_denorm, flush_f32
from .valu import IEEE_TABLE, TABLE, first_nan, fma32
from .vop import from_typed, split_name, to_typed

U32, U64, I64, F32, F64 = np.uint32, np.uint64, np.int64, np.float32, np.float64


def compile_vop3p(ins: Instruction, ctx: Context) -> Op:
    base, enc = split_name(ins.mnemonic)
    if base.startswith(("v_mfma", "v_smfmac")):
        return _mfma(ins, base, ctx.processor)
    if base.startswith("v_accvgpr"):
        return _accvgpr(ins, base)
    if base in ("v_pk_fma_f32", "v_pk_mul_f32", "v_pk_add_f32", "v_pk_mov_b32"):
        return _pk_f32(ins, base)
    if base.startswith(("v_fma_mix", "v_mad_mix")):
        return _mix(ins, base)
    if base.startswith("v_dot"):
        return _dot(ins, base)
    if base.startswith("v_pk_"):
        return _pk16(ins, base)
    raise UnsupportedInstruction(ins.mnemonic, ins.address)


def _half(raw, hi: int):
    raw = np.asarray(raw, U32)
    return raw >> U32(16) if hi else raw & U32(0xFFFF)


def _pk16(ins: Instruction, base: str) -> Op:
    """v_pk_* on two 16-bit halves: each half computed with the scalar 16-bit op."""
    scalar = "v_" + base[5:]
    acc = base == "v_pk_fmac_f16"
    if acc:
        scalar = "v_fma_f16"
    spec = TABLE.get(scalar)
    if spec is None:
        raise UnsupportedInstruction(ins.mnemonic, ins.address)
    dtype, stypes, fn = spec
    ieee_fn = IEEE_TABLE[scalar][2] if scalar in IEEE_TABLE else fn
    ops = list(ins.operands)
    dst, srcs = ops[0], ops[1:] + ([ops[0]] if acc else [])
    n = len(srcs)
    if n != len(stypes):
        raise UnsupportedInstruction(ins.mnemonic, ins.address, "operand count")
    opsel, opsel_hi = ins.modifier_bits("op_sel", n), ins.modifier_bits("op_sel_hi", n, 1)
    neg_lo, neg_hi = ins.modifier_bits("neg_lo", n), ins.modifier_bits("neg_hi", n)
    readers = [vector_reader(o, 32, "f16" if t == "f16" else None) for o, t in zip(srcs, stypes)]
    clamp = "clamp" in ins.modifiers
    write = vector_writer(dst)
    isfloat = dtype == "f16"

    def run(m, g):
        raws = [rd(m, g) for rd in readers]
        f = ieee_fn if m.ieee else fn
        out = []
        for sel, neg in ((opsel, neg_lo), (opsel_hi, neg_hi)):
            vals = []
            for i, (raw, t) in enumerate(zip(raws, stypes)):
                h = _half(raw, sel[i])
                if neg[i] and isfloat:
                    h = h ^ U32(0x8000)
                vals.append(to_typed(h, t))
            out.append(np.asarray(from_typed(f(*vals), dtype, clamp, m.dx10_clamp), U32) & U32(0xFFFF))
        write(m, g, out[0] | (out[1] << U32(16)))
    return Op(ins, run)


def _pair_reader(op: Operand):
    """64-bit operand of v_pk_*_f32 as (dword0, dword1); a constant supplies both dwords."""
    if op.kind in ("imm", "float"):
        rd = vector_reader(op, 32, "f32")
        return lambda m, g: (rd(m, g), rd(m, g))
    rd = vector_reader(op, 64)
    return lambda m, g: (lambda v: ((v & U64(0xFFFFFFFF)).astype(U32), (v >> U64(32)).astype(U32)))(
        np.asarray(rd(m, g), U64))


def _pk_f32(ins: Instruction, base: str) -> Op:
    ops = list(ins.operands)
    dst, srcs = ops[0], ops[1:]
    n = len(srcs)
    readers = [_pair_reader(o) for o in srcs]
    opsel, opsel_hi = ins.modifier_bits("op_sel", n), ins.modifier_bits("op_sel_hi", n, 1)
    neg_lo, neg_hi = ins.modifier_bits("neg_lo", n), ins.modifier_bits("neg_hi", n)
    clamp = "clamp" in ins.modifiers
    write = vector_writer(dst, 64)

    def run(m, g):
        pairs = [rd(m, g) for rd in readers]
        if base == "v_pk_mov_b32":
            lo, hi = pairs[0][opsel[0]], pairs[1][opsel[1]]
            res = [np.asarray(lo, U32), np.asarray(hi, U32)]
        else:
            res = []
            denorm = f32_denorm(m, g)
            for sel, neg in ((opsel, neg_lo), (opsel_hi, neg_hi)):
                vals = []
                for i, p in enumerate(pairs):
                    raw = np.asarray(p[sel[i]], U32)
                    if neg[i]:
                        raw = raw ^ U32(0x80000000)
                    vals.append(flush_f32(raw.view(F32), denorm, 1))
                if base == "v_pk_fma_f32":
                    r = fma32(*vals)
                elif base == "v_pk_mul_f32":
                    r = vals[0] * vals[1]
                else:
                    r = vals[0] + vals[1]
                r = first_nan(r, *vals)
                res.append(np.asarray(from_typed(flush_f32(r, denorm, 2), "f32", clamp, m.dx10_clamp), U32))
        write(m, g, np.asarray(res[0], U64) | (np.asarray(res[1], U64) << U64(32)))
    return Op(ins, run)


def _mix(ins: Instruction, base: str) -> Op:
    """v_fma_mix_f32/mixlo_f16/mixhi_f16: op_sel_hi[i]=1 reads an f16 half chosen by op_sel[i]."""
    ops = list(ins.operands)
    dst, srcs = ops[0], ops[1:4]
    opsel, opsel_hi = ins.modifier_bits("op_sel", 3), ins.modifier_bits("op_sel_hi", 3)
    readers = [vector_reader(o, 32, "f16" if opsel_hi[i] else "f32") for i, o in enumerate(srcs)]
    clamp = "clamp" in ins.modifiers
    write = vector_writer(dst)
    out_kind = base.split("_")[-2] if base.endswith("_f16") else "f32"
    fused = base.startswith("v_fma")

    def run(m, g):
        vals = []
        denorm = f32_denorm(m, g)
        for i, (rd, o) in enumerate(zip(readers, srcs)):
            raw = rd(m, g)
            if opsel_hi[i]:
                v = to_typed(_half(raw, opsel[i]), "f16")
            else:
                v = flush_f32(to_typed(raw, "f32"), denorm, 1)
            if o.abs:
                v = np.abs(v)
            if o.neg:
                v = -v
            vals.append(v)
        r = fma32(*vals) if fused else (vals[0] * vals[1]) + vals[2]
        if out_kind == "f32":
            write(m, g, from_typed(flush_f32(r, denorm, 2), "f32", clamp, m.dx10_clamp))
            return
        h = np.asarray(from_typed(r, "f16", clamp, m.dx10_clamp), U32)
        old = m.v[dst.index][g.sel]
        write(m, g, (old & U32(0xFFFF)) | (h << U32(16)) if out_kind == "mixhi" else (old & U32(0xFFFF0000)) | h)
    return Op(ins, run)


def _lanes(raw, width: int, signed: bool):
    raw = np.asarray(raw, U32)
    out = []
    for i in range(32 // width):
        v = ((raw >> U32(width * i)) & U32((1 << width) - 1)).astype(I64)
        if signed:
            v = np.where(v >= (1 << (width - 1)), v - (1 << width), v)
        out.append(v)
    return out


def _dot(ins: Instruction, base: str) -> Op:
    ops = list(ins.operands)
    accum = base.startswith(("v_dot2c", "v_dot4c", "v_dot8c"))
    dst = ops[0]
    srcs = ops[1:3] + ([dst] if accum else ops[3:4])
    name = base.replace("c_", "_", 1) if accum else base
    kinds = {"v_dot2_f32_f16": ("f16", 16), "v_dot2_f32_bf16": ("bf16", 16), "v_dot2_i32_i16": ("i", 16),
             "v_dot2_u32_u16": ("u", 16), "v_dot4_i32_i8": ("i", 8), "v_dot4_u32_u8": ("u", 8),
             "v_dot8_i32_i4": ("i", 4), "v_dot8_u32_u4": ("u", 4)}
    if name not in kinds:
        raise UnsupportedInstruction(ins.mnemonic, ins.address)
    kind, width = kinds[name]
    readers = [vector_reader(o, 32, "f16" if kind == "f16" and i < 2 else None) for i, o in enumerate(srcs)]
    opsel, opsel_hi = ins.modifier_bits("op_sel", 3), ins.modifier_bits("op_sel_hi", 3, 1)
    neg_lo, neg_hi = ins.modifier_bits("neg_lo", 3), ins.modifier_bits("neg_hi", 3)
    clamp = "clamp" in ins.modifiers
    write = vector_writer(dst)

    def run(m, g):
        a, b, c = [rd(m, g) for rd in readers]
        if kind in ("f16", "bf16"):
            denorm = f32_denorm(m, g)
            acc = np.asarray(flush_f32(to_typed(c, "f32"), denorm, 1), F64)
            parts = []
            for raw, i in ((a, 0), (b, 1)):
                lo, hi = _half(raw, opsel[i]), _half(raw, opsel_hi[i])
                if neg_lo[i]:
                    lo = lo ^ U32(0x8000)
                if neg_hi[i]:
                    hi = hi ^ U32(0x8000)
                parts.append((to_typed(lo, kind).astype(F64), to_typed(hi, kind).astype(F64)))
            r = acc + parts[0][0] * parts[1][0] + parts[0][1] * parts[1][1]
            write(m, g, from_typed(flush_f32(r.astype(F32), denorm, 2), "f32", clamp, m.dx10_clamp))
            return
        signed = kind == "i"
        xs, ys = _lanes(a, width, signed), _lanes(b, width, signed)
        acc = np.asarray(c, U32).view(np.int32).astype(I64) if signed else np.asarray(c, U32).astype(I64)
        for x, y in zip(xs, ys):
            acc = acc + x * y
        write(m, g, from_typed(acc, "i32" if signed else "u32", clamp))
    return Op(ins, run)


def _accvgpr(ins: Instruction, base: str) -> Op:
    ops = list(ins.operands)
    rd = vector_reader(ops[1])
    write = vector_writer(ops[0])
    if base not in ("v_accvgpr_read_b32", "v_accvgpr_write_b32", "v_accvgpr_mov_b32"):
        raise UnsupportedInstruction(ins.mnemonic, ins.address)
    return Op(ins, lambda m, g: write(m, g, rd(m, g)))


def _stack(op: Operand, n: int):
    """Reader of an MFMA register operand as uint32 [G, n, 64] (constants broadcast)."""
    if op.kind in ("vgpr", "agpr"):
        i, file = op.index, ("v" if op.kind == "vgpr" else "a")
        return lambda m, g: np.stack([getattr(m, file)[i + j][g.sel] for j in range(n)], axis=1)
    rd = vector_reader(op, 32, "f32")
    return lambda m, g: np.broadcast_to(np.asarray(rd(m, g), U32), (len(g), n, 64))


# Fields of a `v_mfma_scale_*` instruction's `v_mfma_ld_scale` prefix (its first 8 bytes, a VOP3P word pair:
# LLVM VOPInstructions.td `VOP3Pe`) besides op, encoding, the two scale sources and their op_sel / op_sel_hi.
# Ignored: dword 0 bits 13 and 14 (mask 0x6000), VOP3Pe's op_sel(2) / op_sel_hi(2), of a third source the prefix
# does not have (LLVM derives both from src2's modifiers only, so it writes them 0 and cannot print them).
# AITer's 101 MXFP4 objects set them in no regular pattern (the two unrolled copies of one MFMA in a K loop
# differ), and their f4gemm with random fp4 data and random scale bytes matches the MXFP4 reference to the bf16
# rounding with the bits ignored (README_mfma.md, benchmarks/production/f4gemm_scale_bits.txt).
# Refused: vdst [7:0], neg_hi [10:8], clamp [15] of dword 0; src2 [26:18], neg [31:29] of dword 1 (no AITer
# object sets any of them; no source says what they would do).
PREFIX_UNMODELLED = ((0x0000_87FF, "vdst, neg_hi or clamp"), (0xE7FC_0000, "src2 or neg"))


def _scale_readers(ins: Instruction, ops: list[Operand]):
    """Readers of a `v_mfma_scale_*` instruction's E8M0 scale operands ([G, 64] codes): byte
    `op_sel[i] | op_sel_hi[i] << 1` of each lane's dword (LLVM 22 encodes the intrinsic's scale byte
    index so: `llvm.amdgcn.mfma.scale.*` opsel 1 -> op_sel, 2 -> op_sel_hi; the index selects byte
    0..3 of the packed E8M0 word). Scales that are not VGPRs raise (LLVM's VOP3PInstructions.td:
    for inline constants and SGPRs the hardware takes bits [30:23] instead, so LLVM allows only
    VGPRs), as do prefix fields in PREFIX_UNMODELLED; prefix bits 0x6000 select nothing (above)."""
    if ins.encoding:
        words = (int.from_bytes(ins.encoding[:4], "little"), int.from_bytes(ins.encoding[4:8], "little"))
        for word, (mask, what) in zip(words, PREFIX_UNMODELLED):
            if word & mask:
                raise UnsupportedInstruction(ins.mnemonic, ins.address, f"v_mfma_ld_scale prefix sets {what}")
    if any(op.kind != "vgpr" for op in ops):
        raise UnsupportedInstruction(ins.mnemonic, ins.address, "scale operand not a VGPR")
    lo, hi = ins.modifier_bits("op_sel", 3), ins.modifier_bits("op_sel_hi", 3)
    readers = []
    for i, op in enumerate(ops):
        shift, idx = U32(8 * (lo[i] | hi[i] << 1)), op.index
        readers.append(lambda m, g, idx=idx, shift=shift: (m.v[idx][g.sel] >> shift) & U32(0xFF))
    return readers


def _mfma(ins: Instruction, base: str, processor: str) -> Op:
    try:
        info = mfma.info(base, processor)
    except UnsupportedInstruction:
        raise UnsupportedInstruction(ins.mnemonic, ins.address) from None
    ops = list(ins.operands)
    dst, a, b, c = ops[0], ops[1], ops[2], ops[3]
    wide = info.out_type == "f64"
    cbsz, abid, blgp = (int(ins.modifier(k) or 0) for k in ("cbsz", "abid", "blgp"))
    a_regs, b_regs, scales = info.a_regs, info.b_regs, None
    if info.in_type == "f8f6f4":
        try:
            ta, tb = mfma.f8f6f4_types(base, cbsz, blgp)
        except UnsupportedInstruction:
            raise UnsupportedInstruction(ins.mnemonic, ins.address, f"cbsz:{cbsz} blgp:{blgp}") from None
        a_regs, b_regs = mfma.source_regs(info, ta, "a"), mfma.source_regs(info, tb, "b")
        if base.startswith("v_mfma_scale_"):
            scales = _scale_readers(ins, ops[4:6])
    for op, n in ((a, a_regs), (b, b_regs)):
        if op.kind in ("vgpr", "agpr") and op.count != n:
            raise UnsupportedInstruction(ins.mnemonic, ins.address, f"{op.text} is not {n} registers")
    ra, rb = _stack(a, a_regs), _stack(b, b_regs)
    rc = _stack(c, info.cd_regs)
    neg = tuple(ins.modifier_bits("neg", 3)) if wide else (0, 0, 0)
    file, first = ("v" if dst.kind == "vgpr" else "a"), dst.index

    def run(m, g):
        sa, sb = (None, None) if scales is None else (scales[0](m, g), scales[1](m, g))
        d = mfma.execute(base, ra(m, g), rb(m, g), rc(m, g), cbsz=cbsz, abid=abid, blgp=blgp, neg=neg,
                         processor=processor, scale_a=sa, scale_b=sb)
        regs = getattr(m, file)
        for j in range(info.cd_regs):
            m.vwrite(g, regs, first + j, d[:, j, :])
    return Op(ins, run)
