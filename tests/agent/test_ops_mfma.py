"""interleave_mfma: an MFMA chain sunk past the loop-exit branch, interleaved with the next tile's loads."""
from __future__ import annotations

from asmevo.agent.ops_mfma import coexecutes, interleave_mfma
from agenttools import body_of, code, evaluator, body_window

LOOP = [
    "s_mov_b32 s4, 0",
    ".Lloop:",
    "s_waitcnt vmcnt(0)",
    "ds_write_b64 v1, v[4:5]",
    "s_waitcnt lgkmcnt(0)",
    "s_barrier",
    "ds_read_b64 v[2:3], v1",
    "ds_read_b64 v[6:7], v1 offset:64",
    "s_waitcnt lgkmcnt(1)",
    "v_mfma_f32_32x32x8_f16 v[16:31], v[2:3], v[4:5], v[16:31]",
    "s_add_i32 s4, s4, 1",
    "s_cmp_lt_i32 s4, s5",
    "s_waitcnt lgkmcnt(0)",
    "v_mfma_f32_32x32x8_f16 v[16:31], v[2:3], v[6:7], v[16:31]",
    "s_cbranch_scc0 .Lexit",
    "v_add_u32_e32 v8, s4, v0",
    "v_lshlrev_b32_e32 v8, 2, v8",
    "v_mov_b32_e32 v9, 0",
    "v_lshl_add_u64 v[10:11], v[8:9], 0, s[0:1]",
    "v_add_u32_e32 v12, 1, v0",
    "v_add_u32_e32 v13, 2, v0",
    "v_add_u32_e32 v14, 3, v0",
    "v_add_u32_e32 v15, 4, v0",
    "global_load_dwordx2 v[4:5], v[10:11], off",
    "v_add_u32_e32 v32, 5, v0",
    "v_add_u32_e32 v33, 6, v0",
    "v_add_u32_e32 v34, 7, v0",
    "v_add_u32_e32 v35, 8, v0",
    "v_add_u32_e32 v36, 9, v0",
    "v_add_u32_e32 v37, 10, v0",
    "v_add_u32_e32 v38, 11, v0",
    "v_add_u32_e32 v39, 12, v0",
    "s_branch .Lloop",
    ".Lexit:",
    "s_nop 7",
    "s_nop 7",
    "s_nop 3",
    "v_cvt_f16_f32_e32 v40, v16",
    "s_endpgm",
]
FIRST_MFMA = 8  # instruction index of the first MFMA in LOOP


def _mfma_lines(lines: list[str]) -> list[int]:
    return [n for n, ln in enumerate(lines) if ln.startswith("v_mfma")]


def test_sinks_the_chain_and_interleaves_it_with_the_load_work():
    body = body_of(LOOP)
    new = interleave_mfma(body, FIRST_MFMA)
    assert new is not None and new.no_worse(body)
    lines = code(new)
    branch = lines.index("s_cbranch_scc0 .Lexit_mfma_exit")
    back = lines.index("s_branch .Lloop")
    exit_copy = lines.index(".Lexit_mfma_exit:")
    mfmas = _mfma_lines(lines)
    loop_path = [n for n in mfmas if branch < n < back]
    assert len(loop_path) == 2 and len([n for n in mfmas if exit_copy < n]) == 2
    # the loop counter and its compare stay above the branch; the chain's second MFMA is not issued
    # back to back with the first any more: independent address work fills the matrix core's shadow
    assert lines.index("s_cmp_lt_i32 s4, s5") < branch
    assert loop_path[1] - loop_path[0] > 2
    # the load overwriting the first MFMA's SrcB (v[4:5]) comes after that MFMA, not before
    assert loop_path[0] < lines.index("global_load_dwordx2 v[4:5], v[10:11], off")
    # the exit path: the chain, then the original exit code
    assert lines[exit_copy + 1:exit_copy + 4] == [LOOP[9], "s_waitcnt lgkmcnt(0)", LOOP[13]]
    assert lines[exit_copy + 4] in ("s_nop 0", ".Lexit:")


def test_a_side_entry_into_the_load_work_gets_its_own_copy_without_the_chain():
    # a rotated loop: the preheader jumps straight to the load work
    lines = LOOP[:1] + ["s_branch .Lnext"] + LOOP[1:15] + [".Lnext:"] + LOOP[15:]
    body = body_of(lines)
    new = interleave_mfma(body, FIRST_MFMA + 1)
    assert new is not None and new.no_worse(body)
    out = code(new)
    assert out[1] == "s_branch .Lexit_mfma_entry"
    entry = out.index(".Lexit_mfma_entry:")
    copy = out[entry + 1:out.index(".Lexit_mfma_exit:")]
    assert copy == lines[lines.index(".Lnext:") + 1:lines.index(".Lexit:")]  # the load work as it was
    assert not any(ln.startswith("v_mfma") for ln in copy)


