"""`asmevo suite`: benchmark suites. `suite list SUITE` shows a suite's problems; `suite run SUITE`
evaluates them as a resumable Prefect flow run (see `asmevo suite run -h`); `suite check SUITE` runs
verify/heldout shapes on the emulator against the numpy references."""
from __future__ import annotations

import argparse

from ..suites import load_suite
from .suite_check import register_check
from .suite_run import register_run


def register(subparsers) -> None:
    p = subparsers.add_parser("suite", help="list or run a benchmark suite", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="suite_command", required=True)
    ls = sub.add_parser("list", help="list a suite's problems")
    ls.add_argument("suite", help="suite name (benchmarks/<name>) or path to a suite directory")
    ls.set_defaults(handler=list_problems)
    register_run(sub)
    register_check(sub)


def list_problems(args: argparse.Namespace) -> int:
    suite = load_suite(args.suite)
    print(f"{suite.name}: {len(suite)} problems")
    for p in suite.problems:
        roles = ", ".join(f"{sum(s.role == r for s in p.shapes)} {r}" for r in ("verify", "heldout", "bench", "probe"))
        print(f"  {p.name:<42} {p.kernel:<32} {p.toolchain:<12} {roles}")
    return 0
