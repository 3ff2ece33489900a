"""Choose the timing model's free constants on the `fit` rows of the amd-aiter tables (never `heldout`).

Costs every fit row's trace once (`asmevo.calibrate.calibrate.estimate_row`, cached traces; run
`asmevo calibrate aiter --gpu G` first or let this trace them) and re-prices the estimate
(`Estimate.at`) over a grid of the constants the sources leave open, each within its published range:

- the sustained engine clock under load (a fraction of the data sheet's peak; sustained is lower,
  review #1): 1.2 to 2.1 GHz on a 2.1 GHz part,
- the achievable HBM bandwidth (a fraction of the data sheet's peak; MI300X's 8 XCDs reach 4.1-4.3 of
  5.3 TB/s in STREAM): 2.6 to 4.2 TB/s on a 5.3 TB/s part,
- the fixed launch overhead (AMD community "HSA kernel dispatch latencies": 3.5-7 us, order of magnitude),

and prints the fit split's Spearman rank correlation and median / 90th-percentile |predicted/measured - 1|
per point, best (lowest median error, then lowest p90) last. Held-out rows are not read. `--sample N` fits on N rows
spread evenly over the fit split, `--per-family N` on N rows spread evenly over each kernel family's fit rows (all of
a smaller family), so a long table does not outweigh the others (for GPUs whose fit split takes hours to trace).

    python benchmarks/calibration/fit_model.py [--gpu mi308x] [--sample N | --per-family N]

Record: fit_model-<gpu>[-sampleN | -per_familyN].txt beside this script (benchmarks/record.py).
"""
from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from asmevo.calibrate.aiter_tables import aiter_rows  # noqa: E402
from asmevo.calibrate.calibrate import estimate_row, select_per_family, select_rows, summary  # noqa: E402
from asmevo.errors import AsmEvoError  # noqa: E402
from asmevo.target import GPUS, gpu  # noqa: E402
from benchmarks import record  # noqa: E402

CLOCK_OF_PEAK = tuple(ghz / 2.1 for ghz in (1.2, 1.4, 1.6, 1.8, 2.1))
HBM_OF_PEAK = tuple(tbps / 5.3 for tbps in (2.6, 2.9, 3.2, 3.5, 4.2))
LAUNCH_US = (2.0, 4.0, 6.0)


def positive(text: str) -> int:
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n}")
    return n


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpu", default="mi308x", choices=sorted(GPUS))
    thin = ap.add_mutually_exclusive_group()
    thin.add_argument("--sample", type=positive, help="fit on this many rows spread evenly over the fit split")
    thin.add_argument("--per-family", type=positive, help="fit on this many rows spread evenly over each family's fit rows")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    g = gpu(args.gpu)
    runnable = [r for r in aiter_rows(g.name) if r.launch and not r.reason]
    if args.per_family is not None:
        rows = select_per_family(runnable, "fit", args.per_family)
    else:
        rows = select_rows(runnable, "fit", args.sample)
    costed = []
    for r in rows:
        try:
            costed.append((r, estimate_row(r, g.name)))
        except AsmEvoError as exc:
            print(f"skipped {r.kernel} {r.shape}: {exc}")
    results = []
    for clock, hbm, launch in itertools.product(CLOCK_OF_PEAK, HBM_OF_PEAK, LAUNCH_US):
        ghz, tbps = clock * g.peak_clock_hz / 1e9, hbm * g.hbm_peak_bytes_per_s / 1e12
        out = [{"split": "fit", "measured_us": r.measured_us, "predicted_us": est.at(ghz * 1e9, tbps * 1e12, launch)}
               for r, est in costed]
        s = summary(out).iloc[0]
        results.append((s["median_abs_err_%"], s["p90_abs_err_%"], ghz, tbps, launch, s["spearman"]))
    print(f"{len(costed)} fit rows; clock_GHz hbm_TB/s launch_us -> spearman median% p90%")
    for med, p90, ghz, tbps, launch, rho in sorted(results, reverse=True):
        print(f"{ghz:4.2f} {tbps:4.2f} {launch:4.1f} -> {rho:.3f} {med:5.1f} {p90:5.1f}")
    return 0


def record_path(argv: list[str] | None) -> Path:
    args = parse_args(argv)
    thinned = (args.sample and f"sample{args.sample}") or (args.per_family and f"per_family{args.per_family}")
    return record.default_path(__file__, args.gpu, thinned)


if __name__ == "__main__":
    sys.exit(record.main_recorded(main, record_path))
