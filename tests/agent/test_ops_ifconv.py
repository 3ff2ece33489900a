"""if_convert: a data-dependent if/else of vector work becomes both sides under the whole EXEC and a select per
value read after it, the compiler's layout in place or out of line; refusals where a side's effects would show;
22_Tanh versioned with its if/elses converted, through every gate at its predicted time."""
from __future__ import annotations

import pytest

from asmevo.agent.ops_ifconv import diamond, if_convert
from agenttools import best_versioned, body_of, code, evaluated, evaluator

PROLOGUE = ["v_cvt_f32_u32_e32 v1, v0", "v_mov_b32_e32 v4, 0", "v_mov_b32_e32 v5, 0",
            "v_cmp_gt_f32_e64 s[8:9], 1.0, v1"]                         # M: the lanes with x < 1
THEN = ["v_mul_f32_e32 v2, v1, v1", "v_add_f32_e32 v3, v2, v1"]       # v2 a temporary, v3 the result
ELSE = ["v_sub_f32_e32 v3, v1, v1"]
STORE = ["global_store_dword v[4:5], v3, off", "s_endpgm"]


def in_place(then=THEN, other=ELSE, after=()) -> list[str]:
    return [*PROLOGUE, "s_and_saveexec_b64 s[10:11], s[8:9]", "s_xor_b64 s[10:11], exec, s[10:11]",
            "s_cbranch_execz .Lelse", *then, ".Lelse:", "s_andn2_saveexec_b64 s[12:13], s[10:11]", *other,
            "s_or_b64 exec, exec, s[12:13]", *after, *STORE]


def save(body) -> int:
    return next(i for i, x in enumerate(body.instructions) if x.mnemonic == "s_and_saveexec_b64")


def test_both_sides_run_and_a_select_keeps_each_lanes_own_value():
    b = body_of(in_place())
    c = code(if_convert(b, save(b)))
    assert not any(x.startswith(("s_and_saveexec", "s_xor", "s_andn2_saveexec", "s_or_b64", "s_cbranch")) for x in c)
    start = c.index(next(x for x in c if x.startswith("s_mov_b64")))
    cond = c[start].split()[1].rstrip(",")
    assert c[start] == f"s_mov_b64 {cond}, s[8:9]"
    then, other, select = c[start + 1:start + 3], c[start + 3], c[start + 4]
    t2, t3 = (x.split()[1].rstrip(",") for x in then)
    assert then == [f"v_mul_f32_e32 {t2}, v1, v1", f"v_add_f32_e32 {t3}, {t2}, v1"]
    e3 = other.split()[1].rstrip(",")
    assert other == f"v_sub_f32_e32 {e3}, v1, v1" and len({t2, t3, e3, "v3"}) == 4
    # only v3 is read after the if/else: the select writes it, the else lanes from the else side
    assert select == f"v_cndmask_b32_e64 v3, {e3}, {t3}, {cond}" and c[start + 5:] == STORE


def test_an_if_else_laid_out_out_of_line_is_followed_through_its_branches():
    lines = [*PROLOGUE, "s_and_saveexec_b64 s[10:11], s[8:9]", "s_xor_b64 s[10:11], exec, s[10:11]",
             "s_cbranch_execnz .Lthen", "s_andn2_saveexec_b64 s[12:13], s[10:11]", "s_cbranch_execnz .Lelse",
             ".Ljoin:", "s_or_b64 exec, exec, s[12:13]", *STORE,
             ".Lthen:", *THEN, "s_andn2_saveexec_b64 s[12:13], s[10:11]", "s_cbranch_execz .Ljoin",
             ".Lelse:", *ELSE, "s_or_b64 exec, exec, s[12:13]", "v_mov_b32_e32 v6, v3", *STORE]
    b = body_of(lines)
    d = diamond(b, save(b))
    assert d is not None and [b.instructions[k].text() for k in d.then] == THEN
    c = code(if_convert(b, save(b)))
    branch = next(x for x in c if x.startswith("s_branch"))
    target = branch.split()[1]
    assert c[c.index(branch) - 1].startswith("v_cndmask_b32_e64 v3,")
    assert c[c.index(f"{target}:") + 1] == "v_mov_b32_e32 v6, v3"
    assert not any(x.startswith(("s_andn2_saveexec", "s_xor")) for x in c)    # the old code no path reaches is gone


@pytest.mark.parametrize("lines", [
    in_place(then=[*THEN, "global_load_dword v7, v[4:5], off"]),          # a side touches memory
    in_place(then=[*THEN, "s_mov_b32 s20, 1"], after=["s_add_u32 s21, s20, 1"]),   # a scalar write read after
    in_place(other=["v_cndmask_b32_e64 v3, v1, v2, s[10:11]"]),          # the else side reads its saved lanes
    in_place(then=["v_fmac_f32_e32 v3, v1, v1"]),                        # reads its destination before writing it
    in_place(then=["s_cselect_b32 s20, 1, 0", *THEN]),                   # reads the SCC the if/else's save set
])
def test_it_refuses_where_running_both_sides_would_show(lines):
    b = body_of(lines)
    assert if_convert(b, save(b)) is None


def test_tanh_if_elses_converted_then_versioned_verify_at_their_predicted_time():
    """KernelBench's Tanh computes each element on one of two paths by |x| (the last laid out of line); every
    wave at its bench shape runs both. Converted and versioned, its four elements' work is one block and packs
    where no |x| modifier or literal stops it, verified on every verify shape and the held-out one."""
    ev = evaluator("22_Tanh", gpu="mi308x")
    predicted, body, new = best_versioned(ev)
    assert sum(x.startswith("s_andn2_saveexec") for x in code(new)) < sum(
        x.startswith("s_andn2_saveexec") for x in code(body))
    cand = evaluated(ev, body, new, "version_full_exec")
    assert cand.speedup > 1.03
    assert cand.cycles == pytest.approx(predicted, rel=0.01)
