"""widen_buffer_loads: a run of 16-bit buffer loads of one lane's consecutive elements becomes one wide load
behind run-time checks, with the narrow loads (their values packed) as the fallback and the bf16 readers
reading the packed registers; refusals where a reader or the run does not fit; vLLM's fused add + RMSNorm
through every gate (its verify shapes take both paths)."""
from __future__ import annotations

import pytest

from asmevo.agent.ops_widen_buffer import widen_buffer_loads
from asmevo.agent.search import heat_of, predict
from agenttools import body_of, code, evaluated, evaluator

PROLOGUE = ["s_load_dwordx2 s[8:9], s[0:1], 0x0", "s_load_dword s6, s[0:1], 0x10",
            "v_lshlrev_b32_e32 v1, 2, v0",                        # element e = 4 x lane
            "v_bfrev_b32_e32 v12, 1", "s_waitcnt lgkmcnt(0)",      # the out-of-range sentinel 0x80000000
            "s_and_b32 s9, s9, 0xffff", "s_mov_b32 s10, 0x7ffffffe", "s_mov_b32 s11, 0x27000"]


def offset(k: int) -> list[str]:
    """v(20+k): element e + k's byte offset, the sentinel when e + k >= n (as Triton emits it)."""
    return [f"v_or_b32_e32 v2, {k}, v1", "v_lshlrev_b32_e32 v3, 1, v2", "v_cmp_gt_i32_e32 vcc, s6, v2",
            f"v_cndmask_b32_e32 v{20 + k}, v12, v3, vcc"]


LOADS = [*PROLOGUE, *(x for k in range(4) for x in offset(k)),
         *(f"buffer_load_ushort v{30 + k}, v{20 + k}, s[8:11], 0 offen" for k in range(4)), "s_waitcnt vmcnt(0)",
         *(f"v_lshlrev_b32_e32 v{40 + k}, 16, v{30 + k}" for k in range(4)),
         "v_add_f32_e32 v40, v40, v41", "v_add_f32_e32 v42, v42, v43", "v_add_f32_e32 v40, v40, v42",
         "v_mov_b32_e32 v44, 0", "global_store_dword v[44:45], v40, off", "s_endpgm"]


def first_load(body) -> int:
    return next(i for i, x in enumerate(body.instructions) if x.mnemonic == "buffer_load_ushort")


def test_four_loads_become_one_dwordx2_behind_checks_with_the_narrow_loads_as_fallback():
    b = body_of(LOADS)
    new = widen_buffer_loads(b, first_load(b))
    assert new is not None and new.no_worse(b)
    c = code(new)
    [wide] = [x for x in c if x.startswith("buffer_load_dwordx2")]
    pair = wide.split()[1].rstrip(",")
    lo = int(pair[2:].split(":")[0])
    assert wide == f"buffer_load_dwordx2 {pair}, v20, s[8:11], 0 offen"
    # every lane's offsets are checked consecutive against the first: v20 + 2k == v(20+k)
    assert all(any(x.startswith("v_cmp_eq_u32_e64") and x.endswith(f", v{20 + k}") for x in c) for k in (1, 2, 3))
    # a lane that fails takes the narrow loads, whose values are packed into the wide load's registers
    slow = c.index(next(x for x in c if x.startswith(".Lwbuf_slow_")))
    assert c[slow - 3].startswith("s_cbranch_scc1 .Lwbuf_slow_") and c[slow - 2] == wide
    assert c[slow + 1:slow + 5] == [f"buffer_load_ushort v{30 + k}, v{20 + k}, s[8:11], 0 offen" for k in range(4)]
    assert c[slow + 5:slow + 8] == ["s_waitcnt vmcnt(0)", f"v_lshl_or_b32 v{lo}, v31, 16, v30",
                                    f"v_lshl_or_b32 v{lo + 1}, v33, 16, v32"]
    # the bf16 readers read the packed pair: the low element shifted up, the high one masked
    assert [x for x in c if x.startswith(("v_lshlrev_b32_e32 v4", "v_and_b32_e32 v4"))] == [
        f"v_lshlrev_b32_e32 v40, 16, v{lo}", f"v_and_b32_e32 v41, 0xffff0000, v{lo}",
        f"v_lshlrev_b32_e32 v42, 16, v{lo + 1}", f"v_and_b32_e32 v43, 0xffff0000, v{lo + 1}"]


@pytest.mark.parametrize("change", [
    ("v_lshlrev_b32_e32 v41, 16, v31", "v_cvt_f32_u32_e32 v41, v31"),       # a reader that is no bf16 widening
    ("buffer_load_ushort v30, v20,", "buffer_load_ushort v21, v20,"),        # a load writes a later one's offset
    ("buffer_load_ushort v33, v23, s[8:11], 0 offen", "s_nop 0"),            # a run of three
    ("buffer_load_ushort v31, v21, s[8:11], 0 offen", "buffer_load_ushort v31, v21, s[8:11], 0 offen offset:2"),
])
def test_it_refuses_what_it_cannot_rewrite(change):
    b = body_of("\n".join(LOADS).replace(change[0], change[1], 1).split("\n"))
    assert widen_buffer_loads(b, first_load(b)) is None


def test_fused_add_rmsnorm_widened_loads_verify_on_both_paths_and_reach_the_hbm_bound():
    """vLLM's fused add + RMSNorm loads each lane's 8 bf16 elements of x, the residual and the weight with 8
    `buffer_load_ushort`s each. One `buffer_load_dwordx4` for x's is verified equivalent on every verify shape
    (4096 elements a row: every lane takes the wide load; 2500 and the held-out 3000: the tail lanes take the
    narrow ones) and cuts enough cache lines at its bench shape that HBM bandwidth bounds it. The search
    predicts it so: the checks and the wide load run as often as the narrow loads did, the fallback never."""
    ev = evaluator("vllm_add_rmsnorm", "triton", "mi300x")
    body = ev.body_of(0)
    new = widen_buffer_loads(body, first_load(body))
    assert new is not None
    k0 = ev.lineage.get(0).cycles
    assert predict(new, heat_of(body, ev.profile(0), k0)) < k0 / 1.15
    assert evaluated(ev, body, new, "widen_buffer_loads").speedup > 1.15
