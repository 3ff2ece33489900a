"""Strictness: broken code objects produce the right findings (with PC and wave)."""
from __future__ import annotations

import numpy as np
import pytest

from asmevo.codeobj import CodeObject
from asmevo.isa.waitcnt import check_waitcnt
from emutools import asm, hip, launch, launch_raw
from test_kernels import REDUCE, VADD
from test_valu import with_wait_states

WAITCNT_VMCNT0 = 0xBF8C0F70
S_BARRIER = 0xBF8A0000
S_NOP0 = 0xBF800000


def patched(co: CodeObject, word: int, limit: int = 1) -> tuple[CodeObject, list[int]]:
    """Replace the first `limit` occurrences of instruction `word` in .text with s_nop 0."""
    data = bytearray(co.data)
    text = co.text
    addrs = []
    for off in range(text["offset"], text["offset"] + text["size"], 4):
        if int.from_bytes(data[off:off + 4], "little") == word and len(addrs) < limit:
            data[off:off + 4] = S_NOP0.to_bytes(4, "little")
            addrs.append(text["address"] + off - text["offset"])
    assert addrs, "instruction to remove not found"
    return CodeObject(bytes(data)), addrs


def test_removed_waitcnt_is_a_waitcnt_finding():
    co, _ = patched(hip(VADD), WAITCNT_VMCNT0)
    n = 256
    a = np.ones(n, np.float32)
    res = launch(co, "vadd", (1,), (256,), [a, a, np.zeros(n, np.float32), np.int32(n)])
    kinds = [f.kind for f in res.report.findings]
    assert kinds == ["waitcnt"], res.report.findings
    f = res.report.findings[0]
    assert "v_add_f32" in f.message and f.wave == 0


def test_removed_barrier_is_an_lds_race():
    co, addrs = patched(hip(REDUCE), S_BARRIER, limit=1)
    x = np.ones(1024, np.float32)
    res = launch(co, "reduce", (1,), (256,), [x, np.zeros(1, np.float32), np.int32(1024)])
    kinds = {f.kind for f in res.report.findings}
    assert kinds == {"lds_race"}, res.report.findings
    assert "ds_read" in res.report.findings[0].message


def test_intact_barrier_has_no_race():
    x = np.ones(1024, np.float32)
    res = launch(hip(REDUCE), "reduce", (1,), (256,), [x, np.zeros(1, np.float32), np.int32(1024)], outputs=[1])
    assert res.report.ok and res.outputs[1][0] == 1024


def test_out_of_bounds_store():
    n = 256
    a = np.ones(n, np.float32)
    res = launch(hip(VADD), "vadd", (2,), (256,), [a, a, np.zeros(n, np.float32), np.int32(2 * n)])
    oob = [f for f in res.report.findings if f.kind == "out_of_bounds"]
    assert oob and not res.report.ok
    assert {f.wave for f in oob} == {4}  # first wave of the second workgroup


def test_out_of_bounds_store_is_dropped_and_guards_intact():
    co = asm("""
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  v_lshlrev_b32 v1, 2, v0
  v_mov_b32 v2, 7
  s_waitcnt lgkmcnt(0)
  global_store_dword v1, v2, s[4:5] offset:64
  s_endpgm
""", args=1)
    res = launch_raw(co, "k", (1,), (64,), [np.zeros(64, np.uint32)])
    assert [f.kind for f in res.report.findings] == ["out_of_bounds"]
    assert res.memory.guard_violations() == []
    assert (res.outputs[0][16:] == 7).all() and (res.outputs[0][:16] == 0).all()


def test_infinite_loop_hits_budget():
    co = asm("loop:\n  s_add_u32 s4, s4, 1\n  s_branch loop\n  s_endpgm", args=0)
    res = launch_raw(co, "k", (2,), (64,), [], budget=10_000)
    assert [f.kind for f in res.report.findings] == ["budget"]
    assert res.report.instructions <= 10_000


