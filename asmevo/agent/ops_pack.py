"""Packed FP32: two independent f32 adds, multiplies or FMAs whose results form an aligned VGPR pair
become one `v_pk_add_f32` / `v_pk_mul_f32` / `v_pk_fma_f32`.

CDNA3 issues a packed FP32 instruction at the rate of one unpacked one while computing both halves: the
FP32 vector peak AMD quotes for MI300X (163.4 TFLOPS) is twice what one FMA per lane gives (304 CUs x 4
SIMDs x 16 lanes x 2 flops x 2.1 GHz = 81.7), which only packed FP32 reaches, and the timing model
charges a v_pk_*_f32 one issue slot like any full-rate VALU op (asmevo/isa/table.py). So a pair costs
one issue slot instead of two: worth it where SIMD issue bounds a kernel. Each half is the unpacked operation
(IEEE single precision, same rounding; `neg_lo`/`neg_hi` negate a source like VOP3's `neg`), each
source pair is an aligned register pair whose halves `op_sel` (low result) and `op_sel_hi` (high
result) choose. Sources must be registers (no literal in VOP3P on gfx9; inline constants are left
alone) with at most one SGPR pair (the constant bus), and no `abs` or output modifier (VOP3P has neither);
clamped ops are left alone too."""
from __future__ import annotations

from ..isa.instruction import Instruction
from ..isa.operands import Operand
from .body import FLOAT_MODE_WRITERS, Body, across_block, make_item

PACKED = {"v_add_f32": "v_pk_add_f32", "v_mul_f32": "v_pk_mul_f32", "v_fma_f32": "v_pk_fma_f32",
          "v_fmac_f32": "v_pk_fma_f32"}
_WINDOW = 32  # instructions after the first of a pair searched for its partner


def _sources(ins: Instruction, base: str) -> list[Operand] | None:
    """The sources of an unpacked f32 op in VOP3P order (v_fmac's accumulator is its destination),
    None when one cannot be packed."""
    if ins.modifiers or ins.mnemonic.endswith(("_dpp", "_sdwa")):
        return None
    srcs = list(ins.operands[1:]) + ([ins.operands[0]] if base == "v_fmac_f32" else [])
    if any(op.kind not in ("vgpr", "sgpr") or op.count != 1 or op.abs or op.sext for op in srcs):
        return None
    return srcs


def packable(body: Body, i: int) -> bool:
    return body.infos[i].base in PACKED


def _flags(name: str, values: list[int], default: int) -> str:
    return "" if all(v == default for v in values) else f" {name}:[{','.join(map(str, values))}]"


def _packed_text(base: str, lo: Instruction, hi: Instruction) -> str | None:
    """The packed instruction computing `lo` into the even and `hi` into the odd register of a pair."""
    lo_srcs, hi_srcs = _sources(lo, base), _sources(hi, base)
    if lo_srcs is None or hi_srcs is None or len(lo_srcs) != len(hi_srcs):
        return None
    pairs, sel, sel_hi, neg_lo, neg_hi = [], [], [], [], []
    for a, b in zip(lo_srcs, hi_srcs):
        if a.kind != b.kind or a.index // 2 != b.index // 2:
            return None
        p = a.index - a.index % 2
        pairs.append(f"{a.kind[0]}[{p}:{p + 1}]")
        sel.append(a.index - p)
        sel_hi.append(b.index - p)
        neg_lo.append(int(a.neg))
        neg_hi.append(int(b.neg))
    if len({s for s in pairs if s.startswith("s")}) > 1:
        return None
    d = lo.operands[0].index
    return (f"{PACKED[base]} v[{d}:{d + 1}], {', '.join(pairs)}" + _flags("op_sel", sel, 0)
            + _flags("op_sel_hi", sel_hi, 1) + _flags("neg_lo", neg_lo, 0) + _flags("neg_hi", neg_hi, 0))


def _movable_to(body: Body, i: int, j: int) -> bool:
    """Whether instruction j can execute at i's place (i < j, one block): no instruction from i on
    writes what j reads or j's destinations, none after i reads j's destinations, and none changes
    the float mode."""
    info = body.infos[j]
    for k in range(i, j):
        other = body.infos[k]
        if other.defs & (info.uses | info.defs) or other.base in FLOAT_MODE_WRITERS:
            return False
        if k > i and other.uses & info.defs:
            return False
    return True


def pack_f32(body: Body, i: int) -> Body | None:
    """Pack instruction i with the first later instruction of its block that computes the same f32
    operation into the other register of i's destination pair and can run at i's place."""
    first = body.instructions[i]
    base = body.infos[i].base
    if base not in PACKED or first.operands[0].kind != "vgpr" or first.operands[0].count != 1:
        return None
    d = first.operands[0].index
    blk = body.cfg.blocks[body.cfg.block_of[i]]
    for j in range(i + 1, min(blk.end, i + 1 + _WINDOW)):
        second = body.instructions[j]
        dst = second.operands[0] if second.operands else None
        if body.infos[j].base != base or dst is None or dst.kind != "vgpr" or dst.count != 1 or dst.index != d ^ 1:
            continue
        if not _movable_to(body, i, j):
            continue
        lo, hi = (first, second) if d % 2 == 0 else (second, first)
        text = _packed_text(base, lo, hi)
        if text is None:
            continue
        items = list(body.items)
        items[body.pos[i]] = make_item(text)
        del items[body.pos[j]]
        return body.replace(items)
    return None


def pack_f32_block(body: Body, i: int) -> Body | None:
    """pack_f32 at every instruction of instruction i's block, first to last."""
    return across_block(body, i, pack_f32)
