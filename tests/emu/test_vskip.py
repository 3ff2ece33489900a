"""VSKIP mode: s_setvskip (VSKIP = S0[S1[4:0]]) and MODE.VSKIP via s_setreg; vector instructions of waves in
VSKIP mode are not issued (no register, memory, EXEC or waitcnt effect), scalar ones run."""
from __future__ import annotations

import numpy as np
import pytest

from emutools import asm, launch_raw
from test_valu import run, with_wait_states

ZERO = np.zeros(64, np.uint32)


@pytest.mark.parametrize("s0,s1,skipped", [(1, 0, True), (0, 0, False), (0b1000, 3, True), (0b0111, 3, False),
                                           (0b1000, 35, True), (0x80000000, 31, True)])
def test_setvskip_selects_bit_s1_of_s0(s0, s1, skipped):
    body = f"""
  v_mov_b32 v4, 1
  s_mov_b32 s20, {s0:#x}
  s_mov_b32 s21, {s1}
  s_setvskip s20, s21
  v_mov_b32 v4, 2
  s_setvskip 0, 0
"""
    assert set(run(body, ZERO)) == ({1} if skipped else {2})


def test_scalar_instructions_run_while_vector_ones_are_skipped():
    """In VSKIP mode SALU writes land, VALU (including v_cmpx writing EXEC and VALU writing SGPRs) does not;
    MODE reads back with bit 28 set; clearing VSKIP resumes vector execution."""
    body = """
  v_mov_b32 v4, 5
  s_mov_b32 s22, 7
  s_mov_b32 s23, 9
  s_setvskip 1, 0
  s_getreg_b32 s24, hwreg(HW_REG_MODE, 28, 1)
  s_add_u32 s22, s22, 1
  v_mov_b32 v4, 0
  v_cmpx_eq_u32 vcc, 0, v0
  v_readfirstlane_b32 s23, v0
  s_setvskip 0, 0
  v_add_u32 v4, v4, s22
  v_add_u32 v4, v4, s23
  v_add_u32 v4, v4, s24
"""
    assert set(run(body, ZERO)) == {5 + 8 + 9 + 1}


def test_setreg_of_mode_bit_28_enables_vskip():
    body = """
  v_mov_b32 v4, 3
  s_setreg_imm32_b32 hwreg(HW_REG_MODE, 28, 1), 1
  v_mov_b32 v4, 4
  s_setreg_imm32_b32 hwreg(HW_REG_MODE, 28, 1), 0
  v_add_u32 v4, v4, 10
"""
    assert set(run(body, ZERO)) == {13}


def _two_waves(body: str, n_out: int = 128):
    """Two waves of one workgroup: s20 = wave index (0 or 1), v10 = 4 * flat lane id, s[4:5] = output."""
    co = asm(with_wait_states(f"""
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  v_lshrrev_b32 v1, 6, v0
  v_readfirstlane_b32 s20, v1
  v_lshlrev_b32 v10, 2, v0
  s_waitcnt lgkmcnt(0)
{body}
  s_endpgm"""), args=1, lds=512)
    return launch_raw(co, "k", (1,), (128,), [np.zeros(n_out, np.uint32)])


def test_vskip_is_per_wave_and_skips_memory_and_lds():
    """Wave 1 sets VSKIP (bit 0 of its wave index): its global store, LDS write and VALU are not issued;
    wave 0 runs them all."""
    res = _two_waves("""
  v_mov_b32 v2, 0x55
  v_and_b32 v3, 63, v0
  v_lshlrev_b32 v3, 2, v3
  s_setvskip s20, 0
  v_mov_b32 v2, 0x77
  ds_write_b32 v3, v2
  s_waitcnt lgkmcnt(0)
  global_store_dword v10, v2, s[4:5]
  s_setvskip 0, 0
  s_waitcnt vmcnt(0)
  s_barrier
  ds_read_b32 v5, v3
  s_waitcnt lgkmcnt(0)
  v_add_u32 v5, v5, v2
  global_store_dword v10, v5, s[4:5] offset:512
""", n_out=256)
    assert res.report.ok, res.report.findings
    out = res.outputs[0]
    np.testing.assert_array_equal(out[:64], np.full(64, 0x77))        # wave 0 stored
    np.testing.assert_array_equal(out[64:128], np.zeros(64))          # wave 1's store skipped
    np.testing.assert_array_equal(out[128:192], np.full(64, 0x77 + 0x77))  # LDS from wave 0, its v2
    np.testing.assert_array_equal(out[192:], np.full(64, 0x77 + 0x55))     # wave 1 kept v2 = 0x55


def test_skipped_load_does_not_count_on_vmcnt():
    """A load skipped in VSKIP mode is not issued, so `s_waitcnt vmcnt(1)` after it leaves the earlier load
    outstanding: reading its destination is a waitcnt finding (it would retire it if the skipped load counted)."""
    res = _two_waves("""
  global_load_dword v5, v10, s[4:5]
  s_setvskip 1, 0
  global_load_dword v6, v10, s[4:5]
  s_setvskip 0, 0
  s_waitcnt vmcnt(1)
  v_add_u32 v7, v5, 1
  s_waitcnt vmcnt(0)
""")
    assert [f.kind for f in res.report.findings] == ["waitcnt"], res.report.findings
    assert "v5" in res.report.findings[0].message
