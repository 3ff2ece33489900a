"""`asmevo suite run SUITE`: evaluate every kernel of a suite as a resumable Prefect flow run.

Every stage is a content-cached task, so running the same command again after an interruption
(even `kill -9`) recomputes only what had not finished, down to the agent's single candidates and LLM
replies; the run prints how many stage calls and candidate evaluations were cache hits. Reports land in $ASMEVO_HOME/runs/<run-id>/ (see `asmevo report`, `asmevo runs`)."""
from __future__ import annotations

import argparse
import os

from ..agent.llm import CACHE_ENV, CACHE_MODES, cache_mode
from .args import add_gpu_option, positive_int

DEVICES = ("emu", "hip")


def add_run_options(p: argparse.ArgumentParser) -> None:
    """The options `suite run` and `serve` share: what every kernel's run does."""
    p.add_argument("suite", help="suite name (benchmarks/<name>) or path to a suite directory")
    p.add_argument("--agent", default="none", help="editing agent (default none: baselines only)")
    p.add_argument("--budget", type=int, default=0, help="candidate edits per kernel (default 0)")
    p.add_argument("--device", choices=DEVICES, default="emu", help="where kernels run (default emu)")
    p.add_argument("--seed", type=int, default=0, help="agent seed (default 0)")
    add_gpu_option(p)
    p.add_argument("--problems", help="comma-separated problem names (default: all)")


def register_run(sub) -> None:
    """Add `run` to the `suite` command group's subparsers."""
    p = sub.add_parser("run", help="run a suite as a resumable Prefect flow", description=__doc__.splitlines()[0])
    add_run_options(p)
    p.add_argument("--workers", type=positive_int,
                   help="worker processes computing stages (default: CPU count; with --dask: Dask workers)")
    p.add_argument("--dask", metavar="ADDR",
                   help="run tasks on the Dask scheduler at ADDR (or `local` for a temporary LocalCluster)")
    p.add_argument("--run-id", help="name of the run directory (default: <suite>-<time>-<random>)")
    p.add_argument("--llm-cache", choices=CACHE_MODES,
                   help="reuse (read) and store (write) the LLM agent's replies in the artifact store "
                        f"(default: ${CACHE_ENV}, else readwrite)")
    p.set_defaults(handler=run)


def run_parameters(args: argparse.Namespace) -> dict:
    """Check the arguments (suite, agent) and prepare the suite without starting Prefect; the
    run_suite parameters."""
    from ..suites import load_suite
    from flows.config import RunConfig

    suite = load_suite(args.suite)
    suite.prepare()  # production suites fetch and build their code objects first
    problems = [name.strip() for name in args.problems.split(",") if name.strip()] if args.problems else None
    for name in problems or []:
        suite.problem(name)
    hardware = None
    if args.device != "emu":
        from ..device import hardware_identity

        hardware = hardware_identity()  # one `error:` line now, before Prefect starts, when no GPU is usable
    RunConfig(agent=args.agent, budget=args.budget, device=args.device, seed=args.seed, hardware=hardware,
              gpu=args.gpu)
    return {"suite": args.suite, "agent": args.agent, "budget": args.budget, "device": args.device,
            "seed": args.seed, "problems": problems, "gpu": args.gpu}


def run(args: argparse.Namespace) -> int:
    parameters = run_parameters(args)
    os.environ[CACHE_ENV] = cache_mode(args.llm_cache)  # the edit tasks (threads, local Dask workers) read it
    from flows.server import start_api

    api_ready = start_api()  # the server boots while Prefect and the flows import
    from flows.report import build_report
    from flows.runs import load_run
    from flows.runtime import stage_pool, stop_on_signals, task_runner
    from flows.suite import run_suite

    api_ready()
    stop_on_signals()
    with stage_pool(args.workers, args.dask, args.device):
        result = run_suite.with_options(task_runner=task_runner(args.workers, args.dask, args.device))(
            **parameters, run_id=args.run_id)
    report = build_report(load_run(result["run_id"]))
    cache = result["cache"]
    search = (f", {cache['candidate_hits']}/{cache['candidates']} candidate evaluations were cache hits"
              if args.agent != "none" else "")
    search += (f", {cache['expansion_hits']}/{cache['expansions']} search expansions replayed from the store"
               if args.agent == "search" else "")
    llm = (f", LLM cost ${cache['llm_cost_spent']:.4f} spent, ${cache['llm_cost_saved']:.4f} saved by the cache"
           if args.agent == "llm" else "")
    print(f"run {result['run_id']}: {report.summary['ok']}/{result['kernels']} kernels ok, "
          f"{cache['hits']}/{cache['stage_calls']} stage calls were cache hits{search}{llm}, "
          f"{result['elapsed_s']:.1f} s")
    print(f"reports: {report.run.dir}/report.{{md,csv,html}}")
    return 0 if report.summary["ok"] == result["kernels"] else 1
