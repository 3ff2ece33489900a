"""version_counted_loop: a counted loop whose one masked region checks an index's range tests once per 4
iterations that 4 remain and every lane's index stays in range through them, and runs them unmasked."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from asmevo.agent.gates import Evaluator
from asmevo.agent.ops_counted_loop import counted_loop, version_counted_loop
from asmevo.agent.ops_layout import fall_through_branch, swap_branch_pair
from asmevo.agent.ops_branch import remove_skip_branch
from asmevo.agent.ops_range import fuse_range_checks
from asmevo.launches import launch_from_dict
from agenttools import body_of, code, evaluated, evaluator

sys.path.insert(0, str(Path(__file__).parents[1] / "emu"))
from emutools import asm  # noqa: E402

# Lane l takes the max of x[(I + j * s) mod 256] over taps j < k where 0 <= I + j * s < W (I = l + w0), like a
# pooling window's row; p = [k, s, w0, W] (int32).
HEAD = ["s_load_dwordx4 s[12:15], s[0:1], 0x0", "s_load_dwordx2 s[2:3], s[0:1], 0x10",
        "v_mov_b32_e32 v6, 0xff800000", "v_mov_b32_e32 v5, 0", "s_waitcnt lgkmcnt(0)",
        "s_load_dwordx4 s[8:11], s[2:3], 0x0", "s_waitcnt lgkmcnt(0)", "s_mov_b32 s7, s11", "s_mov_b32 s11, s9",
        "v_add_u32_e32 v10, s10, v0"]
UNSIGNED = ["v_cmp_gt_u32_e64 s[16:17], s7, v10"]
SIGNED = ["v_cmp_lt_i32_e32 vcc, -1, v10", "v_cmp_gt_i32_e64 s[16:17], s7, v10", "s_and_b64 s[16:17], vcc, s[16:17]"]
TAP = ["s_and_saveexec_b64 s[18:19], s[16:17]", "v_and_b32_e32 v4, 0xff, v10", "v_lshlrev_b32_e32 v4, 2, v4",
       "v_lshl_add_u64 v[12:13], v[4:5], 0, s[12:13]", "global_load_dword v4, v[12:13], off", "s_waitcnt vmcnt(0)",
       "v_max_f32_e32 v6, v6, v4", "s_or_b64 exec, exec, s[18:19]", "s_add_i32 s8, s8, -1", "s_cmp_lg_u32 s8, 0",
       "v_add_u32_e32 v10, s11, v10", "s_cbranch_scc1 .Lloop"]
TAIL = ["v_lshlrev_b32_e32 v2, 2, v0", "v_mov_b32_e32 v3, 0", "v_lshl_add_u64 v[2:3], v[2:3], 0, s[14:15]",
        "global_store_dword v[2:3], v6, off", "s_endpgm"]


def kernel(mask: list[str] = UNSIGNED) -> list[str]:
    return [*HEAD, ".Lloop:", *mask, *TAP, *TAIL]


def _variant(lines: list[str], old: str, *new: str) -> list[str]:
    assert old in lines
    return [x for line in lines for x in (new if line == old else (line,))]


def loop_start(body) -> int:
    return next(k for k, ins in enumerate(body.instructions) if ins.mnemonic.startswith("v_cmp"))


def test_the_test_the_unmasked_copies_and_the_original_loop():
    b = body_of(kernel())
    new = version_counted_loop(b, loop_start(b))
    assert new is not None and new.no_worse(b)
    c = code(new)
    loop = c[c.index(".Lloop:") + 1:]
    slow = loop.index(".Lloop_counted_slow:")
    # four taps left, a step whose three strides stay below 2^31, J = I + 3s (v1) below W and not below I
    assert loop[:11] == ["s_cmp_lt_u32 s8, 4", "s_cbranch_scc1 .Lloop_counted_slow", "s_cmp_gt_u32 s11, 715827882",
                         "s_cbranch_scc1 .Lloop_counted_slow", "s_mul_i32 s6, s11, 3", "v_add_u32_e32 v1, s6, v10",
                         "v_cmp_gt_u32_e64 s[4:5], s7, v1", "v_cmp_ge_u32_e64 s[20:21], v1, v10",
                         "s_and_b64 s[4:5], s[4:5], s[20:21]", "s_andn2_b64 s[4:5], exec, s[4:5]",
                         "s_cbranch_scc1 .Lloop_counted_slow"]
    tap = [x for x in TAP if not x.startswith(("s_and_saveexec", "s_or_b64 exec", "s_add_i32", "s_cmp", "s_cbranch"))]
    assert loop[11:slow] == tap * 4 + ["s_add_i32 s8, s8, -4", "s_cmp_lg_u32 s8, 0", "s_cbranch_scc1 .Lloop",
                                       "s_branch .Lloop_counted_exit"]
    # the original loop as it was, looping on itself, then the exit
    assert loop[slow + 1:] == [*UNSIGNED, *TAP[:-1], "s_cbranch_scc1 .Lloop_counted_slow", ".Lloop_counted_exit:",
                               *TAIL]


def test_a_signed_range_tests_its_lower_bound_at_the_first_index():
    """-1 < I at I, I < W at J, and J >= I signed; the AND and both compares leave the fast copies."""
    b = body_of(kernel(SIGNED))
    c = code(version_counted_loop(b, loop_start(b)))
    test = c[c.index("s_mul_i32 s6, s11, 3") + 2:c.index("s_andn2_b64 s[4:5], exec, s[4:5]")]
    assert test == ["v_cmp_gt_i32_e64 s[4:5], s7, v1", "v_cmp_lt_i32_e64 s[20:21], -1, v10",
                    "s_and_b64 s[4:5], s[4:5], s[20:21]", "v_cmp_ge_i32_e64 s[20:21], v1, v10",
                    "s_and_b64 s[4:5], s[4:5], s[20:21]"]
    fast = c[c.index("s_cbranch_scc1 .Lloop_counted_slow", c.index("s_andn2_b64 s[4:5], exec, s[4:5]")):
             c.index(".Lloop_counted_slow:")]
    assert not any(x.startswith(("v_cmp", "s_and_b64", "s_and_saveexec")) for x in fast)


def test_a_constant_step_needs_no_scalar_check():
    b = body_of(_variant(kernel(), "v_add_u32_e32 v10, s11, v10", "v_add_u32_e32 v10, 2, v10"))
    c = code(version_counted_loop(b, loop_start(b)))
    assert c[c.index(".Lloop:") + 1:][:3] == ["s_cmp_lt_u32 s8, 4", "s_cbranch_scc1 .Lloop_counted_slow",
                                               "v_add_u32_e32 v1, 6, v10"]


def _launch(tmp: Path, k: int, step: int, w0: int, width: int):
    np.save(tmp / "p.npy", np.array([k, step, w0, width], dtype=np.int32))
    return launch_from_dict({"kernel": "k", "grid": [1, 1, 1], "block": [64, 1, 1], "args": [
        {"buffer": "x", "dtype": "float32", "shape": [256], "init": "random"},
        {"buffer": "y", "dtype": "float32", "shape": [64], "init": "zeros"},
        {"buffer": "p", "dtype": "int32", "shape": [4], "init": "file:p.npy"},
        {"scalar": 0, "dtype": "int64"}]}, tmp, label=f"k{k}s{step}w{w0}n{width}")


# (k, s, w0, W): all in range for one and two groups; a remainder of two; a wave with a lane left of the input
# (w0 = -1) or right of it (W = 40); a step too long for the input; a step of 0; indices that wrap unsigned (lanes
# at -128..-65 step by 64 into range: the index three steps on is in range where the first is not); indices near
# 2^31 whose third step overflows signed (lanes at 2^31 - 100 and on step by a third of 2^31: J < W where I + 3s
# is not); a step too long for the test (above (2^31 - 1) / 3). Without the J >= I check the wrapping cases run all
# four taps unmasked.
BIG = 2**31 - 36
CASES = [(4, 1, 0, 256), (8, 1, 0, 256), (6, 1, 0, 256), (4, 1, -1, 256), (4, 1, 0, 40), (4, 100, 0, 256),
         (5, 0, 3, 256), (4, 64, -128, 256), (4, 715827882, BIG - 64, BIG), (4, 715827883, 0, 256)]


@pytest.mark.parametrize("mask", [UNSIGNED, SIGNED], ids=["unsigned", "signed"])
@pytest.mark.parametrize("case", CASES, ids=[f"k{k}s{s}w{w}n{n}" for k, s, w, n in CASES])
def test_equivalent_on_the_emulator(mask, case, tmp_path):
    co = asm("\n".join(ln if ln.endswith(":") else f"  {ln}" for ln in kernel(mask)), vgprs=16, sgprs=24, args=3)
    ev = Evaluator(co.path, [_launch(tmp_path, *case)])
    body = ev.body_of(0)
    evaluated(ev, body, version_counted_loop(body, loop_start(body)), "version_counted_loop")


@pytest.mark.parametrize("old, new", [
    ("v_max_f32_e32 v6, v6, v4", ("v_max_f32_e32 v6, v6, v4", "v_cvt_f32_u32_e32 v7, s8")),     # the counter is read
    ("v_max_f32_e32 v6, v6, v4", ("v_max_f32_e32 v6, v6, v4", "v_add_u32_e32 v10, 1, v10")),    # the index moves twice
    ("v_max_f32_e32 v6, v6, v4", ("v_max_f32_e32 v6, v6, v4", "v_cndmask_b32_e64 v7, 0, v6, s[16:17]")),  # mask read
    ("v_max_f32_e32 v6, v6, v4", ("v_max_f32_e32 v6, v6, v4", "s_add_i32 s7, s7, 1")),          # the bound moves
    ("v_max_f32_e32 v6, v6, v4", ("v_max_f32_e32 v6, v6, v4", "s_mov_b64 exec, s[18:19]")),     # another EXEC write
    ("v_max_f32_e32 v6, v6, v4", ("v_max_f32_e32 v6, v6, v4", "s_cselect_b32 s20, 1, 0")),      # SCC read
    ("v_add_u32_e32 v10, s11, v10", ("v_add_u32_e32 v10, v7, v10",)),                           # a lane's own step
    ("v_add_u32_e32 v10, s11, v10", ("v_add_u32_e32 v10, -1, v10",)),                           # a negative step
    ("s_add_i32 s8, s8, -1", ("s_add_i32 s8, s8, -2",)),                                       # not counting down by 1
    ("s_cmp_lg_u32 s8, 0", ("s_cmp_lg_u32 s8, 1",)),                                           # not a count to 0
    ("v_cmp_gt_u32_e64 s[16:17], s7, v10", ("v_cmp_ne_u32_e64 s[16:17], s7, v10",)),           # not a range
    ("v_cmp_gt_u32_e64 s[16:17], s7, v10", ("v_cmp_gt_u32_e64 s[16:17], v7, v10",)),           # a lane's own bound
])
def test_loops_it_must_refuse(old, new):
    b = body_of(_variant(kernel(), old, *new))
    assert version_counted_loop(b, loop_start(b)) is None


def test_the_mask_must_be_dead_after_the_loop():
    b = body_of(_variant(kernel(), "global_store_dword v[2:3], v6, off", "global_store_dword v[2:3], v6, off",
                         "v_cndmask_b32_e64 v6, 0, v6, s[16:17]"))
    assert version_counted_loop(b, loop_start(b)) is None


def _pooling_tap_loop(ev: Evaluator):
    """42_Max_Pooling_2D's K0 with its range checks fused and its tap loop laid out as one block."""
    body = ev.body_of(0)
    cur = body
    for op, text in ((fuse_range_checks, "s_and_b64 s[16:17], vcc, s[0:1]"),
                     (fall_through_branch, "s_branch .Lbb_1a94")):
        cur = op(cur, next(k for k, ins in enumerate(cur.instructions) if ins.text() == text))
        assert cur is not None
    tap = next(k for k, ins in enumerate(cur.instructions) if ins.text() == "s_cbranch_execz .Lbb_1a80")
    cur = remove_skip_branch(cur, tap)
    latch = next(k for k, ins in enumerate(cur.instructions) if ins.text() == "s_cbranch_scc0 .Lbb_1a40")
    cur = swap_branch_pair(cur, latch)
    assert cur is not None and counted_loop(cur, tap - 1) is not None
    return body, cur, tap - 1


def test_max_pooling_tap_loop_through_every_gate_and_faster():
    """42_Max_Pooling_2D's 4-tap rows (k = 4 at the bench shape) run unmasked in one group: verified on every
    verify shape and the held-out one, and faster in model cycles at the bench shape than the laid-out loop."""
    ev = evaluator("42_Max_Pooling_2D", gpu="mi308x")
    body, laid_out, site = _pooling_tap_loop(ev)
    parent = evaluated(ev, body, laid_out, "layout")
    cand = evaluated(ev, laid_out, version_counted_loop(laid_out, site), "version_counted_loop", parent=parent.id)
    assert cand.cycles < parent.cycles / 1.005
