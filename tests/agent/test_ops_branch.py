"""remove_skip_branch / remove_skip_branches: drop `s_cbranch_execz` over code harmless with EXEC = 0."""
from __future__ import annotations

from asmevo.agent.ops_branch import remove_skip_branch, remove_skip_branches

from agenttools import body_of, code

GUARDED = ["s_and_saveexec_b64 s[0:1], vcc", "s_cbranch_execz .Lm", "v_lshl_add_u64 v[4:5], v[2:3], 0, 4",
           "global_load_dword v1, v[4:5], off", ".Lm:", "s_or_b64 exec, exec, s[0:1]", "s_waitcnt vmcnt(0)",
           "v_add_f32_e32 v1, v1, v1", "s_endpgm"]


def test_skip_over_vector_code_is_dropped():
    b = body_of(GUARDED)
    new = remove_skip_branch(b, 1)
    assert new is not None and new.no_worse(b)
    assert code(new) == [c for c in GUARDED if not c.startswith("s_cbranch_execz")]


def test_skip_kept_when_a_scalar_write_is_live_at_the_target():
    lines = GUARDED[:2] + ["s_add_i32 s8, s8, 1"] + GUARDED[2:-1] + ["s_add_i32 s9, s8, 1", "s_endpgm"]
    assert remove_skip_branch(body_of(lines), 1) is None


def test_dead_scalar_write_and_unsafe_instructions():
    dead = GUARDED[:2] + ["s_add_i32 s8, s9, 1", "v_lshl_add_u64 v[4:5], s[8:9], 0, v[2:3]"] + GUARDED[3:]
    assert remove_skip_branch(body_of(dead), 1) is not None
    for unsafe in ("v_readfirstlane_b32 s8, v1", "s_load_dword s8, s[2:3], 0x0", "s_mov_b32 m0, s9"):
        lines = GUARDED[:2] + [unsafe] + GUARDED[2:]
        assert remove_skip_branch(body_of(lines), 1) is None, unsafe


def test_skip_over_too_much_code_or_a_shared_entry_is_kept():
    long = GUARDED[:2] + ["v_add_f32_e32 v6, v6, v6"] * 12 + GUARDED[2:]
    assert remove_skip_branch(body_of(long), 1) is None
    entered = GUARDED[:2] + [".Lin:"] + GUARDED[2:]
    assert remove_skip_branch(body_of(entered), 1) is None


def test_all_skips_at_once():
    second = ["s_and_saveexec_b64 s[0:1], vcc", "s_cbranch_execz .Ln", "global_load_dword v7, v[4:5], off",
              ".Ln:", "s_or_b64 exec, exec, s[0:1]"]
    b = body_of(GUARDED[:6] + second + GUARDED[6:])
    new = remove_skip_branches(b, 1)
    assert new is not None and not any(c.startswith("s_cbranch_execz") for c in code(new))
    assert remove_skip_branches(body_of(GUARDED), 1) is None  # a single skip is remove_skip_branch's job
