"""Stage bodies in worker processes. A suite run on one machine keeps Prefect's task machinery (task
runs, cache keys, result storage) in its threads, where it waits, and computes every stage body in a
pool of processes, one per core: the bodies are pure Python and numpy, so threads would share one core
(the GIL). Results come back pickled; the store writes stay in the run's process.

`start(workers)` opens the pool (processes forked from a fork server that imported the stages);
`call` runs a registered body there, its progress events reach this process's `tasks.progress` sink;
`stop(kill=True)` kills the workers at once (their stage calls are lost, nothing of them is cached),
which is what an interrupted run does. Without a pool, `call` runs the body in the calling thread."""
from __future__ import annotations

import importlib
import multiprocessing
import os
import select
import signal
import threading
import time
from concurrent.futures import CancelledError, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable

from . import progress

_BODIES: dict[str, Callable[..., Any]] = {}
_pool: ProcessPoolExecutor | None = None
_events: Any = None  # the queue worker processes send progress events through
_forwarder: threading.Thread | None = None
_STOP = None  # tells the forwarder the queue is done
_killed = threading.Event()  # the workers were killed: the run is stopping


def register(name: str, body: Callable[..., Any]) -> None:
    """Make `body` (the undecorated function of stage `name`) callable in worker processes."""
    _BODIES[name] = body


def start(workers: int) -> None:
    """Open a pool of `workers` processes."""
    global _pool, _events, _forwarder
    if _pool is not None:
        raise RuntimeError("a stage worker pool is already open")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["tasks.optimize", "tasks.verify", "tasks.timing", "tasks.profile",
                                    "tasks.recover", "tasks.rebuild"])
    _events = context.SimpleQueue()
    _pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_init_worker,
                                initargs=(_events, os.getpid()))
    _forwarder = threading.Thread(target=_forward, args=(_events,), name="asmevo-progress", daemon=True)
    _forwarder.start()


def stop(*, kill: bool = False) -> None:
    """Close the pool: wait for the workers to finish, or `kill` them now (work in progress is lost)."""
    global _pool, _events, _forwarder
    pool, events = _pool, _events
    _pool = None
    if pool is None:
        return
    if kill:
        _killed.set()
        for proc in list(getattr(pool, "_processes", {}).values()):  # no public way to kill workers
            proc.kill()
    pool.shutdown(wait=True, cancel_futures=kill)  # with the workers dead this only releases the queues
    events.put(_STOP)
    _forwarder.join()
    events.close()
    _events = _forwarder = None


def active() -> bool:
    return _pool is not None


def call(name: str, module: str, args: tuple, kwargs: dict) -> Any:
    """Stage `name`'s body (registered by `module`) on `args`, in a worker when a pool is open. A
    call whose worker `stop(kill=True)` killed never returns: the process is ending."""
    pool = _pool
    if pool is None:
        return _BODIES[name](*args, **kwargs)
    try:
        return pool.submit(_run, name, module, args, kwargs, progress.LABEL.get()).result()
    except (BrokenProcessPool, CancelledError, RuntimeError):
        if _killed.is_set():
            threading.Event().wait()  # no result and no error to report: the run is stopping
        raise


def _init_worker(events, run_pid: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the run's process decides what an interrupt stops
    progress.set_sink(events.put)
    threading.Thread(target=_die_with, args=(run_pid,), name="asmevo-run-watch", daemon=True).start()


def _die_with(run_pid: int) -> None:
    """End this worker when the run's process ends, however it ends (`kill -9` included): nothing
    else would, a worker waits on a queue its siblings also hold open."""
    try:
        fd = os.pidfd_open(run_pid)
    except ProcessLookupError:
        os._exit(1)
    except (AttributeError, OSError):  # no pidfd (Linux < 5.3): poll
        while True:
            time.sleep(0.5)
            try:
                os.kill(run_pid, 0)
            except ProcessLookupError:
                os._exit(1)
    select.select([fd], [], [])  # readable once the process has exited
    os._exit(1)


def _run(name: str, module: str, args: tuple, kwargs: dict, label: str) -> Any:
    importlib.import_module(module)
    token = progress.LABEL.set(label)
    try:
        return _BODIES[name](*args, **kwargs)
    finally:
        progress.LABEL.reset(token)


def _forward(events) -> None:
    while True:
        try:
            event = events.get()
        except (EOFError, OSError):
            return
        if event is _STOP:
            return
        progress.deliver(event)
