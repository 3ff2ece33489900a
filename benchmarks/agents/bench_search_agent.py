"""Run the offline search agent over a suite on the emulator and print the per-kernel table and the
summary (kernels improved at all and by >= 1%, geometric-mean and max speedup). Every candidate is
timed by the timing model (`model_us`) at the problem's bench shape (`asmevo.launches.timing_launch`)
for `--gpu` (KernelBench: mi308x, like the paper; the production suites: mi300x); every accepted
candidate is verified on all verify shapes and the final one re-verified with the held-out shape.

    python benchmarks/agents/bench_search_agent.py [--suite kernelbench] [--gpu mi308x] [--budget 16]
        [--seed 0] [--only NAME ...] [--out DIR] [--json results.json] [--memory FILE]

Record: search_SUITE[-GPU][-budgetN][-seedS][-ONLY].txt beside this script (benchmarks/record.py).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from asmevo.agent.optimize import optimize  # noqa: E402
from asmevo.launches import suite_launches, timing_launch  # noqa: E402
from asmevo.suites import load_suite  # noqa: E402
from benchmarks import record  # noqa: E402

SUITE_GPU = {"kernelbench": "mi308x"}  # the paper's KernelBench GPU; other suites default to mi300x


def run_problem(problem, budget: int, seed: int, out: Path, gpu_name: str, memory: str | None) -> dict:
    start = time.perf_counter()
    verify_launches = suite_launches(problem)
    labels = {vl.label for vl in verify_launches}
    heldout = [vl for vl in suite_launches(problem, heldout=True) if vl.label not in labels]
    timed, role = timing_launch(problem)
    res = optimize(problem.code_object, verify_launches, heldout=heldout, outdir=out / problem.name,
                   budget=budget, seed=seed, timing=timed, gpu_name=gpu_name,
                   **({"memory": memory} if memory else {}))
    lin = res.lineage
    best = res.best
    ops = []
    c = best
    while c.parent is not None:
        ops.append(c.operator)
        c = lin.get(c.parent)
    k0 = lin.candidates[0]
    return {"problem": problem.name, "timing_shape": role, "unit": lin.unit, "k0_us": k0.cycles,
            "best_us": best.cycles, "speedup": res.speedup, "improved": res.improved,
            "bound": (k0.timing or {}).get("provenance", {}).get("config", {}).get("bound"),
            "candidates": len(lin.candidates) - 1, "verified": lin.verified_count(),
            "heldout": lin.heldout.get("accepted") == best.id if lin.heldout else False,
            "operators": ops[::-1], "seconds": time.perf_counter() - start}


def summarize(rows: list[dict]) -> dict:
    """Kernels improved at all and by at least 1%, geometric-mean and max speedup (errors count 1.0x)."""
    speedups = [r["speedup"] for r in rows]
    return {"improved": sum(1 for r in rows if r["improved"] and r["speedup"] > 1.0),
            "improved_1pct": sum(1 for r in rows if r["improved"] and r["speedup"] >= 1.01),
            "geomean": math.exp(sum(math.log(x) for x in speedups) / len(speedups)) if speedups else 1.0,
            "max": max(speedups, default=1.0)}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default="kernelbench")
    ap.add_argument("--gpu", help="GPU record the model times for (default: mi308x for kernelbench, else mi300x)")
    ap.add_argument("--budget", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--out", default="/tmp/asmevo-bench-search")
    ap.add_argument("--json")
    ap.add_argument("--memory", help="search memory file to read and update (default: none)")
    return ap.parse_args(argv)


def record_path(argv: list[str]) -> Path:
    """search_SUITE[-GPU][-budgetN][-seedS][-ONLY].txt beside this script."""
    args = parse_args(argv)
    return record.default_path(__file__, args.gpu, args.budget != 16 and f"budget{args.budget}",
                               args.seed and f"seed{args.seed}", ",".join(args.only or []), stem=f"search_{args.suite}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    gpu_name = args.gpu or SUITE_GPU.get(args.suite, "mi300x")
    suite = load_suite(args.suite)
    problems = [p for p in suite.problems if not args.only or p.name in args.only]
    rows = []
    print(f"{'problem':40s} {'K0 model_us':>12} {'best':>12} {'speedup':>8} {'cand':>5} {'ver':>4} {'seconds':>8}"
          f"  bound / chain", flush=True)
    for p in problems:
        try:
            row = run_problem(p, args.budget, args.seed, Path(args.out), gpu_name, args.memory)
        except Exception as exc:  # one bad problem must not hide the others' numbers
            row = {"problem": p.name, "error": f"{type(exc).__name__}: {exc}", "speedup": 1.0, "improved": False}
            print(f"{p.name:40s} ERROR {row['error']}", flush=True)
            rows.append(row)
            continue
        rows.append(row)
        print(f"{p.name:40s} {row['k0_us']:>12.2f} {row['best_us']:>12.2f} {row['speedup']:>7.3f}x "
              f"{row['candidates']:>5} {row['verified']:>4} {row['seconds']:>8.0f}  {row['bound']}: "
              f"{' > '.join(row['operators']) or '-'}", flush=True)
    summary = summarize(rows)
    print(f"\nimproved (any speedup > 1.0) {summary['improved']}/{len(rows)} kernels; "
          f"improved by >= 1% {summary['improved_1pct']}/{len(rows)}; geometric-mean model speedup "
          f"{summary['geomean']:.3f}x; max {summary['max']:.3f}x "
          f"(unit model_us at the bench shape on {gpu_name}, budget {args.budget} verified evaluations, "
          f"seed {args.seed})")
    if args.json:
        Path(args.json).write_text(json.dumps({"gpu": gpu_name, "rows": rows, **summary}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(record.main_recorded(main, record_path))
