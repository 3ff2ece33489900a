"""merge_lds: two LDS reads or writes through one address VGPR become one ds_read2/ds_write2 (st64 for far
offsets) only when moving the second to the first's place changes nothing, with the lgkmcnt waits that
could count the dropped event recounted; split pairs of a real GEMM merge back and run like K0 on the
emulator, and so does AITer's i8gemm with its read pairs merged."""
from __future__ import annotations

import pytest

from asmevo.agent.edit import Edit, Window
from asmevo.agent.gates import Evaluator
from asmevo.agent.operators import BY_NAME, propose
from asmevo.agent.ops_lds import merge_lds, merge_lds_block
from asmevo.launches import suite_launches
from asmevo.model.costs import cost, lds_bytes
from asmevo.suites import load_suite
from agenttools import body_of, body_window, code, evaluator, line_of


def test_two_reads_into_an_aligned_pair_become_one_read2_and_later_waits_count_one_event_fewer():
    b = body_of(["ds_read_b32 v20, v4", "ds_read_b32 v21, v4 offset:4", "ds_read_b32 v22, v4 offset:8",
                 "ds_read_b32 v23, v4 offset:12", "s_waitcnt lgkmcnt(2)", "v_add_f32_e32 v30, v20, v21",
                 "s_waitcnt lgkmcnt(0)", "v_add_f32_e32 v31, v22, v23", "s_endpgm"])
    first = merge_lds(b, 0)  # two events follow it before the wait: lgkmcnt(2) still means "v20, v21 are back"
    assert code(first)[:5] == ["ds_read2_b32 v[20:21], v4 offset1:1", "ds_read_b32 v22, v4 offset:8",
                               "ds_read_b32 v23, v4 offset:12", "s_waitcnt lgkmcnt(2)", "v_add_f32_e32 v30, v20, v21"]
    both = merge_lds_block(b, 0)
    assert code(both)[:3] == ["ds_read2_b32 v[20:21], v4 offset1:1", "ds_read2_b32 v[22:23], v4 offset0:2 offset1:3",
                              "s_waitcnt lgkmcnt(1)"]
    assert first.no_worse(b) and both.no_worse(b)


def test_the_low_register_takes_offset0_whatever_the_order_and_far_offsets_use_st64():
    b = body_of(["ds_read_b32 v21, v4 offset:8", "ds_read_b32 v20, v4", "s_waitcnt lgkmcnt(0)", "s_endpgm"])
    assert code(merge_lds(b, 0))[0] == "ds_read2_b32 v[20:21], v4 offset1:2"
    b = body_of(["ds_read_b64 v[192:193], v13 offset:17408", "ds_read_b64 v[194:195], v13 offset:18432",
                 "s_waitcnt lgkmcnt(0)", "s_endpgm"])  # 34 and 36 units of 64 x 8 bytes
    assert code(merge_lds(b, 0))[0] == "ds_read2st64_b64 v[192:195], v13 offset0:34 offset1:36"


def test_two_writes_become_one_write2_with_their_data_in_order():
    b = body_of(["ds_write_b32 v15, v84", "v_mov_b32_e32 v1, 0", "ds_write_b32 v15, v85 offset:260",
                 "s_waitcnt lgkmcnt(0)", "s_barrier", "s_endpgm"])
    new = merge_lds(b, 0)
    assert code(new)[:2] == ["ds_write2_b32 v15, v84, v85 offset1:65", "v_mov_b32_e32 v1, 0"]
    assert new.no_worse(b)


def test_no_merge_when_the_pair_cannot_be_one_instruction():
    refused = {
        "odd first register": ["ds_read_b32 v21, v4", "ds_read_b32 v22, v4 offset:4"],
        "registers not adjacent": ["ds_read_b32 v20, v4", "ds_read_b32 v23, v4 offset:4"],
        "another address": ["ds_read_b32 v20, v4", "ds_read_b32 v21, v5 offset:4"],
        "offset beyond 255 elements, not st64": ["ds_read_b32 v20, v4", "ds_read_b32 v21, v4 offset:2000"],
        "unaligned offset": ["ds_read_b64 v[20:21], v4", "ds_read_b64 v[22:23], v4 offset:4"],
        "one address written twice": ["ds_write_b32 v4, v1", "ds_write_b32 v4, v2"],
        "gds": ["ds_read_b32 v20, v4 gds", "ds_read_b32 v21, v4 offset:4 gds"],
    }
    for why, pair in refused.items():
        assert merge_lds(body_of([*pair, "s_waitcnt lgkmcnt(0)", "s_endpgm"]), 0) is None, why
    assert merge_lds(body_of(["ds_read_b32 v20, v4", "ds_read_b32 v21, v4 offset:1020", "s_waitcnt lgkmcnt(0)",
                              "s_endpgm"]), 0) is not None  # 255 elements is the farthest


