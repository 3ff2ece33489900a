"""VALU instructions (VOP1/VOP2/VOP3/VOPC, DPP and SDWA forms) compiled into closures.

A generic pipeline serves the table in valu.py: read raw sources, apply DPP lane selection,
SDWA/op_sel half or byte selection, abs/neg, convert to the operation's types, compute, apply
omod and clamp, convert back and write under EXEC (and the DPP row/bank mask).
"""
from __future__ import annotations

import re
from typing import Callable

import numpy as np

from ..errors import UnsupportedInstruction
from ..isa.instruction import Instruction
from ..isa.operands import Operand
from . import numeric
from .access import (lane_mask_reader, pack_lanes, scalar_reader, scalar_writer, vector_reader,
                     vector_writer)
from .float_mode import f32_denorm, flush_f32, refuse_flushed
from .ops import Context, Op
from .state import EXEC, VCC
from .valu import APPROXIMATE_F32, IEEE_TABLE, TABLE, faithful, fma32, fma64

U16, U32, U64, I32, I64, F32, F64 = np.uint16, np.uint32, np.uint64, np.int32, np.int64, np.float32, np.float64
BITS = {"f16": 16, "bf16": 16, "u16": 16, "i16": 16, "f32": 32, "u32": 32, "i32": 32, "f64": 64, "u64": 64,
        "i64": 64}
SIGN = {16: 0x8000, 32: 0x80000000, 64: 0x8000000000000000}
_SDWA_SEL = {"BYTE_0": (0, 8), "BYTE_1": (8, 8), "BYTE_2": (16, 8), "BYTE_3": (24, 8), "WORD_0": (0, 16),
             "WORD_1": (16, 16), "DWORD": (0, 32)}
INT_RANGE = {"u32": (0, 2**32 - 1), "i32": (-2**31, 2**31 - 1), "u16": (0, 65535), "i16": (-32768, 32767),
             "u64": (0, 2**64 - 1), "i64": (-2**63, 2**63 - 1)}


def split_name(name: str) -> tuple[str, str]:
    for suf in ("_e32", "_e64", "_dpp", "_sdwa"):
        if name.endswith(suf):
            return name[:-len(suf)], suf[1:]
    return name, ""


def to_typed(raw, t: str):
    """Raw register bits (uint32 or uint64) -> numpy values of type t."""
    if t == "f32":
        return np.asarray(raw, U32).view(F32)
    if t == "u32":
        return np.asarray(raw, U32)
    if t == "i32":
        return np.asarray(raw, U32).view(I32)
    if t == "f16":
        return (np.asarray(raw, U32) & U32(0xFFFF)).astype(U16).view(np.float16).astype(F32)
    if t == "bf16":
        return (np.asarray(raw, U32) << U32(16)).view(F32)
    if t == "u16":
        return np.asarray(raw, U32) & U32(0xFFFF)
    if t == "i16":
        return (np.asarray(raw, U32) & U32(0xFFFF)).astype(U16).view(np.int16).astype(I32)
    if t == "f64":
        return np.asarray(raw, U64).view(F64)
    if t == "u64":
        return np.asarray(raw, U64)
    if t == "i64":
        return np.asarray(raw, U64).view(I64)
    raise ValueError(t)


def from_typed(val, t: str, clamp: bool = False, nan_to_zero: bool = True):
    """Typed result -> raw bits (uint32, or uint64 for 64-bit types); clamp saturates (a float NaN to 0 when
    `nan_to_zero`, MODE.DX10_CLAMP, else it stays NaN)."""
    if t in ("f32", "f16", "f64"):
        dt = {"f32": F32, "f16": F32, "f64": F64}[t]
        v = np.asarray(val, dt)
        if clamp:
            v = np.clip(v, 0, 1).astype(dt)
            if nan_to_zero:
                v = np.where(np.isnan(v), dt(0), v)
        if t == "f32":
            return v.view(U32)
        if t == "f64":
            return v.view(U64)
        return numeric.f32_to_f16(v.view(U32)).astype(U32)
    lo, hi = INT_RANGE[t]
    if clamp:
        v = np.asarray(val)
        if v.dtype.kind == "f":
            v = np.nan_to_num(v)
        v = np.clip(v.astype(np.float64) if v.dtype == U64 else v, lo, hi).astype(I64 if t != "u64" else U64)
        val = v
    if t in ("u64", "i64"):
        return np.asarray(val).astype(U64, copy=False)
    if t in ("u16", "i16"):
        return np.asarray(val).astype(U16).astype(U32)
    return np.asarray(val).astype(U32, copy=False)


def float_mods(raw, op: Operand, bits: int):
    """Apply abs/neg source modifiers on raw bits."""
    if op.abs:
        raw = raw & (U64 if bits == 64 else U32)(SIGN[bits] - 1)
    if op.neg:
        raw = raw ^ (U64 if bits == 64 else U32)(SIGN[bits])
    return raw


