"""Alignment through loops: a pointer advanced by a constant on every iteration keeps the smaller of
its start's and the step's alignment; an unknown step proves nothing."""
from __future__ import annotations

import pytest

from asmevo.agent.align import Alignment
from asmevo.agent.webs import VgprWebs
from agenttools import body_of

POINTER = dict(kernarg=0, buffers=frozenset({0}))


def loop(step: list[str], start: str = "v_lshl_add_u64 v[4:5], v[1:2], 0, s[2:3]") -> list[str]:
    """A loop loading through v[4:5] (the pointer + 16 x lane at first) and advancing it by s[6:7]."""
    return ["s_load_dwordx2 s[2:3], s[0:1], 0x0", "v_lshlrev_b32_e32 v1, 4, v0", "v_mov_b32_e32 v2, 0",
            "s_waitcnt lgkmcnt(0)", start, *step, "s_mov_b32 s8, 0",
            ".Lloop:", "global_load_dword v10, v[4:5], off", "v_lshl_add_u64 v[4:5], v[4:5], 0, s[6:7]",
            "s_add_i32 s8, s8, 1", "s_cmp_lt_i32 s8, 16", "s_cbranch_scc1 .Lloop",
            "s_waitcnt vmcnt(0)", "global_store_dword v[4:5], v10, off", "s_endpgm"]


def alignment_at_load(lines: list[str]) -> tuple[int, int]:
    """(tz of v[4:5] at the loop's load, at the store after it)."""
    b = body_of(lines, **POINTER)
    al = Alignment(b, VgprWebs(b))
    load = next(i for i, x in enumerate(b.instructions) if x.mnemonic == "global_load_dword")
    store = next(i for i, x in enumerate(b.instructions) if x.mnemonic == "global_store_dword")
    return (al.operand(load, b.instructions[load].operands[1]),
            al.operand(store, b.instructions[store].operands[0]))


@pytest.mark.parametrize("step, expected", [
    (["s_mov_b64 s[6:7], 0x1000"], 4),        # the start's 16 bytes (the step keeps 12 zeros)
    (["s_mov_b64 s[6:7], 8"], 3),             # an 8-byte step: 8-byte aligned only
    (["s_mov_b64 s[6:7], 0"], 4),
    (["s_load_dwordx2 s[6:7], s[0:1], 0x10", "s_waitcnt lgkmcnt(0)"], 0),  # unknown step
])
def test_a_pointer_carried_around_a_loop_keeps_its_start_and_steps_alignment(step, expected):
    assert alignment_at_load(loop(step)) == (expected, expected)


def test_an_unaligned_start_is_not_made_aligned_by_an_aligned_step():
    lines = loop(["s_mov_b64 s[6:7], 0x1000"], start="v_lshl_add_u64 v[4:5], v[1:2], 0, 4")  # 16 x lane + 4
    assert alignment_at_load(lines) == (2, 2)


def test_something_unknown_added_on_the_back_edge_proves_nothing():
    lines = loop(["s_mov_b64 s[6:7], 0x1000"])
    lines.insert(lines.index("s_add_i32 s8, s8, 1"), "v_add_co_u32_e32 v4, vcc, v4, v11")  # v11: never written
    assert alignment_at_load(lines) == (0, 0)
