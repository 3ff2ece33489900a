"""SALU, SMEM, DS, MUBUF, atomics and scratch conformance with hand-written kernels."""
from __future__ import annotations

import struct

import numpy as np
import pytest

from emutools import asm, launch_raw
from test_valu import EPI, PRO, RNG, run


def scalar(body: str, x: int = 0, y: int = 0) -> int:
    """Run SALU `body` with s20 = x, s21 = y; returns s22 (broadcast via v4)."""
    pre = f"s_mov_b32 s20, {x:#x}\n s_mov_b32 s21, {y:#x}\n s_mov_b32 s22, 0\n"
    got = run(pre + body + "\n v_mov_b32 v4, s22", np.zeros(64, np.uint32))
    return int(got[0])


@pytest.mark.parametrize("body,x,y,ref", [
    ("s_add_u32 s22, s20, s21", 0xFFFFFFF0, 0x20, 0x10),
    ("s_add_u32 s23, s20, s21\n s_cselect_b32 s22, 1, 2", 0xFFFFFFF0, 0x20, 1),
    ("s_sub_i32 s22, s20, s21", 5, 7, 0xFFFFFFFE),
    ("s_mul_hi_u32 s22, s20, s21", 0x89ABCDEF, 0x12345678, (0x89ABCDEF * 0x12345678) >> 32),
    ("s_lshl2_add_u32 s22, s20, s21", 3, 4, 16),
    ("s_bfe_u32 s22, s20, s21", 0xABCD1234, (8 << 16) | 4, 0x23),
    ("s_bfe_i32 s22, s20, s21", 0xABCD1234, (8 << 16) | 24, 0xFFFFFFAB),
    ("s_ff1_i32_b32 s22, s20", 0x80, 0, 7),
    ("s_ff1_i32_b32 s22, s20", 0, 0, 0xFFFFFFFF),
    ("s_flbit_i32_b32 s22, s20", 0x00010000, 0, 15),
    ("s_bcnt1_i32_b32 s22, s20", 0xF0F0F0F1, 0, 17),
    ("s_brev_b32 s22, s20", 1, 0, 0x80000000),
    ("s_min_i32 s22, s20, s21", 0xFFFFFFFF, 3, 0xFFFFFFFF),
    ("s_max_u32 s22, s20, s21", 0xFFFFFFFF, 3, 0xFFFFFFFF),
    ("s_ashr_i32 s22, s20, 4", 0x80000000, 0, 0xF8000000),
    ("s_andn2_b32 s22, s20, s21", 0xFF, 0x0F, 0xF0),
    ("s_pack_lh_b32_b16 s22, s20, s21", 0x1234, 0xABCD0000, 0xABCD1234),
    ("s_sext_i32_i16 s22, s20", 0x8001, 0, 0xFFFF8001),
    ("s_bitcmp1_b32 s20, 3\n s_cselect_b32 s22, 7, 9", 8, 0, 7),
    ("s_cmp_lt_i32 s20, s21\n s_cselect_b32 s22, 7, 9", 0xFFFFFFFF, 1, 7),
    ("s_cmp_lt_u32 s20, s21\n s_cselect_b32 s22, 7, 9", 0xFFFFFFFF, 1, 9),
    ("s_movk_i32 s22, 0x8000", 0, 0, 0xFFFF8000),
    ("s_mov_b32 s22, s20\n s_addk_i32 s22, 0x10", 5, 0, 0x15),
    ("s_lshl_b64 s[22:23], s[20:21], 36", 0x1, 0, 0),
    ("s_lshr_b64 s[22:23], s[20:21], 36", 0, 0x30, 0x3),
    ("s_bcnt1_i32_b64 s22, s[20:21]", 0xFF, 0xF, 12),
])
def test_salu(body, x, y, ref):
    assert scalar(body, x, y) == ref


def test_branches_and_loop():
    body = """
  s_mov_b32 s22, 0
  s_mov_b32 s23, 10
loop:
  s_add_u32 s22, s22, s23
  s_sub_u32 s23, s23, 1
  s_cmp_lg_u32 s23, 0
  s_cbranch_scc1 loop
  v_mov_b32 v4, s22
"""
    assert (run(body, np.zeros(64, np.uint32)) == 55).all()


def test_divergent_exec_and_reconvergence():
    a = RNG.integers(0, 100, 64, dtype=np.uint64).astype(np.uint32)
    body = """
  v_cmp_gt_u32 vcc, 50, v1
  s_and_saveexec_b64 s[12:13], vcc
  s_cbranch_execz skip
  v_add_u32 v4, 1000, v1
skip:
  s_xor_b64 exec, exec, s[12:13]
  v_subrev_u32 v4, 7, v1
  s_or_b64 exec, exec, s[12:13]
"""
    got = run(body, a)
    np.testing.assert_array_equal(got, np.where(a < 50, a + 1000, a - 7))


def test_getpc_setpc():
    body = """
  s_getpc_b64 s[12:13]
  s_add_u32 s12, s12, 12
  s_addc_u32 s13, s13, 0
  s_setpc_b64 s[12:13]
  v_mov_b32 v4, 1
  v_mov_b32 v4, 2
"""
    assert (run(body, np.zeros(64, np.uint32), nops=False) == 2).all()  # the jump skips 3 instructions


