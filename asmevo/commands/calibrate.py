"""`asmevo calibrate aiter --gpu G [--split S] [--sample N] [--json F]`: the timing model against the real-GPU
times in the pinned amd-aiter wheel's tuning tables (fetched on first use). Writes a JSON list, one object per table row
({table, kernel, shape, measured_us, predicted_us, split}; predicted_us null with a reason when a row
cannot run), and prints per split the row count, Spearman rank correlation and the median and 90th
percentile of |predicted/measured - 1|. Held-out rows (tuned_fmoe.csv kernels named `doweight`) never
choose a model constant."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import AsmEvoError
from .args import add_gpu_option


def register(subparsers) -> None:
    p = subparsers.add_parser("calibrate", help="the timing model against real-GPU measurements",
                              description=__doc__.splitlines()[0])
    p.add_argument("source", choices=("aiter",), help="measurements to compare with (aiter: the wheel's tuning tables)")
    add_gpu_option(p)
    p.add_argument("--split", choices=("fit", "heldout"), help="only the rows of this split (default: both)")
    p.add_argument("--sample", type=int, metavar="N",
                   help="only N rows of each selection, spread evenly over the tables (every k-th row)")
    p.add_argument("--json", help="write the per-row results here")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the summary")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..calibrate.calibrate import calibrate_aiter, summary

    log = (lambda s: None) if args.quiet else (lambda s: print(s, file=sys.stderr, flush=True))
    results = calibrate_aiter(args.gpu, progress=log, split=args.split, sample=args.sample)
    if args.json:
        try:
            Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
        except OSError as exc:
            raise AsmEvoError(f"cannot write {args.json} ({exc.strerror})") from None
    print(summary(results).to_string(index=False))
    return 0
