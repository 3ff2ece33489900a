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


def test_facts_list_every_fixed_hazard_and_only_the_kernels_mfmas():
    from agenttools import evaluator
    text = cdna3_facts(evaluator("19_ReLU").body_of(0).instructions)
    assert all(f"{n}: {what}" in text for n, what in FIXED_WAITS.values())
    assert "v_mfma" not in text
