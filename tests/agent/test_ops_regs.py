"""compact_vgprs: VGPR values above the next occupancy level move into registers free where they
live; pinned or indirectly addressed values make it refuse; through the gates the rebuilt object
declares the smaller allocation."""
from __future__ import annotations

import pytest

from asmevo.agent.ops_regs import compact_vgprs, vgpr_target, waves_per_simd
from asmevo.agent.webs import VgprWebs
from asmevo.codeobj import CodeObject
from agenttools import body_of, body_window, code, evaluator

HIGH = ["v_mov_b32_e32 v70, 1.0", "v_add_f32_e32 v1, v70, v0", "v_mov_b32_e32 v3, 0",
        "global_store_dword v[2:3], v1, off", "s_endpgm"]


def top(body) -> int:
    return max(r + 1 for info in body.infos for k, r in info.defs | info.uses if k == "v")


def test_occupancy_levels_follow_the_allocation_granule():
    assert [waves_per_simd(n) for n in (64, 65, 72, 73, 80, 96, 128)] == [8, 7, 7, 6, 6, 5, 4]
    assert vgpr_target(71) == 64 and vgpr_target(64) is None and vgpr_target(92) == 80
    assert vgpr_target(40, agprs=40) == 32 and vgpr_target(41, agprs=39) == 40  # unified: VGPRs to 4s, + AGPRs


def test_a_value_above_the_level_moves_to_a_free_register():
    b = body_of(HIGH)
    new = compact_vgprs(b, 0)
    assert new is not None and new.no_worse(b) and top(new) <= 64
    c = code(new)
    moved = c[0].split()[1].rstrip(",")
    # v70 dies where v1 is written, so it may share v1; v0 (the work-item id) stays live across it
    assert c[1] == f"v_add_f32_e32 v1, {moved}, v0" and moved == "v1"


@pytest.mark.parametrize("change", [
    ("v_mov_b32_e32 v70, 1.0", "v_mov_b64 v[70:71], 0"),                       # inside a tuple
    ("v_add_f32_e32 v1, v70, v0", "v_add_f32_dpp v1, v70, v0 row_shr:1 row_mask:0xf bank_mask:0xf"),  # cross-lane
    ("v_mov_b32_e32 v3, 0", "s_setpc_b64 s[4:5]"),                             # indirect control flow
])
def test_values_it_cannot_move_make_it_refuse(change):
    b = body_of([change[1] if x == change[0] else x for x in HIGH])
    assert compact_vgprs(b, 1) is None


def test_a_kernel_at_the_highest_level_is_left_alone():
    assert compact_vgprs(body_of(["v_mov_b32_e32 v9, 0", "v_add_f32_e32 v1, v9, v0", "s_endpgm"]), 0) is None


def test_a_reallocated_candidate_verifies_and_declares_fewer_registers():
    ev = evaluator("19_ReLU")
    body = ev.body_of(0)
    webs = VgprWebs(body)
    movable = next(w for w in webs.webs if not w.pinned and w.defs)
    spread = webs.renamed({id(movable): 100})   # the same code naming v100: 4 waves per SIMD instead of 8
    wide = ev.evaluate(0, spread.edit(body, "rename", "v100"), body_window(ev), agent="test", step=1)
    assert wide.status == "verified", wide.summary()
    back = compact_vgprs(ev.body_of(wide.id), next(i for i, x in enumerate(spread.instructions) if "v100" in x.text()))
    assert back is not None and top(back) <= 64
    cand = ev.evaluate(wide.id, back.edit(ev.body_of(wide.id), "compact_vgprs", "x"), body_window(ev, wide.id),
                       agent="test", step=2)
    assert cand.status == "verified" and cand.verdict["kind"] == "equivalent", cand.summary()
    granule = lambda c: CodeObject(c.data).kernel(ev.kernel).descriptor.fields["granulated_workitem_vgpr_count"]
    assert granule(wide) > granule(cand) == granule(ev.lineage.get(0))


def test_no_fresh_vgpr_past_the_arch_vgprs():
    """vllm_prefill_attention names all 256 arch VGPRs (and 106 AGPRs, the unified file's other half): no fresh
    VGPR is left (v256 would not assemble), and the most it may name is what it names. A fresh range never
    reaches past v255."""
    from asmevo.agent.ops_regs import vgpr_limit
    from asmevo.agent.ops_rename import free_vgprs
    full = evaluator("vllm_prefill_attention", "triton").body_of(0)
    assert top(full) == 256 and free_vgprs(full, [1]) is None and vgpr_limit(full) == 256
    lines = [f"v_mov_b32_e32 v{r}, 0" for r in range(0, 253)] + ["s_endpgm"]
    assert free_vgprs(body_of(lines), [2]) == [254] and free_vgprs(body_of(lines), [3]) is None  # v[254:256]: no
    assert free_vgprs(body_of(lines), [1, 1, 1]) == [253, 254, 255]
