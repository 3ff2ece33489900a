"""How well the search's predictions rank what it verifies: on each kernel at its bench shape, the proposals an
expansion queues (predicted faster, at the hottest sites, in the order the search tries them: `search.expand`),
the first TOP of them verified and timed by the model; K0's expansion first, then the fastest verified
candidate's, DEPTH in all. Per proposal its predicted and verified time; per operator the median and the worst
prediction error, and how many were predicted faster than their parent but verify slower (verifications a search
spends for nothing).

    python benchmarks/agents/bench_prediction_error.py SUITE [PROBLEM ...] [--gpu mi300x] [--top 6] [--depth 3]

Record: prediction_error-SUITE[-PROBLEM...].txt beside this script (benchmarks/record.py).
"""
from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from asmevo.agent import search  # noqa: E402
from asmevo.agent.edit import Window  # noqa: E402
from asmevo.agent.gates import Evaluator  # noqa: E402
from asmevo.launches import suite_launches, timing_launch  # noqa: E402
from asmevo.suites import load_suite  # noqa: E402
from benchmarks import record  # noqa: E402


def audit(problem, gpu: str, top: int, depth: int, errors: dict[str, list[tuple[float, bool]]]) -> None:
    """Print the first `top` queued proposals of `problem`'s K0, predicted against verified, then of the fastest
    verified one, `depth` expansions in all; add each one's (relative error, verified slower than its parent) to
    `errors` under its operator."""
    start = time.perf_counter()
    timed, _ = timing_launch(problem)
    ev = Evaluator(problem.code_object, suite_launches(problem), timing=timed, gpu_name=gpu)
    parent, step = 0, 0
    for _ in range(depth):
        base = ev.lineage.get(parent).cycles
        node = search.expand(ev, parent, search.SearchConfig(), random.Random(0))
        window = Window(*ev.source_of(parent).body)
        queued = [(p, prop) for p, _, prop in node.queue if p != math.inf][:top]
        print(f"{problem.name} #{parent}: {base:,.1f} {ev.lineage.unit}, {len(node.queue)} proposals queued")
        for predicted, prop in queued:
            edit = prop.body.edit(node.body, prop.operator, prop.note)
            step += 1
            cand = ev.evaluate(parent, edit, window, agent="audit", step=step) if edit is not None else None
            if cand is None or cand.status != "verified":
                print(f"  {prop.operator:44} predicted {predicted:12,.1f}  {cand.status if cand else 'no edit'}")
                continue
            error, slower = predicted / cand.cycles - 1, cand.cycles > base
            errors[prop.operator].append((error, slower))
            print(f"  {prop.operator:44} predicted {predicted:12,.1f}  verified {cand.cycles:12,.1f}  {error:+7.2%}"
                  + ("  slower than its parent" if slower else ""))
        best = min((c for c in ev.lineage.candidates if c.verified), key=lambda c: (c.cycles, c.id))
        if best.id == parent:
            break
        parent = best.id
    print(f"  ({time.perf_counter() - start:.0f} s)")


def summary(errors: dict[str, list[tuple[float, bool]]]) -> None:
    print(f"{'operator':44} {'verified':>8} {'median |error|':>14} {'worst error':>11} {'slower than parent':>18}")
    for op, rows in sorted(errors.items()):
        worst = max((e for e, _ in rows), key=abs)
        print(f"{op:44} {len(rows):8} {statistics.median(abs(e) for e, _ in rows):14.2%} {worst:+11.2%} "
              f"{sum(s for _, s in rows):18}")
    rows = [r for rs in errors.values() for r in rs]
    if rows:
        print(f"{len(rows)} verified: median |error| {statistics.median(abs(e) for e, _ in rows):.2%}, "
              f"{sum(s for _, s in rows)} predicted faster than their parent and verified slower")


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("suite")
    ap.add_argument("problems", nargs="*", help="default: every problem of the suite")
    ap.add_argument("--gpu", default="mi300x")
    ap.add_argument("--top", type=int, default=6, help="queued proposals verified per expansion")
    ap.add_argument("--depth", type=int, default=3, help="expansions per kernel (each of the fastest so far)")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    suite = load_suite(args.suite)
    suite.prepare()
    errors: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    for name in args.problems or [p.name for p in suite.problems]:
        audit(suite.problem(name), args.gpu, args.top, args.depth, errors)
    summary(errors)
    return 0


if __name__ == "__main__":
    def path(argv: list[str]) -> Path:
        args = parse(argv)
        return record.default_path(__file__, args.suite, *args.problems[:1], stem="prediction_error")

    sys.exit(record.main_recorded(main, path))
