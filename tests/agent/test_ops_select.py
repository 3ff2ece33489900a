"""Scalar selects that only shuffle SCC: an all-or-nothing `s_cselect` mask folded into the `s_and` that reads it
(`fuse_select_and`), a branch through a select and a compare made a branch on SCC (`remove_scc_roundtrip`); the
cases each must refuse, and their results through every gate."""
from __future__ import annotations

import sys

import pytest
from pathlib import Path

from asmevo.agent.edit import Window
from asmevo.agent.ops_select import (fold_vcc_branch, fuse_select_and, fuse_select_ands, remove_scc_roundtrip,
                                     remove_scc_roundtrips)
from agenttools import body_of, code, evaluator

HEAD = ["s_load_dwordx2 s[2:3], s[0:1], 0x0", "s_cmp_lt_i32 s4, s10"]
TAIL = ["s_and_saveexec_b64 s[8:9], s[6:7]", "s_waitcnt lgkmcnt(0)", "global_store_dword v0, v1, s[2:3]",
        "s_or_b64 exec, exec, s[8:9]", "s_endpgm"]


def _fold(lines: list[str], at: int = 2):
    return fuse_select_and(body_of(HEAD + lines + TAIL), at)


def test_the_select_moves_into_the_and_with_either_polarity_and_operand_order():
    new = _fold(["s_cselect_b64 s[4:5], -1, 0", "s_and_b64 s[6:7], s[24:25], s[4:5]"])
    assert code(new)[2] == "s_cselect_b64 s[6:7], s[24:25], 0" and len(code(new)) == len(HEAD) + 1 + len(TAIL)
    new = _fold(["s_cselect_b64 s[4:5], 0, -1", "s_and_b64 s[6:7], s[4:5], exec"])
    assert code(new)[2] == "s_cselect_b64 s[6:7], 0, exec"
    new = _fold(["s_cselect_b64 s[4:5], -1, 0", "v_mov_b32_e32 v1, s11", "s_and_b64 s[4:5], s[24:25], s[4:5]",
                 "s_mov_b64 s[6:7], s[4:5]"])  # the AND overwrites the mask; SCC is not read on the way
    assert code(new)[2:4] == ["v_mov_b32_e32 v1, s11", "s_cselect_b64 s[4:5], s[24:25], 0"]


def test_refused_when_scc_or_the_mask_is_still_needed_or_scc_changes_first():
    assert _fold(["s_cselect_b64 s[4:5], -1, 0", "s_and_b64 s[6:7], s[24:25], s[4:5]",
                  "s_cselect_b32 s12, 1, 2", "v_mov_b32_e32 v1, s12"]) is None  # the AND's SCC is read
    assert _fold(["s_cselect_b64 s[4:5], -1, 0", "s_and_b64 s[6:7], s[24:25], s[4:5]",
                  "s_or_b64 s[6:7], s[6:7], s[4:5]"]) is None  # the mask is read again
    assert _fold(["s_cselect_b64 s[4:5], -1, 0", "s_cmp_eq_u32 s11, 0", "s_and_b64 s[6:7], s[24:25], s[4:5]"]) is None
    assert _fold(["s_cselect_b64 s[4:5], -1, 0", "s_and_b64 s[6:7], s[4:5], s[4:5]"]) is None
    assert _fold(["s_cselect_b64 s[4:5], -1, 1", "s_and_b64 s[6:7], s[24:25], s[4:5]"]) is None  # not all or nothing
    assert _fold(["s_cselect_b64 s[4:5], -1, 0", "s_or_b64 s[6:7], s[24:25], s[4:5]"]) is None


def test_a_batched_matmul_k_loop_issues_eight_scalar_instructions_fewer_per_iteration():
    ev = evaluator("3_Batched_matrix_multiplication")
    body = ev.body_of(0)
    site = next(i for i, ins in enumerate(body.instructions) if ins.mnemonic == "s_cselect_b64"
                and [op.text for op in ins.operands[1:]] == ["-1", "0"])
    new = fuse_select_ands(body, site)
    assert new is not None and len(body.instructions) - len(new.instructions) == 8 and new.no_worse(body)
    cand = ev.evaluate(0, new.edit(body, "fuse_select_ands", "test"), Window(*ev.source_of(0).body), agent="test", step=1)
    assert cand.status == "verified" and cand.verdict["kind"] == "equivalent", cand.summary()


def _branch(lines: list[str]):
    body = body_of(["s_load_dwordx2 s[2:3], s[0:1], 0x0", "s_and_b64 s[28:29], s[84:85], exec", *lines,
                    "v_mov_b32_e32 v1, 0", ".Lx:", "s_endpgm"])
    return remove_scc_roundtrip(body, 2)


