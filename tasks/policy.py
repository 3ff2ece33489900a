"""Stage tasks: a Prefect task per pipeline stage, cached by content.

The cache key of a stage call is the sha256 of (stage name, stage code version, call parameters as
canonical JSON). Parameters are artifact sha256 strings (or lists of them) plus one `config`
mapping, so the key changes exactly when an input's bytes, a config value or the stage's code
changes, never with run ids or object identity. Isolation is READ_COMMITTED with no locks: stages
are deterministic and their outputs content-addressed, so two runs computing the same key at once
write identical results atomically, and a killed run leaves no lock behind to wait on.
"""
from __future__ import annotations

import functools
import hashlib
import inspect
import secrets
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable

from prefect import Task
from prefect.cache_policies import CachePolicy
from prefect.context import TaskRunContext
from prefect.futures import PrefectFuture, PrefectTaskRunFuture
from prefect.results import ResultStore
from prefect.states import Completed

from artifacts import Record, asmevo_home, canonical_json, default_store
from asmevo.device import DeviceError
from asmevo.errors import AsmEvoError, ToolchainError

from . import progress, workers
from .storage import AtomicLocalFileSystem
from .versions import code_version

ERROR_KIND = "error"
ENVIRONMENT_ERRORS = (DeviceError, ToolchainError)


@dataclass(frozen=True)
class Output:
    """What a stage body returns: the artifact's kind and its bytes, or a JSON value."""

    kind: str
    data: bytes | Any


class StageTask(Task):
    """A Task whose result storage may be an unsaved block. Prefect's constructor insists on a
    saved (server-side) block, but resolves an unsaved one fine; stage results need the atomic
    local storage and no server round trip at import time.

    A submitted call whose result is already cached (every input known: values, or futures of other
    such calls; the record of its key present) gets a finished future with that result at once
    (`CachedFuture`), as Prefect's own cache lookup would give, without a task run: a resumed or
    repeated suite run then pays no API round trips for the stages it already has."""

    def __init__(self, *args: Any, result_storage: Any = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.result_storage = result_storage

    def submit(self, *args: Any, **kwargs: Any) -> Any:
        hit = self._cached(args, kwargs)
        return hit if hit is not None else super().submit(*args, **kwargs)

    def _cached(self, args: tuple, kwargs: dict) -> "CachedFuture | None":
        bound = inspect.signature(self.fn).bind(*args, **kwargs)
        bound.apply_defaults()
        parameters = {}
        for name, value in bound.arguments.items():
            if isinstance(value, list):
                value = [v.value if isinstance(v, CachedFuture) else v for v in value]
                if any(isinstance(v, PrefectFuture) for v in value):
                    return None
            elif isinstance(value, CachedFuture):
                value = value.value
            elif isinstance(value, PrefectFuture):
                return None
            parameters[name] = value
        key = self.cache_policy.compute_key(None, parameters, {})
        store = ResultStore(result_storage=self.result_storage, metadata_storage=self.cache_policy.key_storage)
        if not store.exists(key):
            return None
        return CachedFuture(store.read(key).result)


class CachedFuture(PrefectTaskRunFuture):
    """A stage call's result found in the cache before any task run (`StageTask.submit`)."""

    def __init__(self, value: Any):
        super().__init__(uuid.uuid4())
        self.value = value
        self._final_state = Completed(name="Cached", data=value)

    def wait(self, timeout: float | None = None) -> None:
        return None

    def result(self, timeout: float | None = None, raise_on_failure: bool = True) -> Any:
        return self.value

    def add_done_callback(self, fn: Callable[[PrefectFuture], None]) -> None:
        fn(self)


@dataclass
class StageCachePolicy(CachePolicy):
    """Key = sha256(stage, code version of `modules`, canonical JSON of the parameters)."""

    stage: str = ""
    modules: tuple[str, ...] = ()

    def compute_key(self, task_ctx: TaskRunContext, inputs: dict[str, Any],
                    flow_parameters: dict[str, Any], **kwargs: Any) -> str:
        return stage_key(self.stage, self.modules, inputs)


def stage_key(stage: str, modules: tuple[str, ...], parameters: dict[str, Any]) -> str:
    payload = {"stage": stage, "code": code_version(modules), "parameters": parameters}
    return hashlib.sha256(canonical_json(payload)).hexdigest()


def _artifact_inputs(parameters: dict[str, Any]) -> dict[str, str]:
    """Role -> sha256 of every artifact parameter (lists give `role[i]`)."""
    roles: dict[str, str] = {}
    for name, value in parameters.items():
        if name == "config":
            continue
        if isinstance(value, str):
            roles[name] = value
        else:
            roles.update({f"{name}[{i}]": v for i, v in enumerate(value)})
    return roles


def _error_input(shas: dict[str, str]) -> str | None:
    store = default_store()
    for sha in shas.values():
        if store.has_record(sha) and store.record(sha).kind == ERROR_KIND:
            return sha
    return None


def stage(name: str, modules: tuple[str, ...], **task_options: Any) -> Callable[[Callable[..., Output]], Task]:
    """Make `fn(*artifact shas, config) -> Output` a cached Prefect task returning the output's sha256.

    The output and its record (inputs, config, code version, elapsed time) go to the store. An
    AsmEvoError raised by the stage becomes an `error` artifact (cached like any result), except
    device and toolchain errors, which fail the task; a stage given an error artifact as input
    returns that error unchanged without running.
    """
    home = asmevo_home()

    def wrap(fn: Callable[..., Output]) -> Task:
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> str:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            parameters = dict(bound.arguments)
            inputs = _artifact_inputs(parameters)
            failed = _error_input(inputs)
            if failed:
                return failed
            config = parameters.get("config", {})
            out, elapsed = workers.call(name, fn.__module__, args, kwargs)
            store = default_store()
            sha = store.put(out.data) if isinstance(out.data, bytes) else store.put_json(out.data)
            store.add_record(Record(kind=out.kind, sha256=sha, stage=name, inputs=inputs, config=config,
                                    code_version=code_version(modules), elapsed_s=round(elapsed, 6)))
            return sha

        def compute(*args: Any, **kwargs: Any) -> tuple[Output, float]:
            """The body's output (an error artifact for an AsmEvoError) and its seconds; runs in a
            stage worker process when the run has a pool (`tasks.workers`)."""
            started = time.perf_counter()
            token = progress.CALL.set(secrets.token_hex(4))
            progress.emit("start", stage=name)
            out = None
            try:
                out = fn(*args, **kwargs)
            except ENVIRONMENT_ERRORS:
                raise  # a missing device or toolchain says nothing about the inputs: never cached
            except AsmEvoError as exc:
                out = Output(ERROR_KIND, {"stage": name, "error": type(exc).__name__, "message": str(exc)})
            finally:
                elapsed = time.perf_counter() - started
                progress.emit("finish", stage=name, seconds=elapsed, error=out is None or out.kind == ERROR_KIND)
                progress.CALL.reset(token)
            return out, elapsed

        workers.register(name, compute)
        policy = StageCachePolicy(stage=name, modules=modules,
                                  key_storage=AtomicLocalFileSystem(basepath=str(home.keys)),
                                  isolation_level="READ_COMMITTED")
        return StageTask(run, name=name, cache_policy=policy, persist_result=True,
                         result_storage=AtomicLocalFileSystem(basepath=str(home.results)),
                         result_serializer="json", cache_result_in_memory=False, **task_options)

    return wrap