def test_uninitialized_read_in_checked_mode():
    co = asm("""
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  v_lshlrev_b32 v1, 2, v0
  v_add_u32 v2, v0, v20
  s_waitcnt lgkmcnt(0)
  global_store_dword v1, v2, s[4:5]
  s_endpgm
""", args=1)
    res = launch_raw(co, "k", (1,), (64,), [np.zeros(64, np.uint32)], checked=True)
    assert [f.kind for f in res.report.findings] == ["uninitialized"]
    assert "v20" in res.report.findings[0].message
    assert launch_raw(co, "k", (1,), (64,), [np.zeros(64, np.uint32)]).report.ok


# SGPR spill lanes: s7 = 5 spilled to lane {written} of v30 and read back from lane {read} (`s_mov_b32 s8, 3`
# selects lane 3 through an SGPR), then stored by every lane; the nops are the lane-select and VALU-SGPR hazards'.
SPILL_LANE = """
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  v_lshlrev_b32 v1, 2, v0
  s_mov_b32 s7, 5
  s_mov_b32 s8, 3
  v_writelane_b32 v30, s7, {written}
  s_nop 4
  v_readlane_b32 s9, v30, {read}
  s_nop 1
  v_mov_b32 v2, s9
  s_waitcnt lgkmcnt(0)
  global_store_dword v1, v2, s[4:5]
  s_endpgm
"""


@pytest.mark.parametrize("written, read, ok", [(3, 3, True), (3, "s8", True), (3, 4, False), (2, "s8", False)])
def test_a_lane_read_checks_only_the_lane_it_reads(written, read, ok):
    """`v_writelane` initialises one lane and reads none; `v_readlane` reads only the lane it selects, so a
    register used as SGPR spill space is read without a finding exactly where it was written."""
    co = asm(SPILL_LANE.format(written=written, read=read), args=1)
    res = launch_raw(co, "k", (1,), (64,), [np.zeros(64, np.uint32)], checked=True)
    assert res.report.ok == ok, res.report.findings
    if ok:
        assert res.outputs[0].tolist() == [5] * 64
    else:
        assert [f.kind for f in res.report.findings] == ["uninitialized"]
        assert "v_readlane_b32 reads v30" in res.report.findings[0].message


# out[lane] = the lane id stored to LDS (two waves: wave 1 reads the slots wave 1 wrote, so a missing
# write is not a race but a read of never-written LDS) or to the lane's private memory, when {write}
# stores it.
LDS_ROUND_TRIP = """
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  v_lshlrev_b32 v1, 2, v0
  {write}
  s_waitcnt lgkmcnt(0)
  s_barrier
  ds_read_b32 v2, v1
  s_waitcnt lgkmcnt(0)
  global_store_dword v1, v2, s[4:5]
  s_endpgm
"""
SCRATCH_ROUND_TRIP = """
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  v_lshlrev_b32 v1, 2, v0
  v_mov_b32 v5, 8
  {write}
  scratch_load_dword v2, v5, off
  s_waitcnt vmcnt(0) lgkmcnt(0)
  global_store_dword v1, v2, s[4:5]
  s_endpgm
"""


@pytest.mark.parametrize("body,write,resources,lanes,message", [
    (LDS_ROUND_TRIP, "ds_write_b32 v1, v0", {"lds": 512}, 128, "ds_read_b32: LDS byte 0 read before any write"),
    (SCRATCH_ROUND_TRIP, "scratch_store_dword off, v0, off offset:8\n  s_waitcnt vmcnt(0)", {"scratch": 16}, 64,
     "private memory read before its lane wrote it"),
])
def test_reading_memory_never_written_is_uninitialized_in_checked_mode(body, write, resources, lanes, message):
    def run(text: str, checked: bool):
        co = asm(body.format(write=text), args=1, **resources)
        return launch_raw(co, "k", (2,), (lanes,), [np.zeros(lanes, np.uint32)], checked=checked)
    res = run(write, checked=True)
    assert res.report.ok and res.outputs[0].tolist() == list(range(lanes))
    res = run("", checked=True)
    assert [f.kind for f in res.report.findings] == ["uninitialized"]
    assert message in res.report.findings[0].message
    assert run("", checked=False).report.ok


