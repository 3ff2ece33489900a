"""list_schedules on the kernels whose bench-shape profile shows dependency stalls, and on a few where it
should not matter: model time at the bench shape before and after the operator, the result through every
gate (differential verification on the emulator over the verify shapes, then the held-out shape). Per
kernel: K0's bound, waves per SIMD, and the blocks the operator reordered.

    python benchmarks/agents/bench_list_schedule.py [--only NAME ...]

Record: list_schedule.txt beside this script (benchmarks/record.py).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from asmevo.agent.edit import Window  # noqa: E402
from asmevo.agent.gates import Evaluator  # noqa: E402
from asmevo.agent.ops_list import list_schedules  # noqa: E402
from asmevo.launches import suite_launches, timing_launch  # noqa: E402
from asmevo.suites import load_suite  # noqa: E402
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
    s = load_suite(suite)
    s.prepare()
    p = s.problem(name)
    launches = suite_launches(p)
    labels = {vl.label for vl in launches}
    heldout = [vl for vl in suite_launches(p, heldout=True) if vl.label not in labels]
    ev = Evaluator(p.code_object, launches, heldout=heldout, timing=timing_launch(p)[0], gpu_name=gpu)
    k0 = ev.lineage.candidates[0]
    occupancy = ev.baseline.profile.estimate.occupancy
    bound = (k0.timing or {}).get("provenance", {}).get("config", {}).get("bound")
    head = f"{name:32s} {gpu:7s} {occupancy.waves_per_simd:>5g} {k0.cycles:>10.2f} "
    body = ev.body_of(0)
    start = time.perf_counter()
    new = list_schedules(body, 0)
    took = time.perf_counter() - start
    if new is None:
        return head + f"{'-':>10} {'-':>8}  no block gets shorter ({took:.1f} s) | bound {bound}"
    moved = sum(a.text != b.text for a, b in zip(body.items, new.items))
    cand = ev.evaluate(0, new.edit(body, "list_schedules", "every block"), Window(*ev.source_of(0).body),
                       agent="bench", step=1)
    if cand.status != "verified":
        return head + f"{'-':>10} {'-':>8}  {cand.status}: {cand.summary()} | bound {bound}"
    if cand.accepted:
        held = "held-out ok" if ev.confirm_heldout().id == cand.id else "held-out REJECTED"
    else:
        held = "not faster (held-out shape not run)"
    return (head + f"{cand.cycles:>10.2f} {k0.cycles / cand.cycles:>7.3f}x  verified, {held}; {moved} lines in a new place "
            f"({took:.1f} s) | bound {bound}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args(argv)
    print(f"{'problem':32s} {'gpu':7s} {'waves':>5} {'K0 us':>10} {'after us':>10} {'speedup':>8}  outcome | K0 bound",
          flush=True)
    for suite, name, gpu in KERNELS:
        if args.only and name not in args.only:
            continue
        try:
            print(run(suite, name, gpu), flush=True)
        except Exception as exc:  # one bad problem must not hide the others' numbers
            print(f"{name:32s} ERROR {type(exc).__name__}: {exc}", flush=True)
    print("\nunit: model_us at the bench shape (asmevo.launches.timing_launch) on the GPU shown; waves: K0's waves "
          "per SIMD at that shape")
    return 0


if __name__ == "__main__":
    sys.exit(record.main_recorded(main, record.default_path(__file__, stem="list_schedule")))