def test_a_branch_through_a_select_and_a_compare_branches_on_scc():
    assert code(_branch(["s_cselect_b32 s15, 1, 0", "s_cmp_lg_u32 s15, 1", "s_cbranch_scc1 .Lx"]))[2] == "s_cbranch_scc0 .Lx"
    assert code(_branch(["s_cselect_b32 s15, 1, 0", "s_cmp_eq_u32 s15, 1", "s_cbranch_scc1 .Lx"]))[2] == "s_cbranch_scc1 .Lx"
    assert code(_branch(["s_cselect_b32 s15, 0, 1", "s_cmp_lg_u32 s15, 0", "s_cbranch_scc0 .Lx"]))[2] == "s_cbranch_scc1 .Lx"
    # SCC' is SCC here, so SCC may be read after the branch
    kept = _branch(["s_cselect_b32 s15, 1, 0", "s_cmp_lg_u32 s15, 0", "s_cbranch_scc1 .Lx", "s_cselect_b32 s16, 2, 3"])
    assert code(kept)[2:4] == ["s_cbranch_scc1 .Lx", "s_cselect_b32 s16, 2, 3"]


def test_refused_when_the_select_or_a_negated_scc_is_read_later():
    assert _branch(["s_cselect_b32 s15, 1, 0", "s_cmp_lg_u32 s15, 1", "s_cbranch_scc1 .Lx", "s_add_u32 s16, s15, 1"]) is None
    assert _branch(["s_cselect_b32 s15, 1, 0", "s_cmp_lg_u32 s15, 1", "s_cbranch_scc1 .Lx", "s_cselect_b32 s16, 2, 3"]) is None
    assert _branch(["s_cselect_b32 s15, 1, 0", "s_cmp_lg_u32 s15, 2", "s_cbranch_scc1 .Lx"]) is None
    assert _branch(["s_cselect_b32 s15, 1, 0", "s_cmp_lt_u32 s15, 1", "s_cbranch_scc1 .Lx"]) is None


def _gated_store(branch: list[str]):
    """An evaluator of a kernel that stores 1.0 only when its scalar argument is below 5 (`branch`: the lines
    from the compare to the branch to .Lskip), launched with 3 and with 7."""
    from asmevo.agent.gates import Evaluator
    from asmevo.launches import launch_from_dict
    sys.path.insert(0, str(Path(__file__).parents[1] / "emu"))
    from emutools import asm
    lines = ["s_load_dwordx2 s[4:5], s[0:1], 0x0", "s_load_dword s6, s[0:1], 0x20", "v_lshlrev_b32_e32 v1, 2, v0",
             "s_waitcnt lgkmcnt(0)", "s_cmp_lt_u32 s6, 5", *branch, "v_mov_b32_e32 v2, 1.0",
             "global_store_dword v1, v2, s[4:5]"]
    co = asm("\n".join(f"  {ln}" for ln in lines) + "\n.Lskip:\n  s_endpgm")

    def launch(n: int):
        return launch_from_dict({"kernel": "k", "grid": [1, 1, 1], "block": [64, 1, 1], "args": [
            {"buffer": "out", "dtype": "float32", "shape": [64], "init": "zeros"},
            *({"buffer": f"unused{i}", "dtype": "float32", "shape": [1], "init": "zeros"} for i in range(3)),
            {"scalar": n, "dtype": "int64"}]}, label=f"n{n}")
    return Evaluator(co.path, [launch(3), launch(7)])


def _verified(ev, new, operator: str) -> None:
    cand = ev.evaluate(0, new.edit(ev.body_of(0), operator, "test"), Window(*ev.source_of(0).body),
                       agent="test", step=1)
    assert cand.status == "verified" and cand.verdict["kind"] == "equivalent", cand.summary()


def test_the_uniform_branch_rewrite_is_equivalent_on_both_paths():
    """The rewritten branch goes through every gate and is verified with the argument on either side."""
    ev = _gated_store(["s_cselect_b32 s7, 1, 0", "s_cmp_lg_u32 s7, 1", "s_cbranch_scc1 .Lskip"])
    body = ev.body_of(0)
    site = next(i for i, ins in enumerate(body.instructions) if ins.mnemonic == "s_cselect_b32")
    new = remove_scc_roundtrips(body, site)
    assert any(c.startswith("s_cbranch_scc0 ") for c in code(new)) and len(body.instructions) - len(new.instructions) == 2
    _verified(ev, new, "remove_scc_roundtrips")


def test_the_round_trip_may_be_spread_over_its_block_but_nothing_may_touch_scc_in_between():
    spread = ["s_cselect_b32 s15, 1, 0", "v_mov_b32_e32 v2, 0", "s_cmp_lg_u32 s15, 1", "s_waitcnt lgkmcnt(0)",
              "s_cbranch_scc1 .Lx"]
    assert code(_branch(spread))[2:5] == ["v_mov_b32_e32 v2, 0", "s_waitcnt lgkmcnt(0)", "s_cbranch_scc0 .Lx"]
    assert _branch(spread[:1] + ["s_add_u32 s16, s16, 1"] + spread[2:]) is None  # SCC rewritten before the compare
    assert _branch(spread[:3] + ["s_addc_u32 s16, s16, 0"] + spread[4:]) is None  # SCC' read before the branch


