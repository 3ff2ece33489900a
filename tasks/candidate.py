"""The edit stage's inner tasks: K0's baseline on the timing launch and one outcome per candidate
(`asmevo.agent.outcome`), each a content-cached stage task called from inside the edit task. A
search killed half-way resumes with its finished candidates as cache hits, and the Prefect UI shows
one task run per candidate (named `#<id> <operator>`) under the kernel's edit task run.

Keys (`policy.stage`: stage name, code version, canonical JSON of the parameters):
- `baseline(k0, timing launch, config {name, device, gpu[, hardware]})`;
- `candidate(k0, baseline, source, verify launches, timing launch, config {through, device, gpu, trials[, hardware]})`,
  where `source` is the candidate's full recovered source, stored as an artifact: the parent's source
  with the edit applied, so two edits that make the same source share one outcome.
The candidate's rebuilt code object is stored beside its outcome record.
"""
from __future__ import annotations

import contextvars
import functools
import json

from prefect.transactions import CommitMode, transaction

from artifacts import Record, default_store
from asmevo.agent.outcome import K0Outcome, Outcome, Setup, baseline as k0_baseline, evaluate, make_setup
from asmevo.device import get_device
from asmevo.device.gpus import require_identity
from asmevo.errors import AsmEvoError

from .inputs import code_object, verify_launch
from .policy import ERROR_KIND, Output, stage

MODULES = ("tasks.candidate",)
_LABEL = contextvars.ContextVar("candidate_label", default="candidate")


def _label() -> str:
    return _LABEL.get()


@stage("baseline", MODULES)
def baseline(k0: str, timing: str, config: dict) -> Output:
    """K0 recovered (as `config.name`.s) and modelled (on hardware also measured) on `timing`."""
    if "hardware" in config:
        require_identity(config["hardware"])
    launch = verify_launch(timing, default_store().root)
    return Output("baseline", k0_baseline(code_object(k0), config["name"], launch, get_device(config["device"]),
                                          config["gpu"]))


@stage("candidate", MODULES, task_run_name=_label)
def candidate(k0: str, baseline: str, source: str, launches: list[str], timing: str, config: dict) -> Output:
    """The outcome of candidate `source` against `k0`, evaluated `config.through` built or timed."""
    if "hardware" in config:
        require_identity(config["hardware"])
    setup_config = {k: v for k, v in config.items() if k != "through"}
    setup, base = _context(k0, baseline, tuple(launches), timing, json.dumps(setup_config, sort_keys=True))
    store = default_store()
    out = evaluate(setup, base, store.get(source).decode(), config["through"])
    if out.data:
        sha = store.put(out.data)
        store.add_record(Record(kind="code_object", sha256=sha, stage="candidate",
                                inputs={"k0": k0, "baseline": baseline, "source": source}, config=config))
    return Output("candidate", out.record)


@functools.lru_cache(maxsize=8)
def _context(k0: str, baseline: str, launches: tuple[str, ...], timing: str, config: str) -> tuple[Setup, K0Outcome]:
    """One kernel's Setup and K0 baseline, built once per process (every candidate of a search shares
    them, and with them K0's memoised whole-launch trace)."""
    cfg = json.loads(config)
    store = default_store()
    setup = make_setup(code_object(k0), [verify_launch(s, store.root) for s in launches],
                       timing=verify_launch(timing, store.root), device=get_device(cfg["device"]), gpu_name=cfg["gpu"],
                       trials=cfg["trials"])
    return setup, K0Outcome.from_json(store.get_json(baseline))


def _artifact(sha: str) -> dict:
    """A task's JSON output; an error artifact raises its error."""
    store = default_store()
    if store.record(sha).kind == ERROR_KIND:
        err = store.get_json(sha)
        raise AsmEvoError(f"{err['stage']}: {err['message']}")
    return store.get_json(sha)


class TaskEvaluations:
    """`asmevo.agent.outcome.Evaluations` through the cached tasks, for the edit task (or a flow)
    to hand its Evaluator; counts candidate calls and cache hits. Each call commits its result at
    once (an eager transaction): a nested task's result is otherwise only written when the edit task
    finishes, and a run killed mid-search would lose every finished candidate."""

    def __init__(self, k0: str, launches: list[str], timing: str, config: dict):
        """`config`: name (K0's recovered name), device, gpu, trials[, hardware]."""
        self.k0, self.launches, self.timing = k0, list(launches), timing
        hw = {"hardware": config["hardware"]} if "hardware" in config else {}
        self.base_config = {"name": config["name"], "device": config["device"], "gpu": config["gpu"], **hw}
        self.config = {"device": config["device"], "gpu": config["gpu"], "trials": config["trials"], **hw}
        self.base: str | None = None
        self.calls = self.hits = 0

    def baseline(self) -> dict:
        with transaction(commit_mode=CommitMode.EAGER):
            self.base = baseline(self.k0, self.timing, self.base_config)
        return _artifact(self.base)

    def candidate(self, source: str, through: str, label: str = "candidate") -> Outcome:
        if self.base is None:
            self.baseline()
        store = default_store()
        src = store.put(source.encode())
        store.add_record(Record(kind="source", sha256=src, stage="candidate", inputs={"k0": self.k0}))
        token = _LABEL.set(label)
        try:
            with transaction(commit_mode=CommitMode.EAGER):
                state = candidate(self.k0, self.base, src, self.launches, self.timing,
                                  {**self.config, "through": through}, return_state=True)
        finally:
            _LABEL.reset(token)
        record = _artifact(state.result())
        cached = state.name == "Cached"
        self.calls += 1
        self.hits += cached
        return Outcome(record, store.get(record["sha256"]) if record["sha256"] else b"", cached)
