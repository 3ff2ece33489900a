"""VALU conformance: hand-written kernels load three per-lane inputs (v1, v2, v3), run the
instruction(s) under test into v4, and store v4; expected values come from numpy formulas."""
from __future__ import annotations

import numpy as np
import pytest

from emutools import asm, launch_raw

PRO = """
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  s_load_dwordx4 s[8:11], s[0:1], 0x10
  v_lshlrev_b32 v10, 2, v0
  s_waitcnt lgkmcnt(0)
  global_load_dword v1, v10, s[4:5]
  global_load_dword v2, v10, s[6:7]
  global_load_dword v3, v10, s[8:9]
  v_mov_b32 v4, 0
  v_mov_b32 v5, 0
  s_waitcnt vmcnt(0)
"""
EPI = """
  global_store_dword v10, v4, s[10:11]
  s_endpgm
"""
RNG = np.random.default_rng(7)


def run(body: str, a, b=None, c=None, nops: bool = True, **kw) -> np.ndarray:
    """Run `body` on 64 lanes (with wait states between instructions unless `nops` is False);
    returns v4 as uint32 [64]."""
    arrs = [np.asarray(x if x is not None else np.zeros(64, np.uint32)).view(np.uint32).copy() for x in (a, b, c)]
    out = np.zeros(64, np.uint32)
    co = asm(PRO + (with_wait_states(body) if nops else body) + EPI, **kw)
    res = launch_raw(co, "k", (1,), (64,), arrs + [out])
    assert res.report.ok, res.report.findings
    return res.outputs[3]


def with_wait_states(body: str) -> str:
    """`s_nop 4` around every instruction: these tests check semantics, and the emulator rejects
    code that lacks the wait states gfx942's hazard rules require (at most 5 for VALU rules)."""
    lines = [ln for ln in body.splitlines() if ln.strip()]
    return "\n  s_nop 4\n" + "".join(f"{ln}\n  s_nop 4\n" for ln in lines)


def f32(n=64, scale=10.0):
    return (RNG.standard_normal(n) * scale).astype(np.float32)


def bits(x):
    return np.asarray(x).view(np.uint32)


@pytest.mark.parametrize("ins,ref", [
    ("v_add_f32 v4, v1, v2", lambda a, b, c: a + b),
    ("v_sub_f32 v4, v1, v2", lambda a, b, c: a - b),
    ("v_mul_f32 v4, v1, v2", lambda a, b, c: a * b),
    ("v_max_f32 v4, v1, v2", lambda a, b, c: np.maximum(a, b)),
    ("v_min3_f32 v4, v1, v2, v3", lambda a, b, c: np.minimum(np.minimum(a, b), c)),
    ("v_med3_f32 v4, v1, v2, v3", lambda a, b, c: np.median(np.stack([a, b, c]), axis=0).astype(np.float32)),
    ("v_fma_f32 v4, v1, v2, v3", lambda a, b, c: (a.astype(np.float64) * b + c).astype(np.float32)),
    ("v_mov_b32 v4, v3\n v_fmac_f32 v4, v1, v2", lambda a, b, c: (a.astype(np.float64) * b + c).astype(np.float32)),
    ("v_mul_f32 v4, -v1, |v2|", lambda a, b, c: -a * np.abs(b)),
    ("v_add_f32_e64 v4, v1, v2 mul:2", lambda a, b, c: (a + b) * 2),
    ("v_add_f32_e64 v4, v1, v2 clamp", lambda a, b, c: np.clip(a + b, 0, 1)),
    ("v_mul_f32 v4, 0.15915494, v1", lambda a, b, c: np.float32(0.15915494) * a),
    ("v_sqrt_f32 v4, |v1|", lambda a, b, c: np.sqrt(np.abs(a))),
    ("v_ldexp_f32 v4, v1, 5", lambda a, b, c: a * 32),
    ("v_frexp_mant_f32 v4, v1", lambda a, b, c: np.frexp(a)[0].astype(np.float32)),
    ("v_floor_f32 v4, v1", lambda a, b, c: np.floor(a)),
    ("v_fract_f32 v4, v1", lambda a, b, c: np.minimum(a - np.floor(a), np.float32(0.99999994))),
])
def test_f32_ops(ins, ref):
    a, b, c = f32(), f32(), f32()
    got = run(ins, a, b, c).view(np.float32)
    np.testing.assert_array_equal(got, ref(a, b, c).astype(np.float32))


