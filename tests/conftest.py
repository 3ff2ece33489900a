"""Shared fixture: `code_object(kind)`, code objects compiled here once per session (cotools.py)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from cotools import _compile, _triton  # noqa: E402


@pytest.fixture(scope="session")
def code_object(tmp_path_factory):
    """`code_object(kind)` -> path of that fixture's code object (compiled once per session)."""
    out = tmp_path_factory.mktemp("codeobjects")
    cache: dict[str, Path] = {}

    def get(kind: str) -> Path:
        if kind not in cache:
            cache[kind] = _triton(out) if kind == "triton" else _compile(kind, out)
        return cache[kind]

    return get


from hipstub import stub_hip, stub_root  # noqa: E402,F401  (the HIP runtime test double's fixtures)


@pytest.fixture(scope="session")
def wheel():
    """The pinned amd-aiter wheel with its gfx942 code objects extracted, fetched into benchmarks/.cache when
    missing; a test that needs it skips with the reason when it is neither cached nor downloadable."""
    from asmevo.calibrate import aiter_wheel
    from prodcache import unreachable

    if not (aiter_wheel.CACHE / aiter_wheel.WHEEL).exists() and (reason := unreachable()):
        pytest.skip(f"the amd-aiter wheel is not cached and {reason}")
    path = aiter_wheel.fetch_wheel()
    aiter_wheel.extract(path)
    return path
