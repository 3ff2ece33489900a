"""One kernel's stages as Prefect futures, and the result row they add up to.

Inputs enter the store once (`ingest_*`), then every stage gets and returns sha256 strings:

    recover(K0) -> rebuild -> verify(K0, rebuilt, verify launches) -> time(verdict, K0, rebuilt)
            \\-> profile(K0, recovered, timing launch)
    edit(K0, verify launches, held-out launches)          (with an agent)
        -> verify(K0, best, verify + held-out launches) -> time(verdict, K0, best)

The rebuilt K0 is the baseline candidate: it must verify equivalent (the round trip is faithful)
and its timing gives K0's baseline in the device's unit. With an agent, its best candidate is
verified again independently (held-out shapes included) and timed against K0.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from math import prod
from pathlib import Path

import yaml
from prefect.futures import PrefectFuture

from artifacts import Record, default_store
from asmevo.agent.lineage import operator_chain
from asmevo.errors import AsmEvoError
from asmevo.launches import load_launch, suite_launches, timing_launch
from tasks.policy import ERROR_KIND
from tasks.profile import profile
from tasks.optimize import optimize
from tasks.rebuild import rebuild
from tasks.recover import recover
from tasks.timing import measure
from tasks.verify import verify

from .config import STAGES, RunConfig

@dataclass(frozen=True)
class KernelJob:
    """A kernel's input artifacts: K0, its verify and held-out launches, the launch it is timed on,
    and its probe launches (giant shapes the emulator runs a few workgroups of: for verification and
    the agent's final re-verification only, never profiled, timed or searched on)."""

    name: str
    k0: str
    verify: tuple[str, ...]
    heldout: tuple[str, ...]
    timing: str
    probes: tuple[str, ...] = ()
    timing_shape: str = ""   # the timing launch's label and role ("bench", or the largest verify shape)
    verify_timing: str = ""  # the largest verify launch: the verify-shape ratio (`speedup_verify`)


def _put_input(data: bytes, kind: str, origin: str) -> str:
    store = default_store()
    sha = store.put(data)
    store.add_record(Record(kind=kind, sha256=sha, stage="input", config={"origin": origin}))
    return sha


def _put_launch(label: str, spec: dict, tolerance: dict, origin: str, known: frozenset[str] = frozenset()) -> str:
    """Store a launch (spec + comparison policy + finding kinds K0 is known to trigger on it)."""
    body = json.dumps({"label": label, "spec": {**spec, "tolerance": tolerance}, "known_findings": sorted(known)},
                      sort_keys=True, separators=(",", ":")).encode()
    return _put_input(body, "launch", origin)


def _largest(items: list[tuple[str, dict]]) -> tuple[str, dict]:
    return max(items, key=lambda item: prod(item[1]["grid"]) * prod(item[1]["block"]))


def ingest_problem(problem, device: str) -> KernelJob:
    """Store a suite problem's code object and launch specs."""
    raw = {f"{problem.name}:{s.name}": (s, problem.launch_with_inputs(s)) for s in problem.shapes}
    every = {vl.label: _put_launch(vl.label, raw[vl.label][1], vl.tolerance.to_dict(), str(raw[vl.label][0].launch_path),
                                   vl.known_findings)
             for vl in suite_launches(problem, heldout=True, probes=True)}
    verify_launches = suite_launches(problem)
    shas = {vl.label: every[vl.label] for vl in verify_launches}
    heldout, probes = (tuple(sha for label, sha in every.items() if raw[label][0].role == role)
                       for role in ("heldout", "probe"))
    largest, _ = _largest([(vl.label, raw[vl.label][1]) for vl in verify_launches])
    timed, role = timing_launch(problem)
    timing = shas.get(timed.label) or _put_launch(timed.label, raw[timed.label][1], {},
                                                  str(raw[timed.label][0].launch_path), timed.known_findings)
    k0 = _put_input(problem.code_object.read_bytes(), "code_object", str(problem.code_object))
    return KernelJob(problem.name, k0, tuple(shas.values()), heldout, timing, probes,
                     f"{timed.label.split(':', 1)[1]} ({role})", shas[largest])


def ingest_files(name: str, code_object: str | Path, launches: list[str | Path], device: str) -> KernelJob:
    """Store a code object and launch spec files given by path (an optional `tolerance` key in a
    spec is its K0-vs-K1 comparison policy; specs with a `probe` key become probe launches)."""
    items, probes = [], []
    for path in map(Path, launches):
        vl = load_launch(path)
        data = yaml.safe_load(path.read_text()) if path.suffix in (".yaml", ".yml") else json.loads(path.read_text())
        data.pop("tolerance", None)
        sha = _put_launch(vl.label, data, vl.tolerance.to_dict(), str(path.resolve()))
        (probes if vl.spec.probe else items).append((vl.label, data, sha))
    if not items:
        raise AsmEvoError("optimize_kernel needs at least one launch spec that is not a probe")
    label, _ = _largest([(lbl, data) for lbl, data, _ in items])
    k0 = _put_input(Path(code_object).read_bytes(), "code_object", str(Path(code_object).resolve()))
    largest = next(s for lbl, _, s in items if lbl == label)
    return KernelJob(name, k0, tuple(sha for _, _, sha in items), (), largest, tuple(sha for _, _, sha in probes),
                     f"{label} (largest verify, no bench shape)", largest)


def submit_kernel(job: KernelJob, config: RunConfig) -> dict[str, PrefectFuture]:
    """Submit the kernel's stages to the flow's task runner; futures by stage name."""
    rec = recover.submit(job.k0, config.stage("recover"))
    reb = rebuild.submit(rec, config.stage("rebuild"))
    prof = profile.submit(job.k0, rec, job.timing, config.stage("profile"))
    ver = verify.submit(job.k0, reb, list(job.verify + job.probes), config.stage("verify"))
    tim = measure.submit(ver, job.k0, reb, job.timing, config.stage("time"))
    futures = {"recover": rec, "rebuild": reb, "profile": prof, "verify": ver, "time": tim}
    if config.agent != "none":
        edit = optimize.submit(job.k0, list(job.verify), list(job.heldout + job.probes), job.timing,
                               config.stage("edit"))
        best_ver = verify.submit(job.k0, edit, list(job.verify + job.heldout + job.probes), config.stage("verify"))
        best_tim = measure.submit(best_ver, job.k0, edit, job.timing, config.stage("time"))
        best_verify_tim = measure.submit(best_ver, job.k0, edit, job.verify_timing, config.stage("time"))
        futures.update({"edit": edit, "verify_best": best_ver, "time_best": best_tim,
                        "time_best_verify": best_verify_tim})
    return futures


@dataclass
class StageOutcome:
    """A finished stage call: its output sha (None when the task failed), whether it was a cache
    hit, and the failure message."""

    sha: str | None
    cached: bool
    failure: str = ""


def outcome(future: PrefectFuture) -> StageOutcome:
    future.wait()
    state = future.state
    if state.is_completed():
        return StageOutcome(state.result(), state.name == "Cached")
    return StageOutcome(None, False, state.message or state.name)


def _artifact(outcome: StageOutcome | None, kind: str):
    """The JSON artifact of a finished stage when it has `kind` (not an error), else None."""
    store = default_store()
    if outcome is None or not outcome.sha or store.record(outcome.sha).kind != kind:
        return None
    return store.get_json(outcome.sha)


def search_stats(outcomes: dict[str, StageOutcome]) -> dict:
    """The kernel's search in this run: candidate outcomes evaluated and served from the cache
    (`candidates`, `candidate_hits`; a cached edit stage serves all of them), the search agent's expansions
    computed and replayed from the store (`expansions`, `expansion_hits`), budget used (verified evaluations,
    or LLM replies), and the LLM's cost spent and saved by caches."""
    stats = {"candidates": 0, "candidate_hits": 0, "expansions": 0, "expansion_hits": 0, "budget_used": 0,
             "llm_cost_spent": 0.0, "llm_cost_saved": 0.0}
    edit = _artifact(outcomes.get("edit"), "optimization")
    if not edit:
        return stats
    usage = edit["lineage"]["config"].get("llm_usage") or {}
    expansions = edit.get("expansions") or {"calls": 0, "hits": 0}
    stats.update(candidates=edit["candidates"]["calls"], candidate_hits=edit["candidates"]["hits"],
                 expansions=expansions["calls"], expansion_hits=expansions["hits"],
                 llm_cost_spent=usage.get("cost_spent", 0.0), llm_cost_saved=usage.get("cost_saved", 0.0),
                 budget_used=usage["steps"] if usage else sum(c["verdict"] is not None
                                                              for c in edit["lineage"]["candidates"][1:]))
    if outcomes["edit"].cached:
        stats.update(candidate_hits=stats["candidates"], expansion_hits=stats["expansions"], llm_cost_spent=0.0,
                     llm_cost_saved=stats["llm_cost_spent"] + stats["llm_cost_saved"])
    return stats


def kernel_row(job: KernelJob, outcomes: dict[str, StageOutcome]) -> dict:
    """The kernel's result row (see `report.COLUMNS`), read from the stage artifacts."""
    store = default_store()
    row: dict = {"kernel": job.name, "status": "ok", "error": "", "unit": "", "timing_shape": job.timing_shape,
                 "baseline": None, "best": None, "speedup": None, "speedup_verify": None, "operators": "", "bound": "",
                 "candidates_tried": 0, "candidates_accepted": 0, "verify_trials": 0,
                 "roundtrip": "", "hot_window": "", **{f"{name}_s": 0.0 for name in STAGES}}
    for key, out in outcomes.items():
        record = store.record(out.sha) if out.sha else None
        if record and record.stage in STAGES and record.kind != ERROR_KIND:
            row[f"{record.stage}_s"] = round(row[f"{record.stage}_s"] + record.elapsed_s, 3)
        if out.failure and row["status"] == "ok":
            row.update(status="failed", error=f"{key}: {out.failure}")
        elif record and record.kind == ERROR_KIND and row["status"] == "ok":
            err = store.get_json(out.sha)
            row.update(status="error", error=f"{err['stage']}: {err['message']}")
    verdicts = [v for v in (_artifact(outcomes.get(k), "verdict") for k in ("verify", "verify_best")) if v]
    row["verify_trials"] = sum(v["trials"] * v["launches"] for v in verdicts)
    if roundtrip := _artifact(outcomes["verify"], "verdict"):
        row["roundtrip"] = roundtrip["kind"]
    if (profiled := _artifact(outcomes["profile"], "profile")) and profiled["windows"]:
        w = profiled["windows"][0]
        row["hot_window"] = f"{w['kind']} 0x{w['start']:x}-0x{w['end']:x}"
    edit = _artifact(outcomes.get("edit"), "optimization")
    if edit:
        candidates = edit["lineage"]["candidates"]
        row["candidates_tried"] = len(candidates) - 1
        row["candidates_accepted"] = sum(bool((c.get("timing") or {}).get("accepted")) for c in candidates)
    if decision := _artifact(outcomes["time"], "timing"):
        baseline = decision["baseline"]["median"]
        row.update(unit=decision["unit"], baseline=baseline, best=baseline, speedup=1.0,
                   bound=decision["baseline"]["provenance"].get("config", {}).get("bound", ""))
    # The best is K0 itself unless the agent improved on it: re-timing K0 against itself on hardware
    # can pass the gate by noise, and that is no speedup.
    if edit and edit["improved"] and (decision := _artifact(outcomes.get("time_best"), "timing")) \
            and decision["accepted"]:
        row.update(best=decision["candidate"]["median"], speedup=round(decision["speedup"], 6),
                   operators=" > ".join(operator_chain(edit["lineage"]["candidates"],
                                                                    edit["lineage"]["best"])))
        if verify_shape := _artifact(outcomes.get("time_best_verify"), "timing"):
            row["speedup_verify"] = round(verify_shape["speedup"], 6)
    return row
