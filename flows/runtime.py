"""The task runner flows fan out on: threads locally, Dask for many processes or machines."""
from __future__ import annotations

import os

from prefect.task_runners import TaskRunner, ThreadPoolTaskRunner

GPU_WORKER_PRELOAD = "flows.gpu_worker"


def task_runner(workers: int | None = None, dask: str | None = None, device: str = "emu") -> TaskRunner:
    """Threads (`workers` of them, default: CPU count) unless `dask` names a scheduler address,
    or is `local` for a temporary LocalCluster with `workers` single-threaded worker processes.
    On hardware every hardware stage leases a GPU (`asmevo.device.gpus`), so threads and workers never
    share one at a time; a local cluster's workers are also pinned to one GPU each (`flows.gpu_worker`;
    start remote workers with `--preload flows.gpu_worker` for the same)."""
    workers = workers or os.cpu_count() or 1
    if dask is None:
        return ThreadPoolTaskRunner(max_workers=workers)
    from prefect_dask import DaskTaskRunner

    if dask == "local":
        pinned = {"preload": [GPU_WORKER_PRELOAD]} if device != "emu" else {}
        return DaskTaskRunner(cluster_kwargs={"n_workers": workers, "threads_per_worker": 1,
                                              "dashboard_address": None, **pinned})
    return DaskTaskRunner(address=dask)