def test_smem_needs_lgkmcnt_zero():
    co = asm("""
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_load_dword s6, s[0:1], 0x8
  s_waitcnt lgkmcnt(1)
  v_mov_b32 v1, s4
  s_endpgm
""", args=1)
    res = launch_raw(co, "k", (1,), (64,), [np.zeros(64, np.uint32)])
    assert [f.kind for f in res.report.findings] == ["waitcnt"]


def test_overwriting_pending_load_destination():
    co = asm("""
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  v_lshlrev_b32 v1, 2, v0
  s_waitcnt lgkmcnt(0)
  global_load_dword v2, v1, s[4:5]
  v_mov_b32 v2, 0
  s_waitcnt vmcnt(0)
  s_endpgm
""", args=1)
    res = launch_raw(co, "k", (1,), (64,), [np.zeros(64, np.uint32)])
    assert [f.kind for f in res.report.findings] == ["waitcnt"]
    assert "overwrites" in res.report.findings[0].message


# A load into v2, then a store, an LDS-DMA load and another load, then `s_waitcnt vmcnt({n})` and a read of v2.
# gfx9 has no vscnt: VMEM stores count on vmcnt, as LDS-DMA loads (VMEM loads) do, and one VMEM type completes
# in issue order, so vmcnt(N) retires all but the N newest (LLVM SIInsertWaitcnts: VMEM_ACCESS without
# hasVscnt, the wait it computes is the count of VM events issued after the producer). The shipped
# paged-attention kernel reads a block-table load after vmcnt(N) with N one more than that count.
VMCNT_COUNTS_STORES_AND_LDS_DMA = """
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  s_mov_b32 s12, s4
  s_and_b32 s13, s5, 0xffff
  s_mov_b32 s14, 256
  s_mov_b32 s15, 0x00020000
  s_mov_b32 m0, 0
  v_lshlrev_b32 v10, 2, v0
  global_load_dword v2, v10, s[4:5]
  global_store_dword v10, v10, s[6:7]
  buffer_load_dword v10, s[12:15], 0 offen lds
  global_load_dword v3, v10, s[4:5]
  s_waitcnt vmcnt({n})
  v_mov_b32 v4, v2
  s_waitcnt vmcnt(0)
  s_endpgm
"""


@pytest.mark.parametrize("n,kinds", [(3, []), (4, ["waitcnt"])])
def test_vmcnt_retires_all_but_the_newest_n_counting_stores_and_lds_dma(n, kinds):
    co = asm(with_wait_states(VMCNT_COUNTS_STORES_AND_LDS_DMA.format(n=n)), lds=256, args=2)
    res = launch_raw(co, "k", (1,), (64,), [np.arange(64, dtype=np.uint32), np.zeros(64, np.uint32)])
    assert [f.kind for f in res.report.findings] == kinds, res.report.findings
    if kinds:
        assert "reads v2 while a load" in res.report.findings[0].message
    static = check_waitcnt(co.kernel_instructions("k"))
    assert [v.register for v in static] == (["v2"] if kinds else [])


def test_lds_and_scratch_limits():
    co = asm("v_mov_b32 v1, 256\n ds_write_b32 v1, v0\n s_waitcnt lgkmcnt(0)\n s_endpgm", args=0, lds=256)
    res = launch_raw(co, "k", (1,), (64,), [])
    assert [f.kind for f in res.report.findings] == ["lds_limit"]
    co = asm("v_mov_b32 v1, 14\n scratch_store_dword v1, v0, off\n s_waitcnt vmcnt(0)\n s_endpgm", args=0, scratch=16)
    res = launch_raw(co, "k", (1,), (64,), [])
    assert [f.kind for f in res.report.findings] == ["scratch_limit"]


def test_unsupported_instruction_raises_with_pc():
    import pytest

    from asmevo.errors import UnsupportedInstruction
    co = asm("v_cubeid_f32 v1, v0, v0, v0\n s_endpgm", args=0)
    with pytest.raises(UnsupportedInstruction) as exc:
        launch_raw(co, "k", (1,), (64,), [])
    assert exc.value.mnemonic == "v_cubeid_f32" and exc.value.pc == co.kernel("k").entry_address


