"""Real gfx950 (MI355X) AITer code objects end to end on the emulator: the CDNA4 builds of three AITer suite
problems (same kernel names and KernelArgs as their gfx942 builds) against the suite's numpy references, on
every verify and held-out shape. Skipped, with the reason, when the pinned amd-aiter wheel is neither cached
in benchmarks/.cache nor downloadable."""
from __future__ import annotations

import dataclasses
import socket
from pathlib import Path

import pytest

from asmevo.calibrate import aiter_wheel
from asmevo.codeobj import CodeObject
from asmevo.suites import load_suite
from asmevo.suites.check import check_shape

SUITE = load_suite("aiter")
PROBLEMS = ("bf16gemm", "paged_attention", "mla_decode")
CASES = [(p, s.name) for p in PROBLEMS for s in SUITE.problem(p).shapes if s.role in ("verify", "heldout")]


@pytest.fixture(scope="module")
def gfx950_objects():
    if not (aiter_wheel.CACHE / aiter_wheel.WHEEL).exists():
        try:
            socket.create_connection(("pypi.org", 443), timeout=5).close()
        except OSError as exc:
            pytest.skip(f"the amd-aiter wheel is not cached and the package index is unreachable ({exc})")
    aiter_wheel.extract(aiter_wheel.fetch_wheel(), "gfx950")


def gfx950_problem(name: str):
    """The suite problem with its gfx942 code object swapped for the wheel's gfx950 build of the same file."""
    p = SUITE.problem(name)
    path = Path(str(p.code_object).replace("/hsa/gfx942/", "/hsa/gfx950/"))
    assert CodeObject.from_path(path).target.processor == "gfx950"
    return dataclasses.replace(p, code_object=path)


@pytest.mark.parametrize("problem,shape", CASES)
def test_gfx950_aiter_kernel_matches_the_reference(gfx950_objects, problem, shape):
    p = gfx950_problem(problem)
    result = check_shape(p, p.shape(shape))
    assert result.ok, result.message
