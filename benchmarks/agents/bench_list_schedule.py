"""list_schedules on the kernels whose bench-shape profile shows dependency stalls, and on a few where it
should not matter: model time at the bench shape before and after the operator, the result through every
gate (differential verification on the emulator over the verify shapes, then the held-out shape). Per
kernel: K0's bound, waves per SIMD, and the blocks the operator reordered.

    python benchmarks/agents/bench_list_schedule.py [--only NAME ...]

Record: list_schedule.txt beside this script (benchmarks/record.py).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from operator_bench import bench_evaluator, k0_bound, main_rows, outcome  # noqa: E402

from asmevo.agent.ops_list import list_schedules  # noqa: E402
from benchmarks import record  # noqa: E402

KERNELS = (("aiter", "a8w8_gemm", "mi300x"),
           ("aiter", "i8gemm", "mi300x"),
           ("aiter", "flatmm_fp8", "mi300x"),
           ("aiter", "mla_decode", "mi300x"),
           ("triton", "vllm_decode_attention_stage1", "mi300x"),
           ("triton", "vllm_lora_shrink", "mi300x"),
           ("kernelbench", "23_Softmax", "mi308x"),
           ("kernelbench", "29_Softplus", "mi308x"),
           ("kernelbench", "86_Matmul_Divide_GELU", "mi308x"))


def run(suite: str, name: str, gpu: str) -> str:
    ev = bench_evaluator(suite, name, gpu)
    occupancy = ev.baseline.profile.estimate.occupancy
    head = f"{name:32s} {gpu:7s} {occupancy.waves_per_simd:>5g} {ev.lineage.candidates[0].cycles:>10.2f} "
    body = ev.body_of(0)
    start = time.perf_counter()
    new = list_schedules(body, 0)
    took = time.perf_counter() - start
    if new is None:
        return head + f"{'-':>10} {'-':>8}  no block gets shorter ({took:.1f} s) | bound {k0_bound(ev)}"
    moved = sum(a.text != b.text for a, b in zip(body.items, new.items))
    return (head + outcome(ev, body, new, "list_schedules", "every block") +
            f"; {moved} lines in a new place ({took:.1f} s) | bound {k0_bound(ev)}")


def main(argv: list[str] | None = None) -> int:
    return main_rows(argv, __doc__.splitlines()[0],
                     f"{'problem':32s} {'gpu':7s} {'waves':>5} {'K0 us':>10} {'after us':>10} {'speedup':>8}  "
                     "outcome | K0 bound", KERNELS, run,
                     "\nunit: model_us at the bench shape (asmevo.launches.timing_launch) on the GPU shown; waves: "
                     "K0's waves per SIMD at that shape")


if __name__ == "__main__":
    sys.exit(record.main_recorded(main, record.default_path(__file__, stem="list_schedule")))
