"""MODE's float bits: a launch starts with the kernel descriptor's; f32 denormals are flushed or kept as the
f32 FP_DENORM field says, min/max quiet a signalling NaN only with IEEE set, `clamp` zeroes NaN only with
DX10_CLAMP set; a rounding mode other than nearest-even, flushed f16/f64 denormals, or an s_setreg of any
float bit but the f32 denormal field is refused."""
from __future__ import annotations

import numpy as np
import pytest

from asmevo.errors import UnsupportedInstruction
from emutools import asm, launch_raw
from test_valu import EPI, PRO, with_wait_states

SNAN32, QNAN32 = 0x7F800001, 0x7FC00000
DENORM, NEG_DENORM = 0x00000001, 0x807FFFFF  # the smallest positive and the largest negative f32 denormal


def run(body: str, a, b=None, *, denorm32: int = 3, extra: str = "") -> np.ndarray:
    """v4 after `body` on 64 lanes with v1 = a and v2 = b."""
    arrs = [np.asarray(x, np.uint32).copy() if x is not None else np.zeros(64, np.uint32) for x in (a, b, None)]
    co = asm(PRO + with_wait_states(body) + EPI, denorm32=denorm32, extra=extra)
    res = launch_raw(co, "k", (1,), (64,), arrs + [np.zeros(64, np.uint32)])
    assert res.report.ok, res.report.findings
    return res.outputs[3]


def lanes(*values: int) -> np.ndarray:
    return np.resize(np.array(values, np.uint32), 64)


@pytest.mark.parametrize("directive", [".amdhsa_float_denorm_mode_16_64 1", ".amdhsa_float_round_mode_32 1",
                                       ".amdhsa_float_round_mode_16_64 2"])
def test_a_descriptor_asking_for_an_unimplemented_float_mode_is_refused(directive):
    with pytest.raises(UnsupportedInstruction, match="kernel descriptor.*float MODE"):
        run("v_mov_b32 v4, 1", lanes(0), extra=directive)


@pytest.mark.parametrize("denorm32,ieee,dx10", [(3, 1, 1), (0, 0, 0), (1, 1, 0)])
def test_getreg_reads_the_descriptors_float_bits(denorm32, ieee, dx10):
    extra = f".amdhsa_ieee_mode {ieee}\n  .amdhsa_dx10_clamp {dx10}"
    out = run("s_getreg_b32 s20, hwreg(HW_REG_MODE, 0, 10)\n  v_mov_b32 v4, s20", lanes(0), denorm32=denorm32,
              extra=extra)
    assert set(out) == {0xC0 | denorm32 << 4 | dx10 << 8 | ieee << 9}


@pytest.mark.parametrize("denorm32,expected", [(3, [DENORM, NEG_DENORM]), (0, [0, 0x80000000]),
                                               (1, [0, 0x80000000]), (2, [DENORM, NEG_DENORM])])
def test_f32_denormal_outputs_follow_the_output_bit(denorm32, expected):
    """ldexp of normal inputs down into the denormal range: kept with bit 1, else flushed to a signed zero."""
    a = lanes(0x00800000, 0x80FFFFFE)  # 2^-126 and -(2^-125 - 2^-148)
    out = run("v_ldexp_f32 v4, v1, -1", a, denorm32=denorm32)
    assert out[:2].tolist() == ([0x00400000, 0x807FFFFF] if denorm32 & 2 else [0, 0x80000000])
    if denorm32 & 1:  # kept input denormals pass through an add of +0 (and come out per the output bit)
        got = run("v_add_f32 v4, 0, v1", lanes(DENORM, NEG_DENORM), denorm32=denorm32)
        assert got[:2].tolist() == expected


@pytest.mark.parametrize("denorm32", [0, 2])
def test_flushed_f32_denormal_inputs_read_as_zero_in_arithmetic_and_compares(denorm32):
    x = lanes(DENORM, NEG_DENORM)
    assert run("v_add_f32 v4, 1.0, v1\n  v_sub_f32 v4, v4, 1.0", x, denorm32=denorm32)[:2].tolist() == [0, 0]
    assert set(run("v_cmp_eq_f32 vcc, 0, v1\n  v_cndmask_b32 v4, 0, 1, vcc", x, denorm32=denorm32)) == {1}
    packed = run("v_mov_b32 v6, v1\n  v_mov_b32 v7, v1\n  v_pk_add_f32 v[12:13], v[6:7], 0\n  v_mov_b32 v4, v13", x,
                 denorm32=denorm32)
    assert packed[:2].tolist() == [0, 0]
    # v_cmp_class tests the bits as given: a denormal is still a denormal
    positive_denormal = 1 << 7
    assert run(f"v_mov_b32 v6, {positive_denormal}\n  v_cmp_class_f32 vcc, v1, v6\n  v_cndmask_b32 v4, 0, 1, vcc", x,
               denorm32=denorm32)[:2].tolist() == [1, 0]


