#!/usr/bin/env python3
"""Cost of the candidate-level tasks: what running each candidate (and K0's baseline) as a cached
Prefect task adds to a suite run with an agent, and what a resume inside the searches costs.

    python benchmarks/orchestration/bench_candidates.py [--suite kernelbench] [--problems A,B]
        [--budget 16] [--workers 2]

Runs `run_suite` in this process on a fresh ASMEVO_HOME (search agent, the main job's budget), then
the edit stages again with the Prefect cache of the edit stage itself bypassed (what a run killed
mid-search does: every candidate a cache hit). Each `TaskEvaluations` call is timed: its overhead is
its wall time minus the evaluation's own seconds (the outcome's per-gate seconds; K0's baseline: its
record's compute seconds): task run creation, state changes, cache lookup, result persistence, the
source and code-object artifacts and reading the outcome back. Reported against the run's wall
time (target: <= 5 %). Record: candidates_SUITE[-PROBLEMS][-budgetN].txt beside this script.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from benchmarks import record  # noqa: E402


class Timer:
    """Wall time of every TaskEvaluations call and the compute seconds inside it."""

    def __init__(self):
        self.calls, self.hits, self.wall, self.compute = 0, 0, 0.0, 0.0

    def install(self):
        from artifacts import default_store
        from tasks import candidate as module

        timer, original_candidate, original_baseline = self, module.TaskEvaluations.candidate, \
            module.TaskEvaluations.baseline

        def record(started: float, compute: float, cached: bool) -> None:
            timer.calls += 1
            timer.hits += cached
            timer.wall += time.perf_counter() - started
            timer.compute += 0.0 if cached else compute

        def candidate(ev, source, through, label="candidate"):
            started = time.perf_counter()
            out = original_candidate(ev, source, through, label)
            record(started, sum(out.record["seconds"].values()), out.cached)
            return out

        def baseline(ev):
            started = time.perf_counter()
            out = original_baseline(ev)
            record(started, default_store().record(ev.base).elapsed_s, False)
            return out

        module.TaskEvaluations.candidate, module.TaskEvaluations.baseline = candidate, baseline


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="kernelbench")
    parser.add_argument("--problems", help="comma-separated subset (default: the whole suite)")
    parser.add_argument("--budget", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    return parser.parse_args(argv)


def record_path(argv: list[str]) -> Path:
    args = parse_args(argv)
    return record.default_path(__file__, args.problems, args.budget != 16 and f"budget{args.budget}",
                               stem=f"candidates_{args.suite}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)

    os.environ["ASMEVO_HOME"] = tempfile.mkdtemp(prefix="asmevo-bench-candidates-")
    from artifacts import configure_prefect

    configure_prefect()
    from flows.server import start_api

    start_api()()
    from flows.config import RunConfig
    from flows.pipeline import ingest_problem
    from flows.runtime import task_runner
    from flows.suite import run_suite
    from prefect import flow
    from asmevo.suites import load_suite
    from tasks.optimize import optimize

    timer = Timer()
    timer.install()
    problems = args.problems.split(",") if args.problems else None
    started = time.perf_counter()
    result = run_suite.with_options(task_runner=task_runner(args.workers))(
        args.suite, agent="search", budget=args.budget, problems=problems, progress=True)
    first_s = time.perf_counter() - started
    first = (timer.calls, timer.wall, timer.compute)

    suite = load_suite(args.suite)
    jobs = [ingest_problem(suite.problem(name), "emu") for name in (problems or [p.name for p in suite.problems])]
    config = RunConfig(agent="search", budget=args.budget).stage("edit")

    @flow(persist_result=False)
    def searches_again() -> None:
        for job in jobs:  # the edit stage's body: its candidates and baseline are cache hits
            optimize.fn(job.k0, list(job.verify), list(job.heldout + job.probes), job.timing, config)

    timer.calls = timer.hits = 0
    timer.wall = timer.compute = 0.0
    started = time.perf_counter()
    searches_again()
    again_s = time.perf_counter() - started

    calls, wall, compute = first
    overhead = wall - compute
    lines = [
        f"first run: {first_s:.1f} s wall in the flow, {result['kernels']} kernels, {calls} candidate-level task calls "
        f"(baseline + candidates), {compute:.1f} s computing inside them",
        f"candidate task overhead: {overhead:.1f} s = {1000 * overhead / max(calls, 1):.1f} ms per call = "
        f"{100 * overhead / first_s:.2f} % of the run (target <= 5 %)",
        f"searches resumed (edit stage bodies again, every candidate cached): {again_s:.1f} s = "
        f"{100 * again_s / first_s:.1f} % of the first run; {timer.calls} calls, {timer.hits} cache hits, "
        f"{1000 * timer.wall / max(timer.calls, 1):.1f} ms per call",
        f"load average at the end {os.getloadavg()[0]:.1f}",
    ]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(record.main_recorded(main, record_path))