def _vcc(lines: list[str], after: tuple[str, ...] = ()):
    """fold_vcc_branch at the `s_and_b64` of `lines` (a kernel that stores v1 unless it branches to .Lx)."""
    body = body_of(["s_load_dwordx2 s[2:3], s[0:1], 0x0", *lines, "v_mov_b32_e32 v1, 0", ".Lx:", *after, "s_endpgm"])
    return fold_vcc_branch(body, next(i for i, x in enumerate(body.instructions) if x.mnemonic == "s_and_b64"))


def test_a_branch_through_vcc_on_a_selected_mask_branches_on_scc():
    select = ["s_cmp_lg_u32 s4, 0", "s_cselect_b64 s[6:7], -1, 0", "v_mov_b32_e32 v2, 0"]
    for branch, expect in (("s_cbranch_vccnz", "s_cbranch_scc1"), ("s_cbranch_vccz", "s_cbranch_scc0")):
        new = _vcc([*select, "s_and_b64 vcc, exec, s[6:7]", f"{branch} .Lx"])
        assert code(new)[3:5] == ["v_mov_b32_e32 v2, 0", f"{expect} .Lx"], branch
    negated = ["s_cmp_lg_u32 s4, 0", "s_cselect_b64 s[6:7], 0, -1", "s_and_b64 vcc, s[6:7], exec", "s_cbranch_vccnz .Lx"]
    assert code(_vcc(negated))[3] == "s_cbranch_scc0 .Lx"
    # the AND's SCC is the select's when the mask is all ones on SCC, so SCC may be read after the branch
    kept = _vcc([*select, "s_and_b64 vcc, exec, s[6:7]", "s_cbranch_vccnz .Lx"], after=("s_cselect_b32 s8, 1, 2",))
    assert "s_cbranch_scc1 .Lx" in code(kept)


def test_a_constant_mask_makes_the_branch_unconditional_or_drops_it():
    ones = _vcc(["s_mov_b64 s[28:29], -1", "s_cmp_lg_u32 s4, 0", "s_cbranch_scc0 .Lx", "s_and_b64 vcc, exec, s[28:29]",
                 "s_cbranch_vccnz .Lx"])
    assert code(ones)[3:6] == ["s_cbranch_scc0 .Lx", "s_branch .Lx", "v_mov_b32_e32 v1, 0"]
    zeros = _vcc(["s_mov_b64 s[28:29], 0", "s_and_b64 vcc, exec, s[28:29]", "s_cbranch_vccnz .Lx"])
    assert code(zeros)[1:3] == ["s_mov_b64 s[28:29], 0", "v_mov_b32_e32 v1, 0"]


@pytest.mark.parametrize("lines, after", [
    # VCC read after the branch
    (["s_cselect_b64 s[6:7], -1, 0", "s_and_b64 vcc, exec, s[6:7]", "s_cbranch_vccnz .Lx"], ("v_cndmask_b32_e32 v1, 0, v1, vcc",)),
    # SCC written between the select and the AND
    (["s_cselect_b64 s[6:7], -1, 0", "s_add_u32 s8, s8, 1", "s_and_b64 vcc, exec, s[6:7]", "s_cbranch_vccnz .Lx"], ()),
    # a negated select's SCC, or a constant's, read after the branch
    (["s_cselect_b64 s[6:7], 0, -1", "s_and_b64 vcc, exec, s[6:7]", "s_cbranch_vccnz .Lx"], ("s_cselect_b32 s8, 1, 2",)),
    (["s_mov_b64 s[6:7], -1", "s_and_b64 vcc, exec, s[6:7]", "s_cbranch_vccnz .Lx"], ("s_cselect_b32 s8, 1, 2",)),
    # the mask is not all or nothing
    (["s_cselect_b64 s[6:7], 3, 0", "s_and_b64 vcc, exec, s[6:7]", "s_cbranch_vccnz .Lx"], ()),
    (["s_mov_b32 s6, -1", "s_and_b64 vcc, exec, s[6:7]", "s_cbranch_vccnz .Lx"], ()),
    # EXEC may be narrower than the wave's (it could be empty)
    (["s_cselect_b64 s[6:7], -1, 0", "s_and_b64 exec, exec, s[8:9]", "s_and_b64 vcc, exec, s[6:7]",
      "s_cbranch_vccnz .Lx"], ()),
])
def test_vcc_branch_refused(lines, after):
    assert _vcc(lines, after) is None


def test_the_vcc_branch_rewrite_is_equivalent_on_both_paths():
    """The branch through a selected mask and VCC, on SCC instead, is verified with the argument on either side."""
    ev = _gated_store(["s_cselect_b64 s[8:9], -1, 0", "s_and_b64 vcc, exec, s[8:9]", "s_cbranch_vccz .Lskip"])
    body = ev.body_of(0)
    new = fold_vcc_branch(body, next(i for i, ins in enumerate(body.instructions) if ins.mnemonic == "s_and_b64"))
    assert any(c.startswith("s_cbranch_scc0 ") for c in code(new)) and len(body.instructions) - len(new.instructions) == 1
    _verified(ev, new, "fold_vcc_branch")
