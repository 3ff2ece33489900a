"""LDS DMA loads (`buffer_load_* ... lds`, `global_load_lds_*`), VGPR index mode (`s_set_gpr_idx_*`),
DPP `row_newbcast` and raw buffers with a non-zero stride. Expected values are computed here from the
documented address arithmetic, independently of the emulator."""
from __future__ import annotations

import numpy as np

from emutools import asm, launch_raw
from test_valu import with_wait_states

LANES = np.arange(64)
# s[4:7] = arg0 (source), arg1 (output); s[12:15] = raw V# over arg0 with num_records 200 bytes
LOAD_ARGS = """
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  s_mov_b32 s12, s4
  s_and_b32 s13, s5, 0xffff
  s_mov_b32 s14, 200
  s_mov_b32 s15, 0x00020000
  v_lshlrev_b32 v10, 2, v0
"""
STORE_OUT = """
  s_waitcnt lgkmcnt(0)
  global_store_dword v10, v2, s[6:7]
  s_endpgm
"""


def _run(body: str, src: np.ndarray, lds: int = 512, block: int = 64):
    co = asm(with_wait_states(LOAD_ARGS + body) + STORE_OUT, lds=lds)
    out = np.zeros(block, np.uint32)
    return launch_raw(co, "k", (1,), (block,), [src, out])


def test_buffer_load_dword_lds_with_range_check_and_exec():
    """LDS[M0 + offset + 4 * lane] = src[lane + offset / 4] for in-range lanes with EXEC set, 0 beyond
    num_records; lanes without EXEC leave LDS alone (the sentinel written first)."""
    src = (np.arange(64, dtype=np.uint32) + 1000)
    body = """
  v_mov_b32 v3, 0x5e5e
  v_add_u32 v11, 24, v10
  ds_write_b32 v11, v3
  s_waitcnt lgkmcnt(0)
  s_mov_b32 m0, 16
  s_mov_b32 exec_hi, 0xffff
  buffer_load_dword v10, s[12:15], 0 offen offset:8 lds
  s_mov_b64 exec, -1
  s_waitcnt vmcnt(0)
  ds_read_b32 v2, v11
"""
    res = _run(body, src)
    assert res.report.ok, res.report.findings
    expected = np.where(LANES + 2 < 50, src[np.minimum(LANES + 2, 63)], 0)
    expected = np.where(LANES < 48, expected, 0x5E5E)
    np.testing.assert_array_equal(res.outputs[1], expected)


def test_buffer_load_ubyte_lds_packs_one_byte_per_lane():
    """Byte loads to LDS: LDS[M0 + lane] = byte (M0[1:0] ignored); soffset adds to the memory address."""
    src = np.arange(64, dtype=np.uint32) * 0x01010101 + 0x80
    body = """
  v_lshrrev_b32 v12, 2, v10
  s_mov_b32 m0, 0x43
  s_mov_b32 s3, 4
  buffer_load_ubyte v12, s[12:15], s3 offen lds
  s_waitcnt vmcnt(0)
  v_add_u32 v11, 64, v10
  ds_read_b32 v2, v11
"""
    res = _run(body, src)
    assert res.report.ok, res.report.findings
    raw = src.view(np.uint8)
    lds = np.zeros(512, np.uint8)
    lds[64:128] = [raw[4 + i] if 4 + i + 1 <= 200 else 0 for i in range(64)]
    np.testing.assert_array_equal(res.outputs[1][:16], lds[64:128].view(np.uint32))