# ---- DPP ----------------------------------------------------------------------------------------------
def dpp_control(ins: Instruction) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """(source lane [64], source valid [64], write enable [64], bound_ctrl) of a DPP instruction."""
    lanes = np.arange(64)
    row = lanes & 15
    src, valid = lanes.copy(), np.ones(64, bool)
    mods = {m.split(":", 1)[0]: (m.split(":", 1)[1] if ":" in m else "") for m in ins.modifiers}
    if "quad_perm" in mods:
        p = [int(x) for x in mods["quad_perm"].strip("[]").split(",")]
        src = (lanes & ~3) | np.array(p)[lanes & 3]
    elif "row_shl" in mods:
        n = int(mods["row_shl"], 0)
        src, valid = lanes + n, row + n <= 15
    elif "row_shr" in mods:
        n = int(mods["row_shr"], 0)
        src, valid = lanes - n, row >= n
    elif "row_ror" in mods:
        n = int(mods["row_ror"], 0)
        src = (lanes & ~15) | ((row - n) & 15)
    elif "wave_shl" in mods:
        src, valid = lanes + 1, lanes < 63
    elif "wave_shr" in mods:
        src, valid = lanes - 1, lanes > 0
    elif "wave_rol" in mods:
        src = (lanes + 1) & 63
    elif "wave_ror" in mods:
        src = (lanes - 1) & 63
    elif "row_mirror" in mods:
        src = (lanes & ~15) | (15 - row)
    elif "row_half_mirror" in mods:
        src = (lanes & ~7) | (7 - (lanes & 7))
    elif "row_newbcast" in mods:  # gfx90a+: lane n of each row to the whole row
        src = (lanes & ~15) | int(mods["row_newbcast"], 0)
    elif "row_bcast" in mods:
        n = int(mods["row_bcast"])
        if n == 15:
            src, valid = (lanes & ~15) - 1, lanes >= 16
        else:
            src, valid = np.full(64, 31), lanes >= 32
    else:
        raise UnsupportedInstruction(ins.mnemonic, ins.address, "dpp control")
    row_mask = int(mods.get("row_mask", "0xf"), 0)
    bank_mask = int(mods.get("bank_mask", "0xf"), 0)
    enable = (((row_mask >> (lanes >> 4)) & 1) & ((bank_mask >> ((lanes >> 2) & 3)) & 1)).astype(bool)
    bound = "bound_ctrl" in mods
    return np.where(valid, src, 0) & 63, valid, enable, bound


def apply_dpp(m, g, raw, ctl):
    """Permute src0 lanes; returns (value [G,64], extra write mask [G,64] or None)."""
    src, valid, enable, bound = ctl
    mask, full, _ = g.exec_info(m)
    raw = np.broadcast_to(raw, (len(g), 64))
    val = raw[:, src]
    ok = valid[None, :] & (mask[:, src] if not full else True)
    if bound:
        val = np.where(ok, val, 0).astype(raw.dtype)
        return val, np.broadcast_to(enable, (len(g), 64))
    return val, enable[None, :] & ok


# ---- SDWA ---------------------------------------------------------------------------------------------
def sdwa_select(raw, sel: str, sext: bool):
    off, width = _SDWA_SEL[sel]
    if width == 32:
        return raw
    v = (np.asarray(raw, U32) >> U32(off)) & U32((1 << width) - 1)
    if sext:
        sh = U32(32 - width)
        v = ((v << sh).view(I32) >> I32(32 - width)).view(U32)
    return v


def sdwa_place(res, old, sel: str, unused: str):
    off, width = _SDWA_SEL[sel]
    if width == 32:
        return res
    field = (np.asarray(res, U32) & U32((1 << width) - 1)) << U32(off)
    fmask = U32(((1 << width) - 1) << off)
    if unused == "UNUSED_PRESERVE":
        return (old & ~fmask) | field
    if unused == "UNUSED_SEXT":
        top = (field >> U32(off + width - 1)) & U32(1)
        hi = U32((0xFFFFFFFF << (off + width)) & 0xFFFFFFFF)
        return field | np.where(top == 1, hi, U32(0))
    return field


# ---- generic pipeline ---------------------------------------------------------------------------------
class Sources:
    """Prepared readers for VALU sources with DPP/SDWA/op_sel/abs/neg applied, yielding raw bits."""

    def __init__(self, ins: Instruction, enc: str, ops: list[Operand], types: list[str], opsel: list[int]):
        self.ins, self.enc, self.ops, self.types, self.opsel = ins, enc, ops, types, opsel
        self.readers = [vector_reader(o, BITS[t] if BITS[t] == 64 else 32, t) for o, t in zip(ops, types)]
        self.dpp = dpp_control(ins) if enc == "dpp" else None
        self.sdwa = [ins.modifier(f"src{i}_sel") or "DWORD" for i in range(len(ops))] if enc == "sdwa" else None

    def read(self, m, g):
        """Returns (list of raw sources, extra write mask or None)."""
        out, extra = [], None
        for i, (rd, o, t) in enumerate(zip(self.readers, self.ops, self.types)):
            raw = rd(m, g)
            if i == 0 and self.dpp is not None:
                raw, extra = apply_dpp(m, g, raw, self.dpp)
            bits = BITS[t]
            if self.sdwa is not None:
                raw = sdwa_select(raw, self.sdwa[i], o.sext)
            elif bits == 16 and i < len(self.opsel) and self.opsel[i]:
                raw = np.asarray(raw, U32) >> U32(16)
            if (o.abs or o.neg) and t[0] in "fb":
                raw = float_mods(np.asarray(raw, U64 if bits == 64 else U32), o, bits)
            out.append(raw)
        return out, extra


