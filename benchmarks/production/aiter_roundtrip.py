"""Round-trip every gfx942 and gfx950 code object of the AITer wheel (amd-aiter on PyPI).

Fetches the pinned wheel (asmevo.calibrate.aiter_wheel: `pip download` into benchmarks/.cache/aiter,
gitignored, sha256-checked), extracts the code objects whose ELF flags name each processor, round-trips
them in a process pool (one per CPU, --batch files per task), and prints per processor the toolchain
that served it (disassembly) and who assembled and linked (`asmevo.toolchain.find_assembler`),
identical / patch-only / failed counts (with the reasons and notes), wall time and
CPU-seconds (this process, the workers and their LLVM tools). Exit 0 iff none failed.

    python benchmarks/production/aiter_roundtrip.py [--processor all|gfx942|gfx950] [--jobs N] [--batch 16]
        [--limit N] [--json out.json]

`--limit N` takes the first N files of each processor in path order (a deterministic sample); `--json
out.json` writes the per-file results to out-PROCESSOR.json.
Record: aiter_roundtrip[-PROCESSOR][-limitN].txt beside this script (benchmarks/record.py).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import resource
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from asmevo.calibrate.aiter_wheel import VERSION, extract, fetch_wheel  # noqa: E402
from asmevo.errors import AsmEvoError  # noqa: E402
from asmevo.roundtrip import roundtrip_many  # noqa: E402
from asmevo.toolchain import find_assembler, find_toolchain  # noqa: E402
from asmevo.triton_llvm import TritonLLVM  # noqa: E402
from benchmarks import record  # noqa: E402

PROCESSORS = ("gfx942", "gfx950")


def _cpu_seconds() -> float:
    """CPU time of this process and its finished children (the workers and their LLVM tools)."""
    return sum(u.ru_utime + u.ru_stime for u in (resource.getrusage(resource.RUSAGE_SELF),
                                                 resource.getrusage(resource.RUSAGE_CHILDREN)))


def _batch(paths: list[Path]) -> list[dict]:
    return [r.as_dict() for r in roundtrip_many(paths)]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processor", choices=("all", *PROCESSORS), default="all")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--batch", type=int, default=16, help="files per worker task")
    parser.add_argument("--limit", type=int, default=0, help="only the first N files of each processor")
    parser.add_argument("--json", help="write per-file results here")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    failed = 0
    for processor in PROCESSORS if args.processor == "all" else (args.processor,):
        try:
            wheel = fetch_wheel()
            toolchain = find_toolchain(processor)
            assembler = find_assembler(processor)
        except AsmEvoError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        files = extract(wheel, processor)
        if args.limit:
            files = files[:args.limit]
        print(f"{processor}: LLVM {toolchain.major} from {toolchain.origin}; assembled and linked by "
              + (f"Triton {assembler.info.triton}'s LLVM {assembler.info.major} (a resident worker per process)"
                 if isinstance(assembler, TritonLLVM) else f"the tools of LLVM {assembler.major} from {assembler.origin}"))
        if isinstance(assembler, TritonLLVM):
            print("(CPU-seconds below leave out the Triton LLVM workers: they are never waited for)")
        results = _roundtrip_all(files, args, processor)
        failed += sum(r["status"] == "failed" for r in results)
        if args.json:
            out = Path(args.json)
            out.with_name(f"{out.stem}-{processor}{out.suffix}").write_text(json.dumps(results, indent=1) + "\n")
    return 1 if failed else 0


def _roundtrip_all(files: list[Path], args: argparse.Namespace, processor: str) -> list[dict]:
    """Round-trip `files` in the pool and print the summary; the per-file results."""
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
    notes = collections.Counter(re.sub(r"^\d+ ", "N ", note.split(" at ")[0]) for r in results for note in r["notes"])
    raw_files = sum(any("kept as raw words" in note for note in r["notes"]) for r in results)
    print(f"amd-aiter {VERSION}: {len(files)} {processor} code objects in {elapsed:.1f}s wall with {args.jobs} "
          f"workers, {cpu:.0f} CPU-seconds; per file {elapsed / n:.3f}s wall, {cpu / n:.3f} CPU-s "
          f"(load average {os.getloadavg()[0]:.1f})")
    print(f"identical {counts['identical']}, patch-only {counts['patch-only']}, failed {counts['failed']}; "
          f"{raw_files} with instructions kept as raw .long words")
    for reason, k in reasons.most_common():
        print(f"  {k:5d}  {reason}")
    for note, k in notes.most_common(10):
        print(f"  note {k:5d}  {note}")
    for r in results:
        if r["status"] == "failed":
            print(f"FAILED {r['path']}: {r['reason']}")
    return results


def record_path(argv: list[str]) -> Path:
    args = parse_args(argv)
    return record.default_path(__file__, None if args.processor == "all" else args.processor,
                               f"limit{args.limit}" if args.limit else None)


if __name__ == "__main__":
    sys.exit(record.main_recorded(main, record_path))
