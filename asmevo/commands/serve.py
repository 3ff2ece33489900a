"""`asmevo serve --cron "0 2 * * *" SUITE`: register a scheduled suite evaluation and serve it.

Schedules live in a Prefect server: start one with `prefect server start` and point
PREFECT_API_URL at it (e.g. http://127.0.0.1:4200/api); this process then runs the scheduled
flow runs until stopped (Ctrl-C)."""
from __future__ import annotations

import argparse
import os

from ..errors import AsmEvoError
from .suite_run import add_run_options, run_parameters


def register(subparsers) -> None:
    p = subparsers.add_parser("serve", help="serve a scheduled suite evaluation (needs a Prefect server)",
                              description=__doc__.splitlines()[0])
    add_run_options(p)
    p.add_argument("--cron", required=True, help='cron schedule, e.g. "0 2 * * *" (02:00 daily)')
    p.add_argument("--name", help="deployment name (default: asmevo-<suite>)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    parameters = run_parameters(args)
    if not os.environ.get("PREFECT_API_URL"):
        raise AsmEvoError("schedules need a Prefect server: run `prefect server start` and set "
                          "PREFECT_API_URL=http://127.0.0.1:4200/api")
    from flows.suite import run_suite

    run_suite.serve(name=args.name or f"asmevo-{os.path.basename(args.suite)}", cron=args.cron,
                    parameters={**parameters, "progress": False})
    return 0