def _omod(ins: Instruction) -> float:
    if ins.modifier("mul") == "2":
        return 2.0
    if ins.modifier("mul") == "4":
        return 4.0
    if ins.modifier("div") == "2":
        return 0.5
    return 1.0


def _generic(ins: Instruction, base: str, enc: str, spec) -> Op:
    dtype, stypes, fn = spec
    ops = list(ins.operands)
    dst, srcs = ops[0], ops[1:]
    acc = base in ("v_mac_f32", "v_fmac_f32", "v_mac_f16", "v_fmac_f16", "v_fmac_f64")
    if acc:
        srcs = srcs + [dst]
    if len(srcs) != len(stypes):
        raise UnsupportedInstruction(ins.mnemonic, ins.address, "operand count")
    opsel = ins.modifier_bits("op_sel", len(srcs) + 1)
    src = Sources(ins, enc, srcs, list(stypes), opsel)
    clamp = "clamp" in ins.modifiers
    omod = _omod(ins)
    dbits = BITS[dtype]
    write = vector_writer(dst, 64 if dbits == 64 else 32)
    dst_hi = dbits == 16 and enc in ("e64", "") and opsel[len(srcs)] == 1
    sdwa_dst = (ins.modifier("dst_sel") or "DWORD", ins.modifier("dst_unused") or "UNUSED_PRESERVE") \
        if enc == "sdwa" else None
    dreg = dst.index
    dfile = dst.kind
    approximate = base in APPROXIMATE_F32
    ieee_fn = IEEE_TABLE[base][2] if base in IEEE_TABLE else fn
    f32_in = [i for i, t in enumerate(stypes) if t == "f32"]
    f32_out = dtype == "f32"

    def run(m, g):
        raws, extra = src.read(m, g)
        vals = [to_typed(r, t) for r, t in zip(raws, stypes)]
        denorm = f32_denorm(m, g) if f32_in or f32_out else 3
        for i in f32_in:
            vals[i] = flush_f32(vals[i], denorm, 1)
        res = (ieee_fn if m.ieee else fn)(*vals)
        if approximate and m.faithful:
            res = faithful(fn, vals[0], res)
        if omod != 1.0:
            res = np.asarray(res) * (F64(omod) if dtype == "f64" else F32(omod))
        if f32_out:
            res = flush_f32(res, denorm, 2)
        out = from_typed(res, dtype, clamp, m.dx10_clamp)
        if dst_hi or sdwa_dst is not None:
            old = (m.v if dfile == "vgpr" else m.a)[dreg][g.sel]
            if dst_hi:
                out = (old & U32(0xFFFF)) | (np.asarray(out, U32) << U32(16))
            else:
                out = sdwa_place(out, old, *sdwa_dst)
        write(m, g, out, extra)
    return Op(ins, run)


# ---- VOPC -------------------------------------------------------------------------------------------
_FCMP = {
    "f": lambda a, b: np.zeros(np.broadcast(a, b).shape, bool), "lt": np.less, "eq": np.equal,
    "le": np.less_equal, "gt": np.greater, "lg": lambda a, b: (a < b) | (a > b), "ge": np.greater_equal,
    "o": lambda a, b: ~(np.isnan(a) | np.isnan(b)), "u": lambda a, b: np.isnan(a) | np.isnan(b),
    "nge": lambda a, b: ~(a >= b), "nlg": lambda a, b: ~((a < b) | (a > b)), "ngt": lambda a, b: ~(a > b),
    "nle": lambda a, b: ~(a <= b), "neq": lambda a, b: ~(a == b), "nlt": lambda a, b: ~(a < b),
    "tru": lambda a, b: np.ones(np.broadcast(a, b).shape, bool),
    "ne": np.not_equal, "t": lambda a, b: np.ones(np.broadcast(a, b).shape, bool),
}


def _class(x, mask):
    """v_cmp_class for non-NaN classes (bits 2..9); the NaN bits 0/1 need the raw mantissa."""
    bits = np.asarray(x)
    fin = np.isfinite(bits)
    neg = np.signbit(bits)
    tiny = np.finfo(bits.dtype).tiny
    mag = np.abs(bits)
    classes = [np.isneginf(bits), neg & fin & (mag >= tiny), neg & fin & (bits != 0) & (mag < tiny),
               neg & (bits == 0), ~neg & (bits == 0), ~neg & fin & (bits != 0) & (mag < tiny),
               ~neg & fin & (mag >= tiny), np.isposinf(bits)]
    mask = np.asarray(mask, U32)
    out = np.zeros(np.broadcast(bits, mask).shape, bool)
    for i, c in enumerate(classes, start=2):
        out |= c & (((mask >> U32(i)) & U32(1)) == 1)
    return out


