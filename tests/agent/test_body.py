"""A Body reads its kernel's processor: a gfx950 body's CDNA4 instructions have their table's operand
roles and gfx950's wait states apply to it (the same text as gfx942 code either is refused or gets
gfx942's numbers); `.long` raw-words instructions are analysed as the instruction their comment names,
and operators may move them but never rewrite them."""
from __future__ import annotations

import pytest

from asmevo.agent.body import make_item
from asmevo.agent.ops_cleanup import propagate_move
from asmevo.agent.ops_nop import fill_nop
from asmevo.agent.operators import propose
from asmevo.errors import UnsupportedInstruction
from agenttools import body_of, code

# CDNA4-only instructions (not in gfx942's table): a double-K bf16 MFMA, a transposing LDS read, the
# lane-swap permutes and the bf16 pack conversion.
CDNA4 = ["ds_read_b64_tr_b16 v[20:21], v1",
         "v_cvt_pk_bf16_f32 v2, v3, v4",
         "v_permlane32_swap_b32_e32 v5, v6",
         "v_mfma_f32_32x32x16_bf16 v[32:47], v[20:23], v[24:27], v[32:47]",
         "s_endpgm"]
# A scaled fp4 MFMA whose prefix sets bits 0x6000, as recovery keeps it (AITer's
# f4gemm_bf16_per1x32Fp4_BpreShuffle_128x128 at 0x3564; the comment is LLVM's disassembly of the words).
RAW = (".long 0xd3ac6000, 0x0003118c, 0xd3ad8c00, 0x84021148; 0x3564: v_mfma_scale_f32_16x16x128_f8f6f4 "
       "a[0:3], v[72:75], v[8:11], a[0:3], v140, v136 op_sel_hi:[0,0,0] cbsz:4 blgp:4  (re-encodes as "
       "0000acd38c110300008cadd348110284 (bits 0x6000 of dword 0 differ))")


def test_a_gfx950_body_reads_the_cdna4_instruction_table():
    body = body_of(CDNA4, processor="gfx950")
    infos = body.infos
    assert infos[0].defs == {("v", 20), ("v", 21)} and ("v", 1) in infos[0].uses
    assert {("v", 5), ("v", 6)} <= infos[2].defs and {("v", 5), ("v", 6)} <= infos[2].uses  # both lanes' halves swap
    assert infos[3].defs == {("v", r) for r in range(32, 48)}
    # LDS result read by the MFMA with no s_waitcnt: the gfx950 waitcnt analysis sees it
    assert body.findings[("waitcnt", "lgkmcnt")] == 1
    assert body.replace(body.items).processor == "gfx950"
    with pytest.raises(UnsupportedInstruction):
        body_of(CDNA4).infos  # the same text read as gfx942 code


def test_gfx950_wait_states_decide_what_fill_nop_may_shrink():
    """An XDL MFMA of 4 passes is read by a VALU 7 wait states later on gfx942, 8 on gfx950 (LLVM
    GCNHazardRecognizer, IsGFX950: XDL + 1 beyond 2 passes): the 8-state nop shrinks only on gfx942."""
    lines = ["v_mfma_f32_16x16x16_f16 v[0:3], v[4:5], v[6:7], 0", "s_nop 7", "v_add_f32_e32 v8, v0, v9", "s_endpgm"]
    gfx942, gfx950 = body_of(lines), body_of(lines, processor="gfx950")
    assert not gfx942.findings and not gfx950.findings
    assert code(fill_nop(gfx942, 1))[1] == "s_nop 6"
    assert fill_nop(gfx950, 1) is None
    shrunk = gfx950.replace([*gfx950.items[:1], make_item("s_nop 6"), *gfx950.items[2:]])
    assert shrunk.findings == {("hazard", "mfma-result-read"): 1}


def test_raw_words_are_the_instruction_their_comment_names():
    lines = ["v_mov_b32_e32 v140, 0x7f7f7f7f", "s_nop 1", RAW, "v_accvgpr_read_b32 v20, a0", "s_endpgm"]
    body = body_of(lines, processor="gfx950")
    raw = body.items[2]
    assert raw.raw and raw.text.strip().startswith(".long") and not body.opaque
    assert body.instructions[2].mnemonic == "v_mfma_scale_f32_16x16x128_f8f6f4"
    assert ("v", 140) in body.infos[2].uses and ("a", 0) in body.infos[2].defs
    # fp4 x fp4: 4 passes, read 4 + 3 + 1 wait states later on gfx950; the read right after is a hazard
    assert body.findings == {("hazard", "mfma-result-read"): 1}


def test_operators_move_raw_words_but_never_rewrite_them():
    lines = ["v_mov_b32_e32 v141, 0x7f7f7f7f", "v_mov_b32_e32 v9, 1", "v_mov_b32_e32 v140, v141", "s_nop 1", RAW,
             "s_nop 7", "v_accvgpr_read_b32 v20, a0", "global_store_dword v9, v20, s[0:1]", "s_endpgm"]
    body = body_of(lines, processor="gfx950")
    moved = body.replace([body.items[0], body.items[2], body.items[4], body.items[1], body.items[3], *body.items[5:]])
    assert moved.keeps_raw(body)
    # propagate_move would make the MFMA read v141: new text, so new bytes without the prefix bits
    rewritten = propagate_move(body, 2)
    assert "v141, v136" in code(rewritten)[3] and not rewritten.keeps_raw(body)
    proposals = list(propose(body, list(range(len(body.instructions)))))
    assert all(p.body.keeps_raw(body) and p.operator != "propagate_move" for p in proposals)