def test_report_counts_and_json():
    n = 1000
    a = np.ones(n, np.float32)
    res = launch(hip(VADD), "vadd", (4,), (256,), [a, a, np.zeros(n, np.float32), np.int32(n)])
    rep = res.report
    assert rep.waves == 16 and rep.ok
    assert sum(rep.pc_counts.values()) == rep.instructions
    assert rep.lane_instructions < rep.instructions * 64  # the last wave is partial
    js = rep.to_json()
    assert js["ok"] and js["instructions"] == rep.instructions


def test_missing_hazard_nops_are_a_hazard_finding():
    # v_cmp writes VCC, v_div_fmas reads it: gfx942 needs 4 wait states between them.
    body = """
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  v_mov_b32 v1, 1.0
  v_cmp_gt_u32 vcc, 32, v0
  {nops}
  v_div_fmas_f32 v2, v1, v1, v1
  v_lshlrev_b32 v3, 2, v0
  s_waitcnt lgkmcnt(0)
  global_store_dword v3, v2, s[4:5]
  s_endpgm
"""
    safe = launch_raw(asm(body.format(nops="s_nop 3"), args=1), "k", (1,), (64,), [np.zeros(64, np.float32)])
    assert safe.report.ok, safe.report.findings
    bad = launch_raw(asm(body.format(nops="s_nop 1"), args=1), "k", (1,), (64,), [np.zeros(64, np.float32)])
    assert [f.kind for f in bad.report.findings] == ["hazard"]
    assert "v_div_fmas" in bad.report.findings[0].message or "vcc" in bad.report.findings[0].message.lower()


def _pairwise_store(value: str):
    """Lanes 2i and 2i+1 store `value` to the same dword."""
    return asm(f"""
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  v_lshrrev_b32 v1, 1, v0
  v_lshlrev_b32 v1, 2, v1
  v_mov_b32 v2, {value}
  s_waitcnt lgkmcnt(0)
  global_store_dword v1, v2, s[4:5]
  s_endpgm
""", args=1)


def test_lanes_storing_different_data_to_one_address_conflict():
    res = launch_raw(_pairwise_store("v0"), "k", (1,), (64,), [np.zeros(64, np.uint32)])
    assert [f.kind for f in res.report.findings] == ["store_conflict"]
    assert res.report.findings[0].wave == 0


def test_lanes_storing_equal_data_to_one_address_are_fine():
    res = launch_raw(_pairwise_store("7"), "k", (1,), (64,), [np.zeros(64, np.uint32)])
    assert res.report.ok, res.report.findings
    assert (res.outputs[0][:32] == 7).all() and (res.outputs[0][32:] == 0).all()


def test_waves_writing_one_lds_byte_in_the_same_instruction_race():
    # Both waves of the workgroup write LDS dword 0 in one ds_write (a race); with per-wave addresses
    # (v1 = 4 * wave, from v0 >> 6 << 2) they do not, nor do all waves reading dword 0 together.
    write_shared = "v_mov_b32 v1, 0\n ds_write_b32 v1, v0\n s_waitcnt lgkmcnt(0)\n s_endpgm"
    res = launch_raw(asm(write_shared, args=0, lds=256), "k", (1,), (128,), [])
    races = [f for f in res.report.findings if f.kind == "lds_race"]
    assert races and "LDS byte 0 written while wave" in races[0].message
    private = ("v_lshrrev_b32 v1, 6, v0\n v_lshlrev_b32 v1, 2, v1\n ds_write_b32 v1, v0\n s_waitcnt lgkmcnt(0)\n"
               " s_barrier\n v_mov_b32 v2, 0\n ds_read_b32 v3, v2\n s_waitcnt lgkmcnt(0)\n s_endpgm")
    assert launch_raw(asm(private, args=0, lds=256), "k", (1,), (128,), []).report.ok
