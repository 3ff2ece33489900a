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
