"""version_row_loop: a row loop tests once per 16 (or 8) iterations whether every lane stays in it, and runs all
but the last of them without their exit updates, every copy's load issued first."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from asmevo.agent.ops_row_version import row_exit, version_row_loop
from asmevo.codeobj import CodeObject
from asmevo.launches import launch_from_dict
from asmevo.suites import load_suite
from asmevo.verify import verify

from agenttools import body_of, body_window, code, evaluator

KERNELBENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "kernelbench"
sys.path.insert(0, str(KERNELBENCH))
from specs import launch_spec  # noqa: E402

MANIFEST = json.loads((KERNELBENCH / "manifest.json").read_text())

ROW_MAX = ["s_mov_b64 s[10:11], 0", "v_mov_b32_e32 v3, v0",
           ".Lloop:", "global_load_dword v6, v[4:5], off", "v_add_u32_e32 v3, 0x100, v3", "v_max_f32_e32 v1, v1, v1",
           "v_cmp_le_i32_e64 s[0:1], s16, v3", "v_lshl_add_u64 v[4:5], v[4:5], 0, s[12:13]",
           "s_or_b64 s[10:11], s[0:1], s[10:11]", "s_waitcnt vmcnt(0)", "v_max_f32_e32 v6, v6, v6",
           "v_max_f32_e32 v1, v1, v6", "s_andn2_b64 exec, exec, s[10:11]", "s_cbranch_execnz .Lloop",
           "s_or_b64 exec, exec, s[10:11]", "s_endpgm"]


def _variant(lines: list[str], old: str, *new: str) -> list[str]:
    assert old in lines
    return [x for line in lines for x in (new if line == old else (line,))]


def test_the_test_the_fast_copies_and_the_original_body():
    b = body_of(ROW_MAX)
    new = version_row_loop(b, 2, unroll=8)
    assert new is not None and new.no_worse(b)
    c = code(new)
    loop = c[c.index(".Lloop:") + 1:]
    # lanes pass when index + 7 * 256 < N with no signed overflow, none has left, and the wave has no other lane
    assert loop[:6] == ["s_sub_i32 s4, s16, 1792", "s_cselect_b32 s4, 0x80000000, s4", "v_cmp_lt_i32_e64 s[2:3], v3, s4",
                        "s_andn2_b64 s[2:3], s[2:3], s[10:11]", "s_andn2_b64 s[2:3], exec, s[2:3]",
                        "s_cbranch_scc1 .Lloop_row_slow"]
    fast = loop[loop.index("s_cbranch_scc1 .Lloop_row_slow") + 1:loop.index(".Lloop_row_slow:")]
    assert fast[0] == "v_add_u32_e32 v3, 1792, v3"
    loads = [x for x in fast if x.startswith("global_load")]
    assert len(loads) == 7 and len({x.split()[1] for x in loads}) == 7 and "v6," not in {x.split()[1] for x in loads}
    assert all(fast.index(x) < fast.index("s_waitcnt vmcnt(6)") for x in loads)  # every load before the first wait
    assert [x for x in fast if x.startswith("s_waitcnt")] == [f"s_waitcnt vmcnt({n})" for n in range(6, -1, -1)]
    # no exit update in the fast copies; the original body follows unchanged and branches back to the test
    assert not any(x.startswith(("v_cmp_le_i32", "s_or_b64", "s_andn2_b64 exec", "s_cbranch_execnz")) for x in fast)
    assert loop[loop.index(".Lloop_row_slow:") + 1:][:len(ROW_MAX) - 5] == ROW_MAX[3:-2]


def test_a_counter_counting_down_to_zero():
    counted = _variant(_variant(ROW_MAX, "v_add_u32_e32 v3, 0x100, v3", "v_add_u32_e32 v3, -2, v3"),
                       "v_cmp_le_i32_e64 s[0:1], s16, v3", "v_cmp_eq_u32_e64 s[0:1], 0, v3")
    b = body_of(counted)
    ex = row_exit(b, 2, 11)
    assert ex is not None and ex.bound == "" and ex.step == -2
    c = code(version_row_loop(b, 2, unroll=8))
    loop = c[c.index(".Lloop:") + 1:]
    assert loop[:2] == ["s_mov_b32 s4, 14", "v_cmp_lt_u32_e64 s[2:3], s4, v3"]  # 7 * 2 < index: no zero on the way
    assert "v_add_u32_e32 v3, -14, v3" in loop


def test_sixteen_iterations_per_test_unless_their_registers_cost_a_wave():
    def fast_loads(lines: list[str]) -> int:
        c = code(version_row_loop(body_of(lines), lines.index(".Lloop:")))
        return sum(x.startswith("global_load") for x in c[c.index(".Lloop:"):c.index(".Lloop_row_slow:")])

    assert fast_loads(ROW_MAX) == 15
    # v7-v56 taken: 8 VGPRs are free below the 64 that keep 8 waves per SIMD, enough for 7 staged copies, not 15
    crowded = [f"v_mov_b32_e32 v{k}, 0" for k in range(7, 57)] + ROW_MAX
    assert fast_loads(crowded) == 7


@pytest.mark.parametrize("old, new", [
    ("v_max_f32_e32 v1, v1, v6", "v_add_u32_e32 v1, v1, v3"),                # the index is read by the work
    ("v_max_f32_e32 v1, v1, v6", "v_cndmask_b32_e64 v1, v1, v6, s[0:1]"),    # so is the exit compare's result
    ("v_max_f32_e32 v1, v1, v6", "s_cselect_b32 s20, 1, 0"),                 # and the SCC of the exit-mask OR
    ("v_max_f32_e32 v1, v1, v6", "s_add_i32 s16, s16, 1"),                   # the row's end moves
    ("v_add_u32_e32 v3, 0x100, v3", "v_add_u32_e32 v3, v7, v3"),             # the step is not a constant
    ("v_add_u32_e32 v3, 0x100, v3", "v_add_u32_e32 v3, -1, v3"),             # the index steps away from the end
    ("v_cmp_le_i32_e64 s[0:1], s16, v3", "v_cmp_lt_u32_e64 s[0:1], s16, v3"),  # not an index >= end test
    ("v_cmp_le_i32_e64 s[0:1], s16, v3", "v_cmp_le_i32_e64 s[0:1], v7, v3"),   # each lane's own end
])
def test_loops_it_must_refuse(old, new):
    assert version_row_loop(body_of(_variant(ROW_MAX, old, new)), 2) is None


def test_other_scalar_work_sends_an_empty_wave_to_the_original_body():
    b = body_of(_variant(ROW_MAX, "v_max_f32_e32 v1, v1, v6", "v_max_f32_e32 v1, v1, v6", "s_add_u32 s20, s20, 1"))
    c = code(version_row_loop(b, 2))
    assert c[c.index("s_cbranch_scc1 .Lloop_row_slow") + 1] == "s_cbranch_execz .Lloop_row_slow"


# Softmax's rows: lengths that give the 256 threads of a block 0 to 17 trips and every remainder, so the test
# passes, fails at the row's end, and fails at once.
ROWS = [(2, n) for n in (1, 100, 255, 256, 257, 1792, 1793, 2047, 2048, 2049, 2303, 4095, 4096, 4352)]


def test_the_row_loops_of_softmax_verify_and_run_faster():
    """Every row loop of 23_Softmax versioned: verified on every verify shape and the held-out one, faster in
    model cycles at the bench shape, and bit-identical to K0 over a sweep of row lengths."""
    ev = evaluator("23_Softmax", gpu="mi308x")
    body = ev.body_of(0)
    new, done = body, 0
    for _ in range(4):
        step = next((n for blk in new.cfg.blocks if (n := version_row_loop(new, blk.start)) is not None), None)
        if step is None:
            break
        new, done = step, done + 1
    assert done >= 3
    cand = ev.evaluate(0, new.edit(body, "version_row_loop", "rows"), body_window(ev), agent="test", step=1)
    assert cand.status == "verified" and cand.verdict["kind"] == "equivalent", cand.summary()
    assert cand.cycles < ev.lineage.candidates[0].cycles / 1.05
    p = load_suite("kernelbench").problem("23_Softmax")
    launches = [launch_from_dict(launch_spec("23_Softmax", dims, MANIFEST), p.dir, "x".join(map(str, dims)))
                for dims in ROWS]
    v = verify(ev.k0, CodeObject(cand.data), launches, trials=1, special=False, static=False)
    assert v.kind == "equivalent" and v.launches == len(launches), v.summary()
