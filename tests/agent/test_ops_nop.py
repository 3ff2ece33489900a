"""fill_nop / fill_nops / rename_sgprs: hazard nops replaced by independent work, lane masks renamed."""
from __future__ import annotations

from asmevo.agent.ops_nop import fill_nop, fill_nops
from asmevo.agent.ops_rename import rename_sgprs

from agenttools import body_of, code

# v_cmp writes s[0:1], v_cndmask reads it: 2 wait states needed (gfx940 VALU SGPR -> VALU), covered by s_nop 1.
PAIR = ["v_cmp_gt_f32_e64 s[0:1], 0, v1", "s_nop 1", "v_cndmask_b32_e64 v2, 0, v1, s[0:1]"]


def test_independent_work_fills_the_gap_and_the_nop_goes():
    b = body_of(PAIR + ["v_add_f32_e32 v5, v6, v6", "v_mul_f32_e32 v7, v6, v6", "s_endpgm"])
    once = fill_nop(b, 1)
    assert once is not None and once.no_worse(b)
    assert code(once)[:3] == ["v_cmp_gt_f32_e64 s[0:1], 0, v1", "v_add_f32_e32 v5, v6, v6", "s_nop 0"]
    both = fill_nops(b, 1)
    assert code(both) == ["v_cmp_gt_f32_e64 s[0:1], 0, v1", "v_add_f32_e32 v5, v6, v6",
                          "v_mul_f32_e32 v7, v6, v6", "v_cndmask_b32_e64 v2, 0, v1, s[0:1]", "s_endpgm"]
    assert both.no_worse(b)


def test_dependent_work_or_a_memory_op_in_the_way_is_not_moved():
    dependent = body_of(PAIR + ["v_add_f32_e32 v5, v2, v2", "s_endpgm"])  # reads the select's result
    assert fill_nop(dependent, 1) is None
    behind_load = body_of(PAIR + ["global_load_dword v8, v[10:11], off", "v_add_f32_e32 v5, v6, v6", "s_endpgm"])
    assert fill_nop(behind_load, 1) is None
    writes_mask = body_of(PAIR + ["v_cmp_lt_f32_e64 s[0:1], 0, v6", "s_endpgm"])
    assert fill_nop(writes_mask, 1) is None
    behind_mode_write = body_of(PAIR + ["s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 4), 0",
                                        "v_add_f32_e32 v5, v6, v6", "s_endpgm"])  # its rounding mode changes
    assert fill_nop(behind_mode_write, 1) is None


def test_earlier_independent_work_moves_down_into_the_gap():
    b = body_of(["v_mul_f32_e32 v7, v6, v6"] + PAIR + ["s_endpgm"])
    new = fill_nop(b, 2)
    assert code(new)[:3] == ["v_cmp_gt_f32_e64 s[0:1], 0, v1", "s_nop 0", "v_mul_f32_e32 v7, v6, v6"]
    assert new.no_worse(b)


def test_a_nop_whose_hazard_is_already_covered_is_dropped():
    b = body_of(["v_cmp_gt_f32_e64 s[0:1], 0, v1", "v_add_f32_e32 v5, v6, v6", "v_mul_f32_e32 v7, v6, v6",
                 "s_nop 1", "v_cndmask_b32_e64 v2, 0, v1, s[0:1]", "s_endpgm"])
    assert "s_nop" not in " ".join(code(fill_nops(b, 3)))


CHAINS = ["v_cmp_gt_f32_e32 vcc, 0, v1", "s_nop 1", "v_cndmask_b32_e32 v2, 0, v1, vcc",
          "v_cmp_gt_f32_e32 vcc, 0, v3", "s_nop 1", "v_cndmask_b32_e32 v4, 0, v3, vcc",
          "v_cmp_gt_f32_e32 vcc, 0, v5", "s_nop 1", "v_cndmask_b32_e32 v6, 0, v5, vcc", "s_endpgm"]


