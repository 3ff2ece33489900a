"""The CDNA3 facts of the LLM agent's prompt: the MFMA layout formulas it states give exactly the
emulator's register layouts (asmevo/emu/mfma.py, checked against Triton's there)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from asmevo.agent.facts import _mfma_line, cdna3_facts
from asmevo.emu.mfma import input_layout, output_layout
from asmevo.isa.hazards import FIXED_WAITS, mfma_result_wait
from asmevo.isa.table import instr_info

MFMAS = ["v_mfma_f32_32x32x8_f16", "v_mfma_f32_16x16x16_f16", "v_mfma_f32_4x4x4_16b_f16", "v_mfma_f32_32x32x2_f32",
         "v_mfma_f32_32x32x1_2b_f32", "v_mfma_f32_16x16x32_fp8_fp8"]


@pytest.mark.parametrize("mnemonic", MFMAS)
def test_mfma_layout_formulas_match_the_emulator(mnemonic):
    line = _mfma_line(mnemonic)
    f = instr_info(mnemonic).mfma
    b, i, k = np.meshgrid(np.arange(f.blocks), np.arange(f.m), np.arange(f.k), indexing="ij")
    m = re.search(r"A\[b\]\[i\]\[k\] is element (.+?) of lane (.+?) in", line)
    lane, elem = input_layout(mnemonic, "a")
    assert np.array_equal(eval(m.group(2), {"b": b, "i": i, "k": k}), lane)
    assert np.array_equal(eval(m.group(1), {"b": b, "i": i, "k": k}), elem)
    b, i, j = np.meshgrid(np.arange(f.blocks), np.arange(f.m), np.arange(f.n), indexing="ij")
    m = re.search(r"register (.+?) of \d+, lane (.+?), with t = (.+?)\.$", line)
    t = eval(m.group(3), {"b": b, "i": i})
    reg, lane = output_layout(mnemonic)
    assert np.array_equal(eval(m.group(1), {"t": t, "i": i}), reg)
    assert np.array_equal(eval(m.group(2), {"t": t, "j": j}), lane)
    assert f"may be read {mfma_result_wait(mnemonic)} wait states" in line


@pytest.mark.parametrize("mnemonic, slots", [("v_mfma_f32_32x32x2_f32", 18), ("v_mfma_f64_16x16x4_f64", 10),
                                             ("v_mfma_f32_32x32x8_f16", None), ("v_mfma_f32_16x16x8_xf32", None)])
def test_fp32_and_fp64_mfma_lines_state_the_valu_they_hold(mnemonic, slots):
    """The prompt states what the cost model charges: an SGEMM/DGEMM holds the VALU for its passes + 2 slots
    (LLVM PR #233721); XDL MFMAs co-execute."""
    line = _mfma_line(mnemonic)
    assert (f"none issues until {slots} slots after it" in line) == (slots is not None)
    assert ("co-executes" in line) == (slots is not None)


def test_facts_list_every_fixed_hazard_and_only_the_kernels_mfmas():
    from agenttools import evaluator
    text = cdna3_facts(evaluator("19_ReLU").body_of(0).instructions)
    assert all(f"{n}: {what}" in text for n, what in FIXED_WAITS.values())
    assert "v_mfma" not in text


@pytest.mark.parametrize("mnemonic", ["v_mfma_f32_32x32x16_bf16", "v_mfma_f32_16x16x32_f16", "v_mfma_i32_16x16x64_i8"])
def test_gfx950_mfma_lines_state_gfx950_layouts_and_wait_states(mnemonic):
    """CDNA4's double-K MFMAs: the stated layouts are the emulator's gfx950 ones, the wait states gfx950's
    (one more than gfx942's for an XDL MFMA of more than 2 passes)."""
    line = _mfma_line(mnemonic, "gfx950")
    f = instr_info(mnemonic, "gfx950").mfma
    b, i, k = np.meshgrid(np.arange(f.blocks), np.arange(f.m), np.arange(f.k), indexing="ij")
    m = re.search(r"A\[b\]\[i\]\[k\] is element (.+?) of lane (.+?) in", line)
    lane, elem = input_layout(mnemonic, "a", "gfx950")
    assert np.array_equal(eval(m.group(2), {"b": b, "i": i, "k": k}), lane)
    assert np.array_equal(eval(m.group(1), {"b": b, "i": i, "k": k}), elem)
    b, i, j = np.meshgrid(np.arange(f.blocks), np.arange(f.m), np.arange(f.n), indexing="ij")
    m = re.search(r"register (.+?) of \d+, lane (.+?), with t = (.+?)\.$", line)
    reg, lane = output_layout(mnemonic, "gfx950")
    t = eval(m.group(3), {"b": b, "i": i})
    assert np.array_equal(eval(m.group(1), {"t": t, "i": i}), reg)
    assert np.array_equal(eval(m.group(2), {"t": t, "j": j}), lane)
    wait = mfma_result_wait(mnemonic, processor="gfx950")
    assert wait == f.passes + 4 and f"may be read {wait} wait states" in line


def test_gfx950_facts_name_cdna4_and_the_f8f6f4_formats():
    from asmevo.agent.facts import isa_facts, target_text
    from asmevo.isa.instruction import parse_instruction
    text = isa_facts([parse_instruction("v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[72:75], v[8:11], a[0:3], v140, "
                                        "v136 op_sel_hi:[0,0,0] cbsz:4 blgp:4")], "gfx950")
    assert text.startswith("CDNA4 facts") and "formats cbsz and blgp name" in text
    assert target_text("gfx942") == "gfx942 (MI300X, CDNA3, wave64)"
    assert target_text("gfx950") == "gfx950 (MI355X, CDNA4, wave64)"
