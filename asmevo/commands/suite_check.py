"""`asmevo suite check SUITE`: run every problem's verify and heldout shapes on the emulator, compare with
the numpy references, print a table; exit 1 on any mismatch or fault (bench shapes are never emulated)."""
from __future__ import annotations

import argparse

from ..suites import load_suite
from ..suites.check import CHECK_ROLES, check_suite


def register_check(sub) -> None:
    p = sub.add_parser("check", help="check a suite's kernels against their references on the emulator",
                       description=__doc__.splitlines()[0])
    p.add_argument("suite", help="suite name (benchmarks/<name>, benchmarks/production/<name>) or path")
    p.add_argument("--problem", action="append", help="only this problem (repeatable)")
    p.add_argument("--role", action="append", choices=CHECK_ROLES, help="only shapes of this role (repeatable)")
    p.add_argument("--budget", type=int, default=200_000_000, help="instruction budget per launch")
    p.set_defaults(handler=run_check)


def run_check(args: argparse.Namespace) -> int:
    suite = load_suite(args.suite)
    roles = tuple(args.role or CHECK_ROLES)
    print(f"{'problem':<34} {'shape':<14} {'role':<8} {'status':<9} {'seconds':>8}  message")
    failed = total = 0
    for r in check_suite(suite, roles=roles, problems=args.problem, budget=args.budget):
        total += 1
        failed += not r.ok
        print(f"{r.problem:<34} {r.shape:<14} {r.role:<8} {r.status:<9} {r.seconds:8.1f}  {r.message}", flush=True)
    print(f"{total - failed}/{total} passed, {failed} failed")
    return 1 if failed or not total else 0
