"""EXEC value analysis: the wave's starting EXEC is recognised again after if/else regions, nested
regions and row loops, and nowhere it is not."""
from __future__ import annotations

from asmevo.isa.cfg import build_cfg
from asmevo.isa.exec_values import launch_exec
from asmevo.isa.instruction import parse_instruction
from asmevo.isa.regs import def_use_all


def full(lines: list[str]) -> dict[str, bool]:
    """Instruction text (first occurrence) -> whether EXEC is the starting EXEC there."""
    code = [x for x in lines if not x.endswith(":")]
    labels, n = {}, 0
    for x in lines:
        if x.endswith(":"):
            labels[x[:-1]] = n
        else:
            n += 1
    instrs = [parse_instruction(x) for x in code]
    for ins in instrs:
        if ins.is_branch:
            ins.label = ins.operands[0].text if ins.operands else None
    cfg = build_cfg(instrs, labels)
    out = launch_exec(instrs, def_use_all(instrs), cfg)
    result: dict[str, bool] = {}
    for ins, f in zip(code, out):
        result.setdefault(ins, f)
    return result


def test_if_else_restores_the_starting_exec():
    f = full(["v_cmp_gt_u32_e32 vcc, 4, v0", "s_and_saveexec_b64 s[2:3], vcc", "s_xor_b64 s[2:3], exec, s[2:3]",
              "s_cbranch_execz .Lelse", "v_mov_b32_e32 v1, 1", ".Lelse:", "s_andn2_saveexec_b64 s[2:3], s[2:3]",
              "v_mov_b32_e32 v1, 2", "s_or_b64 exec, exec, s[2:3]", "v_mov_b32_e32 v3, v1", "s_endpgm"])
    assert f["v_cmp_gt_u32_e32 vcc, 4, v0"] and f["v_mov_b32_e32 v3, v1"]
    assert not f["v_mov_b32_e32 v1, 1"] and not f["v_mov_b32_e32 v1, 2"]


def test_nested_regions_and_a_row_loop_restore_it():
    f = full(["v_cmp_gt_u32_e32 vcc, 4, v0", "s_and_saveexec_b64 s[2:3], vcc",
              "v_cmp_gt_u32_e64 s[4:5], 2, v0", "s_and_saveexec_b64 s[6:7], s[4:5]", "v_mov_b32_e32 v1, 1",
              "s_or_b64 exec, exec, s[6:7]", "s_mov_b64 s[8:9], 0",
              ".Lloop:", "v_add_u32_e32 v0, 1, v0", "v_cmp_le_u32_e32 vcc, 9, v0", "s_or_b64 s[8:9], vcc, s[8:9]",
              "s_andn2_b64 exec, exec, s[8:9]", "s_cbranch_execnz .Lloop",
              "s_or_b64 exec, exec, s[8:9]", "v_mov_b32_e32 v2, 0",
              "s_or_b64 exec, exec, s[2:3]", "v_mov_b32_e32 v3, 0", "s_endpgm"])
    assert not f["v_mov_b32_e32 v1, 1"] and not f["v_add_u32_e32 v0, 1, v0"] and not f["v_mov_b32_e32 v2, 0"]
    assert f["v_mov_b32_e32 v3, 0"]


def test_a_restore_from_an_overwritten_pair_is_not_trusted():
    f = full(["v_cmp_gt_u32_e32 vcc, 4, v0", "s_and_saveexec_b64 s[2:3], vcc", "s_mov_b64 s[2:3], vcc",
              "s_or_b64 exec, exec, s[2:3]", "v_mov_b32_e32 v3, 0", "s_endpgm"])
    assert not f["v_mov_b32_e32 v3, 0"]
