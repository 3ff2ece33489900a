"""A signed range check 0 <= x < n made one unsigned compare against max(n, 0) (`fuse_range_check`): the forms it
takes, where the maximum goes, the cases it must refuse, and results through every gate (a negative n included)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from asmevo.agent.ops_range import fuse_range_check, fuse_range_checks, range_check
from agenttools import body_of, code, evaluated, evaluator

HEAD = ["s_load_dwordx2 s[2:3], s[0:1], 0x0", "s_load_dword s6, s[0:1], 0x8", "s_waitcnt lgkmcnt(0)",
        "v_add_u32_e32 v3, -8, v0"]
TAIL = ["s_and_saveexec_b64 s[8:9], s[10:11]", "global_store_dword v0, v1, s[2:3]", "s_or_b64 exec, exec, s[8:9]",
        "s_endpgm"]


def _fuse(lines: list[str], tail: list[str] = TAIL):
    body = body_of(HEAD + lines + tail)
    return fuse_range_check(body, next(i for i, x in enumerate(body.instructions) if x.mnemonic == "s_and_b64"))


@pytest.mark.parametrize("lower", ["v_cmp_lt_i32_e32 vcc, -1, v3", "v_cmp_le_i32_e32 vcc, 0, v3",
                                   "v_cmp_gt_i32_e64 vcc, v3, -1", "v_cmp_ge_i32_e64 vcc, v3, 0"])
@pytest.mark.parametrize("upper", ["v_cmp_gt_i32_e64 s[4:5], s6, v3", "v_cmp_lt_i32_e64 s[4:5], v3, s6"])
def test_every_spelling_of_the_check_becomes_one_unsigned_compare_against_the_maximum(lower, upper):
    new = _fuse([lower, upper, "s_and_b64 s[10:11], vcc, s[4:5]"])
    assert code(new) == HEAD[:3] + ["s_max_i32 s7, s6, 0", HEAD[3], "v_cmp_gt_u32_e64 s[10:11], s7, v3"] + TAIL


def test_a_constant_bound_needs_no_maximum_and_a_second_check_shares_the_first_ones():
    new = _fuse(["v_cmp_gt_i32_e32 vcc, 64, v3", "v_cmp_lt_i32_e64 s[4:5], -1, v3", "s_and_b64 s[10:11], s[4:5], vcc"])
    assert code(new)[4:] == ["v_cmp_gt_u32_e64 s[10:11], 64, v3"] + TAIL
    twice = ["v_cmp_lt_i32_e32 vcc, -1, v3", "v_cmp_gt_i32_e64 s[4:5], s6, v3", "s_and_b64 s[10:11], vcc, s[4:5]",
             "v_add_u32_e32 v4, 1, v3", "v_cmp_lt_i32_e32 vcc, -1, v4", "v_cmp_gt_i32_e64 s[4:5], s6, v4",
             "s_and_b64 s[12:13], vcc, s[4:5]", "s_and_b64 s[10:11], s[10:11], s[12:13]"]
    body = body_of(HEAD + twice + TAIL)
    new = fuse_range_checks(body, next(i for i, x in enumerate(body.instructions) if range_check(body, i)))
    assert [c for c in code(new) if c.startswith(("s_max", "v_cmp"))] == [
        "s_max_i32 s7, s6, 0", "v_cmp_gt_u32_e64 s[10:11], s7, v3", "v_cmp_gt_u32_e64 s[12:13], s7, v4"]


def test_a_literal_bound_needs_the_vcc_form():
    new = _fuse(["v_cmp_gt_i32_e32 vcc, 1000, v3", "v_cmp_lt_i32_e64 s[4:5], -1, v3", "s_and_b64 vcc, s[4:5], vcc",
                 "s_and_saveexec_b64 s[8:9], vcc", "global_store_dword v0, v1, s[2:3]", "s_or_b64 exec, exec, s[8:9]",
                 "s_endpgm"], tail=[])
    assert code(new)[4] == "v_cmp_gt_u32_e32 vcc, 0x3e8, v3" or code(new)[4] == "v_cmp_gt_u32_e32 vcc, 1000, v3"
    assert _fuse(["v_cmp_gt_i32_e32 vcc, 1000, v3", "v_cmp_lt_i32_e64 s[4:5], -1, v3",
                  "s_and_b64 s[10:11], s[4:5], vcc"]) is None


def test_an_unwritten_bound_gets_its_maximum_at_the_wave_start():
    body = body_of(["v_cmp_lt_i32_e32 vcc, -1, v0", "v_cmp_gt_i32_e64 s[4:5], s9, v0", "s_and_b64 s[10:11], vcc, s[4:5]",
                    "s_and_saveexec_b64 s[12:13], s[10:11]", "v_mov_b32_e32 v1, 0", "s_or_b64 exec, exec, s[12:13]",
                    "s_endpgm"])
    new = fuse_range_check(body, 2)
    assert code(new)[:2] == ["s_max_i32 s0, s9, 0", "v_cmp_gt_u32_e64 s[10:11], s0, v0"]


@pytest.mark.parametrize("lines, tail", [
    # SCC of the AND is read
    (["v_cmp_lt_i32_e32 vcc, -1, v3", "v_cmp_gt_i32_e64 s[4:5], s6, v3", "s_and_b64 s[10:11], vcc, s[4:5]",
      "s_cselect_b32 s12, 1, 0"], TAIL),
    # a compare's mask is read after the AND
    (["v_cmp_lt_i32_e32 vcc, -1, v3", "v_cmp_gt_i32_e64 s[4:5], s6, v3", "s_and_b64 s[10:11], vcc, s[4:5]",
      "v_cndmask_b32_e32 v1, 0, v1, vcc"], TAIL),
    # x changes between the compares
    (["v_cmp_lt_i32_e32 vcc, -1, v3", "v_add_u32_e32 v3, 1, v3", "v_cmp_gt_i32_e64 s[4:5], s6, v3",
      "s_and_b64 s[10:11], vcc, s[4:5]"], TAIL),
    # EXEC changes between them
    (["v_cmp_lt_i32_e32 vcc, -1, v3", "s_mov_b64 exec, s[14:15]", "v_cmp_gt_i32_e64 s[4:5], s6, v3",
      "s_and_b64 s[10:11], vcc, s[4:5]"], TAIL),
    # not a range check: x > 0, two different x, an upper bound only, a negative constant bound, unsigned compares
    (["v_cmp_lt_i32_e32 vcc, 0, v3", "v_cmp_gt_i32_e64 s[4:5], s6, v3", "s_and_b64 s[10:11], vcc, s[4:5]"], TAIL),
    (["v_cmp_lt_i32_e32 vcc, -1, v3", "v_cmp_gt_i32_e64 s[4:5], s6, v0", "s_and_b64 s[10:11], vcc, s[4:5]"], TAIL),
    (["v_cmp_gt_i32_e32 vcc, 9, v3", "v_cmp_gt_i32_e64 s[4:5], s6, v3", "s_and_b64 s[10:11], vcc, s[4:5]"], TAIL),
    (["v_cmp_lt_i32_e32 vcc, -1, v3", "v_cmp_gt_i32_e64 s[4:5], -2, v3", "s_and_b64 s[10:11], vcc, s[4:5]"], TAIL),
    (["v_cmp_lt_u32_e32 vcc, -1, v3", "v_cmp_gt_u32_e64 s[4:5], s6, v3", "s_and_b64 s[10:11], vcc, s[4:5]"], TAIL),
    # the bound is written twice, so no one place holds its maximum for every check
    (["s_add_u32 s6, s6, 1", "v_cmp_lt_i32_e32 vcc, -1, v3", "v_cmp_gt_i32_e64 s[4:5], s6, v3",
      "s_and_b64 s[10:11], vcc, s[4:5]"], TAIL),
])
def test_refused(lines, tail):
    assert _fuse(lines, tail) is None


def _checked_store(n: int):
    """A launch of a kernel storing 1.0 for the lanes with 0 <= lane - 8 < n (n: its scalar argument, after the
    three pointers the test kernel does not use)."""
    from asmevo.launches import launch_from_dict
    return launch_from_dict({"kernel": "k", "grid": [1, 1, 1], "block": [64, 1, 1], "args": [
        {"buffer": "out", "dtype": "float32", "shape": [64], "init": "zeros"},
        *({"buffer": f"unused{i}", "dtype": "float32", "shape": [1], "init": "zeros"} for i in range(3)),
        {"scalar": n, "dtype": "int64"}]}, label=f"n{n}")


def test_the_fused_check_is_equivalent_for_negative_zero_and_positive_bounds():
    from asmevo.agent.gates import Evaluator
    sys.path.insert(0, str(Path(__file__).parents[1] / "emu"))
    from emutools import asm
    lines = ["s_load_dwordx2 s[4:5], s[0:1], 0x0", "s_load_dword s6, s[0:1], 0x20", "v_lshlrev_b32_e32 v1, 2, v0",
             "v_add_u32_e32 v3, -8, v0", "v_mov_b32_e32 v2, 1.0", "s_waitcnt lgkmcnt(0)",
             "v_cmp_lt_i32_e32 vcc, -1, v3", "v_cmp_gt_i32_e64 s[8:9], s6, v3", "s_and_b64 s[8:9], vcc, s[8:9]",
             "s_and_saveexec_b64 s[10:11], s[8:9]", "global_store_dword v1, v2, s[4:5]",
             "s_or_b64 exec, exec, s[10:11]", "s_endpgm"]
    co = asm("\n".join(f"  {ln}" for ln in lines))
    ev = Evaluator(co.path, [_checked_store(n) for n in (-3, 0, 20, 100)])
    body = ev.body_of(0)
    new = fuse_range_check(body, next(i for i, x in enumerate(body.instructions) if x.mnemonic == "s_and_b64"))
    bound = next(c.split()[1].rstrip(",") for c in code(new) if c.startswith("s_max_i32") and c.endswith("s6, 0"))
    assert f"v_cmp_gt_u32_e64 s[8:9], {bound}, v3" in code(new)
    evaluated(ev, body, new, "fuse_range_check")


def test_max_pooling_checks_both_window_coordinates_in_one_compare_each():
    ev = evaluator("42_Max_Pooling_2D")
    body = ev.body_of(0)
    sites = [i for i in range(len(body.instructions)) if range_check(body, i)]
    assert len(sites) == 2  # the window row (outer loop) and column (inner loop)
    new = fuse_range_check(fuse_range_checks(body, sites[1]), sites[0] + 1)  # + 1: the inner check's maximum
    # in the loops two compares and an AND become one compare per check; one maximum each goes before them
    assert len(body.instructions) - len(new.instructions) == 2
    assert [sum(c.startswith(op) for c in code(new)) for op in ("v_cmp_gt_u32_e64", "s_max_i32")] == [2, 2]
    evaluated(ev, body, new, "fuse_range_check")
