"""AITer's shipped objects launched by the `aiter_launches` builders at small shapes, against the numpy
references of the `aiter` suite (needs the pinned wheel: fetched, or skipped with the reason)."""
from __future__ import annotations

import numpy as np
import pytest

from asmevo.calibrate import aiter_launches as L
from asmevo.calibrate.aiter_wheel import code_object
from asmevo.compare import compare_to_reference
from asmevo.device import get_device
from asmevo.device.launch import LaunchSpec, make_inputs, run_launch
from asmevo.suites import load_suite
from asmevo.suites.check import spec_scalars
from asmevo.suites.refutil import bf16_to_f32, f32_to_bf16

ROUTING = ("sorted_token_ids", "sorted_weights", "sorted_expert_ids", "num_valid_ids")


def _inputs(problem_name: str, built, kernel: str, seed: int = 3) -> dict[str, np.ndarray]:
    grid, block, struct = built
    launch = {"kernel": kernel, "grid": grid, "block": block, "args": [struct]}
    gen = load_suite("aiter").problem(problem_name).generator_fn()
    return make_inputs(LaunchSpec.from_dict(launch), gen(launch, np.random.default_rng(seed)))


def _run(problem_name: str, kernel: str, co_name: str, built, seed: int = 3):
    """(outputs, launch result, expected outputs, problem) of one launch with the problem's generated inputs (the
    reference gets the struct's named scalars, as `asmevo suite check` passes them)."""
    problem = load_suite("aiter").problem(problem_name)
    grid, block, struct = built
    spec = LaunchSpec.from_dict({"kernel": kernel, "grid": grid, "block": block, "args": [struct]})
    inputs = _inputs(problem_name, built, kernel, seed)
    out, res = run_launch(get_device("emu"), code_object(co_name), spec, inputs)
    return out, res, problem.reference_fn()(inputs, spec_scalars(spec)), problem


@pytest.mark.parametrize("m,n,k,ks", [(128, 128, 512, 1), (130, 256, 1024, 2), (64, 128, 1024, 3)])
def test_a8w8_split_k_matches_the_reference(wheel, m, n, k, ks):
    """gemm_a8w8_m128_splitK.co: each of the 2^ks workgroups of a tile zeroes a slice of it and adds its
    partial sum into the whole tile with global_atomic_pk_add_bf16, so colliding packed-bf16 adds onto
    non-zero memory decide the result."""
    out, res, expected, problem = _run("a8w8_gemm", "gemm_kernel_func", "gemm_a8w8_m128_splitK.co",
                                       L.a8w8_m128(m, n, k, ks))
    assert {f["kind"] for f in res.findings} <= set(problem.known_findings), res.findings
    ok, msg = compare_to_reference({"C": out["C"]}, expected, problem.tolerance, dtypes={"C": "bfloat16"})
    assert ok, msg


def test_one_stage_fmoe_matches_the_reference(wheel):
    """fmoe_bf16_pertokenFp8_g1u1_vs_silu_1tg_32x256.co (the `fmoe_1stage_fp8` problem) at 40 tokens, dim 256, two
    256-wide inter slices (two workgroups' bf16 atomics per output row): the 24 padded entries of the second
    32-entry block have their atomics skipped by s_setvskip."""
    grid, block, struct = L.fmoe_g1u1(40, 256, 512, 1, 1, 32, 256, {n: "zeros" for n in ROUTING})
    out, res, expected, problem = _run("fmoe_1stage_fp8", "_ZN5aiter45fmoe_bf16_pertokenFp8_g1u1_vs_silu_1tg_32x256E",
                                       "fmoe/silu/fmoe_bf16_pertokenFp8_g1u1_vs_silu_1tg_32x256.co",
                                       (grid, block, struct))
    assert {f["kind"] for f in res.findings} <= set(problem.known_findings), res.findings
    assert not [f for f in res.findings if f["kind"] == "out_of_bounds" and "atomic" in f["message"]], \
        "a padded entry's atomic ran (it would add past the end of out)"
    assert np.count_nonzero(expected["out"]) > 0
    ok, msg = compare_to_reference({"out": out["out"]}, expected, problem.tolerance, dtypes={"out": "bfloat16"})
    assert ok, msg


def test_stage1_32x256_races_on_its_final_lds_dma_prefetch(wheel):
    """fmoe_stage1_..._32x256_2tg_pf2.co: waves 2-3 issue their last x prefetch by LDS DMA (0x5b98) into LDS that
    waves 0-1 have already used to stage their output in this barrier phase; the emulator reports the race there,
    and the outputs differ from the reference exactly where that staging is read back (columns 192-223)."""
    name = "fmoe_stage1_bf16_pertokenFp8_g1u1_32x256_2tg_pf2"
    grid, block, struct = L.fmoe_stage1(10, 256, 256, 2, 2, 32, 256, {n: "zeros" for n in ROUTING})
    out, res, expected, problem = _run("fmoe_stage1_fp8", f"_ZN5aiter{len(name)}{name}E", f"fmoe_2stages/{name}.co",
                                       (grid, block, struct))
    races = {f["pc"]: f["message"] for f in res.findings if f["kind"] == "lds_race"}
    assert 0x5b98 in races and races[0x5b98].startswith("buffer_load_dword: LDS byte 6528 written while wave 0")
    cols = np.arange(256)
    wrong = (cols >= 192) & (cols < 224)
    tol, dt = problem.tolerance, {"out": "bfloat16"}
    assert not compare_to_reference({"out": out["out"]}, expected, tol, dtypes=dt)[0]
    assert compare_to_reference({"out": out["out"][..., ~wrong]}, {"out": expected["out"][..., ~wrong]}, tol,
                                dtypes=dt)[0]


def test_a8w8_two_splits_are_bit_exact(wheel):
    """With two K splits each C element is bf16(bf16(p0 + bias) + bf16(p1)) whichever split adds first (a bf16
    add of two bf16 values is commutative), p_s = float32((int32 partial dot) * a_scale * b_scale) as the
    epilogue computes it: an oracle to the bit for the packed-bf16 atomic add onto non-zero memory. B is stored
    as shuffle_weight(B, layout=(32, 16)) leaves it: 32x32 tiles of two 16-column halves of 32 rows."""
    m, n, k = 130, 256, 512
    out = _run("a8w8_gemm", "gemm_kernel_func", "gemm_a8w8_m128_splitK.co", L.a8w8_m128(m, n, k, 1))[0]
    inputs = _inputs("a8w8_gemm", L.a8w8_m128(m, n, k, 1), "gemm_kernel_func")  # the same seed: _run's inputs
    a = inputs["A"].astype(np.int64)
    b = inputs["B"].reshape(n // 32, k // 32, 2, 32, 16).transpose(0, 3, 1, 2, 4).reshape(n, k).astype(np.int64)
    sa, sb = inputs["a_scale"][:, None], inputs["b_scale"][None, :]
    p = [(a[:, h:h + k // 2] @ b[:, h:h + k // 2].T).astype(np.float32) * sa * sb for h in (0, k // 2)]
    first = bf16_to_f32(f32_to_bf16(p[0] + inputs["bias"][None, :]))
    expect = f32_to_bf16(first + bf16_to_f32(f32_to_bf16(p[1])))
    np.testing.assert_array_equal(out["C"], expect)
