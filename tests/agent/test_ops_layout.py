"""Block layout: fall_through_branch (a branch's target run laid out right after it, every edge kept),
unroll_loop and swap_branch_pair."""
from __future__ import annotations

import pytest

from asmevo.agent.ops_layout import (MAX_UNROLLED, branch_pair, fall_through_branch, placeable, swap_branch_pair,
                                     unroll_loop)

from agenttools import body_of, code, evaluated, evaluator

DIAMOND = ["s_cmp_eq_u32 s0, 0", "s_cbranch_scc1 .Lhot", "v_mov_b32_e32 v1, 1", "s_branch .Lend", ".Lhot:",
           "v_mov_b32_e32 v1, 2", ".Lend:", "global_store_dword v[2:3], v1, off", "s_endpgm"]


def test_conditional_branch_is_inverted_and_its_target_run_follows():
    b = body_of(DIAMOND)
    new = fall_through_branch(b, 1)
    assert new is not None and new.no_worse(b)
    assert code(new) == ["s_cmp_eq_u32 s0, 0", "s_cbranch_scc0 .Lhot_ft0", ".Lhot:", "v_mov_b32_e32 v1, 2", ".Lend:",
                         "global_store_dword v[2:3], v1, off", "s_endpgm", ".Lhot_ft0:", "v_mov_b32_e32 v1, 1",
                         "s_branch .Lend"]


def test_a_run_entered_by_fall_through_gets_a_branch_there():
    lines = ["s_cmp_eq_u32 s0, 0", "s_cbranch_scc1 .Lb", "v_mov_b32_e32 v1, 1", ".Lb:", "v_add_u32_e32 v1, 1, v1",
             "s_endpgm"]
    new = fall_through_branch(body_of(lines), 1)
    assert code(new) == ["s_cmp_eq_u32 s0, 0", "s_cbranch_scc0 .Lb_ft0", ".Lb:", "v_add_u32_e32 v1, 1, v1",
                         "s_endpgm", ".Lb_ft0:", "v_mov_b32_e32 v1, 1", "s_branch .Lb"]


def test_an_existing_label_after_the_branch_is_reused_and_a_backward_target_moves_forward():
    lines = ["s_branch .La", ".Lback:", "v_mov_b32_e32 v1, 3", "s_endpgm", ".La:", "s_cmp_eq_u32 s0, 0",
             "s_cbranch_scc1 .Lback", ".Lnext:", "v_mov_b32_e32 v1, 4", "s_endpgm"]
    new = fall_through_branch(body_of(lines), 4)
    assert code(new) == [".La:", "s_cmp_eq_u32 s0, 0", "s_cbranch_scc0 .Lnext", ".Lback:",
                         "v_mov_b32_e32 v1, 3", "s_endpgm", ".Lnext:", "v_mov_b32_e32 v1, 4", "s_endpgm"]


def test_an_unconditional_branch_goes_when_its_target_run_follows():
    """The moved run's own `s_branch .Ly` now has .Ly right after it, so it goes too."""
    lines = ["v_mov_b32_e32 v1, 0", "s_branch .Lx", ".Ly:", "v_mov_b32_e32 v1, 5", "s_endpgm", ".Lx:",
             "v_mov_b32_e32 v2, 6", "s_branch .Ly"]
    new = fall_through_branch(body_of(lines), 1)
    assert code(new) == ["v_mov_b32_e32 v1, 0", ".Lx:", "v_mov_b32_e32 v2, 6", ".Ly:", "v_mov_b32_e32 v1, 5",
                         "s_endpgm"]


def test_a_lone_endpgm_target_is_copied():
    lines = ["v_cmp_gt_i32_e32 vcc, s0, v0", "s_and_saveexec_b64 s[2:3], vcc", "s_cbranch_execz .Lend",
             "global_store_dword v[2:3], v1, off", ".Lend:", "s_endpgm"]
    new = fall_through_branch(body_of(lines), 2)
    assert code(new) == ["v_cmp_gt_i32_e32 vcc, s0, v0", "s_and_saveexec_b64 s[2:3], vcc",
                         "s_cbranch_execnz .Lend_ft0", "s_endpgm", ".Lend_ft0:", "global_store_dword v[2:3], v1, off",
                         ".Lend:", "s_endpgm"]


@pytest.mark.parametrize("lines, site", [
    # the target run holds the branch (a loop's back edge)
    ([".Lloop:", "s_add_i32 s0, s0, -1", "s_cmp_lg_u32 s0, 0", "s_cbranch_scc1 .Lloop", "s_endpgm"], 2),
    # the target is already next
    (["s_cmp_eq_u32 s0, 0", "s_cbranch_scc1 .Ln", ".Ln:", "s_endpgm"], 1),
    # the target is the wave's first instruction
    ([".Ltop:", "s_endpgm", "s_branch .Ltop"], 1),
    # a condition with no inverse
    (["s_cbranch_cdbgsys .Lx", "s_endpgm", ".Lx:", "s_endpgm"], 0),
    # the target run never ends
    (["s_cmp_eq_u32 s0, 0", "s_cbranch_scc1 .Lx", "s_endpgm", ".Lx:", "v_mov_b32_e32 v1, 1"], 1),
])
def test_refused(lines, site):
    b = body_of(lines)
    assert not placeable(b, site) and fall_through_branch(b, site) is None


