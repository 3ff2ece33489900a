"""Choose the timing model's free constants on the `fit` rows of the amd-aiter tables (never `heldout`).

Re-costs every cached trace (`asmevo.calibrate.calibrate.traced`; run `asmevo calibrate aiter --gpu G`
first) over a grid of the constants the sources leave open, each within its published range:

- the sustained engine clock under load (peak 2.1 GHz, data sheet; sustained is lower, review #1),
- the achievable HBM bandwidth (no public STREAM figure for MI308X; MI300X's 8 XCDs reach 4.1-4.3 TB/s),
- the fixed launch overhead (AMD community "HSA kernel dispatch latencies": 3.5-7 us, order of magnitude),

and prints the fit split's Spearman rank correlation and median / 90th-percentile |predicted/measured - 1|
per point, best (lowest median error) last. Held-out rows are not read.

    python benchmarks/calibration/fit_model.py [--gpu mi308x]

Record: fit_model-<gpu>.txt beside this script (benchmarks/record.py).
"""
from __future__ import annotations

import argparse
import dataclasses
import itertools
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from asmevo.calibrate.aiter_tables import aiter_rows  # noqa: E402
from asmevo.calibrate.calibrate import summary, traced  # noqa: E402
from asmevo.codeobj import CodeObject  # noqa: E402
from asmevo.device.launch import LaunchSpec  # noqa: E402
from asmevo.model import DEFAULT_LATENCIES, estimate  # noqa: E402
from asmevo.target import GPUS  # noqa: E402
from benchmarks import record  # noqa: E402

CLOCKS_GHZ = (1.2, 1.4, 1.6, 1.8, 2.1)
HBM_TBPS = (2.6, 2.9, 3.2, 3.5, 4.2)
LAUNCH_US = (2.0, 4.0, 6.0)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpu", default="mi308x")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rows = [r for r in aiter_rows(args.gpu) if r.split == "fit" and r.launch and not r.reason]
    prepared = []
    for r in rows:
        co = CodeObject.from_path(r.code_object)
        kernel = LaunchSpec.from_dict(r.launch).kernel
        prepared.append((r, co.kernel_instructions(kernel), co.kernel(kernel), traced(r)))
    results = []
    for ghz, hbm, launch in itertools.product(CLOCKS_GHZ, HBM_TBPS, LAUNCH_US):
        gpu = dataclasses.replace(GPUS[args.gpu], clock_hz=ghz * 1e9, hbm_bytes_per_s=hbm * 1e12)
        lat = dataclasses.replace(DEFAULT_LATENCIES, launch_us=launch)
        out = [{"split": "fit", "measured_us": r.measured_us,
                "predicted_us": estimate(ins, k, run, gpu, lat).predicted_us} for r, ins, k, run in prepared]
        s = summary(out).iloc[0]
        results.append((s["median_abs_err_%"], ghz, hbm, launch, s["spearman"], s["p90_abs_err_%"]))
    print(f"{len(prepared)} fit rows; clock_GHz hbm_TB/s launch_us -> spearman median% p90%")
    for med, ghz, hbm, launch, rho, p90 in sorted(results, reverse=True):
        print(f"{ghz:4.1f} {hbm:4.1f} {launch:4.1f} -> {rho:.3f} {med:5.1f} {p90:5.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(record.main_recorded(main, lambda argv: record.default_path(__file__, parse_args(argv).gpu)))
