"""Shared fixtures: the compiled corpus (built once per session, cached on disk)."""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import corpus  # noqa: E402

from asmevo.isa.instruction import Instruction  # noqa: E402


@pytest.fixture(scope="session")
def corpus_kernels() -> dict[str, list[Instruction]]:
    """name -> instructions for every HIP and Triton corpus kernel."""
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    out = dict(corpus.kernels_of(corpus.build_hip()))
    for path in corpus.build_triton():
        out.update(corpus.kernels_of(path))
    return out