LOOP = ["s_mov_b32 s0, 4", ".Lloop:", "v_add_u32_e32 v1, 1, v1", "s_add_i32 s0, s0, -1", "s_cmp_lg_u32 s0, 0",
        "s_cbranch_scc1 .Lloop", "global_store_dword v[2:3], v1, off", "s_endpgm"]


def test_a_one_block_loop_is_unrolled_twice_leaving_from_either_copy():
    b = body_of(LOOP)
    new = unroll_loop(b, 4)
    assert new is not None and new.no_worse(b)
    step = ["v_add_u32_e32 v1, 1, v1", "s_add_i32 s0, s0, -1", "s_cmp_lg_u32 s0, 0"]
    assert code(new) == ["s_mov_b32 s0, 4", ".Lloop:", *step, "s_cbranch_scc0 .Lloop_unrolled_exit0", *step,
                         "s_cbranch_scc1 .Lloop", ".Lloop_unrolled_exit0:", "global_store_dword v[2:3], v1, off",
                         "s_endpgm"]


@pytest.mark.parametrize("lines, site", [
    # two blocks: the loop is entered in its middle too
    (["s_cbranch_scc1 .Lmid", ".Lloop:", "v_add_u32_e32 v1, 1, v1", ".Lmid:", "s_add_i32 s0, s0, -1",
      "s_cmp_lg_u32 s0, 0", "s_cbranch_scc1 .Lloop", "s_endpgm"], 4),
    # a forward branch
    (["s_cmp_eq_u32 s0, 0", "s_cbranch_scc1 .Lx", "v_mov_b32_e32 v1, 1", ".Lx:", "s_endpgm"], 1),
    # the loop starts at the wave's first instruction
    (LOOP[1:], 3),
    # too long to copy
    (LOOP[:2] + ["v_add_u32_e32 v1, 1, v1"] * MAX_UNROLLED + LOOP[3:], MAX_UNROLLED + 3),
])
def test_unroll_refused(lines, site):
    assert unroll_loop(body_of(lines), site) is None


def _counting_kernel(latch: str):
    """An evaluator of a kernel adding 1 to each lane's value n times (n its scalar argument, the loop's
    latch `latch`), launched with n = 3 and n = 4."""
    import sys
    from pathlib import Path

    from asmevo.agent.gates import Evaluator
    from asmevo.launches import launch_from_dict
    sys.path.insert(0, str(Path(__file__).parents[1] / "emu"))
    from emutools import asm
    co = asm(f"""  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_load_dword s6, s[0:1], 0x20
  v_lshlrev_b32_e32 v1, 2, v0
  v_mov_b32_e32 v2, 0
  s_waitcnt lgkmcnt(0)
.Lloop:
  v_add_u32_e32 v2, 1, v2
  s_add_i32 s6, s6, -1
  s_cmp_lg_u32 s6, 0
{latch}
  global_store_dword v1, v2, s[4:5]
  s_endpgm""")

    def launch(n: int):
        return launch_from_dict({"kernel": "k", "grid": [1, 1, 1], "block": [64, 1, 1], "args": [
            {"buffer": "out", "dtype": "int32", "shape": [64], "init": "zeros"},
            *({"buffer": f"unused{i}", "dtype": "float32", "shape": [1], "init": "zeros"} for i in range(3)),
            {"scalar": n, "dtype": "int64"}]}, label=f"n{n}")
    return Evaluator(co.path, [launch(3), launch(4)])


def test_the_unrolled_loop_is_equivalent_for_odd_and_even_trip_counts():
    """The loop unrolled twice leaves through the first copy for n = 3 and the second for n = 4, verified on both."""
    ev = _counting_kernel("  s_cbranch_scc1 .Lloop")
    body = ev.body_of(0)
    new = unroll_loop(body, next(i for i, x in enumerate(body.instructions) if x.mnemonic == "s_cbranch_scc1"))
    assert new is not None and len(new.instructions) - len(body.instructions) == 4
    evaluated(ev, body, new, "unroll_loop")


