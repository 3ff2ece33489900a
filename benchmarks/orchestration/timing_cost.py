"""What timing one candidate costs: the model at the bench shape (a traced sample of its workgroups on
sparse memory) against the model at the largest verify shape run whole (what the time stage ran before
the bench shape was timed), per KernelBench problem, in seconds of this process, K0 standing in for a
candidate (a candidate reruns K0's workgroups).

    python benchmarks/orchestration/timing_cost.py [--only NAME ...]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from asmevo.codeobj import CodeObject  # noqa: E402
from asmevo.launches import largest, suite_launches, timing_launch  # noqa: E402
from asmevo.suites import load_suite  # noqa: E402
from asmevo.timing import model_time  # noqa: E402


def seconds(co: CodeObject, vl, workgroups=None) -> tuple[float, object]:
    start = time.perf_counter()
    _, est = model_time(co, vl, workgroups=workgroups)
    return time.perf_counter() - start, est


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args()
    ratios = []
    print(f"{'problem':40s} {'verify s':>9} {'bench s':>8} {'ratio':>6} {'sampled':>8}  timing shape")
    for p in load_suite("kernelbench").problems:
        if args.only and p.name not in args.only:
            continue
        co = CodeObject.from_path(p.code_object)
        bench, role = timing_launch(p)
        seconds(co, largest(suite_launches(p)))  # warm: disassembly and compiled program cached as in a run
        t_verify, _ = seconds(co, largest(suite_launches(p)))
        _, est = seconds(co, bench)
        t_bench, _ = seconds(co, bench, est.sample)  # a candidate: K0's workgroups
        ratios.append(t_bench / t_verify)
        print(f"{p.name:40s} {t_verify:9.2f} {t_bench:8.2f} {t_bench / t_verify:6.1f} {est.sampled_workgroups:8d}  "
              f"{bench.label.split(':')[1]} ({role})", flush=True)
    print(f"\nmedian ratio {statistics.median(ratios):.1f}, max {max(ratios):.1f} over {len(ratios)} problems "
          f"(target: at most 2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
