"""`wheel`: the pinned amd-aiter wheel, fetched into benchmarks/.cache when missing; the tests that need it skip
with the reason when it is neither cached nor downloadable."""
from __future__ import annotations

import socket

import pytest

from asmevo.calibrate import aiter_wheel


@pytest.fixture(scope="session")
def wheel():
    if not (aiter_wheel.CACHE / aiter_wheel.WHEEL).exists():
        try:
            socket.create_connection(("pypi.org", 443), timeout=5).close()
        except OSError as exc:
            pytest.skip(f"the amd-aiter wheel is not cached and the package index is unreachable ({exc})")
    path = aiter_wheel.fetch_wheel()
    aiter_wheel.extract(path)
    return path
