"""hoist_kernarg_load: a late kernarg scalar load moves to the entry block, into fresh SGPRs."""
from __future__ import annotations

from asmevo.agent.body import Body
from asmevo.agent.ops_kernarg import hoist_kernarg_load

from agenttools import body_of, code


def kernel(lines: list[str]) -> Body:
    b = body_of(lines)
    return Body(b.items, b.offset, b.xnack, kernarg=0)  # s[0:1] is the kernarg segment pointer


ENTRY = ["s_load_dwordx2 s[4:5], s[0:1], 0x0", "s_waitcnt lgkmcnt(0)", "v_mov_b32_e32 v1, s4",
         "s_mov_b64 s[8:9], 0", "v_mov_b32_e32 v2, s8", "s_cbranch_scc0 .L1", "v_mov_b32_e32 v4, s9", ".L1:"]
LATE = ["s_load_dwordx2 s[8:9], s[0:1], 0x8", "s_waitcnt lgkmcnt(0)", "v_mov_b32_e32 v3, s9", "s_endpgm"]


def test_late_load_joins_the_entry_loads_in_fresh_registers():
    b = kernel(ENTRY + LATE)
    i = next(n for n, ins in enumerate(b.instructions) if ins.text().endswith("0x8"))
    new = hoist_kernarg_load(b, i)
    assert new is not None and new.no_worse(b)
    c = code(new)
    assert c[:2] == ["s_load_dwordx2 s[4:5], s[0:1], 0x0", "s_load_dwordx2 s[2:3], s[0:1], 0x8"]  # s[2:3]: unused
    assert "v_mov_b32_e32 v3, s3" in c  # the reader reads the fresh register
    assert "v_mov_b32_e32 v2, s8" in c and "v_mov_b32_e32 v4, s9" in c  # the busy registers keep their values


def test_rewritten_pointer_or_shared_readers_keep_the_load():
    clobbered = ENTRY + ["s_mov_b64 s[0:1], s[4:5]"] + LATE
    b = kernel(clobbered)
    i = next(n for n, ins in enumerate(b.instructions) if ins.text().endswith("0x8"))
    assert hoist_kernarg_load(b, i) is None  # s[0:1] no longer holds the kernarg pointer there
    # v3 reads s9 from the load on one path and from the entry's s_mov on the other
    shared = ENTRY[:5] + ["s_cbranch_scc0 .L2", "s_load_dwordx2 s[8:9], s[0:1], 0x8", "s_waitcnt lgkmcnt(0)",
                          ".L2:", "v_mov_b32_e32 v3, s9", "s_endpgm"]
    b = kernel(shared)
    i = next(n for n, ins in enumerate(b.instructions) if ins.text().endswith("0x8"))
    assert hoist_kernarg_load(b, i) is None


def test_a_load_overwriting_its_own_pointer_keeps_reading_the_pointer():
    lines = ENTRY + ["s_load_dwordx2 s[0:1], s[0:1], 0x8", "s_waitcnt lgkmcnt(0)", "v_mov_b32_e32 v3, s1", "s_endpgm"]
    b = kernel(lines)
    i = next(n for n, ins in enumerate(b.instructions) if ins.text().endswith("0x8"))
    new = hoist_kernarg_load(b, i)
    assert new is not None
    c = code(new)
    assert c[1] == "s_load_dwordx2 s[2:3], s[0:1], 0x8" and "v_mov_b32_e32 v3, s3" in c


def test_a_reader_that_redefines_the_register_keeps_writing_it():
    # 67_conv_standard_1D: `s_add_u32 s8, s8, s6` reads the load's value and writes the register
    # its own later readers read; only the read is renamed
    lines = ENTRY + ["s_load_dwordx2 s[8:9], s[0:1], 0x8", "s_waitcnt lgkmcnt(0)", "s_add_u32 s8, s8, s6",
                     "v_mov_b32_e32 v3, s8", "s_endpgm"]
    b = kernel(lines)
    i = next(n for n, ins in enumerate(b.instructions) if ins.text().endswith("0x8"))
    new = hoist_kernarg_load(b, i)
    assert new is not None
    c = code(new)
    assert "s_add_u32 s8, s2, s6" in c and "v_mov_b32_e32 v3, s8" in c
