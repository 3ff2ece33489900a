"""Dask worker preload (`dask worker --preload flows.gpu_worker`): pins the worker to one GPU.

A worker named by an integer i (LocalCluster names them 0, 1, ...) uses GPU pool[i % len(pool)] of the
pool (`asmevo.device.gpus.pool`) by setting ASMEVO_GPUS for its process; a worker started with
ASMEVO_GPUS already set, or with another name, keeps its pool."""
from __future__ import annotations

import os

from asmevo.device.gpus import GPUS_ENV, pool


def pinned_gpu(name: object, gpus: list[int]) -> int | None:
    """The GPU a worker called `name` is pinned to, or None."""
    if isinstance(name, int) and not isinstance(name, bool) and gpus:
        return gpus[name % len(gpus)]
    return None


def dask_setup(worker) -> None:
    if os.environ.get(GPUS_ENV):
        return
    gpu = pinned_gpu(worker.name, pool())
    if gpu is not None:
        os.environ[GPUS_ENV] = str(gpu)
