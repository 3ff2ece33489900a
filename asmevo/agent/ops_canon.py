"""Redundant canonicalizes: in IEEE mode a float min/max returns a quieted NaN for a signalling NaN
operand, so compiled code canonicalizes every operand of an fmaxnum/fminnum that might be one; in the
suites' kernels that is `v_max_f32 vD, vS, vS`. Online softmax (24_LogSoftmax, 23_Softmax) and max pooling
(42_Max_Pooling_2D) re-canonicalize their running maximum on every iteration, though it is already canonical.

IEEE mode: "floating point opcodes that support exception flag gathering quiet and propagate signaling NaN
inputs per IEEE 754-2008" (the AMD ISA manual's IEEE bit, quoted in LLVM review D77013). With both
operands vS, V_MAX_F32 (and V_MIN_F32) returns vS for every number (the two zeros compare by sign, equal
here), flushes a denormal when the f32 denormal mode flushes, and for a quiet NaN returns a quiet NaN: the
same bits under IEEE 754-2008 maxNum (a NaN operand yields the other operand, here itself), an assumption
the emulator cannot check (its max is numpy's fmax). So on a value that is no signalling NaN and, when
flushing, no denormal, the instruction is a move (deleted when vD is vS). A value is that when every write
whose value a lane may see (`asmevo.agent.lanes`) is a float operation (its result quieted, and flushed
when the mode flushes), an integer-to-float conversion, a constant that is neither, or a move or select of
such values, a DPP move included (a cross-lane reduction's partner value). Refused when the kernel starts
outside IEEE mode or the body may change a MODE bit other than FP16_OVFL (bit 23: it clamps overflowed f16
results only, CDNA3 ISA guide, MODE register; vllm_per_token_group_quant_fp8 sets it for its fp8
conversions): the round and denormal modes, IEEE and the exception enables all bear on a canonicalize."""
from __future__ import annotations

import struct

from ..isa.hazards import hwreg_field
from ..isa.instruction import Instruction
from ..isa.operands import Operand
from ..isa.regs import reads_destination
from .body import FLOAT_MODE_WRITERS, Body, across_block, make_item
from .lanes import Lanes, lanes_of
from .ops_cleanup import propagate_move
from .webs import ENTRY, NotAnalysable, webs_of

CANONICALIZES = ("v_max_f32_e32", "v_max_f32_e64", "v_min_f32_e32", "v_min_f32_e64")
# Float operations whose f32 results are quieted (and flushed when the mode flushes).
_FLOAT_OPS = frozenset({
    "v_add_f32", "v_sub_f32", "v_subrev_f32", "v_mul_f32", "v_fma_f32", "v_fmac_f32", "v_fmaak_f32",
    "v_fmamk_f32", "v_mad_f32", "v_mac_f32", "v_max_f32", "v_min_f32", "v_med3_f32", "v_exp_f32", "v_log_f32",
    "v_rcp_f32", "v_rsq_f32", "v_sqrt_f32", "v_ldexp_f32", "v_pk_add_f32", "v_pk_mul_f32", "v_pk_fma_f32",
    "v_cvt_f32_i32", "v_cvt_f32_u32"})
_COPIES = ("v_mov_b32", "v_cndmask_b32")
_FP16_OVFL = 1 << 23


def _changes_float_mode(ins: Instruction, base: str) -> bool:
    """Whether `ins` may change a MODE bit a canonicalize depends on: every float mode writer does,
    except an `s_setreg` of a MODE field within FP16_OVFL."""
    if base not in FLOAT_MODE_WRITERS:
        return False
    field = hwreg_field(ins.operands[0].text) if base.startswith("s_setreg") and ins.operands else None
    if field is None or field[0] != "HW_REG_MODE":
        return True
    _, offset, size = field
    return (((1 << size) - 1) << offset) & ~_FP16_OVFL != 0


def constant_bits(op: Operand) -> int:
    """The 32 bits of a constant operand (an f32 written as a float, or an integer)."""
    if op.kind == "float":
        return struct.unpack("<I", struct.pack("<f", op.value))[0]
    return op.value & 0xFFFFFFFF


def _canonical_constant(op: Operand, flushing: bool) -> bool:
    bits = constant_bits(op)
    exponent, mantissa = bits >> 23 & 0xFF, bits & 0x7FFFFF
    signalling = exponent == 0xFF and mantissa and not mantissa & 0x400000
    return not signalling and not (flushing and exponent == 0 and mantissa)


