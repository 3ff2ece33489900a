"""exec_within_launch: EXEC provably stays within the lanes active at launch, or not."""
from __future__ import annotations

from asmevo.isa.cfg import build_cfg
from asmevo.isa.exec_bound import exec_within_launch
from asmevo.isa.regs import reg_info

from isatools import program

# if/else as clang emits it, then a loop whose exit lanes leave EXEC, then restore
STRUCTURED = """
    v_cmp_gt_i32_e32 vcc, s6, v0
    s_and_saveexec_b64 s[0:1], vcc
    s_xor_b64 s[0:1], exec, s[0:1]
    s_cbranch_execz else
    v_mov_b32_e32 v1, 1
else:
    s_andn2_saveexec_b64 s[0:1], s[0:1]
    v_mov_b32_e32 v1, 2
    s_or_b64 exec, exec, s[0:1]
    s_mov_b64 s[4:5], 0
loop:
    v_add_u32_e32 v0, 1, v0
    v_cmp_le_i32_e32 vcc, s6, v0
    s_or_b64 s[4:5], vcc, s[4:5]
    s_andn2_b64 exec, exec, s[4:5]
    s_cbranch_execnz loop
    s_or_b64 exec, exec, s[4:5]
    s_endpgm
"""


def bounded(text: str) -> bool:
    ins, labels = program(text)
    return exec_within_launch(ins, [reg_info(x) for x in ins], build_cfg(ins, labels))


def test_structured_masks_stay_within_the_launch_lanes():
    assert bounded(STRUCTURED)


def test_a_constant_or_complemented_mask_written_to_exec_is_not_bounded():
    assert not bounded("s_mov_b64 exec, -1\ns_endpgm")
    assert not bounded("s_orn2_b64 s[2:3], vcc, exec\ns_or_b64 exec, exec, s[2:3]\ns_endpgm")
    assert not bounded("s_or_saveexec_b64 s[2:3], -1\ns_endpgm")  # whole-wave mode
    assert bounded("s_and_saveexec_b64 s[2:3], -1\ns_endpgm")  # AND with EXEC keeps the bound
    assert not bounded("s_wqm_b64 exec, exec\ns_endpgm")


def test_an_unbounded_mask_reaching_exec_around_a_loop_is_found():
    # s[4:5] is bounded on entry but -1 after the first iteration
    loop = STRUCTURED.replace("s_or_b64 s[4:5], vcc, s[4:5]", "s_or_b64 exec, exec, s[4:5]\n    s_mov_b64 s[4:5], -1")
    assert not bounded(loop)
