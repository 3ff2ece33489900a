"""How far each suite kernel is from what no edit of its code can beat, by the model at its bench shape.

An edit that keeps the kernel's memory accesses and MFMAs (every search operator does) cannot go below
the model's HBM term (per buffer, the smaller of its size and the bytes requested), nor below its LDS
term (every LDS access moves its bytes for all 64 lanes, merged or not), nor below the cache-line terms
(vector memory path, L2) with each instruction's lines cut by the most merging can cut them, nor below the
matrix-core passes of those MFMAs spread over every SIMD, nor below a wave's own matrix-core passes
once per round of resident workgroups, and the launch overhead stays. Their maximum
is the kernel's floor; K0's predicted time over the floor is the most such an edit can gain under the
model. A kernel whose ceiling is below 1.01 cannot be "improved by >= 1 %" by such an edit: those
bound the suite targets of issue #19.

    python benchmarks/agents/bench_floors.py SUITE [--gpu G] [PROBLEM ...]

Record: floors-SUITE-GPU.txt beside this script (benchmarks/record.py).
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from asmevo.codeobj import CodeObject  # noqa: E402
from asmevo.isa.instruction import Instruction  # noqa: E402
from asmevo.isa.table import instr_info  # noqa: E402
from asmevo.launches import timing_launch  # noqa: E402
from asmevo.model.launch import Estimate, resident  # noqa: E402
from asmevo.suites import load_suite  # noqa: E402
from asmevo.target.gpus import gpu as gpu_named  # noqa: E402
from asmevo.timing import model_time  # noqa: E402
from benchmarks import record  # noqa: E402

AT_FLOOR = 1.01  # issue #19 counts a kernel improved at >= 1 %
WIDEST_LANE_BYTES = 16  # a vector memory instruction moves at most 16 B per lane (dwordx4)


def fewest_lines(est: Estimate, instructions: list[Instruction]) -> float:
    """The fraction of the launch's cache lines that no merging of its vector memory instructions can
    remove. Merging k executions into one wide instruction touches a superset of each one's lines, so at
    least 1/k of their sum; an instruction of b bytes per lane merges with at most 16/b - 1 others. So
    an execution's lines can shrink at most to b/16 of them (a dwordx4's not at all)."""
    processor = gpu_named(est.gpu).processor.name
    at = {ins.address: ins for ins in instructions}
    total = kept = 0.0
    for pc, lines in est.lines_per_execution.items():
        n = lines * est.per_pc[pc].count
        total += n
        kept += n * min(1.0, instr_info(at[pc].mnemonic, processor).access_bytes / WIDEST_LANE_BYTES)
    return kept / total if total else 1.0


def floor_cycles(est: Estimate, instructions: list[Instruction]) -> tuple[float, str]:
    """The launch's floor in cycles and what sets it: the HBM term, the LDS term, the cache-line terms
    at their `fewest_lines`, or the matrix-core passes of its MFMAs (`unit_cycles` is per wave), plus
    the launch overhead. The MFMA bound is the larger of the
    passes spread over every SIMD (the MFMA part of the model's SIMD issue term) and, for its latency term, a wave's own
    passes (it issues its MFMAs one after another) once per round of resident workgroups, counted at
    the most workgroups per CU an edit can reach: fewest VGPRs and SGPRs, the kernel's LDS kept. With
    fewer workgroups than CUs (AITer's i8gemm) the second is far above the first."""
    g = gpu_named(est.gpu)
    occ = est.occupancy
    waves = est.workgroups * occ.waves_per_workgroup
    spread = est.unit_cycles["mfma"] * waves / (g.cus * g.simds_per_cu)
    best = resident(g.processor.vgpr_granule, g.sgpr_alloc_granule, occ.lds_bytes, occ.waves_per_workgroup, g)
    per_cu = -(-est.workgroups // g.cus)
    rounds = -(-per_cu // best.workgroups_per_cu)
    matrix = max(spread, rounds * est.unit_cycles["mfma"])
    shrink = fewest_lines(est, instructions)
    floors = {"hbm": est.terms["hbm_bandwidth"], "lds": est.terms["lds"], "mfma": matrix,
              "vmem": est.terms["vmem_path"] * shrink, "l2": est.terms["l2_bandwidth"] * shrink}
    by = max(floors, key=floors.__getitem__)
    return floors[by] + est.overhead_cycles, by


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("suite")
    ap.add_argument("problems", nargs="*", help="default: every problem of the suite")
    ap.add_argument("--gpu", default="mi300x", help="GPU the model predicts for (default mi300x)")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_intermixed_args(argv)
    suite = load_suite(args.suite)
    suite.prepare()
    names = args.problems or [p.name for p in suite.problems]
    print(f"{'kernel':42} {'bound':14} {'K0 model_us':>12} {'floor':>10} {'set by':>6} {'ceiling':>8}")
    ceilings = []
    for name in names:
        problem = suite.problem(name)
        launch, _ = timing_launch(problem)
        co = CodeObject.from_path(problem.code_object)
        _, est = model_time(co, launch, args.gpu)
        floor, by = floor_cycles(est, co.kernel_instructions(launch.spec.kernel))
        ceiling = est.model_cycles / floor
        ceilings.append(ceiling)
        print(f"{name:42} {est.bound:14} {est.predicted_us:12.1f} {gpu_named(est.gpu).cycles_to_us(floor):10.1f} "
              f"{by:>6} {ceiling:8.2f}", flush=True)
    stuck = sum(c < AT_FLOOR for c in ceilings)
    geomean = math.exp(sum(math.log(c) for c in ceilings) / len(ceilings))
    print(f"{len(ceilings)} kernels on {args.gpu}: {stuck} within 1 % of their floor (no edit can improve them "
          f"by >= 1 %), at most {len(ceilings) - stuck} improvable; geomean ceiling {geomean:.3f}x")
    return 0


if __name__ == "__main__":
    known = parser().parse_intermixed_args()
    sys.exit(record.main_recorded(main, record.default_path(__file__, known.suite, known.gpu, stem="floors")))