def _dpp_canonical(body: Body, lanes: Lanes, d: int, seen: set[tuple[int, int]]) -> bool:
    """Whether DPP instruction d writes canonical values (CDNA3 ISA "DPP"): a lane it writes gets a float
    operation's result or, for `v_mov_b32`, its source in an active lane, or 0 (with bound_ctrl an invalid or
    inactive source lane reads 0: LLVM's AMDGPUModifierSyntax, `bound_ctrl`); a lane a row or bank mask (or,
    without bound_ctrl, an invalid source lane) leaves keeps its old value, which must be canonical too."""
    ins, info = body.instructions[d], body.infos[d]
    dst, src = ins.operands[0], ins.operands[1]
    if dst.kind != "vgpr" or dst.count != 1:
        return False
    if reads_destination(ins, body.processor) and not _read_canonical(body, lanes, d, dst.index, seen):
        return False
    if info.base in _FLOAT_OPS:
        return True
    return (info.base == "v_mov_b32" and src.kind == "vgpr" and src.count == 1
            and _read_canonical(body, lanes, d, src.index, seen))


def _pk_mov_canonical(body: Body, lanes: Lanes, d: int, reg: int, seen: set[tuple[int, int]]) -> bool:
    """Whether `v_pk_mov_b32` d writes a canonical value into VGPR `reg` (one half of its pair): the low half
    is source 0's dword `op_sel[0]` picks, the high half source 1's dword `op_sel[1]` picks (CDNA3 ISA,
    VOP3P; `asmevo.isa.regs`)."""
    ins = body.instructions[d]
    half = reg - ins.operands[0].index
    src = ins.operands[1 + half]
    sel = ins.modifier("op_sel")
    pick = int(sel.strip("[]").split(",")[half]) if sel else 0
    if src.kind in ("imm", "float"):
        return _canonical_constant(src, body.float_mode.denorm32 == 0)
    return src.kind == "vgpr" and src.count == 2 and not (src.abs or src.neg) \
        and _read_canonical(body, lanes, d, src.index + pick, seen)


def _written_canonical(body: Body, lanes: Lanes, d: int, reg: int, seen: set[tuple[int, int]]) -> bool:
    """Whether instruction d writes a canonical value into VGPR `reg`."""
    ins, info = body.instructions[d], body.infos[d]
    if ins.mnemonic.endswith("_sdwa"):
        return False
    if ins.mnemonic.endswith("_dpp"):
        return _dpp_canonical(body, lanes, d, seen)
    if info.base in _FLOAT_OPS:
        return True
    if info.base == "v_pk_mov_b32":
        return _pk_mov_canonical(body, lanes, d, reg, seen)
    if info.base not in _COPIES:
        return False
    sources = ins.operands[1:3] if info.base == "v_cndmask_b32" else ins.operands[1:2]
    flushing = body.float_mode.denorm32 == 0
    for op in sources:
        if op.kind in ("imm", "float"):
            if not _canonical_constant(op, flushing):
                return False
        elif op.kind != "vgpr" or op.count != 1 or not _read_canonical(body, lanes, d, op.index, seen):
            return False
    return True


def _read_canonical(body: Body, lanes: Lanes, i: int, reg: int, seen: set[tuple[int, int]]) -> bool:
    """Whether VGPR `reg` read at instruction i is canonical: every write whose value a lane may see there
    is. A read met again on the way counts as canonical (the writes outside the cycle decide)."""
    writes = lanes.reaching_writes(i, reg)
    if not writes or ENTRY in writes:
        return False
    if (i, reg) in seen:
        return True
    seen.add((i, reg))
    return all(_written_canonical(body, lanes, d, reg, seen) for d in writes)


def canonicalize(body: Body, i: int) -> bool:
    """Instruction i is `v_max_f32 vD, vS, vS` (or v_min) of one VGPR, no modifiers."""
    ins = body.instructions[i]
    if ins.mnemonic not in CANONICALIZES or ins.modifiers or len(ins.operands) != 3:
        return False
    dst, a, b = ins.operands
    return a.text == b.text and a.kind == "vgpr" and a.count == 1 and not (a.abs or a.neg) \
        and dst.kind == "vgpr" and dst.count == 1


def remove_canonicalize(body: Body, i: int) -> Body | None:
    """Instruction i, `v_max_f32 vD, vS, vS` (or v_min) on a canonical vS, deleted (vD = vS) or made a
    move that `propagate_move` then removes where it can."""
    if not canonicalize(body, i):
        return None
    mode = body.float_mode
    dst, a, _ = body.instructions[i].operands
    if not mode.ieee or mode.denorm32 not in (0, 3) or any(
            _changes_float_mode(x, info.base) for x, info in zip(body.instructions, body.infos)):
        return None
    try:
        lanes = lanes_of(body)
    except NotAnalysable:
        return None
    if not _read_canonical(body, lanes, i, a.index, set()):
        return None
    items = list(body.items)
    if dst.index == a.index:
        del items[body.pos[i]]
        new = body.replace(items)
        return new if new.no_worse(body) else None
    items[body.pos[i]] = make_item(f"v_mov_b32_e32 {dst.text}, {a.text}")
    moved = body.replace(items)
    new = propagate_move(moved, i) or moved
    return new if new.no_worse(body) else None


def remove_canonicalizes(body: Body, i: int) -> Body | None:
    """remove_canonicalize at every canonicalize of instruction i's block, first to last."""
    return across_block(body, i, remove_canonicalize)