def test_a_latch_leaving_by_its_conditional_branch_loops_by_it_instead():
    b = body_of([".Lloop:", "s_add_i32 s0, s0, -1", "s_cmp_lg_u32 s0, 0", "s_cbranch_scc0 .Lexit", "s_branch .Lloop",
                 "v_mov_b32_e32 v1, 1", ".Lexit:", "s_endpgm"])
    new = swap_branch_pair(b, 2)
    assert new is not None and new.no_worse(b)
    assert code(new) == [".Lloop:", "s_add_i32 s0, s0, -1", "s_cmp_lg_u32 s0, 0", "s_cbranch_scc1 .Lloop",
                         "s_branch .Lexit", "v_mov_b32_e32 v1, 1", ".Lexit:", "s_endpgm"]


def test_a_swapped_pair_whose_new_jump_reaches_the_next_instruction_loses_it():
    b = body_of(["s_cmp_eq_u32 s0, 0", "s_cbranch_scc1 .Lnext", "s_branch .Lfar", ".Lnext:", "v_mov_b32_e32 v1, 1",
                 ".Lfar:", "s_endpgm"])
    assert code(swap_branch_pair(b, 1)) == ["s_cmp_eq_u32 s0, 0", "s_cbranch_scc0 .Lfar", ".Lnext:",
                                            "v_mov_b32_e32 v1, 1", ".Lfar:", "s_endpgm"]


@pytest.mark.parametrize("lines, site", [
    # something else jumps to the s_branch
    (["s_cbranch_scc0 .Lx", ".Lin:", "s_branch .Ly", ".Lx:", "s_cbranch_execz .Lin", ".Ly:", "s_endpgm"], 0),
    # no s_branch follows
    (["s_cbranch_scc0 .Lx", "v_mov_b32_e32 v1, 1", ".Lx:", "s_endpgm"], 0),
    # a condition with no inverse
    (["s_cbranch_cdbgsys .Lx", "s_branch .Ly", ".Lx:", "s_endpgm", ".Ly:", "s_endpgm"], 0),
])
def test_swap_refused(lines, site):
    b = body_of(lines)
    assert not branch_pair(b, site) and swap_branch_pair(b, site) is None


def test_the_swapped_latch_is_equivalent_and_issues_one_branch_per_iteration():
    ev = _counting_kernel("  s_cbranch_scc0 .Lexit\n  s_branch .Lloop\n.Lexit:")
    body = ev.body_of(0)
    new = swap_branch_pair(body, next(i for i, x in enumerate(body.instructions) if x.mnemonic == "s_cbranch_scc0"))
    assert new is not None and len(new.instructions) == len(body.instructions) - 1   # .Lexit follows: no jump
    assert [x.mnemonic for x in new.instructions if x.is_branch] == ["s_cbranch_scc1"]
    cand = evaluated(ev, body, new, "swap_branch_pair")
    assert cand.cycles < ev.lineage.candidates[0].cycles


@pytest.mark.slow
def test_prefill_attention_skip_branch_falls_through():
    """vLLM's prefill attention at its bench shape: the waves of query blocks past their sequence's end
    (4816 of 8192) take `s_cbranch_scc1` at 0x1a64 and skip the block. Laying the skipped-to code after the
    branch verifies on every verify shape and the held-out one, and the bench shape, which the main loop of
    the non-empty blocks dominates, is no slower."""
    ev = evaluator("vllm_prefill_attention", "triton", "mi300x")
    body = ev.body_of(0)
    site = next(i for i, x in enumerate(body.instructions) if x.text() == "s_cbranch_scc1 .Lbb_1cc0")
    new = fall_through_branch(body, site)
    assert new is not None and new.no_worse(body)
    assert new.instructions[site].text() == "s_cbranch_scc0 .Lbb_1cc0_ft0"
    cand = evaluated(ev, body, new, "fall_through_branch")
    assert cand.speedup >= 1.0


@pytest.mark.parametrize("operator, site, branch", [(fall_through_branch, 95, "s_branch .Lbb_18e0"),
                                                    (swap_branch_pair, 307, "s_cbranch_execnz .Lbb_1c3c")])
def test_a_relaid_branch_is_predicted_to_run_as_often_as_it_does(operator, site, branch):
    """36_RMSNorm_ at the bench shape on MI308X. Laying out the run after a preheader's `s_branch` leaves the run
    before it closed by a new `s_branch` of its own, taken as often as that run fell through (its successor's
    count less the branch's); a swapped pair's new `s_branch` runs as often as the old conditional branch was
    taken. Counted as never running (a block the parent lacks) or as the old `s_branch`, the first was predicted
    faster than K0 and verifies slower, the second 0.8 % slower and verifies the same."""
    from asmevo.agent.search import heat_of, predict

    ev = evaluator("36_RMSNorm_", gpu="mi308x")
    body = ev.body_of(0)
    assert body.instructions[site].text() == branch
    heat = heat_of(body, ev.profile(0), ev.lineage.get(0).cycles)
    new = operator(body, site)
    cand = evaluated(ev, body, new, operator.__name__)
    assert predict(new, heat) == pytest.approx(cand.cycles, rel=0.002)