def _vopc(ins: Instruction, base: str, enc: str) -> Op:
    m_ = re.match(r"v_cmp(x?)_(\w+?)_([fiu]\d+)$", base)
    if not m_:
        raise UnsupportedInstruction(ins.mnemonic, ins.address)
    cmpx, rel, typ = m_.group(1) == "x", m_.group(2), m_.group(3)
    ops = list(ins.operands)
    if len(ops) == 3:
        dst, srcs = ops[0], ops[1:]
    else:
        dst, srcs = Operand("special", "vcc", name="vcc", count=2), ops
    is_class = rel == "class"
    stypes = [typ, "u32"] if is_class else [typ, typ]
    src = Sources(ins, enc, srcs, stypes, ins.modifier_bits("op_sel", 3))
    f = _class if is_class else _FCMP.get(rel)
    if f is None:
        raise UnsupportedInstruction(ins.mnemonic, ins.address)
    nulldst = dst.kind == "special" and dst.name == "null"
    wr = None if nulldst else scalar_writer(dst, 64)
    raw_class = is_class and typ in ("f32", "f16", "f64")
    flushed = typ == "f32" and not is_class  # v_cmp_class classifies the bits it is given

    def run(m, g):
        raws, extra = src.read(m, g)
        a, b = to_typed(raws[0], stypes[0]), to_typed(raws[1], stypes[1])
        if flushed:
            denorm = f32_denorm(m, g)
            a, b = flush_f32(a, denorm, 1), flush_f32(b, denorm, 1)
        res = f(a, b)
        if raw_class:
            bits = BITS[typ]
            mant_msb = {16: 0x200, 32: 0x400000, 64: 0x8000000000000}[bits]
            r0 = np.asarray(raws[0], U64 if bits == 64 else U32)
            snan = np.isnan(a) & ((r0 & (U64 if bits == 64 else U32)(mant_msb)) == 0)
            qnan = np.isnan(a) & ~snan
            mk = np.asarray(b, U32)
            res = res | (snan & ((mk & U32(1)) == 1)) | (qnan & ((mk & U32(2)) == 2))
        mask, _, _ = g.exec_info(m)
        bits = np.broadcast_to(res, (len(g), 64)) & mask
        if extra is not None:
            bits = bits & extra
        packed = pack_lanes(bits)
        if wr is not None:
            wr(m, g, packed)
        if cmpx:
            m.swrite64(g, EXEC, packed)
    return Op(ins, run)


# ---- special VALU forms -----------------------------------------------------------------------------
def _carry(ins: Instruction, base: str, enc: str) -> Op:
    """v_add_co/sub_co/subrev_co/addc_co/subb_co/subbrev_co_u32: vdst, sdst(carry), src0, src1[, cin]."""
    ops = list(ins.operands)
    dst, cdst, srcs = ops[0], ops[1], ops[2:4]
    cin = lane_mask_reader(ops[4]) if len(ops) > 4 else None
    src = Sources(ins, enc, srcs, ["u32", "u32"], [])
    write = vector_writer(dst)
    cw = scalar_writer(cdst, 64) if not (cdst.kind == "special" and cdst.name == "null") else None
    kind = base[2:].split("_")[0]
    clamp = "clamp" in ins.modifiers

    def run(m, g):
        raws, extra = src.read(m, g)
        a, b = np.asarray(raws[0], U32).astype(I64), np.asarray(raws[1], U32).astype(I64)
        c = cin(m, g).astype(I64) if cin is not None else 0
        if kind in ("add", "addc"):
            r = a + b + c
            carry = r > 0xFFFFFFFF
        elif kind in ("sub", "subb"):
            r = a - b - c
            carry = r < 0
        else:
            r = b - a - c
            carry = r < 0
        if clamp:
            r = np.clip(r, 0, 0xFFFFFFFF)
        write(m, g, r.astype(U32), extra)
        mask, _, _ = g.exec_info(m)
        if cw is not None:
            cw(m, g, pack_lanes(np.broadcast_to(carry, (len(g), 64)) & mask))
    return Op(ins, run)


def _cndmask(ins: Instruction, base: str, enc: str) -> Op:
    ops = list(ins.operands)
    dst, srcs = ops[0], ops[1:3]
    sel = lane_mask_reader(ops[3]) if len(ops) > 3 else lane_mask_reader(
        Operand("special", "vcc", name="vcc", count=2))
    typ = "f32" if any(o.abs or o.neg for o in srcs) else "u32"
    src = Sources(ins, enc, srcs, [typ, typ], [])
    write = vector_writer(dst)

    def run(m, g):
        raws, extra = src.read(m, g)
        write(m, g, np.where(sel(m, g), raws[1], raws[0]).astype(U32), extra)
    return Op(ins, run)


def _one_lane(lane_of: Callable) -> Callable:
    """`Op.lanes` of an instruction reading, per wave, the one lane `lane_of(m, g, mask)` gives."""
    def lanes(m, g, mask):
        read = np.zeros_like(mask)
        read[np.arange(len(g)), lane_of(m, g, mask)] = True
        return read
    return lanes