def test_no_merge_when_moving_the_second_access_would_change_what_it_does():
    between = {
        "its address is rewritten": "v_add_u32_e32 v4, 4, v4",
        "its destination is read": "v_mov_b32_e32 v9, v21",
        "its destination is written": "v_mov_b32_e32 v21, 0",
        "LDS is written": "ds_write_b32 v6, v7",
        "LDS is loaded into by DMA": "buffer_load_dword v1, s[8:11], 0 offen lds",
        "other waves may write LDS": "s_barrier",
        "EXEC changes": "s_mov_b64 exec, s[4:5]",
    }
    read_pair = lambda ins: body_of(["ds_read_b32 v20, v4", ins, "ds_read_b32 v21, v4 offset:4", "s_waitcnt lgkmcnt(0)",
                                     "s_endpgm"])
    assert merge_lds(read_pair("v_mov_b32_e32 v9, v22"), 0) is not None  # independent work in between is fine
    for why, ins in between.items():
        assert merge_lds(read_pair(ins), 0) is None, why
    b = body_of(["ds_write_b32 v4, v1", "ds_read_b32 v9, v4 offset:4", "ds_write_b32 v4, v2 offset:4",
                 "s_waitcnt lgkmcnt(0)", "s_endpgm"])
    assert merge_lds(b, 0) is None  # the read in between must see the old value
    b = body_of(["ds_write_b32 v4, v1", "v_mov_b32_e32 v2, 1", "ds_write_b32 v4, v2 offset:4", "s_endpgm"])
    assert merge_lds(b, 0) is None  # its data is computed in between


def test_a_wait_reached_around_the_loop_is_recounted_and_the_analysis_would_refuse_it_otherwise():
    lines = ["s_mov_b32 s2, 0", ".Lloop:", "ds_read_b32 v20, v4", "ds_read_b32 v21, v4 offset:4",
             "s_waitcnt lgkmcnt(1)", "v_add_f32_e32 v30, v20, v20", "s_waitcnt lgkmcnt(0)",
             "v_add_f32_e32 v31, v21, v21", "s_add_u32 s2, s2, 1", "s_cmp_lt_u32 s2, 4", "s_cbranch_scc1 .Lloop",
             "s_endpgm"]
    b = body_of(lines)
    new = merge_lds(b, 1)
    assert code(new)[2:4] == ["ds_read2_b32 v[20:21], v4 offset1:1", "s_waitcnt lgkmcnt(0)"]
    assert new.no_worse(b)
    stale = body_of([*lines[:2], "ds_read2_b32 v[20:21], v4 offset1:1", *lines[4:]])
    assert stale.waitcnt_violations > b.waitcnt_violations  # lgkmcnt(1) no longer covers v20


def test_a_merged_pair_moves_the_same_lds_bytes():
    pair = body_of(["ds_read_b32 v20, v4", "ds_read_b32 v21, v4 offset:4", "s_waitcnt lgkmcnt(0)", "s_endpgm"])
    merged = merge_lds(pair, 0)
    volume = lambda body: sum(lds_bytes(cost(ins)) for ins in body.instructions)
    assert volume(merged) == volume(pair) == 2 * 64 * 4
    assert len(merged.instructions) == len(pair.instructions) - 1


@pytest.mark.slow
def test_aiter_i8gemm_with_its_lds_reads_merged_runs_like_k0(wheel):
    suite = load_suite("aiter")
    suite.prepare()
    p = suite.problem("i8gemm")
    ev = Evaluator(p.code_object, suite_launches(p))
    body = ev.body_of(0)
    props = list(propose(body, list(range(len(body.instructions))), (BY_NAME["merge_lds_block"],)))
    best = min(props, key=lambda pr: len(pr.body.instructions))
    assert len(body.instructions) - len(best.body.instructions) >= 8
    assert any(c.startswith("ds_read2_b32") for c in code(best.body))
    cand = ev.evaluate(0, best.body.edit(body, best.operator, best.note), Window(*ev.source_of(0).body),
                       agent="test", step=1)
    assert cand.verified


def test_split_lds_accesses_of_a_real_gemm_merge_back_and_run_like_k0():
    """1_Square_matrix_multiplication_ with one ds_write2_b32 and one ds_read2_b32 split into two accesses each
    (a verified, deliberately pessimised parent): merge_lds_block puts them back together, and the result
    passes every gate."""
    ev = evaluator("1_Square_matrix_multiplication_")
    edits = [("ds_write2_b32 v52, v0, v1 offset1:68", "ds_write_b32 v52, v0\nds_write_b32 v52, v1 offset:272"),
             ("ds_read2_b32 v[0:1], v53 offset1:16", "ds_read_b32 v0, v53\nds_read_b32 v1, v53 offset:64")]
    parent = 0
    for anchor, split in edits:
        n = line_of(ev, anchor, parent)
        cand = ev.evaluate(parent, Edit(n, n, split, "pessimise"), body_window(ev, parent), agent="test", step=0)
        assert cand.status == "verified", cand.summary()
        parent = cand.id
    body = ev.body_of(parent)
    merged = {}
    for text in ("ds_write_b32 v52, v0", "ds_read_b32 v0, v53"):
        site = next(i for i, ins in enumerate(body.instructions) if ins.text() == text)
        merged[text] = BY_NAME["merge_lds_block"].apply(body, site)
        assert merged[text] is not None and merged[text].no_worse(body)
        assert len(merged[text].instructions) == len(body.instructions) - 1
        cand = ev.evaluate(parent, merged[text].edit(body, "merge_lds_block", text), body_window(ev, parent),
                           agent="test", step=1)
        assert cand.status == "verified" and cand.verdict["kind"] == "equivalent", cand.summary()
    assert "ds_write2_b32 v52, v0, v1 offset1:68" in code(merged["ds_write_b32 v52, v0"])
    assert "ds_read2_b32 v[0:1], v53 offset1:16" in code(merged["ds_read_b32 v0, v53"])
