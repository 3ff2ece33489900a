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


def _run(problem_name: str, kernel: str, co_name: str, built, seed: int = 3):
    """(outputs, launch result, expected outputs) of one launch with the problem's generated inputs."""
    problem = load_suite("aiter").problem(problem_name)
    grid, block, struct = built
    launch = {"kernel": kernel, "grid": grid, "block": block, "args": [struct]}
    spec = LaunchSpec.from_dict(launch)
    inputs = make_inputs(spec, problem.generator_fn()(launch, np.random.default_rng(seed)))
    out, res = run_launch(get_device("emu"), code_object(co_name), spec, inputs)
    return out, res, problem.reference_fn()(inputs, []), problem


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