def test_renamed_masks_let_compare_select_chains_interleave():
    b = body_of(CHAINS)
    assert fill_nop(b, 1) is None  # every later instruction reads or writes VCC
    new = rename_sgprs(b, 1)
    assert new is not None and new.no_worse(b)
    c = code(new)
    assert "vcc" not in " ".join(c) and all("_e32" not in x for x in c if x.startswith(("v_cmp", "v_cndmask")))
    assert sum(x.startswith("s_nop") for x in c) < 3
    masks = {x.split()[1].rstrip(",") for x in c if x.startswith("v_cmp")}
    assert len(masks) == 3 and all(m.startswith("s[") for m in masks)


def test_masks_that_cannot_be_vop3_or_stay_live_are_kept():
    def chains(cmp_src: str, select_src: str, tail: list[str]) -> list[str]:
        return [f"v_cmp_gt_f32_e32 vcc, {cmp_src}, v1", "s_nop 1", f"v_cndmask_b32_e32 v2, {select_src}, v1, vcc",
                "v_cmp_gt_f32_e32 vcc, 0, v3", "s_nop 1", "v_cndmask_b32_e32 v4, 0, v3, vcc", *tail]

    assert rename_sgprs(body_of(chains("0", "0", ["s_endpgm"])), 1) is not None  # the control
    literal = rename_sgprs(body_of(chains("0x3f200000", "0", ["s_endpgm"])), 1)  # no VOP3 literal on gfx9
    assert "v_cmp_gt_f32_e32 vcc, 0x3f200000, v1" in code(literal)
    two_scalars = rename_sgprs(body_of(chains("0", "s4", ["s_endpgm"])), 1)  # s4 + mask: two constant-bus reads
    assert "v_cndmask_b32_e32 v2, s4, v1, vcc" in code(two_scalars)
    live = ["v_cmp_gt_f32_e32 vcc, 0, v5", "s_nop 1", "v_cndmask_b32_e32 v6, 0, v5, vcc",
            "s_cbranch_vccnz .Lx", "v_add_f32_e32 v5, v6, v6", ".Lx:", "s_endpgm"]
    new = rename_sgprs(body_of(chains("0", "0", live)), 1)
    assert new is not None and code(new)[-5].startswith("v_cndmask_b32_e32 v6, 0, v5, vcc")  # read by the branch


def test_scalar_temporaries_get_their_own_sgprs_so_chains_interleave():
    # clang materialises every VOP3 constant in the same scalar temporary (no VOP3 literal on gfx9)
    b = body_of(["s_mov_b32 s8, 0x42b17218", "v_cmp_nlt_f32_e64 s[8:9], s8, v1", "s_nop 1",
                 "v_cndmask_b32_e64 v2, 0, v1, s[8:9]",
                 "s_mov_b32 s8, 0xc2ce8ed0", "v_cmp_nlt_f32_e64 s[8:9], s8, v3", "s_nop 1",
                 "v_cndmask_b32_e64 v4, 0, v3, s[8:9]", "s_endpgm"])
    assert fill_nops(b, 2) is None
    new = rename_sgprs(b, 2)
    assert new is not None and new.no_worse(b)
    c = code(new)
    assert sum(x.startswith("s_nop") for x in c) < 2
    consts = {x.split()[1].rstrip(","): x.split()[2] for x in c if x.startswith("s_mov_b32")}
    assert len(consts) == 2 and set(consts.values()) == {"0x42b17218", "0xc2ce8ed0"}


def test_a_scalar_live_out_of_its_block_or_read_as_a_pair_keeps_its_register():
    chain = ["s_mov_b32 s8, 0x42b17218", "v_cmp_nlt_f32_e64 s[0:1], s8, v1", "s_nop 1",
             "v_cndmask_b32_e64 v2, 0, v1, s[0:1]", "v_mul_f32_e32 v9, v6, v6"]
    live = rename_sgprs(body_of([*chain, "s_cbranch_scc0 .Lx", "v_add_f32_e32 v5, s8, v5", ".Lx:", "s_endpgm"]), 2)
    assert live is not None and "s_mov_b32 s8, 0x42b17218" in code(live)
    pair = rename_sgprs(body_of([*chain, "v_cndmask_b32_e64 v6, v5, v7, s[8:9]", "s_endpgm"]), 2)
    assert pair is not None and "s_mov_b32 s8, 0x42b17218" in code(pair)