PACKED_SUB = "v_mov_b32 v6, v1\n v_mov_b32 v7, v2\n v_pk_add_f32 v[4:5], v[6:7], v[6:7] op_sel:[0,1] neg_lo:[0,1]"


@pytest.mark.parametrize("sub, add, first", [("v_sub_f32 v4, v1, v2", "v_add_f32_e64 v4, v1, -v2", 0xFFC00000),
                                            ("v_subrev_f32 v4, v1, v2", "v_add_f32_e64 v4, v2, -v1", 0x7FC00000),
                                            ("v_sub_f32 v4, v1, v2", PACKED_SUB, 0xFFC00000)])
def test_a_subtraction_adds_the_negated_subtrahend_nan_sign_included(sub, add, first):
    """A NaN subtrahend comes back with its sign flipped (not as numpy's a - b gives it back), so a subtraction
    and an add of the negated operand give the same bits, NaN or not."""
    a, b = f32(), f32()
    a[:4] = [1.0, np.nan, -np.nan, 2.0]
    b[:4] = [np.nan, 1.0, np.nan, -np.nan]
    got = run(sub, a, b)
    assert got[0] == first      # 1 - NaN is -NaN; NaN - 1 is NaN
    np.testing.assert_array_equal(got, run(add, a, b))


@pytest.mark.parametrize("name", ["v_add_f32", "v_sub_f32", "v_mul_f32", "v_fma_f32", "v_add_f16"])
def test_of_two_nan_operands_the_first_comes_back_whatever_the_array_width(name):
    """numpy returns either of two NaNs by its loop's vector width (1000 lanes of a wide launch, not 64); the
    emulator returns the first operand's, quieted."""
    from asmevo.emu.valu import TABLE
    _, types, fn = TABLE[name]
    first = np.full(1000, np.nan, np.float32)
    first.view(np.uint32)[:] = 0xFF800001       # a signalling -NaN
    second = np.full(1000, np.nan, np.float32)  # +NaN
    with np.errstate(invalid="ignore"):     # a signalling NaN operand raises numpy's invalid flag
        got = np.asarray(fn(first, second, *[np.ones(1000, np.float32)] * (len(types) - 2)), np.float32)
    assert set(got.view(np.uint32)) == {0xFFC00001}


