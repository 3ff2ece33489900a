"""Where flows run: the task runner (threads, or Dask) and the Prefect API.

Without PREFECT_API_URL Prefect starts an ephemeral API server in a child process. A run killed
with SIGKILL would orphan it, so `start_api` starts it up front and hands its pid to a tiny
watchdog process that stops the server when this process is gone.
"""
from __future__ import annotations

import os
import subprocess
import sys

from prefect.task_runners import TaskRunner, ThreadPoolTaskRunner

WATCHDOG = """
import os, signal, sys, time
parent, server = int(sys.argv[1]), int(sys.argv[2])
while os.getppid() == parent:
    time.sleep(0.5)
try:
    os.kill(server, signal.SIGTERM)
except ProcessLookupError:
    pass
"""


def task_runner(workers: int | None = None, dask: str | None = None) -> TaskRunner:
    """Threads (`workers` of them, default: CPU count) unless `dask` names a scheduler address,
    or is `local` for a temporary LocalCluster with `workers` single-threaded worker processes."""
    workers = workers or os.cpu_count() or 1
    if dask is None:
        return ThreadPoolTaskRunner(max_workers=workers)
    from prefect_dask import DaskTaskRunner

    if dask == "local":
        return DaskTaskRunner(cluster_kwargs={"n_workers": workers, "threads_per_worker": 1,
                                              "dashboard_address": None})
    return DaskTaskRunner(address=dask)


def start_api() -> str:
    """The API URL flows will use: PREFECT_API_URL when set, else a fresh ephemeral server that
    a watchdog stops if this process dies without its normal shutdown."""
    from prefect.settings import get_current_settings

    url = get_current_settings().api.url
    if url:
        return str(url)
    from prefect.server.api.server import SubprocessASGIServer

    server = SubprocessASGIServer()
    server.start()
    subprocess.Popen([sys.executable, "-c", WATCHDOG, str(os.getpid()), str(server.server_process.pid)],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True)
    return server.api_url
