"""version_range_selects: selects on range masks (a lane index against a uniform bound) become moves of their true
values, or go, behind one test that every active lane is in every mask: the layout, equivalence on the emulator
where the test passes and where it fails, what is left as it was, refusals, and 95_CrossEntropyLoss's buffer loads
through every gate."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from asmevo.agent.gates import Evaluator
from asmevo.agent.ops_range_selects import range_compare, version_range_selects
from asmevo.agent.range_summary import affine_check
from asmevo.launches import launch_from_dict
from agenttools import body_of, code, evaluated, evaluator

sys.path.insert(0, str(Path(__file__).parents[1] / "emu"))
from emutools import asm  # noqa: E402

HEAD = ["s_load_dwordx2 s[2:3], s[0:1], 0x0", "s_load_dword s6, s[0:1], 0x8", "v_cvt_f32_u32_e32 v1, v0",
        "v_lshlrev_b32_e32 v2, 4, v0", "v_mov_b32_e32 v3, 0", "v_xor_b32_e32 v4, 64, v0", "s_waitcnt lgkmcnt(0)",
        "v_lshl_add_u64 v[2:3], v[2:3], 0, s[2:3]"]
# lane l stores (2 * (l < N ? l : 0), l ^ 64 < N ? l : -1, l ^ 64 < N ? l : 0, 0) at y[4l:4l+4] (no summary: a xor)
BODY = ["v_cmp_gt_i32_e32 vcc, s6, v0", "v_cmp_gt_i32_e64 s[8:9], s6, v4", "s_nop 1",
        "v_cndmask_b32_e32 v5, 0, v1, vcc",            # read whole by one multiply: forwarded, gone
        "v_mul_f32_e32 v6, 2.0, v5",
        "v_cndmask_b32_e64 v7, -1.0, v1, s[8:9]",      # read in a pair: a move
        "v_cndmask_b32_e64 v1, 0, v1, s[8:9]",         # its own true value: gone
        "v_mov_b32_e32 v9, 0", "v_mov_b32_e32 v8, v1",
        "global_store_dwordx4 v[2:3], v[6:9], off"]


def kernel(body: list[str] = BODY) -> list[str]:
    return [*HEAD, *body, "s_endpgm"]


def first_compare(body) -> int:
    return next(k for k in range(len(body.instructions)) if range_compare(body, k))


def test_the_selects_become_moves_behind_one_test():
    b = body_of(kernel())
    c = code(version_range_selects(b, first_compare(b)))
    branch = next(n for n, x in enumerate(c) if x.startswith("s_cbranch_scc1 .Lrange_slow"))
    test = c[c.index(BODY[0]):branch]
    assert test[:2] == BODY[:2] and test[2].startswith("s_and_b64 ") and test[3].startswith("s_andn2_b64 ")
    fast = c[branch + 1:c.index(next(x for x in c if x.startswith(".Lrange_slow")))]
    assert fast == ["s_nop 1", "v_mul_f32_e32 v6, 2.0, v1", "v_mov_b32_e32 v7, v1", "v_mov_b32_e32 v9, 0",
                    "v_mov_b32_e32 v8, v1", "global_store_dwordx4 v[2:3], v[6:9], off", "s_endpgm"]


@pytest.mark.parametrize("n", [200, 100, 30, 0])
def test_equivalent_on_the_emulator(n):
    """N = 200: every lane in both masks (the fast path); 100: some lanes out of the second; 30 and 0: of both."""
    launch = launch_from_dict({"kernel": "k", "grid": [1, 1, 1], "block": [64, 1, 1], "args": [
        {"buffer": "y", "dtype": "float32", "shape": [256], "init": "zeros"}, {"scalar": n, "dtype": "int64"}]},
        label=f"n{n}")
    co = asm("\n".join(f"  {ln}" for ln in kernel()), vgprs=16, sgprs=16, args=1)
    ev = Evaluator(co.path, [launch])
    body = ev.body_of(0)
    evaluated(ev, body, version_range_selects(body, first_compare(body)), "version_range_selects")


def test_a_compare_whose_index_is_computed_after_the_test_is_left_as_it_was():
    late = ["v_cmp_gt_i32_e32 vcc, s6, v0", "v_or_b32_e32 v4, 0x80, v0", "v_cmp_gt_i32_e64 s[8:9], s6, v4",
            *BODY[2:]]
    b = body_of(kernel(late))
    c = code(version_range_selects(b, first_compare(b)))
    fast = c[c.index("s_cbranch_scc1 .Lrange_slow0") + 1:]
    assert "v_cmp_gt_i32_e64 s[8:9], s6, v4" in fast and "v_cndmask_b32_e64 v7, -1.0, v1, s[8:9]" in fast
    assert "v_mul_f32_e32 v6, 2.0, v1" in fast


@pytest.mark.parametrize("body", [
    [*BODY[:2], "s_and_saveexec_b64 s[10:11], vcc", *BODY[2:]],                       # EXEC changes after the test
    ["v_cmp_gt_i32_e32 vcc, s6, v0", "s_and_saveexec_b64 s[10:11], vcc", "v_mov_b32_e32 v6, v1",
     "v_mov_b32_e32 v7, 0", "v_mov_b32_e32 v8, 0", "v_mov_b32_e32 v9, 0", "global_store_dwordx4 v[2:3], v[6:9], off"],
    ["v_cmp_gt_f32_e32 vcc, 1.0, v1", *BODY[2:5], "v_mov_b32_e32 v7, v1", "v_mov_b32_e32 v8, v1",
     "v_mov_b32_e32 v9, v1", "global_store_dwordx4 v[2:3], v[6:9], off"],            # a value compare, no range
    ["v_cmp_le_i32_e32 vcc, s6, v0", *BODY[2:5], "v_mov_b32_e32 v7, v1", "v_mov_b32_e32 v8, v1",
     "v_mov_b32_e32 v9, v1", "global_store_dwordx4 v[2:3], v[6:9], off"],            # out of range: N <= Y
])
def test_refused(body):
    b = body_of(kernel(body))
    assert all(version_range_selects(b, k) is None for k in range(len(b.instructions)))


def test_cross_entropy_buffer_loads_through_every_gate():
    """95_CrossEntropyLoss's loop selects each element's buffer offset, its padding value and its term of the sum by
    the element's range mask: twelve selects per iteration, every lane in range in each of a row's four chunks at
    the bench shape; faster on MI308X, verified on every verify shape (rows of 1000 and 257 columns: partial
    chunks) and the held-out one. Its four compares of `s | (X | c)` are tested by one."""
    ev = evaluator("95_CrossEntropyLoss", gpu="mi308x")
    body = ev.body_of(0)
    cand = evaluated(ev, body, version_range_selects(body, first_compare(body)), "version_range_selects")
    assert ev.lineage.get(0).cycles / cand.cycles > 1.10


# A row loop of 128-element chunks: lane l's elements s | l and s | (l | 64) (s = 0, 128, ... while s < N) add
# l + 1 each when in range; the compares' indices are read by nothing else.
LOOP = ["s_load_dwordx2 s[2:3], s[0:1], 0x0", "s_load_dword s6, s[0:1], 0x8", "v_add_u32_e32 v1, 1, v0",
        "v_cvt_f32_u32_e32 v1, v1", "v_lshlrev_b32_e32 v2, 2, v0", "v_mov_b32_e32 v3, 0",
        "v_or_b32_e32 v4, 64, v0", "v_mov_b32_e32 v10, 0", "s_mov_b32 s10, 0", "s_waitcnt lgkmcnt(0)",
        "v_lshl_add_u64 v[2:3], v[2:3], 0, s[2:3]",
        ".Lloop:",
        "v_or_b32_e32 v5, s10, v0", "v_or_b32_e32 v6, s10, v4",
        "v_cmp_gt_i32_e32 vcc, s6, v5", "v_cmp_gt_i32_e64 s[8:9], s6, v6", "s_nop 1",
        "v_cndmask_b32_e32 v7, 0, v1, vcc", "v_cndmask_b32_e64 v8, 0, v1, s[8:9]",
        "v_add_f32_e32 v10, v10, v7", "v_add_f32_e32 v10, v10, v8",
        "s_add_i32 s10, s10, 0x80", "s_cmp_lt_i32 s10, s6", "s_cbranch_scc1 .Lloop",
        "global_store_dword v[2:3], v10, off", "s_endpgm"]


def test_compares_of_one_index_are_tested_by_one_summary():
    """Both compares are of W = s10 | v0 (v4 = v0 | 64 before the loop, neither written in it): one compare of W
    against N - 64, at the loop's top, and the ORs that only the compares read go from the fast path."""
    b = body_of(LOOP)
    checks = [affine_check(b, k) for k in range(len(b.instructions)) if range_compare(b, k)]
    assert [(ch.s, ch.x, ch.c) for ch in checks] == [("s10", "v0", 0), ("s10", "v0", 64)]
    c = code(version_range_selects(b, first_compare(b)))
    top = c.index(".Lloop:") + 1
    branch = c.index("s_cbranch_scc1 .Lrange_slow0")
    w = c[top].split()[1].rstrip(",")
    assert c[top] == f"v_or_b32_e32 {w}, s10, v0"
    assert c[top + 1].startswith("s_sub_i32 ") and c[top + 1].endswith(", s6, 64")
    assert c[top + 3].startswith("v_cmp_gt_i32_e64 ") and c[top + 3].endswith(w) and branch == top + 5
    fast = c[branch + 1:c.index(".Lrange_slow0:")]
    assert not any(x.startswith(("v_or_b32", "v_cmp", "v_cndmask")) for x in fast)