def test_division_sequence_is_correctly_rounded():
    """LLVM's f32 fdiv expansion (div_scale, rcp, fma chain, div_fmas, div_fixup) gives a/b exactly."""
    body = """
  v_div_scale_f32 v5, s[12:13], v2, v2, v1
  v_div_scale_f32 v6, vcc, v1, v2, v1
  v_rcp_f32 v7, v5
  v_fma_f32 v8, -v5, v7, 1.0
  v_fmac_f32 v7, v8, v7
  v_mul_f32 v8, v6, v7
  v_fma_f32 v9, -v5, v8, v6
  v_fmac_f32 v8, v9, v7
  v_fma_f32 v5, -v5, v8, v6
  v_div_fmas_f32 v5, v5, v7, v8
  v_div_fixup_f32 v4, v5, v2, v1
"""
    a = f32()
    b = f32()
    a[:4] = [1e38, 1e-30, 3.0, 0.0]
    b[:4] = [1e-3, 1e10, 0.0, 0.0]
    with np.errstate(all="ignore"):
        ref = (a / b).astype(np.float32)
    got = run(body, a, b).view(np.float32)
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("ins,ref", [
    ("v_add_u32 v4, v1, v2", lambda a, b, c: a + b),
    ("v_sub_u32 v4, v1, v2", lambda a, b, c: a - b),
    ("v_mul_lo_u32 v4, v1, v2", lambda a, b, c: a * b),
    ("v_mul_hi_u32 v4, v1, v2", lambda a, b, c: ((a.astype(np.uint64) * b) >> np.uint64(32)).astype(np.uint32)),
    ("v_mul_hi_i32 v4, v1, v2",
     lambda a, b, c: ((a.view(np.int32).astype(np.int64) * b.view(np.int32)) >> 32).astype(np.uint32)),
    ("v_mul_u32_u24 v4, v1, v2", lambda a, b, c: (a & 0xFFFFFF) * (b & 0xFFFFFF)),
    ("v_lshlrev_b32 v4, v1, v2", lambda a, b, c: b << (a & 31)),
    ("v_ashrrev_i32 v4, v1, v2", lambda a, b, c: (b.view(np.int32) >> (a & 31).astype(np.int32)).view(np.uint32)),
    ("v_bfe_u32 v4, v1, 5, 7", lambda a, b, c: (a >> 5) & 0x7F),
    ("v_bfe_i32 v4, v1, 4, 8", lambda a, b, c: (((a >> 4) & 0xFF).astype(np.int8)).astype(np.int32).view(np.uint32)),
    ("v_bfi_b32 v4, v1, v2, v3", lambda a, b, c: (a & b) | (~a & c)),
    ("v_alignbit_b32 v4, v1, v2, 12",
     lambda a, b, c: (((a.astype(np.uint64) << np.uint64(32)) | b) >> np.uint64(12)).astype(np.uint32)),
    ("v_lshl_add_u32 v4, v1, 3, v2", lambda a, b, c: (a << 3) + b),
    ("v_add3_u32 v4, v1, v2, v3", lambda a, b, c: a + b + c),
    ("v_xad_u32 v4, v1, v2, v3", lambda a, b, c: (a ^ b) + c),
    ("v_bcnt_u32_b32 v4, v1, 3", lambda a, b, c: np.array([bin(x).count("1") + 3 for x in a], np.uint32)),
    ("v_ffbh_u32 v4, v1", lambda a, b, c: np.array([32 - int(x).bit_length() if x else 0xFFFFFFFF for x in a],
                                                    np.uint32)),
    ("v_bfrev_b32 v4, v1", lambda a, b, c: np.array([int(f"{x:032b}"[::-1], 2) for x in a], np.uint32)),
    ("v_max_i32 v4, v1, v2", lambda a, b, c: np.maximum(a.view(np.int32), b.view(np.int32)).view(np.uint32)),
    ("v_med3_u32 v4, v1, v2, v3", lambda a, b, c: np.median(np.stack([a, b, c]).astype(np.float64), 0).astype(np.uint32)),
])
def test_int_ops(ins, ref):
    a, b, c = (RNG.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32) for _ in range(3))
    a[:3] = [0, 1, 0xFFFFFFFF]
    np.testing.assert_array_equal(run(ins, a, b, c), ref(a, b, c).astype(np.uint32))


def test_perm_b32_known_patterns():
    a = np.full(64, 0x81223344, np.uint32)
    b = np.full(64, 0x55667788, np.uint32)
    sel = np.full(64, 0x0C0D0407, np.uint32)
    sel[1] = 0x00010203
    sel[2] = 0x08090A0B
    got = run("v_perm_b32 v4, v1, v2, v3", a, b, sel)
    assert got[0] == 0x00FF4481  # byte selects 7, 4, 13 (0xff), 12 (0x00) of a:b
    assert got[1] == 0x88776655
    assert got[2] == 0x000000FF  # sign replication of bytes 7 (0x81), 5, 3, 1