def _lane_ops(ins: Instruction, base: str, enc: str) -> Op:
    ops = list(ins.operands)
    if base == "v_readlane_b32":
        wr, vi, lane = scalar_writer(ops[0]), ops[1].index, scalar_reader(ops[2])

        def selected(m, g, mask=None):  # CDNA3 ISA: the lane select's bits [5:0]
            return np.broadcast_to((np.asarray(lane(m, g), U32) & U32(63)).astype(I64), (len(g),))

        def readlane(m, g):
            wr(m, g, m.v[vi][g.sel][np.arange(len(g)), selected(m, g)])
        return Op(ins, readlane, lanes=_one_lane(selected))
    if base == "v_readfirstlane_b32":
        wr = scalar_writer(ops[0])
        rd = vector_reader(ops[1])

        def first(m, g, mask):  # lane 0 when EXEC is 0
            return np.where(mask.any(axis=1), mask.argmax(axis=1), 0)

        def readfirst(m, g):
            mask, _, _ = g.exec_info(m)
            val = np.broadcast_to(rd(m, g), (len(g), 64))
            wr(m, g, val[np.arange(len(g)), first(m, g, mask)])
        return Op(ins, readfirst, lanes=_one_lane(first))
    if base == "v_writelane_b32":
        di, val, lane = ops[0].index, scalar_reader(ops[1]), scalar_reader(ops[2])

        def writelane(m, g):
            ln = np.broadcast_to((np.asarray(lane(m, g), U32) & U32(63)).astype(I64), (len(g),))
            v = np.broadcast_to(np.asarray(val(m, g), U32), (len(g),))
            cur = m.v[di][g.sel].copy()
            cur[np.arange(len(g)), ln] = v
            m.v[di][g.sel] = cur
            if m.checked:
                init = m.v_init[di][g.sel].copy()
                init[np.arange(len(g)), ln] = True
                m.v_init[di][g.sel] = init
        # it writes one lane of its destination and leaves the others: it reads none of them
        return Op(ins, writelane, lanes=lambda m, g, mask: np.zeros_like(mask))
    # v_mbcnt_lo/hi_u32_b32 vdst, mask, src
    write = vector_writer(ops[0])
    mrd, add = vector_reader(ops[1]), vector_reader(ops[2])
    lanes = np.arange(64, dtype=np.int64)
    hi = base.startswith("v_mbcnt_hi")
    shift = np.clip(lanes - 32 if hi else lanes, 0, 32).astype(U64)
    below = np.where(shift >= 32, U64(0xFFFFFFFF), (U64(1) << shift) - U64(1))

    def mbcnt(m, g):
        mk = np.asarray(mrd(m, g), U32).astype(U64)
        from .sop import popcount
        cnt = popcount(np.broadcast_to(mk, (len(g), 64)) & below)
        write(m, g, (cnt + np.asarray(add(m, g), U32)).astype(U32))
    return Op(ins, mbcnt)


def _div(ins: Instruction, base: str, enc: str) -> Op:
    """v_div_scale/fmas/fixup for f32 and f64, following the ISA pseudocode."""
    wide = base.endswith("f64")
    t, bits, ft = ("f64", 64, F64) if wide else ("f32", 32, F32)
    raw_t = U64 if wide else U32
    ops = list(ins.operands)
    if base.startswith("v_div_scale"):
        dst, vcc_dst, srcs = ops[0], ops[1], ops[2:]
        src = Sources(ins, enc, srcs, [t] * 3, [])
        write, cw = vector_writer(dst, bits), scalar_writer(vcc_dst, 64)
        k, big_diff, tiny_exp = (128, 768, 53) if wide else (64, 96, 23)
        tiny = np.finfo(ft).tiny

        def scale(m, g):
            raws, _ = src.read(m, g)
            s0, s1, s2 = [np.broadcast_to(to_typed(r, t), (len(g), 64)) for r in raws]
            if not wide:
                refuse_flushed(m, g, ins, s0, s1, s2)
            e1, e2 = _exp(s1, wide), _exp(s2, wide)
            q = np.abs(s2.astype(F64) / s1.astype(F64)).astype(ft)
            rc = np.abs(1.0 / s1.astype(F64))
            q_den = (q < tiny) & (q != 0)
            rc_den = (rc < np.finfo(F64).tiny) & (rc != 0)
            s1_den = (np.abs(s1) < tiny) & (s1 != 0)
            up, down = np.ldexp(s0, k).astype(ft), np.ldexp(s0, -k).astype(ft)
            conds = [
                ((s2 == 0) | (s1 == 0), np.full(s0.shape, np.nan, ft), False),
                (e2 - e1 >= big_diff, np.where(s0 == s1, up, s0), True),
                (s1_den, up, False),
                (rc_den & q_den, np.where(s0 == s1, up, s0), True),
                (rc_den, down, False),
                (q_den, np.where(s0 == s2, up, s0), True),
                (e2 <= tiny_exp, up, False),
            ]
            d, vcc, done = s0.astype(ft), np.zeros(s0.shape, bool), np.zeros(s0.shape, bool)
            for cond, val, sets_vcc in conds:
                hit = cond & ~done
                d = np.where(hit, val, d)
                if sets_vcc:
                    vcc |= hit
                done |= cond
            if not wide:
                refuse_flushed(m, g, ins, d)
            write(m, g, d.astype(ft).view(raw_t))
            mask, _, _ = g.exec_info(m)
            cw(m, g, pack_lanes(vcc & mask))
        return Op(ins, scale)
    dst, srcs = ops[0], ops[1:4]
    src = Sources(ins, enc, srcs, [t] * 3, [])
    write = vector_writer(dst, bits)
    if base.startswith("v_div_fmas"):
        vcc = lane_mask_reader(Operand("special", "vcc", name="vcc", count=2))
        k, ebias = (128, 1023) if wide else (64, 127)

        def fmas(m, g):
            raws, _ = src.read(m, g)
            a, b, c = [np.broadcast_to(to_typed(r, t), (len(g), 64)) for r in raws]
            r = fma64(a, b, c) if wide else fma32(a, b, c)
            # undo div_scale: a scaled-down denominator (large quotient) or scaled-up numerator
            undo = np.where(_exp(c, wide) > ebias, np.ldexp(r, k), np.ldexp(r, -k)).astype(ft)
            out = np.where(vcc(m, g), undo, r).astype(ft)
            if not wide:
                refuse_flushed(m, g, ins, a, b, c, out)
            write(m, g, out.view(raw_t))
        return Op(ins, fmas)

    def fixup(m, g):
        raws, _ = src.read(m, g)
        q, den, num = [np.broadcast_to(to_typed(r, t), (len(g), 64)) for r in raws]
        sign = np.signbit(den) ^ np.signbit(num)
        inf, zero = np.where(sign, ft(-np.inf), ft(np.inf)), np.where(sign, ft(-0.0), ft(0.0))
        out = np.where(sign, -np.abs(q), np.abs(q))
        out = np.where(np.isinf(den) | (num == 0), zero, out)
        out = np.where((den == 0) | np.isinf(num), inf, out)
        out = np.where(((den == 0) & (num == 0)) | (np.isinf(den) & np.isinf(num)), ft(np.nan), out)
        out = np.where(np.isnan(den), den, out)
        out = np.where(np.isnan(num), num, out)
        if not wide:
            refuse_flushed(m, g, ins, q, den, num, out)
        write(m, g, np.asarray(out, ft).view(raw_t))
    return Op(ins, fixup)


