"""The Prefect API for a run: PREFECT_API_URL when set, else a private ephemeral server.

Prefect's own ephemeral server is started lazily from inside Prefect, takes its import time in
this process first, and outlives a run killed with SIGKILL. Instead `start_api` launches the same
server (uvicorn on `prefect.server.api.server:create_app`, ephemeral mode) before Prefect is
imported here, on a socket this process bound, with PR_SET_PDEATHSIG so the kernel stops it when
this process dies however it dies. Startup of servers sharing one PREFECT_HOME is serialised by a
flock (released by the kernel on death, so a killed run never blocks the next). Import nothing
from Prefect in this module: the point is to overlap the server's start with Prefect's import.
"""
from __future__ import annotations

import atexit
import ctypes
import fcntl
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from asmevo.errors import AsmEvoError

PR_SET_PDEATHSIG = 1
STARTUP_TIMEOUT_S = 180.0


def _die_with_parent() -> None:
    # SIGKILL: a running server's graceful shutdown can wait on the dead client's connections;
    # its SQLite database is crash-safe.
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def start_api() -> Callable[[], str]:
    """Start the API if needed; returns a function that waits until it answers and gives its URL.
    Call after `artifacts.configure_prefect` and from the main thread."""
    url = os.environ.get("PREFECT_API_URL")
    if url:
        return lambda: url
    if "prefect" in sys.modules:
        raise RuntimeError("start_api must run before Prefect is imported (Prefect reads PREFECT_API_URL once)")
    home = Path(os.environ["PREFECT_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    lock = open(home / ".asmevo-server-start.lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)  # one server migrates/opens the database at a time
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/api"
    env = {**os.environ, "PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1", "PREFECT__SERVER_FINAL": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", "prefect.server.api.server:create_app",
         "--fd", str(sock.fileno()), "--log-level", "error", "--lifespan", "on"],
        env=env, pass_fds=(sock.fileno(),), preexec_fn=_die_with_parent, stdin=subprocess.DEVNULL)
    sock.close()
    atexit.register(_stop, proc)
    os.environ["PREFECT_API_URL"] = url

    def wait() -> str:
        try:
            deadline = time.monotonic() + STARTUP_TIMEOUT_S
            while time.monotonic() < deadline:
                if proc.poll() is not None:
                    raise AsmEvoError(f"the Prefect API server exited with code {proc.returncode} while starting")
                try:
                    with urllib.request.urlopen(f"{url}/health", timeout=5) as response:
                        if response.status == 200:
                            return url
                except (urllib.error.URLError, OSError):
                    pass
                time.sleep(0.1)
            raise AsmEvoError(f"the Prefect API server did not answer within {STARTUP_TIMEOUT_S:.0f} s")
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
            lock.close()

    return wait