@pytest.mark.parametrize("n", [256, 200, 100, 0, -(1 << 31) + 10])
def test_summary_equivalent_on_the_emulator(n):
    """256: every chunk full (the fast path); 200: the second chunk partly in range; 100: lanes whose first element
    is in range and second is not (a summary against N instead of N - 64 fails here); 0: none; N - 64 underflows."""
    launch = launch_from_dict({"kernel": "k", "grid": [1, 1, 1], "block": [64, 1, 1], "args": [
        {"buffer": "y", "dtype": "float32", "shape": [64], "init": "zeros"}, {"scalar": n, "dtype": "int64"}]},
        label=f"n{n}")
    co = asm("\n".join(ln if ln.endswith(":") else f"  {ln}" for ln in LOOP), vgprs=16, sgprs=16, args=1)
    ev = Evaluator(co.path, [launch])
    body = ev.body_of(0)
    evaluated(ev, body, version_range_selects(body, first_compare(body)), "version_range_selects")


def test_no_summary_when_the_index_changes_in_the_loop():
    """v0 is written in the loop: v4 no longer holds v0 | 64 where the compares run, so each compare stays."""
    loop = [*LOOP[:19], "v_add_u32_e32 v0, 64, v0", *LOOP[19:]]
    b = body_of(loop)
    c = code(version_range_selects(b, first_compare(b)))
    test = c[c.index(".Lloop:") + 1:c.index("s_cbranch_scc1 .Lrange_slow0")]
    assert not any(x.startswith("s_sub_i32") for x in test)
    assert "v_cmp_gt_i32_e32 vcc, s6, v5" in test and "v_cmp_gt_i32_e64 s[8:9], s6, v6" in test