def _exp(x, wide: bool) -> np.ndarray:
    """Biased exponent field."""
    if wide:
        return ((np.asarray(x, F64).view(U64) >> U64(52)) & U64(0x7FF)).astype(I64)
    return ((np.asarray(x, F32).view(U32) >> U32(23)) & U32(0xFF)).astype(I64)


def _misc(ins: Instruction, base: str, enc: str) -> Op:
    ops = list(ins.operands)
    if base == "v_swap_b32":
        a, b = ops[0].index, ops[1].index

        def swap(m, g):
            x, y = m.v[a][g.sel].copy(), m.v[b][g.sel].copy()
            m.vwrite(g, m.v, a, y)
            m.vwrite(g, m.v, b, x)
        return Op(ins, swap)
    if base in ("v_mad_u64_u32", "v_mad_i64_i32"):
        signed = base == "v_mad_i64_i32"
        dst, cdst, srcs = ops[0], ops[1], ops[2:]
        t = "i32" if signed else "u32"
        src = Sources(ins, enc, srcs, [t, t, "u64"], [])
        write = vector_writer(dst, 64)
        cw = scalar_writer(cdst, 64) if not (cdst.kind == "special" and cdst.name == "null") else None

        def mad64(m, g):
            raws, _ = src.read(m, g)
            a, b = to_typed(raws[0], t), to_typed(raws[1], t)
            c = np.asarray(raws[2], U64)
            if signed:
                prod = a.astype(I64) * b.astype(I64)
                res = prod.view(U64) + c
                carry = np.zeros(np.shape(res), bool)
            else:
                prod = a.astype(U64) * b.astype(U64)
                res = prod + c
                carry = res < prod
            write(m, g, res)
            if cw is not None:
                mask, _, _ = g.exec_info(m)
                cw(m, g, pack_lanes(np.broadcast_to(carry, (len(g), 64)) & mask))
        return Op(ins, mad64)
    raise UnsupportedInstruction(ins.mnemonic, ins.address)


