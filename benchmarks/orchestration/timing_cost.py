"""What timing one candidate costs at the bench shape, against the model at the largest verify shape run
whole (what the time stage ran before the bench shape was timed), per KernelBench problem, in seconds of
this process, K0's bytes standing in for a candidate's:

- `reuse`: the candidate takes K0's paths (checked on the largest verify shape, traced whole), so
  K0's bench-shape trace is costed with its code (`asmevo.timing.model_candidate`);
- `sample`: otherwise the candidate runs K0's sampled bench workgroups itself.

    python benchmarks/orchestration/timing_cost.py [--only NAME ...]

Record: timing_cost[-NAMES].txt beside this script (benchmarks/record.py).
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
from asmevo.model import estimate, trace_sample  # noqa: E402
from asmevo.model.reuse import same_paths, transplant  # noqa: E402
from asmevo.target import gpu  # noqa: E402
from asmevo.timing import model_time, whole_trace  # noqa: E402
from benchmarks import record  # noqa: E402


def seconds(co: CodeObject, vl, workgroups=None) -> tuple[float, object]:
    start = time.perf_counter()
    _, est = model_time(co, vl, workgroups=workgroups)
    return time.perf_counter() - start, est


def reuse_seconds(co: CodeObject, check, k0_estimate) -> float:
    """A candidate with K0's paths: its whole trace of `check`, the path check, the transplant and the cost."""
    start = time.perf_counter()
    spec = check.spec
    run1 = trace_sample(co, spec, spec.seed, max_samples=10 ** 9, known_findings=check.known_findings)
    ins = co.kernel_instructions(spec.kernel)
    assert same_paths(ins, ins, whole_trace(co, check), run1)
    estimate(ins, co.kernel(spec.kernel), transplant(k0_estimate.traced, ins, ins), gpu("mi300x"))
    return time.perf_counter() - start


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    ratios, reused = [], []
    print(f"{'problem':40s} {'verify s':>9} {'reuse s':>8} {'ratio':>6} {'sample s':>9} {'ratio':>6} {'sampled':>8}")
    for p in load_suite("kernelbench").problems:
        if args.only and p.name not in args.only:
            continue
        co = CodeObject.from_path(p.code_object)
        bench, role = timing_launch(p)
        check = largest(suite_launches(p))
        whole_trace(co, check)  # K0's, as the agent keeps it; also warms disassembly and the compiled program
        t_verify, _ = seconds(co, check)
        _, est = seconds(co, bench)
        t_reuse = reuse_seconds(co, check, est)
        t_sample, _ = seconds(co, bench, est.sample)  # a candidate: K0's workgroups
        reused.append(t_reuse / t_verify)
        ratios.append(t_sample / t_verify)
        print(f"{p.name:40s} {t_verify:9.2f} {t_reuse:8.2f} {t_reuse / t_verify:6.1f} {t_sample:9.2f} "
              f"{t_sample / t_verify:6.1f} {est.sampled_workgroups:8d}", flush=True)
    print(f"\nreuse: median ratio {statistics.median(reused):.1f}, max {max(reused):.1f}; own sample: median "
          f"{statistics.median(ratios):.1f}, max {max(ratios):.1f} over {len(ratios)} problems (target: at most 2)")
    return 0


if __name__ == "__main__":
    sys.exit(record.main_recorded(main, lambda argv: record.default_path(__file__, *(parse_args(argv).only or ()))))
