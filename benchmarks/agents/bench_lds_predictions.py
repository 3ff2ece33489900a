"""What the search's prediction makes of every operator's proposals on a kernel's K0 at its bench shape: the
model's terms (is the LDS term the bound?), and per operator the proposals at the hot sites (as
`search.expand` chooses them), how many are predicted faster, the best predicted speedup, and the range of
their LDS-byte ratio to K0 (`search.ratios`: the factor the LDS term is scaled by).

    python benchmarks/agents/bench_lds_predictions.py SUITE PROBLEM [PROBLEM ...] [--sites 48]

Record: lds_predictions-SUITE-PROBLEM....txt beside this script (benchmarks/record.py).
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from asmevo.agent import search  # noqa: E402
from asmevo.agent.gates import Evaluator  # noqa: E402
from asmevo.agent.operators import propose  # noqa: E402
from asmevo.launches import suite_launches, timing_launch  # noqa: E402
from asmevo.suites import load_suite  # noqa: E402
from benchmarks import record  # noqa: E402


def report(problem, sites: int) -> None:
    start = time.perf_counter()
    timed, role = timing_launch(problem)
    ev = Evaluator(problem.code_object, suite_launches(problem), timing=timed)
    body = ev.body_of(0)
    heat = search.heat_of(body, ev.profile(0), ev.lineage.get(0).cycles)
    if heat is None:
        print(f"{problem.name}: the profile does not map onto the recovered body")
        return
    e = heat.estimate
    base = search.predict(body, heat)
    terms = ", ".join(f"{k} {v:,.0f}" for k, v in sorted(e.terms.items(), key=lambda kv: -kv[1]))
    print(f"{problem.name} ({role}): K0 {ev.lineage.get(0).cycles:.2f} {ev.lineage.unit}, bound {e.bound}; "
          f"terms in cycles: {terms}")
    rows: dict[str, list] = defaultdict(lambda: [0, 0, 1.0, None, None])
    for prop in propose(body, search.hot_sites(body, heat, sites)):
        row = rows[prop.operator]
        row[0] += 1
        predicted, r = search.predict(prop.body, heat), search.ratios(prop.body, heat)
        if predicted is not None and predicted < base:
            row[1] += 1
            row[2] = max(row[2], base / predicted)
        if r is not None:
            row[3] = r["lds"] if row[3] is None else min(row[3], r["lds"])
            row[4] = r["lds"] if row[4] is None else max(row[4], r["lds"])
    print(f"  {'operator':28} {'proposals':>9} {'faster':>6} {'best x':>7} {'LDS bytes ratio':>15}")
    for op, (n, faster, best, lo, hi) in sorted(rows.items()):
        span = "-" if lo is None else f"{lo:.4f}" if lo == hi else f"{lo:.4f}-{hi:.4f}"
        print(f"  {op:28} {n:9} {faster:6} {best:7.4f} {span:>15}")
    print(f"  {sum(r[0] for r in rows.values())} proposals, {sum(r[1] for r in rows.values())} predicted faster "
          f"({time.perf_counter() - start:.0f} s)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("suite")
    ap.add_argument("problems", nargs="+")
    ap.add_argument("--sites", type=int, default=search.SearchConfig.sites, help="hottest instructions tried")
    args = ap.parse_args(argv)
    suite = load_suite(args.suite)
    suite.prepare()
    for name in args.problems:
        report(suite.problem(name), args.sites)
    return 0


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    sys.exit(record.main_recorded(main, record.default_path(__file__, *args, stem="lds_predictions")))
