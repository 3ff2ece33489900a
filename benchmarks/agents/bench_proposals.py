"""Time the search's proposal generation per operator on one suite kernel: every operator applied at every
instruction of K0 (no heat, so every site; the search itself tries only the hottest), with the number of
proposals each makes and the seconds it takes. The waitcnt operators' legality checks dominate on large
kernels (AITer's mla_decode and fmha_fwd).

    python benchmarks/agents/bench_proposals.py [--suite aiter] [--problem mla_decode] [--operators a,b]

Record: bench_proposals-SUITE-PROBLEM.txt beside this script (benchmarks/record.py).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from asmevo.agent.gates import Evaluator  # noqa: E402
from asmevo.agent.operators import OPERATORS, propose  # noqa: E402
from asmevo.launches import suite_launches  # noqa: E402
from asmevo.suites import load_suite  # noqa: E402
from benchmarks import record  # noqa: E402


def parse(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default="aiter")
    ap.add_argument("--problem", default="mla_decode")
    ap.add_argument("--operators", default="", help="comma-separated operator names (default: all)")
    return ap.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse(argv)
    problem = load_suite(args.suite).problem(args.problem)
    body = Evaluator(problem.code_object, suite_launches(problem)).body_of(0)
    names = set(filter(None, args.operators.split(",")))
    operators = [op for op in OPERATORS if not names or op.name in names]
    sites = list(range(len(body.instructions)))
    print(f"{args.suite}/{args.problem}: {len(sites)} instructions, {body.waitcnt_violations} waitcnt findings in K0")
    print(f"{'operator':32s} {'proposals':>9s} {'seconds':>8s}")
    total = 0.0
    for op in operators:
        start = time.perf_counter()
        count = sum(1 for _ in propose(body, sites, (op,)))
        took = time.perf_counter() - start
        total += took
        print(f"{op.name:32s} {count:9d} {took:8.1f}", flush=True)
    print(f"all operators at every site: {total:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(record.main_recorded(main, lambda argv: record.default_path(
        __file__, parse(argv).suite, parse(argv).problem)))
