"""interleave_mfma on the GEMMs (every KernelBench kernel with an MFMA, AITer's latency-bound GEMMs): model
time at the bench shape before and after the operator, each result through every gate (differential
verification on the emulator over the verify shapes, then the held-out shape). Per kernel: K0's bound,
its MFMA stalls by cause (the operator fills "matrix core busy" stalls, not "dependency" ones), and
whether the operator applies (first MFMA block where it does).

    python benchmarks/agents/bench_interleave_mfma.py [--only NAME ...]

Record: interleave_mfma.txt beside this script (benchmarks/record.py).
"""
from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from operator_bench import bench_evaluator, k0_bound, main_rows, outcome  # noqa: E402

from asmevo.agent.ops_mfma import interleave_mfma  # noqa: E402
from benchmarks import record  # noqa: E402

KERNELS = (("kernelbench", "2_Standard_matrix_multiplication_", "mi308x"),
           ("kernelbench", "17_Matmul_with_transposed_B", "mi308x"),
           ("kernelbench", "76_Gemm_Add_ReLU", "mi308x"),
           ("kernelbench", "3_Batched_matrix_multiplication", "mi308x"),
           ("kernelbench", "40_Matmul_Scaling_ResidualAdd", "mi308x"),
           ("kernelbench", "86_Matmul_Divide_GELU", "mi308x"),
           ("kernelbench", "9_Tall_skinny_matrix_multiplication_", "mi308x"),
           ("aiter", "a8w8_gemm", "mi300x"),
           ("aiter", "i8gemm", "mi300x"),
           ("aiter", "flatmm_fp8", "mi300x"))
_STALL = re.compile(r"(v_mfma\S*).*\[stall (\d+): ([^\]]+)\]")


def mfma_stalls(listing: str) -> str:
    """K0's MFMA stall cycles summed over the sampled waves' executions, by cause."""
    cycles: Counter = Counter()
    for line in listing.splitlines():
        m = _STALL.search(line)
        if m:
            count = float(line.split()[1])
            cycles[m.group(3)] += count * int(m.group(2))
    return ", ".join(f"{cause} {c:.3g}" for cause, c in cycles.most_common()) or "none"


def run(suite: str, name: str, gpu: str) -> str:
    ev = bench_evaluator(suite, name, gpu)
    bound = k0_bound(ev)
    body = ev.body_of(0)
    stalls = mfma_stalls(ev.baseline.profile.listing())
    head = f"{name:36s} {gpu:7s} {ev.lineage.candidates[0].cycles:>10.2f} "
    blocks = sorted({body.cfg.block_of[i] for i, info in enumerate(body.infos) if info.family == "mfma"})
    for b in blocks:
        blk = body.cfg.blocks[b]
        site = next(i for i in range(blk.start, blk.end) if body.infos[i].family == "mfma")
        new = interleave_mfma(body, site)
        if new is not None:
            result = outcome(ev, body, new, "interleave_mfma", f"block {b}")
            return head + f"{result} | bound {bound} | MFMA stalls: {stalls}"
    return head + f"{'-':>10} {'-':>8}  does not apply | bound {bound} | MFMA stalls: {stalls}"


def main(argv: list[str] | None = None) -> int:
    return main_rows(argv, __doc__.splitlines()[0],
                     f"{'problem':36s} {'gpu':7s} {'K0 us':>10} {'after us':>10} {'speedup':>8}  outcome | K0 bound | "
                     "K0 MFMA stall wave-cycles by cause", KERNELS, run,
                     "\nunit: model_us at the bench shape (asmevo.launches.timing_launch) on the GPU shown")


if __name__ == "__main__":
    sys.exit(record.main_recorded(main, record.default_path(__file__, stem="interleave_mfma")))
