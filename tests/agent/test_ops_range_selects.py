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
from asmevo.launches import launch_from_dict
from agenttools import body_of, code, evaluated, evaluator

sys.path.insert(0, str(Path(__file__).parents[1] / "emu"))
from emutools import asm  # noqa: E402

HEAD = ["s_load_dwordx2 s[2:3], s[0:1], 0x0", "s_load_dword s6, s[0:1], 0x8", "v_cvt_f32_u32_e32 v1, v0",
        "v_lshlrev_b32_e32 v2, 4, v0", "v_mov_b32_e32 v3, 0", "v_or_b32_e32 v4, 64, v0", "s_waitcnt lgkmcnt(0)",
        "v_lshl_add_u64 v[2:3], v[2:3], 0, s[2:3]"]
# lane l stores (2 * (l < N ? l : 0), l | 64 < N ? l : -1, l | 64 < N ? l : 0, 0) at y[4l:4l+4]
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
    chunks) and the held-out one."""
    ev = evaluator("95_CrossEntropyLoss", gpu="mi308x")
    body = ev.body_of(0)
    cand = evaluated(ev, body, version_range_selects(body, first_compare(body)), "version_range_selects")
    assert ev.lineage.get(0).cycles / cand.cycles > 1.05
