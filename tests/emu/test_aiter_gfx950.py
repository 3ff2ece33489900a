"""Real gfx950 (MI355X) AITer code objects on the emulator: what of CDNA4 their matching runs exercise. Every shape
of the `aiter_gfx950` suite is checked against its numpy reference by tests/suites/test_production.py; here:

* flash-attention forward (fmha_v3_fwd/fwd_hd128_bf16.co, CDNA4's own build) executes v_mfma_f32_32x32x16_bf16,
  v_permlane16/32_swap_b32, v_cvt_pk_bf16_f32, ds_read_b64_tr_b16;
* the MXFP4 GEMM (f4gemm) executes scaled MFMAs whose v_mfma_ld_scale prefix sets bits 0x6000, in every
  combination, and still matches the MXFP4 reference (the evidence that the bits select nothing,
  asmevo/emu/README_mfma.md).

Skipped, with the reason, when the pinned amd-aiter wheel is neither cached in benchmarks/.cache nor
downloadable."""
from __future__ import annotations

import collections

import pytest

from asmevo.codeobj import CodeObject
from asmevo.device import get_device
from asmevo.device.launch import LaunchSpec, run_launch
from asmevo.isa.table import mnemonics, split_mnemonic
from asmevo.suites import load_suite
from asmevo.suites.check import check_shape, problem_inputs

SUITE = load_suite("aiter_gfx950")


@pytest.fixture(scope="module")
def prepared(wheel):
    SUITE.prepare()
    return SUITE


def executed(problem, shape: str):
    """The instructions `shape`'s run executes, with their wave-execution counts."""
    s = problem.shape(shape)
    spec = LaunchSpec.load(s.launch_path)
    _, run = run_launch(get_device("emu"), problem.code_object, spec, problem_inputs(problem, spec, problem.launch(s)))
    by_address = CodeObject.from_path(problem.code_object).listing.by_address()
    return [(by_address[pc], n) for pc, n in run.report.pc_counts.items() if n]


def test_gfx950_flash_attention_runs_cdna4_instructions(prepared):
    """The CDNA4 build's matching run executes each of its CDNA4 instructions."""
    ran = executed(prepared.problem("fmha_fwd"), "v_b2_q33_k100_h2")
    names = {split_mnemonic(ins.mnemonic)[0] for ins, _ in ran}
    assert {"v_mfma_f32_32x32x16_bf16", "v_permlane16_swap_b32", "v_permlane32_swap_b32", "v_cvt_pk_bf16_f32",
            "ds_read_b64_tr_b16"} <= names - mnemonics("gfx942")


def test_f4gemm_runs_scaled_mfmas_with_prefix_bits_0x6000_and_matches_its_reference(prepared):
    """f4gemm's scaled MFMAs run with every combination of the prefix's bits 13 and 14, the scale bytes picked by
    op_sel / op_sel_hi varying too; the outputs match the float64 MXFP4 reference on random distinct scales."""
    problem = prepared.problem("f4gemm")
    assert check_shape(problem, problem.shape("v_m64_n512_k1024")).ok
    ran = executed(problem, "v_m64_n512_k1024")
    bits = collections.Counter()
    for ins, n in ran:
        if ins.mnemonic.startswith("v_mfma_scale"):
            bits[int.from_bytes(ins.encoding[:4], "little") & 0x6000] += n
            bits[("op_sel", ins.modifier("op_sel"), ins.modifier("op_sel_hi"))] += 1
    assert all(bits[b] for b in (0x0, 0x2000, 0x4000, 0x6000)), bits
    assert len([k for k in bits if isinstance(k, tuple)]) >= 4, bits
