"""Instruction costs read the instruction table of the code object's processor."""
import pytest

from asmevo.errors import UnsupportedInstruction
from asmevo.isa.instruction import parse_instruction
from asmevo.model.costs import SLOT, cost


def test_gfx950_costs_use_the_gfx950_table():
    """The f64 16x16x4 DGEMM occupies the matrix core 16 passes on gfx950 (SIDPGFX950FullSpeedModel), 8 on
    gfx942; a CDNA4-only instruction costs like any VALU on gfx950 and is unknown to gfx942's table."""
    dgemm = parse_instruction("v_mfma_f64_16x16x4_f64 v[0:7], v[8:9], v[10:11], v[0:7]")
    assert cost(dgemm).unit == 8 * SLOT and cost(dgemm, processor="gfx950").unit == 16 * SLOT
    bitop3 = parse_instruction("v_bitop3_b32 v0, v1, v2, v3 bitop3:0x6c")
    assert cost(bitop3, processor="gfx950").cls == cost(parse_instruction("v_xor_b32 v0, v1, v2")).cls
    with pytest.raises(UnsupportedInstruction):
        cost(bitop3)


def test_f8f6f4_mfma_cost_follows_its_formats():
    """An f8f6f4 MFMA with fp4 A and B holds the matrix core half as long as with an fp8 operand
    (4 against 8 passes, SISchedule.td), and its result arrives 4 passes sooner."""
    fp8 = parse_instruction("v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:11], v[12:19], a[0:3], v1, v2 cbsz:0 blgp:0")
    fp4 = parse_instruction("v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:7], v[12:15], a[0:3], v1, v2 cbsz:4 blgp:4")
    c8, c4 = cost(fp8, processor="gfx950"), cost(fp4, processor="gfx950")
    assert (c8.unit, c4.unit) == (8 * SLOT, 4 * SLOT)
    assert c8.latency - c4.latency == 4 * SLOT
