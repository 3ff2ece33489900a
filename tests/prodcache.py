"""Production suites (AITer binaries, vLLM/SGLang Triton kernels) prepared for a test: their code objects are
fetched or built into benchmarks/.cache when missing. A test that needs one skips with the reason when the inputs
are neither cached nor downloadable, unless ASMEVO_REQUIRE_PRODUCTION=1 (set by .ci/run) makes that a failure."""
from __future__ import annotations

import os
import socket

import pytest

from asmevo.suites import load_suite
from asmevo.suites.manifest import Suite


def unreachable() -> str | None:
    """None when the package index answers, else why not."""
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
        return None
    except OSError as exc:
        return f"the package index is unreachable ({exc})"


def prepared_suite(name: str) -> Suite:
    """Suite `name` prepared: every problem's code object and source in place (checked against its manifest)."""
    suite = load_suite(name)
    cached = all(p.code_object.exists() and p.source.exists() for p in suite.problems)
    reason = None if cached else unreachable()
    if reason:
        why = f"suite {name}: its inputs are not in benchmarks/.cache and {reason}"
        if os.environ.get("ASMEVO_REQUIRE_PRODUCTION") == "1":
            pytest.fail(f"ASMEVO_REQUIRE_PRODUCTION=1 but {why}")
        pytest.skip(why)
    suite.prepare()
    return suite