def test_kept_f32_denormal_inputs_stay():
    assert set(run("v_cmp_eq_f32 vcc, 0, v1\n  v_cndmask_b32 v4, 0, 1, vcc", lanes(DENORM), denorm32=3)) == {0}


def test_setreg_may_change_the_f32_denormal_field_and_nothing_else_of_the_float_bits():
    body = "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 2), 3\n  v_add_f32 v4, 0, v1"
    assert set(run(body, lanes(DENORM), denorm32=0)) == {DENORM}
    body = "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 2), 0\n  v_add_f32 v4, 0, v1"
    assert set(run(body, lanes(DENORM), denorm32=3)) == {0}
    for field in ("0, 2), 1", "9, 1), 0", "8, 1), 0", "6, 2), 0"):
        with pytest.raises(UnsupportedInstruction, match="s_setreg_imm32_b32 at pc .*only the f32 denormal"):
            run(f"s_setreg_imm32_b32 hwreg(HW_REG_MODE, {field}\n  v_mov_b32 v4, 1", lanes(0))


@pytest.mark.parametrize("op", ["v_max_f32", "v_min_f32"])
def test_min_max_f32_quiet_a_signalling_nan_in_ieee_mode_only(op):
    a = lanes(SNAN32, 0x3F800000, QNAN32, 0xFFA00000)
    b = lanes(0x40000000, SNAN32 | 0x80000000, 0x40000000, 0x40000000)
    assert run(f"{op} v4, v1, v2", a, b)[:4].tolist() == [SNAN32 | 0x400000, 0xFFC00001, 0x40000000, 0xFFE00000]
    non_ieee = run(f"{op} v4, v1, v2", a, b, extra=".amdhsa_ieee_mode 0")
    assert non_ieee[:4].tolist() == [0x40000000, 0x3F800000, 0x40000000, 0x40000000]


def test_max_f16_and_f64_quiet_a_signalling_nan():
    h = run("v_max_f16 v4, v1, v2", lanes(0x7C01), lanes(0x3C00))  # f16 signalling NaN, 1.0
    assert set(h & 0xFFFF) == {0x7E01}
    lo, hi = lanes(1), lanes(0x7FF00000)  # f64 signalling NaN in v[1:2]
    d = run("v_mov_b32 v12, v1\n  v_mov_b32 v13, v2\n  v_mov_b32 v6, 0\n  v_mov_b32 v7, 0x40000000\n"
            "  v_max_f64 v[8:9], v[12:13], v[6:7]\n  v_mov_b32 v4, v9", lo, hi)
    assert set(d) == {0x7FF80000}


@pytest.mark.parametrize("dx10,expected", [(1, 0), (0, QNAN32)])
def test_clamp_turns_nan_into_zero_only_with_dx10_clamp(dx10, expected):
    out = run("v_add_f32 v4, v1, 0 clamp", lanes(QNAN32, 0x40000000), extra=f".amdhsa_dx10_clamp {dx10}")
    assert out[:2].tolist() == [expected, 0x3F800000]


def test_division_pseudocode_refuses_a_denormal_while_flushing():
    body = "v_div_scale_f32 v4, vcc, v1, v1, 1.0"
    assert run(body, lanes(0x3F800000), denorm32=0)[0] == 0x3F800000
    with pytest.raises(UnsupportedInstruction, match="v_div_scale_f32.*denormal f32 operand"):
        run(body, lanes(DENORM), denorm32=0)
    low_half = np.array([0x3F800000] * 32 + [DENORM] * 32, np.uint32)  # denormals in lanes EXEC leaves out
    run(f"s_mov_b64 exec, 0xffffffff\n  {body}\n  s_mov_b64 exec, -1", low_half, denorm32=0)