def test_carry_chain_64bit_add():
    body = """
  v_add_co_u32 v4, vcc, v1, v2
  v_addc_co_u32 v5, vcc, v3, 0, vcc
  v_add_u32 v4, v4, v5
"""
    a = RNG.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    b = RNG.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    c = RNG.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    s = a.astype(np.uint64) + b
    ref = (s & 0xFFFFFFFF) + c + (s >> np.uint64(32))
    np.testing.assert_array_equal(run(body, a, b, c), (ref & 0xFFFFFFFF).astype(np.uint32))


def test_64bit_shift_and_lshl_add():
    body = """
  v_mov_b32 v5, v2
  v_mov_b32 v4, v1
  v_lshlrev_b64 v[4:5], 7, v[4:5]
  v_lshl_add_u64 v[4:5], v[4:5], 2, v[2:3]
  v_xor_b32 v4, v4, v5
"""
    a = RNG.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    b = RNG.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    c = RNG.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    x = (a.astype(np.uint64) | (b.astype(np.uint64) << np.uint64(32))) << np.uint64(7)
    y = (x << np.uint64(2)) + (b.astype(np.uint64) | (c.astype(np.uint64) << np.uint64(32)))
    ref = (y & 0xFFFFFFFF) ^ (y >> np.uint64(32))
    np.testing.assert_array_equal(run(body, a, b, c), ref.astype(np.uint32))


def test_f64_add_fma():
    body = """
  v_cvt_f64_f32 v[4:5], v1
  v_cvt_f64_f32 v[6:7], v2
  v_cvt_f64_f32 v[8:9], v3
  v_fma_f64 v[4:5], v[4:5], v[6:7], v[8:9]
  v_add_f64 v[4:5], v[4:5], 1.0
  v_cvt_f32_f64 v4, v[4:5]
"""
    a, b, c = f32(), f32(), f32()
    ref = (a.astype(np.float64) * b + c + 1.0).astype(np.float32)
    np.testing.assert_array_equal(run(body, a, b, c).view(np.float32), ref)


def test_conversions_and_f16():
    a = f32(scale=100)
    a[:4] = [np.inf, -np.inf, 3e9, -3e9]
    got = run("v_cvt_i32_f32 v4, v1", a).view(np.int32)
    ref = np.clip(np.nan_to_num(np.trunc(a.astype(np.float64)), posinf=2**31 - 1, neginf=-2**31), -2**31, 2**31 - 1)
    np.testing.assert_array_equal(got, ref.astype(np.int32))
    got = run("v_cvt_f16_f32 v4, v1\n v_cvt_f32_f16 v4, v4", a).view(np.float32)
    np.testing.assert_array_equal(got, a.astype(np.float16).astype(np.float32))
    h = np.stack([f32(scale=2).astype(np.float16), f32(scale=2).astype(np.float16)], 1).view(np.uint32).ravel()
    g = np.stack([f32(scale=2).astype(np.float16), f32(scale=2).astype(np.float16)], 1).view(np.uint32).ravel()
    got = run("v_pk_add_f16 v4, v1, v2", h, g).view(np.float16).reshape(64, 2)
    np.testing.assert_array_equal(got, (h.view(np.float16).reshape(64, 2).astype(np.float32)
                                        + g.view(np.float16).reshape(64, 2)).astype(np.float16))
    got = run("v_pk_mul_f16 v4, v1, v2 op_sel:[1,0] op_sel_hi:[0,1]", h, g).view(np.float16).reshape(64, 2)
    hh, gg = h.view(np.float16).reshape(64, 2).astype(np.float32), g.view(np.float16).reshape(64, 2)
    np.testing.assert_array_equal(got[:, 0], (hh[:, 1] * gg[:, 0]).astype(np.float16))
    np.testing.assert_array_equal(got[:, 1], (hh[:, 0] * gg[:, 1]).astype(np.float16))
    got = run("v_fma_mix_f32 v4, v1, v2, v3 op_sel_hi:[1,1,0]", h, g, a).view(np.float32)
    ref = (hh[:, 0].astype(np.float64) * gg[:, 0].astype(np.float64) + a).astype(np.float32)
    np.testing.assert_array_equal(got, ref)
    got = run("v_cvt_pkrtz_f16_f32 v4, v1, v2", np.full(64, 1.0009765625 + 2**-12, np.float32),
              np.full(64, -1.0, np.float32))
    assert got[0] == (0xBC00 << 16) | 0x3C01


