"""Round-trip every gfx942 code object of the AITer wheel (amd-aiter on PyPI).

Fetches the pinned wheel (asmevo.calibrate.aiter_wheel: `pip download` into benchmarks/.cache/aiter,
gitignored, sha256-checked), extracts the code objects whose ELF flags name gfx942, round-trips them in
a process pool (one per CPU; batches of --batch files share an llvm-objdump run), and prints identical /
patch-only / failed counts, wall time and CPU-seconds (this process, the workers and their LLVM
tools). Exit 0 iff none failed.

    python benchmarks/production/aiter_roundtrip.py [--jobs N] [--batch 16] [--limit N] [--json out.json]

Record: aiter_roundtrip[-limitN].txt beside this script (benchmarks/record.py).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from asmevo.calibrate.aiter_wheel import VERSION, AiterWheelError, extract, fetch_wheel  # noqa: E402
from asmevo.roundtrip import roundtrip_many  # noqa: E402
from benchmarks import record  # noqa: E402


def _cpu_seconds() -> float:
    """CPU time of this process and its finished children (the workers and their LLVM tools)."""
    return sum(u.ru_utime + u.ru_stime for u in (resource.getrusage(resource.RUSAGE_SELF),
                                                 resource.getrusage(resource.RUSAGE_CHILDREN)))


def _batch(paths: list[Path]) -> list[dict]:
    return [r.as_dict() for r in roundtrip_many(paths)]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--batch", type=int, default=16, help="files per worker task (one llvm-objdump run)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N files")
    parser.add_argument("--json", help="write per-file results here")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        files = extract(fetch_wheel())
    except AiterWheelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.limit:
        files = files[:args.limit]
    start, cpu0 = time.perf_counter(), _cpu_seconds()
    results = []
    batches = [files[i:i + args.batch] for i in range(0, len(files), args.batch)]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for batch in pool.map(_batch, batches):
            shown = len(results) // 100
            results.extend(batch)
            if len(results) // 100 > shown:
                print(f"  {len(results)}/{len(files)} in {time.perf_counter() - start:.0f}s", file=sys.stderr)
    elapsed = time.perf_counter() - start
    cpu = _cpu_seconds() - cpu0
    n = max(1, len(files))
    counts = collections.Counter(r["status"] for r in results)
    reasons = collections.Counter(r["reason"].split(":")[0] for r in results if r["status"] != "identical")
    notes = collections.Counter(n.split(" at ")[0] for r in results for n in r["notes"])
    print(f"amd-aiter {VERSION}: {len(files)} gfx942 code objects in {elapsed:.1f}s wall with {args.jobs} workers, "
          f"{cpu:.0f} CPU-seconds; per file {elapsed / n:.3f}s wall, {cpu / n:.3f} CPU-s "
          f"(load average {os.getloadavg()[0]:.1f})")
    print(f"identical {counts['identical']}, patch-only {counts['patch-only']}, failed {counts['failed']}")
    for reason, n in reasons.most_common():
        print(f"  {n:5d}  {reason}")
    for note, n in notes.most_common(10):
        print(f"  note {n:5d}  {note}")
    for r in results:
        if r["status"] == "failed":
            print(f"FAILED {r['path']}: {r['reason']}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    return 1 if counts["failed"] else 0


def record_path(argv: list[str]) -> Path:
    limit = parse_args(argv).limit
    return record.default_path(__file__, f"limit{limit}" if limit else None)


if __name__ == "__main__":
    sys.exit(record.main_recorded(main, record_path))