def test_refuses_when_staying_work_reads_an_mfma_result():
    lines = LOOP[:11] + ["v_add_f32_e32 v41, v16, v16"] + LOOP[11:]
    assert interleave_mfma(body_of(lines), FIRST_MFMA) is None


def test_refuses_when_staying_work_reads_a_load_a_moved_wait_waits_for():
    lines = LOOP[:13] + ["v_add_u32_e32 v44, v6, v0"] + LOOP[13:]
    assert interleave_mfma(body_of(lines), FIRST_MFMA) is None


def test_refuses_fp32_mfma_that_cannot_coexecute():
    assert not coexecutes("v_mfma_f32_32x32x2_f32") and coexecutes("v_mfma_f32_16x16x8_xf32")
    lines = [ln.replace("v_mfma_f32_32x32x8_f16 v[16:31], v[2:3], v[4:5]", "v_mfma_f32_32x32x2_f32 v[16:31], v2, v4")
             .replace("v_mfma_f32_32x32x8_f16 v[16:31], v[2:3], v[6:7]", "v_mfma_f32_32x32x2_f32 v[16:31], v2, v6")
             for ln in LOOP]
    assert interleave_mfma(body_of(lines), FIRST_MFMA) is None


def test_refuses_when_the_exit_target_is_fallen_into():
    lines = [ln for ln in LOOP if ln != "s_branch .Lloop"]
    lines.insert(lines.index(".Lexit:"), "s_cbranch_scc1 .Lloop")
    assert interleave_mfma(body_of(lines), FIRST_MFMA) is None
    # another label at the exit code: branches to it must not run the chain's copy
    aliased = LOOP[:-6] + [".Lalias:"] + LOOP[-6:]
    assert interleave_mfma(body_of(aliased), FIRST_MFMA) is None


def test_a_moved_wait_never_crosses_a_load_on_its_counter():
    # the fall-through path starts with an LDS read: the chain's lgkmcnt waits must stay before it,
    # so both MFMAs land right after the branch
    lines = LOOP[:15] + ["ds_read_b32 v42, v1"] + LOOP[15:]
    new = interleave_mfma(body_of(lines), FIRST_MFMA)
    assert new is not None
    out = code(new)
    branch = out.index("s_cbranch_scc0 .Lexit_mfma_exit")
    assert all(n < out.index("ds_read_b32 v42, v1") for n in _mfma_lines(out) if n > branch
               and n < out.index("s_branch .Lloop"))


def test_a_moved_wait_stays_before_a_reader_of_the_load_it_waits_for():
    # v6 comes from the ds_read the chain's lgkmcnt(0) waits for: the wait (and its MFMA) go before the reader
    lines = LOOP[:16] + ["v_add_u32_e32 v43, v6, v0"] + LOOP[16:]
    new = interleave_mfma(body_of(lines), FIRST_MFMA)
    assert new is not None
    out = code(new)
    assert out.index("s_waitcnt lgkmcnt(0)", out.index("s_cbranch_scc0 .Lexit_mfma_exit")) < \
        out.index("v_add_u32_e32 v43, v6, v0")


def test_verified_on_the_standard_matmul_loop():
    # (its model speed at the bench shape: benchmarks/agents/interleave_mfma.txt; the verify shapes here
    # have too short a K for the loop to run)
    ev = evaluator("2_Standard_matrix_multiplication_")
    body = ev.body_of(0)
    site = next(i for i, info in enumerate(body.infos) if info.family == "mfma")
    new = interleave_mfma(body, site)
    assert new is not None
    cand = ev.evaluate(0, new.edit(body, "interleave_mfma", "hot loop"), body_window(ev), agent="test", step=1)
    assert cand.status == "verified", cand.summary()
    assert cand.verdict["kind"] == "equivalent"
    lines = code(new)
    branch = next(n for n, ln in enumerate(lines) if ln.startswith("s_cbranch_scc0") and ln.endswith("_mfma_exit"))
    after = lines[branch + 1:]
    first_load = next(n for n, ln in enumerate(after) if ln.startswith("global_load"))
    last_mfma = max(n for n, ln in enumerate(after[:150]) if ln.startswith("v_mfma"))
    assert first_load < last_mfma  # the next tile's loads issue inside the chain
