"""hoist_masked_default(s): the constant a masked load's masked-off lanes keep moves out of the loop when the
mask is loop-invariant and nothing else in the loop touches the register."""
from __future__ import annotations

from asmevo.agent.ops_default import hoist_masked_default, hoist_masked_defaults

from agenttools import body_of, code

PRE = ["v_mov_b32_e32 v9, 0", "s_mov_b32 s4, 0", "v_cmp_gt_u32_e64 s[8:9], 16, v0", ".Lloop:"]
REGION = ["v_mov_b32_e32 v5, 0", "s_and_saveexec_b64 s[10:11], s[8:9]", "s_cbranch_execz .Ljoin",
          "global_load_dword v5, v[2:3], off", ".Ljoin:", "s_or_b64 exec, exec, s[10:11]"]
POST = ["s_waitcnt vmcnt(0)", "v_add_f32_e32 v9, v9, v5", "s_add_u32 s4, s4, 1", "s_cmp_lt_u32 s4, 8",
        "s_cbranch_scc1 .Lloop", "global_store_dword v[6:7], v9, off", "s_endpgm"]


def at_default(body) -> int:
    return next(i for i, x in enumerate(body.instructions) if x.text() == "v_mov_b32_e32 v5, 0")


def test_the_default_moves_before_the_loop():
    b = body_of(PRE + REGION + POST)
    new = hoist_masked_default(b, at_default(b))
    assert new is not None and new.no_worse(b)
    lines = code(new)
    assert lines.index("v_mov_b32_e32 v5, 0") < lines.index("s_and_saveexec_b64 s[10:11], s[8:9]")
    assert lines.count("v_mov_b32_e32 v5, 0") == 1 and lines[:4] == PRE[:3] + ["v_mov_b32_e32 v5, 0"]


def test_refused_when_the_mask_changes_or_the_register_is_read_or_written_elsewhere_in_the_loop():
    varying = body_of(PRE + ["v_cmp_gt_u32_e64 s[8:9], s4, v0"] + REGION + POST)
    read_early = body_of(PRE + ["v_add_f32_e32 v9, v9, v5"] + REGION + POST)  # sees the previous iteration's
    other_write = body_of(PRE + REGION + ["v_mov_b32_e32 v5, 1.0"] + POST)
    shuffled = body_of(PRE + REGION + POST[:1] + ["v_mov_b32_dpp v10, v5 row_shr:1"] + POST[1:])
    inside = body_of(PRE + REGION[:1] + ["v_add_u32_e32 v2, 4, v2"] + REGION[1:3] + ["v_add_u32_e32 v5, 1, v5"]
                     + REGION[3:] + POST)  # the region reads the default
    for b in (varying, read_early, other_write, shuffled, inside):
        assert hoist_masked_default(b, at_default(b)) is None


def test_refused_when_exec_changes_between_the_default_and_its_load():
    narrowed = body_of(PRE + REGION[:1] + ["s_and_b64 exec, exec, s[12:13]"] + REGION[1:] + POST)
    nested = body_of(PRE + REGION[:3] + ["s_and_b64 exec, exec, s[12:13]"] + REGION[3:] + POST)  # W misses lanes
    for b in (narrowed, nested):
        assert hoist_masked_default(b, at_default(b)) is None


def test_every_default_of_the_loop_at_once_past_other_regions():
    """v6's default sits before v5's region: the path to its own region crosses all of v5's."""
    second = ["s_and_saveexec_b64 s[10:11], s[8:9]", "s_cbranch_execz .Ljoin2",
              "global_load_dword v6, v[2:3], off offset:4", ".Ljoin2:", "s_or_b64 exec, exec, s[10:11]"]
    b = body_of(PRE + ["v_mov_b32_e32 v6, 0"] + REGION + second + POST[:2] + ["v_add_f32_e32 v9, v9, v6"] + POST[2:])
    lines = code(hoist_masked_defaults(b, at_default(b)))
    head = lines.index(".Lloop:")
    assert {"v_mov_b32_e32 v5, 0", "v_mov_b32_e32 v6, 0"} <= set(lines[:head])
    assert not {"v_mov_b32_e32 v5, 0", "v_mov_b32_e32 v6, 0"} & set(lines[head:])
