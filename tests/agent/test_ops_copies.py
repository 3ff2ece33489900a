"""remove_redundant_copies: an accumulator copy goes when its destination already holds its source on every
path, and the copy out that only fed it goes with it."""
from __future__ import annotations

from asmevo.agent.ops_copies import remove_redundant_copies

from agenttools import body_of, code

# A rotated MFMA loop as compiled code has it: the accumulator is copied out to v0/v1 before the loop's
# tail, and back into a0/a1 at its head (the entry jumps to the copy out, like the KernelBench GEMMs').
HEAD = ["v_accvgpr_write_b32 a0, 0", "v_accvgpr_write_b32 a1, 0", "s_mov_b32 s4, 0", "s_branch .Lout", ".Lhead:"]
LOOP = ["v_accvgpr_write_b32 a0, v0", "v_accvgpr_write_b32 a1, v1", "v_mfma_f32_4x4x1f32 a[0:3], v2, v3, a[0:3]",
        "s_add_u32 s4, s4, 1", "s_cmp_lt_u32 s4, 8", "s_cbranch_scc0 .Lexit", ".Lout:", "v_accvgpr_read_b32 v0, a0",
        "v_accvgpr_read_b32 v1, a1"]
TAIL = ["s_branch .Lhead", ".Lexit:", "s_nop 4", "v_accvgpr_read_b32 v5, a0", "global_store_dword v[6:7], v5, off",
        "s_endpgm"]


def site(body, text: str = "v_accvgpr_write_b32 a0, v0") -> int:
    return next(i for i, x in enumerate(body.instructions) if x.text() == text)


def test_the_round_trip_of_a_loop_goes():
    b = body_of(HEAD + LOOP + TAIL)
    new = remove_redundant_copies(b, site(b))
    assert new is not None and new.no_worse(b)
    assert [x for x in code(new) if x.startswith("v_accvgpr")] == [
        "v_accvgpr_write_b32 a0, 0", "v_accvgpr_write_b32 a1, 0", "v_accvgpr_read_b32 v5, a0"]


def test_refused_when_a_path_does_not_copy_or_a_register_changes_in_between():
    straight_in = body_of(["v_accvgpr_write_b32 a0, 0", "v_accvgpr_write_b32 a1, 0", "s_mov_b32 s4, 0", ".Lhead:",
                           *LOOP, *TAIL])  # the first iteration enters at the head: a0 is not v0 there
    assert remove_redundant_copies(straight_in, site(straight_in)) is None
    changed = body_of(HEAD + LOOP + ["v_add_f32_e32 v0, 1.0, v0"] + TAIL)
    assert remove_redundant_copies(changed, site(changed)) is None
    new = remove_redundant_copies(changed, site(changed, "v_accvgpr_write_b32 a1, v1"))
    assert new is not None and "v_accvgpr_write_b32 a0, v0" in code(new)  # only a1's copy goes
    assert "v_accvgpr_write_b32 a1, v1" not in code(new)


def test_refused_when_the_copy_out_covers_fewer_lanes():
    narrow = LOOP[:-2] + ["s_and_saveexec_b64 s[8:9], s[10:11]", "v_accvgpr_read_b32 v0, a0",
                          "v_accvgpr_read_b32 v1, a1", "s_or_b64 exec, exec, s[8:9]"]
    b = body_of(HEAD + narrow + TAIL)
    assert remove_redundant_copies(b, site(b)) is None