def test_global_load_lds_dword():
    """global_load_lds_dword v, s[base] offset:8: LDS[M0 + 8 + 4 * lane] = mem[base + v + 8]."""
    src = np.arange(64, dtype=np.uint32) * 7 + 3
    body = """
  v_and_b32 v12, 0xf8, v10
  s_mov_b32 m0, 0
  global_load_lds_dword v12, s[4:5] offset:8
  s_waitcnt vmcnt(0)
  v_add_u32 v11, 8, v10
  ds_read_b32 v2, v11
"""
    padded = np.concatenate([src, np.zeros(4, np.uint32)])
    res = _run(body, padded)
    assert res.report.ok, res.report.findings
    np.testing.assert_array_equal(res.outputs[1], padded[((LANES * 4) & 0xF8) // 4 + 2])


def test_lds_dma_read_before_vmcnt_is_a_finding():
    body = """
  s_mov_b32 m0, 0
  buffer_load_dword v10, s[12:15], 0 offen lds
  ds_read_b32 v2, v10
  s_waitcnt vmcnt(0)
"""
    res = _run(body, np.zeros(64, np.uint32))
    kinds = {f.kind for f in res.report.findings}
    assert kinds == {"waitcnt"}, res.report.findings


# Two waves: wave 1 loads 64 dwords by LDS DMA into LDS bytes 0..255 that wave 0 stages data in with ds_write.
# An LDS DMA writes LDS when its load returns, which only the issuing wave's vmcnt tells (LLVM SIInsertWaitcnts:
# a VMEM access that stores to LDS), so only s_waitcnt vmcnt in that wave then s_barrier orders it for others.
TWO_WAVES = """
  v_lshrrev_b32 v1, 6, v0
  v_readfirstlane_b32 s20, v1
  v_and_b32 v3, 63, v0
  v_lshlrev_b32 v3, 2, v3
  s_mov_b32 m0, 0
  s_cmp_eq_u32 s20, 1
  s_cbranch_scc1 dma
  v_mov_b32 v4, 7
  ds_write_b32 v3, v4
  s_waitcnt lgkmcnt(0)
  {before}
  s_branch join
dma:
  {before}
  buffer_load_dword v3, s[12:15], 0 offen lds
  {wait}
join:
  s_barrier
  ds_read_b32 v2, v3
  s_waitcnt vmcnt(0) lgkmcnt(0)
"""


def test_lds_dma_onto_bytes_another_wave_wrote_in_the_phase_is_a_race():
    res = _run(TWO_WAVES.format(before="", wait="s_waitcnt vmcnt(0)"), np.arange(64, dtype=np.uint32), block=128)
    races = [f for f in res.report.findings if f.kind == "lds_race"]
    assert races and races[0].message.startswith("buffer_load_dword: LDS byte 0 written while wave 0"), \
        res.report.findings


def test_lds_dma_after_a_barrier_and_retired_before_the_next_is_ordered():
    """The DMA in the next barrier phase, retired by vmcnt before the barrier: every wave reads the loaded data
    (lanes 50..63 lie beyond the V#'s 200 bytes and load 0)."""
    res = _run(TWO_WAVES.format(before="s_barrier", wait="s_waitcnt vmcnt(0)"), np.arange(64, dtype=np.uint32) + 5,
               block=128)
    assert res.report.ok, res.report.findings
    np.testing.assert_array_equal(res.outputs[1], np.tile(np.where(LANES < 50, LANES + 5, 0), 2))


def test_lds_dma_not_retired_before_the_barrier_is_a_waitcnt_finding_for_the_reader():
    res = _run(TWO_WAVES.format(before="s_barrier", wait=""), np.arange(64, dtype=np.uint32), block=128)
    found = {(f.kind, f.wave) for f in res.report.findings}
    assert ("waitcnt", 0) in found and not any(f.kind == "lds_race" for f in res.report.findings), \
        res.report.findings


def test_lds_dma_beyond_lds_is_a_finding():
    body = """
  s_mov_b32 m0, 0x100
  buffer_load_dword v10, s[12:15], 0 offen lds
  s_waitcnt vmcnt(0)
  v_mov_b32 v2, 0
"""
    res = _run(body, np.zeros(64, np.uint32), lds=300)
    assert {f.kind for f in res.report.findings} == {"lds_limit"}, res.report.findings


def test_raw_buffer_with_stride_is_range_checked_by_offset():
    """Without idxen a V# with a non-zero stride is a raw buffer: in range iff offset + 4 <= num_records."""
    src = np.arange(64, dtype=np.uint32) + 1
    body = """
  s_or_b32 s13, s13, 0x40000
  buffer_load_dword v2, v10, s[12:15], 0 offen
  s_waitcnt vmcnt(0)
"""
    res = _run(body, src)
    assert res.report.ok, res.report.findings
    np.testing.assert_array_equal(res.outputs[1], np.where(LANES < 50, src, 0))


def _indexed(body: str, vgprs: int = 32):
    """Two waves; wave w runs `body` with s30 = w + 1; v20..v27 = 100 * r + lane; returns v2 of both."""
    pro = """
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  v_lshrrev_b32 v12, 6, v0
  v_readfirstlane_b32 s30, v12
  s_add_u32 s30, s30, 1
  v_and_b32 v13, 63, v0
""" + "".join(f"  v_add_u32 v{20 + r}, {100 * r}, v13\n" for r in range(8)) + "  v_mov_b32 v2, 0\n"
    co = asm(with_wait_states(pro + body) + """
  v_lshlrev_b32 v10, 2, v0
  s_waitcnt lgkmcnt(0)
  global_store_dword v10, v2, s[6:7]
  s_endpgm
""", vgprs=vgprs)
    out = np.zeros(128, np.uint32)
    return launch_raw(co, "k", (1,), (128,), [np.zeros(4, np.uint32), out])


def test_gpr_idx_src0_and_dst():
    """SRC0 mode reads v[20 + M0[7:0]]; DST mode writes v[22 + idx] (read back unindexed); M0 keeps the
    mode in bits 15:12."""
    res = _indexed("""
  s_mov_b32 m0, 0xabcd0000
  s_set_gpr_idx_on s30, gpr_idx(SRC0)
  v_mov_b32 v2, v20
  s_set_gpr_idx_off
  s_set_gpr_idx_on s30, gpr_idx(DST)
  v_add_u32 v22, v2, 5
  s_set_gpr_idx_off
  s_cmp_eq_u32 s30, 1
  s_cbranch_scc1 one
  v_mov_b32 v2, v24
  s_branch done
one:
  v_mov_b32 v2, v23
done:
  s_mov_b32 s31, m0
  v_add_u32 v2, s31, v2
""")
    assert res.report.ok, res.report.findings
    for w in (0, 1):
        idx = w + 1
        m0 = 0xABCD0000 | (8 << 12) | idx
        expected = (100 * idx + LANES + 5 + m0) & 0xFFFFFFFF
        np.testing.assert_array_equal(res.outputs[1][64 * w:64 * w + 64], expected)


def test_gpr_idx_writelane_and_mode_switch():
    """v_writelane under DST indexing writes one lane of v[20 + idx]; s_set_gpr_idx_mode switches the
    enabled operand to SRC1 within the same region."""
    res = _indexed("""
  s_set_gpr_idx_on s30, gpr_idx(DST)
  v_writelane_b32 v20, 7, s30
  s_set_gpr_idx_mode gpr_idx(SRC1)
  v_sub_u32 v2, v21, v20
  s_set_gpr_idx_off
""")
    assert res.report.ok, res.report.findings
    for w in (0, 1):
        idx = w + 1
        reg = {r: 100 * r + LANES for r in range(8)}
        reg[idx][idx] = 7
        expected = (reg[1] - reg[idx]) & 0xFFFFFFFF
        np.testing.assert_array_equal(res.outputs[1][64 * w:64 * w + 64], expected)


def test_gpr_idx_beyond_vgprs_is_a_finding():
    res = _indexed("""
  s_movk_i32 s30, 0x40
  s_set_gpr_idx_on s30, gpr_idx(SRC0)
  v_mov_b32 v2, v20
  s_set_gpr_idx_off
""")
    assert {f.kind for f in res.report.findings} == {"vgpr_index"}, res.report.findings


def test_dpp_row_newbcast():
    """row_newbcast:n (gfx90a+) broadcasts lane n of each 16-lane row to the row."""
    res = _indexed("v_mov_b32_dpp v2, v20 row_newbcast:5 row_mask:0xf bank_mask:0xf")
    assert res.report.ok, res.report.findings
    np.testing.assert_array_equal(res.outputs[1][:64], (LANES & ~15) | 5)


def test_buffer_offset_wraps_at_32_bits():
    """vaddr + inst_offset is a 32-bit sum: vaddr = 4 * lane - 4 with offset:8 reads src[lane + 1]."""
    src = np.arange(64, dtype=np.uint32) + 11
    body = """
  v_subrev_u32 v12, 4, v10
  buffer_load_dword v2, v12, s[12:15], 0 offen offset:8
  s_waitcnt vmcnt(0)
"""
    res = _run(body, src)
    assert res.report.ok, res.report.findings
    np.testing.assert_array_equal(res.outputs[1], np.where(LANES + 1 < 50, src[np.minimum(LANES + 1, 63)], 0))


def test_s_store_dword_writes_each_waves_sgprs():
    """s_store_dword / s_store_dwordx2: every wave stores its SGPRs at base + offset (here wave w at 8 w)."""
    co = asm(with_wait_states("""
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  v_lshrrev_b32 v12, 6, v0
  v_readfirstlane_b32 s30, v12
  s_lshl_b32 s31, s30, 3
  s_waitcnt lgkmcnt(0)
  s_add_u32 s6, s6, s31
  s_addc_u32 s7, s7, 0
  s_add_u32 s20, s30, 0x100
  s_mov_b32 s21, 0xabc
  s_store_dwordx2 s[20:21], s[6:7], 0x0 glc
  s_add_u32 s22, s30, 0x200
  s_store_dword s22, s[6:7], 0x20 glc
  s_waitcnt lgkmcnt(0)
""") + "  s_endpgm\n")
    out = np.zeros(16, np.uint32)
    res = launch_raw(co, "k", (1,), (128,), [np.zeros(4, np.uint32), out])
    assert res.report.ok, res.report.findings
    expected = np.zeros(16, np.uint32)
    expected[[0, 1, 2, 3]] = [0x100, 0xABC, 0x101, 0xABC]
    expected[[8, 10]] = [0x200, 0x201]
    np.testing.assert_array_equal(res.outputs[1], expected)
