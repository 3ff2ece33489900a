"""What a probe launch costs: every KernelBench probe shape's K0, run as verification runs it.

For each problem with `probe` shapes, runs K0's probe once (checked emulator, packed memory, the
spec's seed) and prints the workgroups run, the seconds taken, the sparse memory's materialized
pages against the buffers' full size, and whether K0 ran clean; then the process's peak RSS.

    python benchmarks/verification/probe_cost.py [--problems 2_Standard_matrix_multiplication_,19_ReLU]

Record: probe_cost[-PROBLEMS].txt beside this script (benchmarks/record.py).
"""
from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from asmevo.device import get_device  # noqa: E402
from asmevo.device.launch import LaunchSpec  # noqa: E402
from asmevo.device.probe import run_probe  # noqa: E402
from asmevo.suites import load_suite  # noqa: E402
from benchmarks import record  # noqa: E402


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", help="comma-separated problem names (default: every problem with a probe)")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    suite = load_suite("kernelbench")
    wanted = set(args.problems.split(",")) if args.problems else None
    device = get_device("emu", checked=True)
    failed = 0
    print(f"{'probe':<52} {'groups':>6} {'seconds':>8} {'resident':>10} {'buffers':>10}  K0")
    for problem in suite.problems:
        if wanted is not None and problem.name not in wanted:
            continue
        for shape in problem.shapes_by_role("probe"):
            spec = LaunchSpec.load(shape.launch_path)
            start = time.perf_counter()
            run = run_probe(device, problem.code_object.read_bytes(), spec, spec.seed)
            seconds = time.perf_counter() - start
            total = sum(b.nbytes for b in spec.buffers.values())
            failed += not run.ok
            print(f"{problem.name + ':' + shape.name:<52} {len(run.workgroups):>6} {seconds:>8.2f} "
                  f"{run.memory.resident_bytes / 2**20:>7.1f} MiB {total / 2**30:>6.2f} GiB  "
                  f"{'clean' if run.ok else run.findings[0]['kind']}")
    print(f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10:.0f} MiB")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(record.main_recorded(main, lambda argv: record.default_path(__file__, parse_args(argv).problems)))
