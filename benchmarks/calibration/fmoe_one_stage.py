#!/usr/bin/env python3
"""The timing model on one GPU's one-stage fused-MoE rows of tuned_fmoe.csv (family fmoe_g1u1_1stage of
asmevo.calibrate.aiter_tables.aiter_rows), each predicted as `asmevo calibrate aiter` does (calibrate.predict_row,
default latencies): per row the measured and predicted microseconds, the model's bound and the relative error,
then the summary per split. Record: fmoe_one_stage-<gpu>.txt beside this script (benchmarks/record.py).

    python benchmarks/calibration/fmoe_one_stage.py [--gpu mi355x]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from asmevo.calibrate.aiter_tables import CU_NUM, aiter_rows  # noqa: E402
from asmevo.calibrate.calibrate import predict_row, summary  # noqa: E402
from benchmarks import record  # noqa: E402


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpu", default="mi355x", choices=sorted(CU_NUM))
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rows = [r for r in aiter_rows(args.gpu) if r.family == "fmoe_g1u1_1stage"]
    print(f"{len(rows)} one-stage rows of tuned_fmoe.csv on {args.gpu}")
    print(f"{'object':50s} {'token':>5s} {'dim':>5s} {'inter':>5s} {'measured':>9s} {'predicted':>9s} "
          f"{'err %':>6s}  bound")
    results = []
    for r in rows:
        res = predict_row(r, args.gpu)
        results.append(res)
        name = r.code_object.name.removesuffix(".co").removeprefix("fmoe_bf16_")
        s = r.shape
        if res["predicted_us"] is None:
            print(f"{name:50s} {s['token']:5d} {s['model_dim']:5d} {s['inter_dim']:5d} {r.measured_us:9.2f} "
                  f"{'-':>9s} {'-':>6s}  {res['reason']}", flush=True)
            continue
        err = 100 * (res["predicted_us"] / r.measured_us - 1)
        print(f"{name:50s} {s['token']:5d} {s['model_dim']:5d} {s['inter_dim']:5d} {r.measured_us:9.2f} "
              f"{res['predicted_us']:9.2f} {err:+6.1f}  {res['bound']}", flush=True)
    print(summary(results).to_string(index=False))
    return 0 if all(r["predicted_us"] is not None for r in results) else 1


if __name__ == "__main__":
    sys.exit(record.main_recorded(main, lambda argv: record.default_path(__file__, parse_args(argv).gpu)))
