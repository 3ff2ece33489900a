"""Flow tests run against a private ASMEVO_HOME (store, Prefect home and results in a temp dir),
set before Prefect is imported; one API server serves the whole session."""
from __future__ import annotations

import os
import tempfile

import pytest

HOME = tempfile.mkdtemp(prefix="asmevo-test-home-")
os.environ["ASMEVO_HOME"] = HOME
for key in ("PREFECT_HOME", "PREFECT_API_URL", "PREFECT_LOCAL_STORAGE_PATH"):
    os.environ.pop(key, None)

from artifacts import configure_prefect  # noqa: E402

configure_prefect()


@pytest.fixture(scope="session")
def prefect_api() -> str:
    """The session's Prefect API URL (a private server, stopped at exit)."""
    from flows.server import start_api

    return start_api()()
