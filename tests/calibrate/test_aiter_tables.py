"""The wheel's tuning rows as launches (needs the pinned wheel: fetched, or skipped with the reason)."""
from __future__ import annotations

import collections

import numpy as np
import pytest

from asmevo.calibrate import aiter_launches as L
from asmevo.calibrate.aiter_tables import (OLD_A8W8, RACY, STAGE1_MISMATCH, aiter_rows, kernel_objects,
                                           known_findings, run_row, unexpected_findings, written_elements)
from asmevo.calibrate.aiter_wheel import elf_processor
from asmevo.calibrate.calibrate import select_per_family, select_rows
from asmevo.calibrate.moe_routing import route
from asmevo.codeobj import CodeObject
from asmevo.device import get_device
from asmevo.device.launch import LaunchSpec, make_inputs, run_launch
from asmevo.compare import compare_to_reference
from asmevo.errors import AsmEvoError
from asmevo.suites import load_suite


@pytest.fixture(scope="module")
def rows(wheel):
    return aiter_rows("mi308x")


@pytest.fixture(scope="module")
def mi355x_rows(wheel):
    return aiter_rows("mi355x")


def _table(rows, name):
    return [r for r in rows if r.table == name]


def test_every_mi308x_row_is_listed_with_its_split(rows):
    assert len(rows) == 8 + 34 + 114
    assert all(r.split == ("heldout" if r.table == "tuned_fmoe.csv" and "doweight" in r.kernel else "fit")
               for r in rows)
    fmoe = _table(rows, "tuned_fmoe.csv")
    assert sum(r.split == "heldout" for r in fmoe) == 52 and all(r.shape["doweight_stage1"] == 1
                                                                for r in fmoe if r.split == "heldout")
    assert all(r.cu_num == 80 and r.measured_us > 0 for r in rows)
    assert all(r.launch is not None or r.reason for r in rows)


def test_runnable_rows_and_reasons(rows):
    runnable = collections.Counter(r.table for r in rows if r.launch and not r.reason)
    assert runnable == {"bf16_tuned_gemm.csv": 8, "asm_a8w8_gemm.csv": 21, "tuned_fmoe.csv": 113}
    a8w8 = _table(rows, "asm_a8w8_gemm.csv")
    copies = [r for r in a8w8 if r.launch is None]
    assert len(copies) == 13 and all(r.note.startswith("invalid") for r in copies)
    assert sum(r.extra["launch_splitK"] > 0 for r in a8w8 if r.launch and not r.reason) == 11
    one_stage = [r for r in rows if r.family == "fmoe_g1u1_1stage"]
    assert len(one_stage) == 8
    assert sum(r.problem == "fmoe_1stage_fp8" and not r.reason for r in one_stage) == 7
    assert [r.reason for r in one_stage if r.reason] == [RACY[r.code_object.name] for r in one_stage if r.reason]


def test_kernel_names_map_to_the_shipped_objects(rows):
    objects = kernel_objects()
    for r in rows:
        if r.table != "asm_a8w8_gemm.csv":
            assert objects[r.kernel][0] == r.code_object
        assert CodeObject.from_path(r.code_object).kernel(r.kernel) is not None


def test_every_launch_satisfies_its_kernels_metadata(rows):
    for r in rows:
        if r.launch is not None:
            spec = LaunchSpec.from_dict(r.launch)
            spec.check(CodeObject.from_path(r.code_object).kernel(r.kernel))
            assert spec.probe == 8


def test_a8w8_rows_launch_the_configuration_that_measured_them(rows):
    by_shape = {(r.shape["M"], r.shape["N"], r.shape["K"]): r for r in _table(rows, "asm_a8w8_gemm.csv")}
    r = by_shape[128, 1280, 8192]
    assert r.shape["splitK"] == 0 and r.extra["launch_splitK"] == OLD_A8W8[128, 1280, 8192][0] == 3
    assert r.launch["grid"] == [80, 1, 1] and r.code_object.name == "gemm_a8w8_m128_splitK.co"
    r = by_shape[1024, 8192, 1024]
    assert r.launch["grid"] == [64, 8, 1] and r.code_object.name == "gemm_a8w8_m128_noSplitK.co" and not r.reason
    assert by_shape[64, 1536, 5120].launch is None and "16384x1280x8192" in by_shape[64, 1536, 5120].note