def test_compare_cndmask_and_class():
    a, b = f32(), f32()
    a[0] = np.nan
    got = run("v_cmp_gt_f32 vcc, v1, v2\n v_cndmask_b32 v4, v2, v1, vcc", a, b).view(np.float32)
    np.testing.assert_array_equal(got, np.where(a > b, a, b))
    x = f32()
    x[:5] = [np.inf, -0.0, 1e-40, np.nan, 0.0]
    got = run("s_movk_i32 s14, 0x3c0\n v_cmp_class_f32 s[12:13], v1, s14\n v_cndmask_b32_e64 v4, 0, 1, s[12:13]", x)
    ref = np.isposinf(x) | ((x > 0) & np.isfinite(x)) | ((x == 0) & ~np.signbit(x))
    np.testing.assert_array_equal(got, ref.astype(np.uint32))


def test_lane_ops():
    a = RNG.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    got = run("v_mbcnt_lo_u32_b32 v4, -1, 0\n v_mbcnt_hi_u32_b32 v4, -1, v4", a)
    np.testing.assert_array_equal(got, np.arange(64))
    got = run("v_readlane_b32 s12, v1, 37\n v_mov_b32 v4, s12", a)
    assert (got == a[37]).all()
    got = run("s_movk_i32 s14, 99\n v_writelane_b32 v4, s14, 5", a)
    assert got[5] == 99 and (np.delete(got, 5) == 0).all()
    body = "v_cmp_lt_u32 vcc, 9, v0\n s_and_saveexec_b64 s[12:13], vcc\n v_readfirstlane_b32 s14, v1\n" \
           " s_mov_b64 exec, s[12:13]\n v_mov_b32 v4, s14"
    assert (run(body, a) == a[10]).all()


