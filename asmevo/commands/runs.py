"""`asmevo runs`: list past suite runs under $ASMEVO_HOME/runs (interrupted ones included)."""
from __future__ import annotations

import argparse


def register(subparsers) -> None:
    p = subparsers.add_parser("runs", help="list past suite runs", description=__doc__.splitlines()[0])
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from flows.runs import list_runs

    runs = list_runs()
    if not runs:
        print("no runs yet (start one with `asmevo suite run SUITE`)")
        return 0
    print(f"{'run id':<44} {'state':<12} {'kernels':>7} {'cache hits':>11} {'seconds':>8}  started")
    for r in runs:
        hits = f"{r.cache['hits']}/{r.cache['stage_calls']}" if r.cache else ""
        seconds = f"{r.elapsed_s:.1f}" if r.elapsed_s is not None else ""
        print(f"{r.run_id:<44} {r.state:<12} {r.kernels:>7} {hits:>11} {seconds:>8}  {r.started}")
    return 0
