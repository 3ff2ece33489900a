"""Real gfx950 (MI355X) AITer code objects end to end on the emulator, against the AITer suite's numpy references
on every verify and held-out shape (same KernelArgs as the gfx942 builds the suite ships):

* bf16 GEMM, paged attention (160 KiB of LDS) and MLA decode: text byte-identical to the gfx942 builds, so these
  exercise the processor's LDS size, formats and hazard rules;
* flash-attention forward (fmha_v3_fwd/fwd_hd128_bf16.co, CDNA4's own build): v_mfma_f32_32x32x16_bf16,
  v_permlane16/32_swap_b32, v_cvt_pk_bf16_f32, ds_read_b64_tr_b16 and 128-bit LDS DMA.

Skipped, with the reason, when the pinned amd-aiter wheel is neither cached in benchmarks/.cache nor
downloadable."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from asmevo.calibrate import aiter_wheel
from asmevo.codeobj import CodeObject
from asmevo.device import get_device
from asmevo.device.launch import LaunchSpec, run_launch
from asmevo.isa.table import mnemonics, split_mnemonic
from asmevo.suites import load_suite
from asmevo.suites.check import check_shape, problem_inputs

SUITE = load_suite("aiter")
# problem -> (the gfx950 build, relative to hsa/gfx950, and its kernel), None: the gfx942 file's gfx950 twin
BUILDS = {"bf16gemm": None, "paged_attention": None, "mla_decode": None,
          "fmha_fwd": ("fmha_v3_fwd/fwd_hd128_bf16.co", "_ZN5aiter19fmha_fwd_hd128_bf16E")}
CASES = [(p, s.name) for p in BUILDS for s in SUITE.problem(p).shapes if s.role in ("verify", "heldout")]


@pytest.fixture(scope="module")
def gfx950_objects(wheel):
    aiter_wheel.extract(wheel, "gfx950")


def gfx950_problem(name: str, tmp: Path):
    """(the suite problem run on its gfx950 build, a shape-name -> shape map whose launch specs name the
    gfx950 kernel, written under `tmp`)."""
    p = SUITE.problem(name)
    build = BUILDS[name]
    if build is None:
        path, kernel = Path(str(p.code_object).replace("/hsa/gfx942/", "/hsa/gfx950/")), p.kernel
    else:
        path, kernel = aiter_wheel.EXTRACT / "aiter_meta" / "hsa" / "gfx950" / build[0], build[1]
    assert CodeObject.from_path(path).target.processor == "gfx950"
    shapes = {}
    for s in p.shapes:
        spec = json.loads(s.launch_path.read_text())
        spec["kernel"] = kernel
        (tmp / s.launch_path.name).write_text(json.dumps(spec))
        shapes[s.name] = dataclasses.replace(s, launch_path=tmp / s.launch_path.name)
    return dataclasses.replace(p, code_object=path, kernel=kernel), shapes


@pytest.mark.parametrize("problem,shape", CASES)
def test_gfx950_aiter_kernel_matches_the_reference(gfx950_objects, tmp_path, problem, shape):
    p, shapes = gfx950_problem(problem, tmp_path)
    result = check_shape(p, shapes[shape])
    assert result.ok, result.message


def test_gfx950_flash_attention_runs_cdna4_instructions(gfx950_objects, tmp_path):
    """The CDNA4 build's matching run executes each of its CDNA4 instructions."""
    p, shapes = gfx950_problem("fmha_fwd", tmp_path)
    shape = shapes["v_b2_q33_k100_h2"]
    spec = LaunchSpec.load(shape.launch_path)
    _, run = run_launch(get_device("emu"), p.code_object, spec, problem_inputs(p, spec, p.launch(shape)))
    by_address = CodeObject.from_path(p.code_object).listing.by_address()
    executed = {split_mnemonic(by_address[pc].mnemonic)[0] for pc, n in run.report.pc_counts.items() if n}
    assert {"v_mfma_f32_32x32x16_bf16", "v_permlane16_swap_b32", "v_permlane32_swap_b32", "v_cvt_pk_bf16_f32",
            "ds_read_b64_tr_b16"} <= executed - mnemonics("gfx942")