@pytest.mark.parametrize("ctrl,src,valid", [
    ("quad_perm:[1,0,3,2]", np.arange(64) ^ 1, None),
    ("row_shr:1", np.arange(64) - 1, (np.arange(64) & 15) >= 1),
    ("row_shl:3", np.arange(64) + 3, (np.arange(64) & 15) <= 12),
    ("row_ror:4", (np.arange(64) & ~15) | ((np.arange(64) - 4) & 15), None),
    ("row_mirror", (np.arange(64) & ~15) | (15 - (np.arange(64) & 15)), None),
    ("row_half_mirror", (np.arange(64) & ~7) | (7 - (np.arange(64) & 7)), None),
    ("wave_shr:1", np.arange(64) - 1, np.arange(64) >= 1),
    ("wave_rol:1", (np.arange(64) + 1) & 63, None),
    ("row_bcast:15", (np.arange(64) & ~15) - 1, np.arange(64) >= 16),
    ("row_bcast:31", np.full(64, 31), np.arange(64) >= 32),
])
def test_dpp_mov(ctrl, src, valid):
    a = RNG.integers(1, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    got = run(f"v_mov_b32_dpp v4, v1 {ctrl} row_mask:0xf bank_mask:0xf bound_ctrl:1", a)
    src = np.clip(src, 0, 63)
    ref = a[src] if valid is None else np.where(valid, a[src], 0)
    np.testing.assert_array_equal(got, ref)


def test_dpp_row_mask_and_add():
    a, b = f32(), f32()
    got = run("v_mov_b32 v4, v2\n v_add_f32_dpp v4, v1, v2 row_shr:1 row_mask:0xa bank_mask:0xf", a, b).view(np.float32)
    lanes = np.arange(64)
    row_on = ((0xA >> (lanes >> 4)) & 1).astype(bool) & ((lanes & 15) >= 1)
    ref = np.where(row_on, a[np.maximum(lanes - 1, 0)] + b, b)
    np.testing.assert_array_equal(got, ref)


def test_sdwa():
    a = RNG.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    b = RNG.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    got = run("v_mov_b32 v4, v3\n v_add_u32_sdwa v4, v1, v2 dst_sel:BYTE_1 dst_unused:UNUSED_PRESERVE "
              "src0_sel:WORD_1 src1_sel:BYTE_0", a, b, np.full(64, 0xAABBCCDD, np.uint32))
    ref = (np.full(64, 0xAABBCCDD, np.uint32) & ~np.uint32(0xFF00)) | ((((a >> 16) + (b & 0xFF)) & 0xFF) << 8)
    np.testing.assert_array_equal(got, ref)
    got = run("v_mov_b32_sdwa v4, sext(v1) dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_2", a)
    np.testing.assert_array_equal(got, ((a >> 16) & 0xFF).astype(np.uint8).astype(np.int8).astype(np.int32).view(np.uint32))


def test_fp8_conversions():
    from asmevo.emu import numeric
    a, b = f32(scale=4), f32(scale=4)
    got = run("v_cvt_pk_fp8_f32 v4, v1, v2\n v_cvt_f32_fp8_sdwa v4, v4 src0_sel:BYTE_1", a, b)
    code = numeric.f32_to_fp8(b.view(np.uint32), "fp8")
    np.testing.assert_array_equal(got, numeric.fp8_to_f32(code, "fp8"))
    got = run("v_cvt_pk_bf8_f32 v4, v1, v2 op_sel:[0,0,1]\n v_cvt_pk_f32_bf8_sdwa v[4:5], v4 src0_sel:WORD_1", a, b)
    np.testing.assert_array_equal(got, numeric.fp8_to_f32(numeric.f32_to_fp8(a.view(np.uint32), "bf8"), "bf8"))


def test_faithful_transcendentals_pick_the_other_neighbour_for_half_the_inputs():
    from asmevo.emu.valu import faithful, rcp
    x = np.random.default_rng(3).uniform(0.5, 4.0, 4096).astype(np.float32)
    x[:3] = [2.0, np.inf, np.nan]
    nearest = rcp(x)
    got = faithful(rcp, x, nearest)
    exact = 1 / x.astype(np.float64)
    ulps = np.abs(got.view(np.int32).astype(np.int64) - nearest.view(np.int32))
    assert np.all(ulps[3:] <= 1) and 0.4 < ulps[3:].mean() < 0.6  # one neighbour or the other
    flipped = ulps == 1
    assert np.all((got[flipped] < exact[flipped]) != (nearest[flipped] < exact[flipped]))  # brackets the exact
    assert got[0] == 0.5 and got[1] == 0 and np.isnan(got[2])  # exact results, zero and NaN kept
    assert np.array_equal(faithful(rcp, x, nearest).view(np.uint32), got.view(np.uint32))  # deterministic


def test_a_packed_op_may_name_a_pair_whose_unread_half_is_the_top_register():
    """v_pk_add_f32 reads only the dwords op_sel / op_sel_hi pick, but the pair it names is the kernel's: a half
    no instruction reads is still a register of the wave (the emulator's file covers it)."""
    a, b = f32(), f32()
    got = run("v_mov_b32 v20, v1\n v_pk_add_f32 v[4:5], v[20:21], v[2:3] op_sel_hi:[0,1]", a, b).view(np.float32)
    np.testing.assert_array_equal(got, (a + b).astype(np.float32))
