"""pack_f32: pairs of f32 ops into an aligned VGPR pair become one packed op, only when moving the
second to the first's place changes nothing; the result runs like K0 on the emulator."""
from __future__ import annotations

from asmevo.agent.edit import Window
from asmevo.agent.operators import BY_NAME, propose
from asmevo.agent.ops_pack import pack_f32, pack_f32_block
from agenttools import body_of, code, evaluator


def test_two_adds_into_a_pair_become_one_packed_add_with_halves_selected():
    b = body_of(["v_add_f32_e32 v31, v31, v34", "v_mov_b32_e32 v7, 0", "v_add_f32_e32 v30, v30, v35", "s_endpgm"])
    new = pack_f32(b, 0)
    assert code(new) == ["v_pk_add_f32 v[30:31], v[30:31], v[34:35] op_sel:[0,1] op_sel_hi:[1,0]",
                         "v_mov_b32_e32 v7, 0", "s_endpgm"]
    assert new.no_worse(b)


def test_fmac_pairs_accumulate_into_their_destination_pair_and_negations_carry_over():
    b = body_of(["v_fmac_f32_e32 v4, v0, v2", "v_fmac_f32_e32 v5, v1, v2", "v_mul_f32_e64 v6, -v0, s2",
                 "v_mul_f32_e64 v7, v1, s3", "s_endpgm"])
    assert code(pack_f32(b, 0))[0] == "v_pk_fma_f32 v[4:5], v[0:1], v[2:3], v[4:5] op_sel_hi:[1,0,1]"
    assert code(pack_f32(b, 2))[2] == "v_pk_mul_f32 v[6:7], v[0:1], s[2:3] neg_lo:[1,0]"
    assert code(pack_f32_block(b, 0))[:2] == ["v_pk_fma_f32 v[4:5], v[0:1], v[2:3], v[4:5] op_sel_hi:[1,0,1]",
                                              "v_pk_mul_f32 v[6:7], v[0:1], s[2:3] neg_lo:[1,0]"]


def test_no_pack_when_moving_the_second_op_would_change_a_value():
    assert pack_f32(body_of(["v_add_f32_e32 v4, v0, v2", "v_add_f32_e32 v5, v4, v3", "s_endpgm"]), 0) is None
    assert pack_f32(body_of(["v_add_f32_e32 v4, v0, v2", "v_mov_b32_e32 v1, 0", "v_add_f32_e32 v5, v1, v3",
                             "s_endpgm"]), 0) is None  # its source is written in between
    assert pack_f32(body_of(["v_add_f32_e32 v4, v0, v2", "v_mov_b32_e32 v9, v5", "v_add_f32_e32 v5, v1, v3",
                             "s_endpgm"]), 0) is None  # its old destination is read in between
    assert pack_f32(body_of(["v_add_f32_e32 v4, v0, v2", "s_mov_b64 exec, s[4:5]", "v_add_f32_e32 v5, v1, v3",
                             "s_endpgm"]), 0) is None  # EXEC changes in between


def test_no_pack_for_what_packed_f32_cannot_express():
    assert pack_f32(body_of(["v_add_f32_e64 v4, |v0|, v2", "v_add_f32_e64 v5, |v1|, v3", "s_endpgm"]), 0) is None
    assert pack_f32(body_of(["v_add_f32_e32 v4, 1.0, v2", "v_add_f32_e32 v5, 1.0, v3", "s_endpgm"]), 0) is None
    assert pack_f32(body_of(["v_mul_f32_e64 v4, v0, s2", "v_mul_f32_e64 v5, v1, s5", "s_endpgm"]), 0) is None
    assert pack_f32(body_of(["v_add_f32_e32 v5, v0, v2", "v_add_f32_e32 v6, v1, v3", "s_endpgm"]), 0) is None
    assert pack_f32(body_of(["v_add_f32_e32 v4, v0, v2", "v_add_f32_e32 v5, v1, v4", "s_endpgm"]), 0) is None


def test_packed_logsoftmax_runs_like_k0():
    ev = evaluator("24_LogSoftmax")
    body = ev.body_of(0)
    (prop,) = list(propose(body, list(range(len(body.instructions))), (BY_NAME["pack_f32s"],)))
    assert sum(c.startswith("v_pk_add_f32") for c in code(prop.body)) - sum(
        c.startswith("v_pk_add_f32") for c in code(body)) == 4
    assert prop.body.no_worse(body)
    cand = ev.evaluate(0, prop.body.edit(body, prop.operator, prop.note), Window(*ev.source_of(0).body),
                       agent="test", step=1)
    assert cand.verified and cand.cycles < ev.baseline.cycles