def test_bf16_rows_follow_the_host(rows):
    r = next(r for r in rows if r.kernel.endswith("96x64_pf3E") and r.shape["M"] == 384)
    assert r.launch["grid"] == [256 // 64, 384 // 96, 5]
    assert {f.get("name"): f.get("scalar") for f in r.launch["args"][0]["struct"]}["splitk"] == 5


def test_fmoe_rows_read_tuner_routing(rows):
    r = next(r for r in rows if r.family == "fmoe_stage1_g1u1" and r.shape["token"] == 512 and r.shape["expert"] == 8)
    s = r.shape
    ref = route(s["token"], s["expert"], s["topk"], s["block_m"], 0)
    fields = {f["buffer"]: f for f in r.launch["args"][0]["struct"] if "buffer" in f}
    stored = np.load(fields["sorted_token_ids"]["init"][len("file:"):])
    assert np.array_equal(stored, ref.sorted_token_ids)
    assert r.launch["grid"][1] == len(ref.sorted_expert_ids) and r.extra["valid_blocks"] == ref.valid_blocks
    assert 0 < r.extra["valid_blocks"] <= r.launch["grid"][1]


def test_other_gpus_rows(wheel):
    assert aiter_rows("mi300x") == []  # no table has MI300X rows for the shipped asm kernels
    with pytest.raises(AsmEvoError, match="no amd-aiter tuning rows for mi325x"):
        aiter_rows("mi325x")


def test_mi355x_rows_are_gfx950_objects_with_the_issue_split(mi355x_rows):
    """MI355X (cu_num 256): the asm f4gemm rows of the a4w4 table, held out when M is a multiple of 3, and the
    asm fused-MoE rows, all with gfx950 code objects (the same kernel names exist for gfx942)."""
    rows = mi355x_rows
    f4 = _table(rows, "a4w4_blockscale_tuned_gemm.csv")
    fmoe = _table(rows, "tuned_fmoe.csv")
    assert len(f4) == 796 and len(fmoe) == 91 and len(rows) == 796 + 91
    assert all(r.split == ("heldout" if r.shape["M"] % 3 == 0 else "fit") for r in f4)
    assert all(r.split == "fit" for r in fmoe) and 0 < sum(r.split == "heldout" for r in f4) < len(f4)
    assert all(elf_processor(r.code_object.read_bytes()) == "gfx950" for r in rows)
    assert all(r.cu_num == 256 and (r.launch is not None or r.reason) for r in rows)


def test_f4gemm_rows_run_with_the_gfx950_suites_known_findings(mi355x_rows):
    """Every f4gemm row can run (the emulator models its scaled MFMAs), under the known findings of the
    `aiter_gfx950` suite's f4gemm problem; the cheapest row's probe reports no other finding and stores output."""
    f4 = _table(mi355x_rows, "a4w4_blockscale_tuned_gemm.csv")
    assert all(r.reason is None and (r.suite, r.problem) == ("aiter_gfx950", "f4gemm") for r in f4)
    assert known_findings(f4[0]) == load_suite("aiter_gfx950").problem("f4gemm").known_findings != {}
    r = _cheap(f4, "f4gemm_bf16_per1x32Fp4")
    run = run_row(r)
    assert not unexpected_findings(r, run), r.kernel
    assert written_elements(run, r.output) > 0, "the sampled workgroups stored nothing"


def test_f4gemm_launch_fills_the_kernels_argument_layout(wheel):
    """The struct the f4gemm builder writes puts each field at the offset the kernel's own metadata names
    (asm_gemm_a4w4.cu KernelArgs), and the grid tiles N and M by the kernel list's tile."""
    objects = kernel_objects("gfx950")
    name = "_ZN5aiter42f4gemm_bf16_per1x32Fp4_BpreShuffle_128x256E"
    co, info = objects[name]
    grid, block, struct = L.f4gemm(300, 1024, 512, int(info["tile_m"]), int(info["tile_n"]))
    assert grid == [4, 3, 1] and block == [256, 1, 1]
    meta = CodeObject.from_path(co).kernel(name).metadata
    assert struct["size"] == meta[".kernarg_segment_size"] == 384
    named = {a[".name"]: a[".offset"] for a in meta[".args"] if a[".name"] != "pad"}
    ours = {f.get("name") or f.get("buffer"): f["offset"] for f in struct["struct"]}
    pairs = {"D": "D", "ptr_C": "C", "A": "A", "B": "B", "alpha": "alpha", "beta": "beta", "stride_C0": "strideC0",
             "stride_A0": "strideA0", "stride_B0": "strideB0", "M": "Mdim", "N": "Ndim", "K": "Kdim",
             "scale_A": "ScaleA", "scale_B": "ScaleB", "stride_ScaleA0": "strideScaleA0",
             "stride_ScaleB0": "strideScaleB0", "log2_k_split": "log2_k_split"}
    assert {theirs: ours[mine] for mine, theirs in pairs.items()} == {t: named[t] for t in pairs.values()}
    values = {f["name"]: f["scalar"] for f in struct["struct"] if "scalar" in f}
    assert (values["M"], values["N"], values["K"], values["stride_A0"], values["stride_ScaleA0"]) == (300, 1024, 512,
                                                                                                      512, 16)


def _cheap(rows, family):
    return min((r for r in rows if r.family == family and r.launch and not r.reason),
               key=lambda r: np.prod(r.launch["grid"]) * (r.shape.get("K") or r.shape.get("model_dim")))


@pytest.mark.parametrize("family", ["bf16gemm_outf32_tn", "gemm_a8w8_m128", "fmoe_stage1_g1u1",
                                    pytest.param("fmoe_g1u1_1stage", marks=pytest.mark.slow)])
def test_a_probe_per_family_runs_clean_and_does_work(rows, family):
    r = _cheap(rows, family)
    run = run_row(r)
    assert not unexpected_findings(r, run), r.kernel
    assert written_elements(run, r.output) > 0, "the sampled workgroups stored nothing"


@pytest.mark.slow
def test_a_probe_of_every_code_object(rows):
    seen = {}
    for r in rows:
        if r.launch and not r.reason:
            seen.setdefault(r.code_object, r)
    for r in seen.values():
        run = run_row(r)
        assert not unexpected_findings(r, run), r.kernel
        assert written_elements(run, r.output) > 0, r.kernel


@pytest.mark.slow
def test_every_stage1_object_matches_the_reference(rows):
    """Each fmoe_stage1 code object the rows use, dense at a small shape, against the suite's MoE stage-1
    reference (fp8 or int8, with or without the routing weight); the STAGE1_MISMATCH objects differ exactly in
    columns 192-223 of each 256-wide tile (their rows carry the note)."""
    problem = load_suite("aiter").problem("fmoe_stage1_fp8")
    objects = kernel_objects()
    done = set()
    for r in rows:
        if r.family != "fmoe_stage1_g1u1" or r.code_object in done:
            continue
        done.add(r.code_object)
        info = objects[r.kernel][1]
        tile_m, tile_n = int(info["tile_m"]), int(info["tile_n"])
        zeros = {n: "zeros" for n in ("sorted_token_ids", "sorted_weights", "sorted_expert_ids", "num_valid_ids")}
        grid, block, struct = L.fmoe_stage1(10, 256, tile_n, 2, 2, tile_m, tile_n, zeros,
                                            qdtype=L.FP8 if "Fp8" in r.kernel else "int8",
                                            doweight="doweight" in r.kernel)
        launch = {"kernel": r.kernel, "grid": grid, "block": block, "args": [struct]}
        spec = LaunchSpec.from_dict(launch)
        inputs = make_inputs(spec, problem.generator_fn()(launch, np.random.default_rng(3)))
        out, run = run_launch(get_device("emu"), r.code_object, spec, inputs)
        expected = problem.reference_fn()(inputs, [])
        assert np.count_nonzero(expected["out"]) > 0
        ok, msg = compare_to_reference({"out": out["out"]}, expected, problem.tolerance)
        if r.code_object.name in STAGE1_MISMATCH:
            cols = np.arange(tile_n) % 256
            wrong = (cols >= 192) & (cols < 224)
            keep = {"out": out["out"][..., ~wrong]}
            assert not ok and compare_to_reference(keep, {"out": expected["out"][..., ~wrong]}, problem.tolerance)[0]
            assert r.note and "192-223" in r.note
        else:
            assert ok, f"{r.code_object.name}: {msg}"


def test_select_rows_keeps_one_split_spread_evenly(mi355x_rows):
    held = select_rows(mi355x_rows, "heldout")
    assert held and {r.split for r in held} == {"heldout"}
    picked = select_rows(mi355x_rows, "heldout", 10)
    assert len(picked) == 10 and picked[0] is held[0] and picked[5] is held[len(held) // 2]
    assert len({id(r) for r in picked}) == 10
    assert select_rows(mi355x_rows, "heldout", 10 ** 6) == held
    with pytest.raises(AsmEvoError, match="at least 1"):
        select_rows(mi355x_rows, None, 0)


def test_select_per_family_balances_the_families(mi355x_rows):
    fit = [r for r in mi355x_rows if r.split == "fit"]
    sizes = {f: sum(r.family == f for r in fit) for f in {r.family for r in fit}}
    smallest = min(sizes.values())
    assert len(sizes) > 1 and max(sizes.values()) > 2 * smallest
    picked = select_per_family(mi355x_rows, "fit", smallest)
    assert {r.split for r in picked} == {"fit"}
    assert {f: sum(r.family == f for r in picked) for f in sizes} == dict.fromkeys(sizes, smallest)
    small = next(f for f, n in sizes.items() if n == smallest)
    assert [r for r in picked if r.family == small] == [r for r in fit if r.family == small]
