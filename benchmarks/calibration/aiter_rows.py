#!/usr/bin/env python3
"""Check the AITer calibration rows for one GPU: every relevant row of the pinned amd-aiter wheel's tuning tables
(asmevo.calibrate.aiter_tables.aiter_rows), how many launch, why the others do not, and K0 run on a sample of each
runnable row's workgroups on sparse memory (findings beyond the family's known_findings, and whether the sampled
workgroups stored anything). Prints the figures; record: aiter_rows-<gpu>[-limitN].txt beside this script
(benchmarks/record.py).

    python benchmarks/calibration/aiter_rows.py [--gpu mi308x] [--probe 8] [--limit N]
"""
from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from asmevo.calibrate.aiter_tables import (CU_NUM, aiter_rows, run_row, unexpected_findings,  # noqa: E402
                                           written_elements)
from asmevo.errors import AsmEvoError  # noqa: E402
from benchmarks import record  # noqa: E402



def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpu", default="mi308x", choices=sorted(CU_NUM))
    ap.add_argument("--probe", type=int, default=8, help="workgroups run per row")
    ap.add_argument("--limit", type=int, default=0, help="run K0 on only the first N runnable rows")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)

    def out(line: str) -> None:
        print(line, flush=True)

    t0 = time.perf_counter()
    try:
        rows = aiter_rows(args.gpu, probe=args.probe)
    except AsmEvoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    out(f"built {len(rows)} rows (cu_num {CU_NUM[args.gpu]}) in {time.perf_counter() - t0:.1f} s")
    out("")
    out(f"{'table':24s} {'rows':>5s} {'fit':>5s} {'heldout':>7s} {'runnable':>8s} {'reason':>7s} {'noted':>6s}")
    for table in dict.fromkeys(r.table for r in rows):
        t = [r for r in rows if r.table == table]
        out(f"{table:24s} {len(t):5d} {sum(r.split == 'fit' for r in t):5d} {sum(r.split == 'heldout' for r in t):7d} "
            f"{sum(bool(r.launch and not r.reason) for r in t):8d} {sum(bool(r.reason) for r in t):7d} "
            f"{sum(bool(r.note) for r in t):6d}")
    out("")
    out("rows with a reason:")
    for (table, reason), n in collections.Counter((r.table, r.reason) for r in rows if r.reason).items():
        out(f"  {n:3d}  {table}: {reason}")
    out("notes:")
    for (table, note), n in collections.Counter((r.table, r.note.split(':')[0] if r.note.startswith('invalid')
                                                 else r.note) for r in rows if r.note).items():
        out(f"  {n:3d}  {table}: {note}")

    runnable = [r for r in rows if r.launch and not r.reason]
    if args.limit:
        runnable = runnable[:args.limit]
    per_family: dict[str, list[float]] = collections.defaultdict(list)
    bad, idle = [], []
    for i, r in enumerate(runnable):
        t = time.perf_counter()
        run = run_row(r)
        per_family[r.family].append(time.perf_counter() - t)
        extra = unexpected_findings(r, run)
        if extra:
            bad.append(f"  {r.table} {r.kernel} {r.shape}: {collections.Counter(f['kind'] for f in extra)}")
        if not written_elements(run, r.output):
            idle.append(f"  {r.table} {r.kernel} {r.shape}: the sampled workgroups stored nothing")
        if (i + 1) % 10 == 0:
            print(f"  ran {i + 1}/{len(runnable)}", file=sys.stderr, flush=True)
    out("")
    out(f"K0 on {args.probe} sampled workgroups of each of {len(runnable)} runnable rows (sparse memory, "
        f"checked emulator):")
    out(f"{'family':22s} {'rows':>5s} {'total s':>8s} {'median s':>9s} {'max s':>7s}")
    for fam, ts in per_family.items():
        ts = sorted(ts)
        out(f"{fam:22s} {len(ts):5d} {sum(ts):8.1f} {ts[len(ts) // 2]:9.2f} {ts[-1]:7.2f}")
    out(f"rows with findings beyond their family's known_findings: {len(bad)}")
    for line in bad + [f"rows whose sampled workgroups stored nothing: {len(idle)}"] + idle:
        out(line)
    return 1 if bad else 0


if __name__ == "__main__":
    def path(argv: list[str]) -> Path:
        args = parse_args(argv)
        return record.default_path(__file__, args.gpu, args.limit and f"limit{args.limit}")
    sys.exit(record.main_recorded(main, path))
