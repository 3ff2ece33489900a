"""The edit stage: an agent proposes, gates and times edits of K0 (`asmevo.agent.optimize`) ->
{best: sha256 of the best verified code object (K0 when nothing faster held up), improved,
speedup, diff, lineage (every candidate: parent, edit diff, verdict, timing, agent, step, cached),
candidates: outcome task calls and cache hits}. K0's baseline and every candidate's outcome are
cached tasks of their own (`tasks.candidate`), the search agent's expansions are stored
(`artifacts.expansions`) and the LLM agent's replies are cached in the store (`artifacts.replies`, mode
$ASMEVO_LLM_CACHE, default readwrite): a killed search resumes."""
from __future__ import annotations

import tempfile
from pathlib import Path

from artifacts import Record, default_store
from artifacts.expansions import ExpansionStore
from artifacts.replies import ReplyStore
from asmevo.agent.llm import cache_mode
from asmevo.agent.optimize import optimize as optimize_kernel
from asmevo.device import get_device
from asmevo.device.gpus import require_identity
from asmevo.target import DEFAULT_GPU

from . import progress
from .candidate import TaskEvaluations
from .inputs import verify_launch
from .policy import Output, stage
from .versions import code_version

MODULES = ("tasks.optimize",)
SEARCH = ("asmevo.agent.search",)  # the code a stored expansion depends on
NAME = "k0"  # K0's file name in the stage's directory, and so its recovered source's name


@stage("edit", MODULES)
def optimize(k0: str, launches: list[str], heldout: list[str], timing: str, config: dict) -> Output:
    """Run the agent on `k0` over the verify `launches`, candidates timed on `timing`; `heldout` only
    re-verifies the winner. config: agent, budget, seed, device, gpu, trials; with the LLM agent llm
    (`LLMConfig.identity()`: model, limits, temperature); on hardware also hardware (the identity:
    part of the cache key, and checked against this machine's GPUs)."""
    if "hardware" in config:
        require_identity(config["hardware"])
    store = default_store()
    gpu = config.get("gpu", DEFAULT_GPU)
    hw = {"hardware": config["hardware"]} if "hardware" in config else {}
    evaluations = TaskEvaluations(k0, launches, timing, {"name": NAME, "device": config["device"], "gpu": gpu,
                                                         "trials": config["trials"], **hw})
    mode = cache_mode()
    replies = ReplyStore(store, mode) if config["agent"] == "llm" and mode != "off" else None
    expansions = ExpansionStore(store, code_version(SEARCH)) if config["agent"] == "search" else None
    with tempfile.TemporaryDirectory(prefix="asmevo-edit-") as tmp:
        path = Path(tmp) / f"{NAME}.co"
        path.write_bytes(store.get(k0))
        result = optimize_kernel(path, [verify_launch(s, tmp) for s in launches], outdir=Path(tmp) / "out",
                                 agent=config["agent"], budget=config["budget"], seed=config["seed"],
                                 heldout=[verify_launch(s, tmp) for s in heldout],
                                 timing=verify_launch(timing, tmp), gpu_name=gpu,
                                 device=get_device(config["device"]), trials=config["trials"],
                                 llm_options=config.get("llm"),
                                 llm_cache=replies, expansions=expansions, evaluations=evaluations,
                                 on_candidate=lambda cand, lineage: _progress(cand, lineage, config["budget"]))
        diff = result.paths["diff"].read_text()
    best = store.put(result.best.data)
    if not store.has_record(best):
        store.add_record(Record(kind="code_object", sha256=best, stage="edit", inputs={"k0": k0}, config=config,
                                code_version=code_version(MODULES)))
    return Output("optimization", {"best": best, "improved": result.improved, "speedup": result.speedup,
                                   "diff": diff, "lineage": result.lineage.to_json(),
                                   "candidates": {"calls": evaluations.calls, "hits": evaluations.hits},
                                   "expansions": ({"calls": expansions.calls, "hits": expansions.hits}
                                                  if expansions else {"calls": 0, "hits": 0})})


def _progress(cand, lineage, budget: int) -> None:
    """A progress event per evaluated candidate: how many the budget counts (those verified or
    rejected by verification), how many were tried, and the best speedup so far."""
    evaluated = sum(c.verdict is not None for c in lineage.candidates)
    progress.emit("candidate", stage="edit", evaluated=evaluated, budget=budget, tried=len(lineage.candidates) - 1,
                  status=cand.status, best=lineage.best_candidate.speedup or 1.0)
