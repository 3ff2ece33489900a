"""Each rejection reason, on the real LeakyReLU kernel; an accepted edit is verified and timed;
every candidate lands in the lineage with parent, diff, verdict, timing, agent and step."""
from __future__ import annotations

from asmevo.agent.edit import Edit, Window
from agenttools import body_window, line_of


def _reject(ev, edit, window=None):
    cand = ev.evaluate(0, edit, window or body_window(ev), agent="test", step=1)
    assert cand.status == "rejected", cand.summary()
    return cand


def test_outside_window(leaky):
    n = line_of(leaky, "v_mul_f32_e32 v2, s7, v6")
    cand = _reject(leaky, Edit(n, n, "v_mul_f32_e32 v2, s7, v6\ns_nop 0"), Window(n + 1, n + 5))
    assert cand.reason == "outside-window"
    cand = _reject(leaky, Edit(2, 2, "s_nop 0"), Window(1, 5))
    assert cand.reason == "outside-window"


def test_directive(leaky):
    n = line_of(leaky, "v_mul_f32_e32 v2, s7, v6")
    assert _reject(leaky, Edit(n, n - 1, ".amdhsa_next_free_vgpr 200")).reason == "directive"


def test_label_used_elsewhere(leaky):
    n = line_of(leaky, ".Lbb_1900:")
    cand = _reject(leaky, Edit(n, n, ""))
    assert cand.reason == "label" and ".Lbb_1900" in cand.detail
    assert _reject(leaky, Edit(n + 1, n, "s_branch .Lnowhere")).reason == "label"
    assert _reject(leaky, Edit(n + 1, n, ".Lbb_1900:")).reason == "label"


def test_does_not_assemble(leaky):
    n = line_of(leaky, "v_mul_f32_e32 v2, s7, v6")
    cand = _reject(leaky, Edit(n, n, "v_mul_f32_e32 v2, s7, v6, v9"))
    assert cand.reason == "assemble"
    assert _reject(leaky, Edit(n, n, "this is not an instruction")).reason == "assemble"


def test_abi_change(leaky):
    n = line_of(leaky, "v_mul_f32_e32 v2, s7, v6")
    cand = _reject(leaky, Edit(n, n - 1, "scratch_store_dword off, v6, s0"))
    assert cand.reason == "abi"


def test_static_checks(leaky):
    n = line_of(leaky, "s_waitcnt vmcnt(0)")
    cand = _reject(leaky, Edit(n, n, ""))
    assert cand.reason == "static" and "waitcnt" in cand.detail
    m = line_of(leaky, "s_nop 1")
    assert _reject(leaky, Edit(m, m, "")).reason == "static"


def test_semantic_change_is_caught_by_verification(leaky):
    n = line_of(leaky, "v_mul_f32_e32 v2, s7, v6")
    cand = _reject(leaky, Edit(n, n, "v_add_f32_e32 v2, s7, v6"))
    assert cand.reason == "different" and cand.verdict["kind"] == "different"


def test_no_op(leaky):
    n = line_of(leaky, "v_mul_f32_e32 v2, s7, v6")
    assert _reject(leaky, Edit(n, n, "v_mul_f32_e32 v2, s7, v6 ; same code")).reason == "no-op"


def test_accepted_edit_is_verified_timed_and_recorded(leaky):
    n = line_of(leaky, "v_mul_f32_e32 v2, s7, v6")
    # independent: v_cmp does not read v2, so the two may swap
    cand = leaky.evaluate(0, Edit(n, n + 1, "v_cmp_le_f32_e32 vcc, 0, v6\nv_mul_f32_e32 v2, s7, v6"),
                          body_window(leaky), agent="test", step=7)
    assert cand.status == "verified", cand.summary()
    assert cand.verdict["kind"] == "equivalent" and cand.timing["unit"] == "model_us"
    assert cand.cycles > 0 and cand.speedup > 0
    rec = leaky.lineage.to_json()["candidates"][cand.id]
    assert rec["parent"] == 0 and rec["agent"] == "test" and rec["step"] == 7
    assert rec["diff"].startswith("--- a/kernel.s") and "+\tv_cmp_le_f32_e32 vcc, 0, v6" in rec["diff"]
    assert all(c.status != "built" for c in leaky.lineage.candidates)
