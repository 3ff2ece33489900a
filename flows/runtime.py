"""The task runner flows fan out on: threads locally, Dask for many processes or machines."""
from __future__ import annotations

import os

from prefect.task_runners import TaskRunner, ThreadPoolTaskRunner


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
