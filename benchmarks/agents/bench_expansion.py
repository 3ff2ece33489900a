"""Time one expansion of the search agent (`asmevo.agent.search.expand`) at K0 of one suite kernel on its
bench shape: the operators at K0's hottest sites, each proposal predicted, the faster ones ranked. K0's
baseline (recovery, trace and model) is timed apart; the expansion's CPU time is printed beside its wall time
(other jobs on the machine inflate the latter), and a digest of the ranked proposals, so two commits' runs
show whether they proposed the same.

    python benchmarks/agents/bench_expansion.py [--suite aiter] [--problem fmha_fwd] [--gpu mi300x]

Record: bench_expansion-SUITE-PROBLEM.txt beside this script (benchmarks/record.py).
"""
from __future__ import annotations

import argparse
import hashlib
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from asmevo.agent.gates import Evaluator  # noqa: E402
from asmevo.agent.search import SearchConfig, expand  # noqa: E402
from asmevo.launches import suite_launches, timing_launch  # noqa: E402
from asmevo.suites import load_suite  # noqa: E402
from benchmarks import record  # noqa: E402


def parse(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default="aiter")
    ap.add_argument("--problem", default="fmha_fwd")
    ap.add_argument("--gpu", default="mi300x")
    return ap.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse(argv)
    problem = load_suite(args.suite).problem(args.problem)
    start = time.perf_counter()
    ev = Evaluator(problem.code_object, suite_launches(problem), timing=timing_launch(problem)[0], gpu_name=args.gpu)
    print(f"{args.suite}/{args.problem} on {args.gpu}: K0 baseline {time.perf_counter() - start:.1f} s")
    start, cpu = time.perf_counter(), time.process_time()
    node = expand(ev, 0, SearchConfig(), random.Random(0))
    took, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"{len(node.body.instructions)} instructions; expansion at K0: {len(node.queue)} proposals predicted faster "
          f"in {took:.1f} s ({cpu:.1f} s of CPU time)")
    digest = hashlib.sha256(repr([(round(p, 6), prop.operator, [it.text for it in prop.body.items])
                                  for p, _, prop in node.queue]).encode()).hexdigest()
    print(f"proposals (predicted time, operator, code) digest: {digest[:16]}")
    return 0


if __name__ == "__main__":
    sys.exit(record.main_recorded(main, lambda argv: record.default_path(
        __file__, parse(argv).suite, parse(argv).problem)))
