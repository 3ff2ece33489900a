"""Where a run's stages compute, and how it stops.

Locally (no Dask) on the emulator, Prefect's task runs are threads that mostly wait, and the stage
bodies compute in a pool of worker processes, one per core (`tasks.workers`): the GIL would keep
threads on one core. Dask spreads task runs over processes or machines instead. On hardware, stage
bodies run in the task threads (each hardware step is an isolated child process already).

A run stops at SIGINT (Ctrl-C) or SIGTERM within moments: the workers are killed, and the process
exits. Every stage call that finished is in the cache; the ones running are lost and run again
when the same command is repeated.
"""
from __future__ import annotations

import contextlib
import gc
import multiprocessing.util
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator

from prefect.task_runners import TaskRunner, ThreadPoolTaskRunner

from tasks import workers as stage_workers

GPU_WORKER_PRELOAD = "flows.gpu_worker"
# Task-run threads per worker process: a thread waits for its stage's inputs (earlier stages of the
# same kernel) before it asks the pool, so a few per process keep every process busy.
THREADS_PER_WORKER = 8


def local_pool(dask: str | None, device: str) -> bool:
    """Whether a run computes its stages in a local pool of worker processes."""
    return dask is None and device == "emu"


def task_runner(workers: int | None = None, dask: str | None = None, device: str = "emu") -> TaskRunner:
    """Threads unless `dask` names a scheduler address, or is `local` for a temporary LocalCluster
    with `workers` single-threaded worker processes. With a local pool (`local_pool`), `workers`
    (default: CPU count) is the number of processes and the threads only wait; otherwise it is the
    number of threads.
    On hardware every hardware stage leases a GPU (`asmevo.device.gpus`), so threads and workers never
    share one at a time; a local cluster's workers are also pinned to one GPU each (`flows.gpu_worker`;
    start remote workers with `--preload flows.gpu_worker` for the same)."""
    workers = workers or os.cpu_count() or 1
    if dask is None:
        return ThreadPoolTaskRunner(max_workers=workers * THREADS_PER_WORKER if local_pool(dask, device) else workers)
    from prefect_dask import DaskTaskRunner

    if dask == "local":
        pinned = {"preload": [GPU_WORKER_PRELOAD]} if device != "emu" else {}
        return DaskTaskRunner(cluster_kwargs={"n_workers": workers, "threads_per_worker": 1,
                                              "dashboard_address": None, **pinned})
    return DaskTaskRunner(address=dask)


@contextlib.contextmanager
def stage_pool(workers: int | None, dask: str | None, device: str) -> Iterator[None]:
    """The run's pool of stage worker processes (`local_pool` runs only), closed afterwards."""
    if not local_pool(dask, device):
        yield
        return
    stage_workers.start(workers or os.cpu_count() or 1)
    try:
        yield
    finally:
        stage_workers.stop()


def stop_on_signals(on_stop: Callable[[], None] = lambda: None) -> None:
    """From now on SIGINT and SIGTERM kill the stage workers, call `on_stop`, say so and end the
    process (exit status 128 + signal). Call from the main thread before a flow and again inside it
    (Prefect puts its own SIGTERM handler in place while a flow runs, which reports a crash to the
    API before exiting, and restores the one before it afterwards)."""

    def stop(signum, frame) -> None:
        # whatever below waits (a full output pipe, a lock the interrupted code holds), the process ends
        threading.Timer(1.0, os._exit, (128 + signum,)).start()
        stage_workers.stop(kill=True)
        with contextlib.suppress(Exception):
            on_stop()
        sys.stderr.write(f"\nstopped by {signal.Signals(signum).name}: every finished stage is cached; "
                         f"run the same command again to resume\n")
        sys.stderr.flush()
        sys.stdout.flush()
        # the pool's queues unlink their semaphores (else reported as leaked), unless that waits on them
        cleanup = threading.Thread(target=_release_queues, daemon=True)
        cleanup.start()
        cleanup.join(timeout=0.5)
        os._exit(128 + signum)

    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ValueError):  # not the main thread: leave the defaults
            signal.signal(sig, stop)


def _release_queues() -> None:
    gc.collect()
    multiprocessing.util._run_finalizers()