def _fp8(ins: Instruction, base: str, enc: str, ctx: Context) -> Op:
    """fp8/bf8 conversions, in the processor's formats (FNUZ on gfx942, OCP E4M3/E5M2 on gfx950)."""
    ops = list(ins.operands)
    if base in ("v_cvt_f32_fp8", "v_cvt_f32_bf8", "v_cvt_pk_f32_fp8", "v_cvt_pk_f32_bf8"):
        fmt = ctx.fp8_format("fp8" if "fp8" in base else "bf8")
        pk = "_pk_" in base
        dst = ops[0]
        rd = vector_reader(ops[1])
        opsel = ins.modifier_bits("op_sel", 2)
        if enc == "sdwa":
            sel = ins.modifier("src0_sel") or "DWORD"
            start = {"BYTE_0": 0, "BYTE_1": 1, "BYTE_2": 2, "BYTE_3": 3, "WORD_0": 0, "WORD_1": 2, "DWORD": 0}[sel]
        else:  # VOP3 op_sel picks the word (pk) or the byte (op_sel[1] is the high bit)
            start = 2 * opsel[0] if pk else (opsel[1] << 1) | opsel[0]
        write = vector_writer(dst, 64 if pk else 32)

        def cvt8(m, g):
            raw = np.asarray(rd(m, g), U32)
            b0 = numeric.fp8_to_f32(((raw >> U32(8 * start)) & U32(0xFF)).astype(np.uint8), fmt).astype(U32)
            if pk:
                b1 = numeric.fp8_to_f32(((raw >> U32(8 * start + 8)) & U32(0xFF)).astype(np.uint8), fmt).astype(U32)
                write(m, g, b0.astype(U64) | (b1.astype(U64) << U64(32)))
            else:
                write(m, g, b0)
        return Op(ins, cvt8)
    if base in ("v_cvt_pk_fp8_f32", "v_cvt_pk_bf8_f32", "v_cvt_sr_fp8_f32", "v_cvt_sr_bf8_f32"):
        fmt = ctx.fp8_format("fp8" if "fp8" in base else "bf8")
        sr = "_sr_" in base
        dst = ops[0]
        src = Sources(ins, enc, ops[1:3], ["f32", "f32" if not sr else "u32"], [])
        opsel = ins.modifier_bits("op_sel", 3)
        clamp = "clamp" in ins.modifiers
        write = vector_writer(dst)
        dreg = dst.index

        def cvt(m, g):
            raws, _ = src.read(m, g)
            old = m.v[dreg][g.sel]
            if sr:
                b = numeric.f32_to_fp8(np.broadcast_to(raws[0], (len(g), 64)), fmt, clamp, "sr",
                                       np.broadcast_to(raws[1], (len(g), 64))).astype(U32)
                sh = U32(8 * ((opsel[2] << 1) | opsel[1]))
                out = (old & ~(U32(0xFF) << sh)) | (b << sh)
            else:
                lo = numeric.f32_to_fp8(np.broadcast_to(raws[0], (len(g), 64)), fmt, clamp).astype(U32)
                hi = numeric.f32_to_fp8(np.broadcast_to(raws[1], (len(g), 64)), fmt, clamp).astype(U32)
                word = lo | (hi << U32(8))
                out = (old & U32(0xFFFF)) | (word << U32(16)) if opsel[2] else (old & U32(0xFFFF0000)) | word
            write(m, g, out)
        return Op(ins, cvt)
    raise UnsupportedInstruction(ins.mnemonic, ins.address)


def _bitop3(ins: Instruction, base: str, enc: str) -> Op:
    """`v_bitop3_b32 vdst, s0, s1, s2 bitop3:T` (gfx950): each result bit is bit (s0 << 2 | s1 << 1 | s2)
    of the truth table T (LLVM 22 compiles (a & ~b) | c to `v_bitop3_b32 a, c, b bitop3:0xdc`)."""
    table = int(ins.modifier("bitop3") or "0", 0)
    src = Sources(ins, enc, list(ins.operands[1:4]), ["u32", "u32", "u32"], [])
    write = vector_writer(ins.operands[0])
    ones = U32(0xFFFFFFFF)

    def run(m, g):
        (a, b, c), _ = src.read(m, g)
        a, b, c = (np.asarray(x, U32) for x in (a, b, c))
        out = np.zeros(np.broadcast_shapes(a.shape, b.shape, c.shape), U32)
        for idx in range(8):
            if table >> idx & 1:
                out |= (a if idx & 4 else a ^ ones) & (b if idx & 2 else b ^ ones) & (c if idx & 1 else c ^ ones)
        write(m, g, out)
    return Op(ins, run)


def _cvt_scale_fp4(ins: Instruction, base: str, enc: str) -> Op:
    """`v_cvt_scalef32_pk_fp4_f32 vdst, src0, src1, scale` (gfx950): src0 / scale and src1 / scale as
    E2M1 (`numeric.f32_to_fp4`) in the low and high nibble of byte `op_sel[2] | op_sel[3] << 1` of
    vdst, its other bytes kept (LLVM 22 compiles llvm.amdgcn.cvt.scalef32.pk.fp4.f32's byte index
    1 to op_sel:[0,0,1,0], 2 to [0,0,0,1]; Composable Kernel packs src1 << 4 | src0). Only a scale
    that is a positive normal power of two (an E8M0 scale, as MX kernels pass) and finite inputs are
    modelled: anything else raises when a lane meets it."""
    ops = list(ins.operands)
    opsel = ins.modifier_bits("op_sel", 4)
    if opsel[0] or opsel[1] or ins.modifier("clamp") is not None:
        raise UnsupportedInstruction(ins.mnemonic, ins.address, "op_sel[0:1] / clamp")
    src = Sources(ins, enc, ops[1:4], ["f32", "f32", "f32"], [])
    write = vector_writer(ops[0])
    dreg, shift = ops[0].index, U32(8 * (opsel[2] | opsel[3] << 1))

    def run(m, g):
        (a, b, scale), _ = src.read(m, g)
        mask, _, _ = g.exec_info(m)
        shape = (len(g), 64)
        a, b, scale = (np.broadcast_to(np.asarray(x, U32), shape) for x in (a, b, scale))
        exp = (scale >> U32(23)).astype(np.int64)
        bad_scale = ((scale & U32(0x807FFFFF)) != 0) | (exp == 0) | (exp == 255)
        special = ((a & U32(0x7F800000)) == U32(0x7F800000)) | ((b & U32(0x7F800000)) == U32(0x7F800000))
        if (mask & (bad_scale | special)).any():
            raise UnsupportedInstruction(ins.mnemonic, ins.address,
                                         "a scale that is not a normal power of two, or a NaN/infinite input")
        factor = np.ldexp(1.0, 127 - np.where(mask, exp, 127))
        lo, hi = (numeric.f32_to_fp4(numeric.as_u32((numeric.as_f32(x).astype(np.float64) * factor).astype(F32)))
                  .astype(U32) for x in (a, b))
        old = m.v[dreg][g.sel]
        write(m, g, (old & ~(U32(0xFF) << shift)) | ((lo | (hi << U32(4))) << shift))
    return Op(ins, run)