def test_no_summary_reads_a_value_before_its_wait():
    """s11 arrives at the wait after the block's first range compare, where the test goes: the ORs of s11 are not
    summarised there."""
    loop = [*LOOP[:11], "s_load_dword s11, s[0:1], 0xc", ".Lloop:", "v_cmp_gt_i32_e64 s[12:13], s6, v1",
            "v_cndmask_b32_e64 v9, 0, v1, s[12:13]", "s_waitcnt lgkmcnt(0)",
            "v_or_b32_e32 v5, s11, v0", "v_or_b32_e32 v6, s11, v4", *LOOP[14:]]
    b = body_of(loop)
    c = code(version_range_selects(b, first_compare(b)))
    assert not any(x.startswith("s_sub_i32") for x in c)
    assert "v_cmp_gt_i32_e32 vcc, s6, v5" in c[c.index("s_cbranch_scc1 .Lrange_slow0") + 1:]


def test_no_summary_of_an_index_computed_in_fewer_lanes():
    """v4 = v0 | 64 is written only in lanes below 32 (the others keep an older value) while the loop runs in all
    64: v4 is not taken for v0 | 64 there."""
    narrowed = ["v_cmp_gt_u32_e32 vcc, 32, v0", "s_and_saveexec_b64 s[14:15], vcc", LOOP[6],
                "s_or_b64 exec, exec, s[14:15]"]
    b = body_of([*LOOP[:6], "v_mov_b32_e32 v4, 0", *narrowed, *LOOP[7:]])
    c = code(version_range_selects(b, max(k for k in range(len(b.instructions)) if range_compare(b, k))))
    assert not any(x.startswith("s_sub_i32") for x in c)
