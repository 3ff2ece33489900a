"""LDS race tracking checks whole dwords while every access covers whole aligned dwords, bytes after
the first that does not (`ds._RaceState`): the findings are those of byte tracking, with the byte."""
from __future__ import annotations

from emutools import asm, launch_raw


def test_different_bytes_of_one_dword_are_no_race():
    body = "v_lshrrev_b32 v1, 6, v0\n ds_write_b8 v1, v0\n s_waitcnt lgkmcnt(0)\n s_endpgm"  # byte = wave
    res = launch_raw(asm(body, args=0, lds=256), "k", (1,), (128,), [])
    assert res.report.ok, res.report.findings


def test_a_byte_race_after_dword_accesses_names_the_byte():
    # wave w writes dword 2w, then reads byte 2w: wave 1 reads byte 2 of dword 0, which wave 0 wrote
    body = """
  v_lshrrev_b32 v1, 6, v0
  v_lshlrev_b32 v2, 3, v1
  ds_write_b32 v2, v0
  s_waitcnt lgkmcnt(0)
  v_lshlrev_b32 v3, 1, v1
  ds_read_u8 v4, v3
  s_waitcnt lgkmcnt(0)
  s_endpgm
"""
    res = launch_raw(asm(body, args=0, lds=256), "k", (1,), (128,), [])
    races = [f for f in res.report.findings if f.kind == "lds_race"]
    assert len(races) == 1 and races[0].wave == 1
    assert "ds_read_u8: LDS byte 2 read while wave 0 accessed it" in races[0].message


def test_a_dword_race_names_the_dwords_first_byte():
    # wave w writes dword w + 1, then every wave reads dword 2: wave 0 reads what wave 1 wrote
    body = """
  v_lshrrev_b32 v1, 6, v0
  v_add_u32 v1, 1, v1
  v_lshlrev_b32 v2, 2, v1
  ds_write_b32 v2, v0
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v3, 8
  ds_read_b32 v4, v3
  s_waitcnt lgkmcnt(0)
  s_endpgm
"""
    res = launch_raw(asm(body, args=0, lds=256), "k", (1,), (128,), [])
    races = [f for f in res.report.findings if f.kind == "lds_race"]
    assert len(races) == 1 and races[0].wave == 0
    assert "ds_read_b32: LDS byte 8 read while wave 1 accessed it" in races[0].message