def test_smem_loads():
    co = asm(PRO.replace("global_load_dword v2, v10, s[6:7]", "") + """
  s_load_dwordx2 s[12:13], s[4:5], 0x8
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v4, s13
""" + EPI)
    a = np.arange(64, dtype=np.uint32) * 3
    res = launch_raw(co, "k", (1,), (64,), [a, np.zeros(64, np.uint32), np.zeros(64, np.uint32),
                                             np.zeros(64, np.uint32)])
    assert res.report.ok, res.report.findings
    assert (res.outputs[3] == a[3]).all()


def test_ds_read_write_permute_swizzle():
    a = RNG.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    body = """
  v_lshlrev_b32 v5, 2, v0
  ds_write_b32 v5, v1
  s_waitcnt lgkmcnt(0)
  v_xor_b32 v6, 0xfc, v5
  ds_read_b32 v4, v6
  s_waitcnt lgkmcnt(0)
"""
    np.testing.assert_array_equal(run(body, a, lds=256), a[np.arange(64) ^ 63])
    body = """
  v_lshlrev_b32 v5, 3, v0
  ds_write2_b32 v5, v1, v1 offset1:1
  s_waitcnt lgkmcnt(0)
  ds_read2st64_b32 v[6:7], v5 offset1:1
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v4, v6
"""
    np.testing.assert_array_equal(run(body, a, lds=1024), a)
    body = """
  v_sub_u32 v5, 63, v0
  v_lshlrev_b32 v5, 2, v5
  ds_bpermute_b32 v4, v5, v1
  s_waitcnt lgkmcnt(0)
"""
    np.testing.assert_array_equal(run(body, a), a[63 - np.arange(64)])
    np.testing.assert_array_equal(run("ds_swizzle_b32 v4, v1 offset:swizzle(QUAD_PERM,3,2,1,0)\n"
                                      " s_waitcnt lgkmcnt(0)", a), a[np.arange(64) ^ 3])
    np.testing.assert_array_equal(run("ds_swizzle_b32 v4, v1 offset:swizzle(SWAP,16)\n s_waitcnt lgkmcnt(0)", a),
                                  a[np.arange(64) ^ 16])
    np.testing.assert_array_equal(run("ds_swizzle_b32 v4, v1 offset:swizzle(BROADCAST,8,5)\n"
                                      " s_waitcnt lgkmcnt(0)", a), a[(np.arange(64) & ~7) | 5])


def test_ds_atomics():
    body = """
  v_mov_b32 v5, 0
  v_mov_b32 v6, 1
  ds_write_b32 v5, v5
  s_waitcnt lgkmcnt(0)
  ds_add_rtn_u32 v4, v5, v6
  s_waitcnt lgkmcnt(0)
"""
    np.testing.assert_array_equal(run(body, np.zeros(64, np.uint32), lds=64), np.arange(64))


def test_buffer_range_checking():
    a = np.arange(64, dtype=np.uint32) + 100
    co = asm("""
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  s_load_dwordx2 s[8:9], s[0:1], 0x10
  v_lshlrev_b32 v10, 2, v0
  s_waitcnt lgkmcnt(0)
  s_mov_b32 s12, s4
  s_and_b32 s13, s5, 0xffff
  s_mov_b32 s14, 160
  s_mov_b32 s15, 0x00020000
  buffer_load_dword v1, v10, s[12:15], 0 offen
  s_mov_b32 s12, s6
  s_and_b32 s13, s7, 0xffff
  s_mov_b32 s14, 128
  s_waitcnt vmcnt(0)
  buffer_store_dword v1, v10, s[12:15], 0 offen offset:4
  s_endpgm
""", args=3)
    out = np.full(64, 7, np.uint32)
    res = launch_raw(co, "k", (1,), (64,), [a, out, np.zeros(1, np.uint32)])
    assert res.report.ok, res.report.findings
    loaded = np.where(np.arange(64) < 40, a, 0)
    ref = out.copy()
    ref[1:32] = loaded[:31]
    np.testing.assert_array_equal(res.outputs[1], ref)


def test_global_atomics():
    co = asm("""
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  v_lshlrev_b32 v10, 2, v0
  s_waitcnt lgkmcnt(0)
  global_load_dword v1, v10, s[4:5]
  v_mov_b32 v2, 0
  s_waitcnt vmcnt(0)
  global_atomic_add_f32 v2, v1, s[6:7]
  v_mov_b32 v3, 1
  global_atomic_add v4, v2, v3, s[6:7] offset:4 sc0
  s_waitcnt vmcnt(0)
  global_store_dword v10, v4, s[4:5]
  s_endpgm
""", args=2)
    x = (RNG.standard_normal(64)).astype(np.float32)
    acc = np.zeros(2, np.uint32)
    res = launch_raw(co, "k", (1,), (64,), [x.copy(), acc])
    assert res.report.ok, res.report.findings
    total = np.float32(0)
    for v in x:
        total = np.float32(total + v)
    assert res.outputs[1].view(np.float32)[0] == total
    assert res.outputs[1][1] == 64
    np.testing.assert_array_equal(res.outputs[0].view(np.uint32), np.arange(64))


def test_scratch_round_trip():
    a = RNG.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    body = """
  scratch_store_dword off, v1, off offset:8
  v_mov_b32 v5, 8
  s_waitcnt vmcnt(0)
  scratch_load_dword v4, v5, off
  s_waitcnt vmcnt(0)
"""
    np.testing.assert_array_equal(run(body, a, scratch=16), a)