def _permlane_swap(ins: Instruction, base: str, enc: str) -> Op:
    """`v_permlane16_swap_b32 vdst, src0` (gfx950): the odd 16-lane rows of vdst trade places with the
    even rows of src0; `v_permlane32_swap_b32`: rows 2-3 of vdst with rows 0-1 of src0 (LLVM's
    llvm.amdgcn.permlane16/32.swap). Both registers are written. Only a whole wave (EXEC all ones, no
    fi/bound_ctrl) is modelled: anything else raises."""
    if ins.modifier("fi") is not None or ins.modifier("bound_ctrl") is not None:
        raise UnsupportedInstruction(ins.mnemonic, ins.address, "fi/bound_ctrl")
    dst, src = ins.operands[0], ins.operands[1]
    if dst.kind != "vgpr" or src.kind != "vgpr":
        raise UnsupportedInstruction(ins.mnemonic, ins.address, "operands must be VGPRs")
    lane = np.arange(64)
    moved = (lane // 16) % 2 == 1 if "16" in base else lane >= 32   # the lanes of vdst that move
    shift = 16 if "16" in base else 32
    d, s_ = dst.index, src.index

    def run(m, g):
        mask, full, _ = g.exec_info(m)
        if not full and not np.all(mask):
            raise UnsupportedInstruction(ins.mnemonic, ins.address, "EXEC not all ones")
        old_d, old_s = m.v[d][g.sel].copy(), m.v[s_][g.sel].copy()
        if d == s_:
            new = old_d.copy()
            new[:, moved] = old_d[:, lane[moved] - shift]
            new[:, lane[moved] - shift] = old_d[:, moved]
            m.vwrite(g, m.v, d, new)
            return
        new_d, new_s = old_d.copy(), old_s.copy()
        new_d[:, moved] = old_s[:, lane[moved] - shift]
        new_s[:, lane[moved] - shift] = old_d[:, moved]
        m.vwrite(g, m.v, d, new_d)
        m.vwrite(g, m.v, s_, new_s)
    return Op(ins, run)


_SPECIAL = {
    "v_readlane_b32": _lane_ops, "v_readfirstlane_b32": _lane_ops, "v_writelane_b32": _lane_ops,
    "v_mbcnt_lo_u32_b32": _lane_ops, "v_mbcnt_hi_u32_b32": _lane_ops, "v_cndmask_b32": _cndmask,
}
for _n in ("add_co", "sub_co", "subrev_co", "addc_co", "subb_co", "subbrev_co"):
    _SPECIAL[f"v_{_n}_u32"] = _carry
for _n in ("v_div_scale_f32", "v_div_scale_f64", "v_div_fmas_f32", "v_div_fmas_f64", "v_div_fixup_f32",
           "v_div_fixup_f64"):
    _SPECIAL[_n] = _div
for _n in ("v_swap_b32", "v_mad_u64_u32", "v_mad_i64_i32"):
    _SPECIAL[_n] = _misc
for _n in ("v_permlane16_swap_b32", "v_permlane32_swap_b32"):
    _SPECIAL[_n] = _permlane_swap
_SPECIAL["v_cvt_scalef32_pk_fp4_f32"] = _cvt_scale_fp4
_SPECIAL["v_bitop3_b32"] = _bitop3
_FP8 = frozenset({"v_cvt_f32_fp8", "v_cvt_f32_bf8", "v_cvt_pk_f32_fp8", "v_cvt_pk_f32_bf8", "v_cvt_pk_fp8_f32",
                  "v_cvt_pk_bf8_f32", "v_cvt_sr_fp8_f32", "v_cvt_sr_bf8_f32"})


def compile_vop(ins: Instruction, ctx: Context) -> Op:
    base, enc = split_name(ins.mnemonic)
    if base in ("v_nop",):
        return Op(ins, lambda m, g: None)
    if base.startswith("v_cmp"):
        return _vopc(ins, base, enc)
    if base in _FP8:
        return _fp8(ins, base, enc, ctx)
    if base in _SPECIAL:
        return _SPECIAL[base](ins, base, enc)
    spec = TABLE.get(base)
    if spec is None:
        raise UnsupportedInstruction(ins.mnemonic, ins.address)
    return _generic(ins, base, enc, spec)
