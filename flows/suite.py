"""The flows: `optimize_kernel` (one kernel from files) and `run_suite` (every kernel of a suite,
fanned out over the flow's task runner), each ending in result rows; `run_suite` also writes the
run directory and the reports and publishes them as Prefect artifacts."""
from __future__ import annotations

import time
from pathlib import Path

from prefect import flow
from prefect.futures import as_completed
from prefect.runtime import flow_run

from asmevo.codeobj import CodeObject
from asmevo.device import hardware_identity
from asmevo.suites import load_suite
from asmevo.target import DEFAULT_GPU

from tasks import progress as stage_progress

from .config import RunConfig
from .pipeline import (KernelJob, StageOutcome, ingest_files, ingest_problem, kernel_row, outcome, search_stats,
                       submit_kernel)
from .progress import Display
from .report import build_report, publish
from .runs import Run, new_run_id, now
from .runtime import stop_on_signals


def _hardware(device: str) -> dict | None:
    """The GPU pool's identity on hardware (DeviceError when no GPU can be used), None on the emulator."""
    return None if device == "emu" else hardware_identity()


def _progress_line(done: int, total: int, row: dict, outcomes: dict[str, StageOutcome], search: dict,
                   budget: int) -> str:
    hits = sum(o.cached for o in outcomes.values())
    timing = (f"{row['baseline']:g} {row['unit']} x{row['speedup']:.3f}" if row["baseline"] is not None
              else row["error"][:80])
    replayed = (f", {search['expansion_hits']}/{search['expansions']} expansions replayed" if search["expansions"]
                else "")
    agent = (f"; search {search['budget_used']}/{budget}, {search['candidate_hits']}/{search['candidates']} "
             f"candidates cached{replayed}" if "edit" in outcomes else "")
    return (f"[{done:>3}/{total}] {row['kernel']:<40} {row['status']:<6} {timing}  "
            f"({hits}/{len(outcomes)} cached{agent})")


def _longest_first(problems: list) -> list:
    """Problems in the order their stages are submitted: the largest code objects (most instructions:
    the GEMMs, whose stages take longest) first, so that no long kernel starts last and runs alone."""
    return sorted(problems, key=lambda p: -len(CodeObject.from_path(p.code_object).listing.instructions))


def _submit(job: KernelJob, config: RunConfig) -> dict:
    """A kernel's stage futures; its stage calls' progress events carry the kernel's name."""
    token = stage_progress.LABEL.set(job.name)
    try:
        return submit_kernel(job, config)
    finally:
        stage_progress.LABEL.reset(token)


def _run_kernels(jobs: list[KernelJob], config: RunConfig, progress: bool) -> tuple[list[dict], dict]:
    """Submit every kernel, collect rows as kernels finish; returns (rows, cache statistics).
    With `progress`, stage events and finished kernels are shown (`flows.progress`), and SIGINT or
    SIGTERM stop the run at once (`flows.runtime.stop_on_signals`)."""
    display = Display(len(jobs)) if progress else None
    if display is not None:
        stop_on_signals(display.close)
        stage_progress.set_sink(display.event)
    rows, cache = [], {"hits": 0, "stage_calls": 0, "candidate_hits": 0, "candidates": 0, "expansion_hits": 0,
                       "expansions": 0, "llm_cost_spent": 0.0, "llm_cost_saved": 0.0}
    try:
        submitted = {job.name: _submit(job, config) for job in jobs}
        by_last = {futures.get("time_best_verify", futures["time"]): job for job, futures in zip(jobs, submitted.values())}
        for last in as_completed(list(by_last)):
            job = by_last[last]
            outcomes = {stage: outcome(f) for stage, f in submitted[job.name].items()}
            rows.append(kernel_row(job, outcomes))
            search = search_stats(outcomes)
            cache["hits"] += sum(o.cached for o in outcomes.values())
            cache["stage_calls"] += len(outcomes)
            for key in ("candidate_hits", "candidates", "expansion_hits", "expansions", "llm_cost_spent",
                        "llm_cost_saved"):
                cache[key] += search[key]
            if display is not None:
                display.kernel_done(_progress_line(len(rows), len(jobs), rows[-1], outcomes, search, config.budget))
    finally:
        if display is not None:
            stage_progress.set_sink(None)
            display.close()
    return rows, cache


@flow(name="optimize-kernel", persist_result=False)
def optimize_kernel(k0: str, launches: list[str], agent: str = "none", budget: int = 0, device: str = "emu",
                    seed: int = 0, gpu: str = DEFAULT_GPU) -> dict:
    """Evaluate one code object (`k0`, a path) on launch spec files; returns its result row."""
    config = RunConfig(agent=agent, budget=budget, device=device, seed=seed, hardware=_hardware(device), gpu=gpu)
    job = ingest_files(Path(k0).stem, k0, launches, device)
    rows, cache = _run_kernels([job], config, progress=False)
    return {**rows[0], "cache": cache}


@flow(name="run-suite", persist_result=False)
def run_suite(suite: str, agent: str = "none", budget: int = 0, device: str = "emu", seed: int = 0,
              problems: list[str] | None = None, run_id: str | None = None, progress: bool = True,
              gpu: str = DEFAULT_GPU) -> dict:
    """Run every problem of `suite` (or those named in `problems`); writes runs/<run-id>/ and the
    reports, publishes them, and returns the run record as a dict. `gpu` is the GPU the timing model
    predicts for (emulator runs)."""
    started = time.perf_counter()
    config = RunConfig(agent=agent, budget=budget, device=device, seed=seed, hardware=_hardware(device), gpu=gpu)
    loaded = load_suite(suite)
    chosen = [loaded.problem(name) for name in problems] if problems else list(loaded.problems)
    run = Run(run_id=run_id or new_run_id(loaded.name), suite=suite, config=config.to_json(), kernels=len(chosen),
              flow_run_id=str(flow_run.get_id()))
    run.save()
    rows, cache = _run_kernels([ingest_problem(p, device) for p in _longest_first(chosen)], config, progress)
    run.save_results(rows)
    run.status = "completed"
    run.finished = now()
    run.elapsed_s = round(time.perf_counter() - started, 3)
    run.cache = cache
    run.save()
    report = build_report(run)
    report.write()
    publish(report)
    return {**run.__dict__, "summary": report.summary}
