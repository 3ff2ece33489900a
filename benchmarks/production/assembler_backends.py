"""Triton's LLVM worker against the subprocess tools: same recovery, same rebuilt bytes, time per rebuild.

For each code object of a set (KernelBench's 30 gfx942 objects, or the pinned amd-aiter wheel's gfx942 or
gfx950 objects), recover it and rebuild the recovered source once with the toolchain's tools run per call
(ASMEVO_ASSEMBLER=tools: Debian's llvm-mc-19 / ld.lld-19 for gfx942, zig's clang -cc1as / ld.lld 22 for
gfx950) and once with Triton's LLVM in its resident worker (ASMEVO_ASSEMBLER=triton). An object is `same`
when both recoveries give the same source and recovery.json and the rebuilt code objects are equal but for
the linker's `.comment` (`asmevo.codeobj.elf.without_linker_comment`). Prints the counts, every
difference, and per backend the mean and median wall time of a recovery, of a rebuild (`rebuild_source`),
and of its assemble + link calls alone (caches cleared before each), plus the worker's start-up, paid once
per process. Runs in a process pool (--jobs); exit 0 iff every object is `same`.

    python benchmarks/production/assembler_backends.py --set kernelbench|aiter-gfx942|aiter-gfx950
        [--jobs N] [--limit N]

Record: assembler_backends-{kernelbench,aiter_gfx942,aiter_gfx950}[-limitN].txt beside this script (benchmarks/record.py).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from asmevo.calibrate.aiter_wheel import VERSION, extract, fetch_wheel  # noqa: E402
from asmevo.codeobj.elf import CodeObject, without_linker_comment  # noqa: E402
from asmevo.errors import AsmEvoError  # noqa: E402
from asmevo.isa import assemble as asm  # noqa: E402
from asmevo.rebuild import rebuild_source  # noqa: E402
from asmevo.recover import recover  # noqa: E402
from asmevo.toolchain import find_assembler, find_toolchain, triton_backend  # noqa: E402
from benchmarks import record  # noqa: E402

SETS = ("kernelbench", "aiter-gfx942", "aiter-gfx950")
BACKENDS = ("tools", "triton")


def files_of(name: str) -> list[Path]:
    if name == "kernelbench":
        return sorted((ROOT / "benchmarks" / "kernelbench").glob("*/kernel.co"))
    return extract(fetch_wheel(), name.split("-", 1)[1])


def _cold() -> None:
    asm._assemble.cache_clear()
    asm._link.cache_clear()


def _one(path: Path, backend: str) -> dict:
    """Recover and rebuild `path` with `backend`: what they gave and how long each step took."""
    os.environ["ASMEVO_ASSEMBLER"] = backend
    _cold()
    start = time.perf_counter()
    try:
        k0 = CodeObject.from_path(path)
        rec = recover(path, code_object=k0)
        recovered = time.perf_counter()
        _cold()
        rebuilt = rebuild_source(rec.source, rec.info, origin=f"{rec.name}.s")
        done = time.perf_counter()
        _cold()
        asm.link(asm.assemble(rec.source, k0.target), k0.target)
        tools = time.perf_counter() - done
    except AsmEvoError as exc:
        return {"error": str(exc)}
    return {"source": rec.source, "info": json.dumps(rec.info, sort_keys=True, default=str),
            "image": without_linker_comment(rebuilt.data), "recover": recovered - start,
            "rebuild": done - recovered, "assemble_link": tools}


def _compare(path: Path) -> dict:
    got = {backend: _one(path, backend) for backend in BACKENDS}
    tools, triton = got["tools"], got["triton"]
    if "error" in tools or "error" in triton:
        same = tools.get("error") == triton.get("error")
        verdict = "same" if same else f"errors differ: tools {tools.get('error')!r}, triton {triton.get('error')!r}"
    elif tools["source"] != triton["source"]:
        verdict = "recovered source differs"
    elif tools["info"] != triton["info"]:
        verdict = "recovery.json differs"
    elif tools["image"] != triton["image"]:
        verdict = "rebuilt code object differs"
    else:
        verdict = "same"
    times = {backend: {k: got[backend][k] for k in ("recover", "rebuild", "assemble_link") if k in got[backend]}
             for backend in BACKENDS}
    return {"path": str(path), "verdict": verdict, "times": times}


def _batch(paths: list[Path]) -> tuple[float, list[dict]]:
    """The worker's start-up in this process (once), then every comparison."""
    start = time.perf_counter()
    triton, why = triton_backend()
    if triton is None:
        raise SystemExit(f"error: Triton's LLVM is not usable: {why}")
    return time.perf_counter() - start, [_compare(path) for path in paths]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=SETS, required=True)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--limit", type=int, default=0, help="only the first N files (path order)")
    return parser.parse_args(argv)


def _stats(values: list[float]) -> str:
    return f"mean {1000 * statistics.fmean(values):.1f} ms, median {1000 * statistics.median(values):.1f} ms"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        files = files_of(args.set)
    except AsmEvoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    files = files[:args.limit] if args.limit else files
    processor = "gfx950" if args.set.endswith("gfx950") else "gfx942"
    os.environ["ASMEVO_ASSEMBLER"] = "tools"
    tools = find_toolchain(processor)
    os.environ["ASMEVO_ASSEMBLER"] = "triton"
    triton = find_assembler(processor)
    os.environ.pop("ASMEVO_ASSEMBLER")
    print(f"{args.set}{f' (amd-aiter {VERSION})' if args.set != 'kernelbench' else ''}: {len(files)} {processor} "
          f"code objects, {args.jobs} workers")
    print(f"tools:  LLVM {tools.major} from {tools.origin}, a process per assemble and per link")
    print(f"triton: Triton {triton.info.triton}'s LLVM in a resident worker (lld {triton.info.linker}; "
          f"assembler revision {triton.info.assembler_revision})")
    triton.close()
    batches = [files[i::args.jobs] for i in range(args.jobs)]
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        done = list(pool.map(_batch, batches))
    elapsed = time.perf_counter() - start
    results = [r for _, batch in done for r in batch]
    startups = [s for s, _ in done]
    same = sum(r["verdict"] == "same" for r in results)
    print(f"same {same}, different {len(results) - same} ({elapsed:.1f} s wall; load average "
          f"{os.getloadavg()[0]:.1f} at the end)")
    for r in sorted(results, key=lambda r: r["path"]):
        if r["verdict"] != "same":
            print(f"DIFFERENT {r['path']}: {r['verdict']}")
    for backend in BACKENDS:
        timed = [r["times"][backend] for r in results if "rebuild" in r["times"][backend]]
        if not timed:
            continue
        print(f"{backend:7s} recover {_stats([t['recover'] for t in timed])}; rebuild {_stats([t['rebuild'] for t in timed])}; "
              f"assemble + link {_stats([t['assemble_link'] for t in timed])}")
    print(f"triton worker start-up, once per process: {_stats(startups)} ({len(startups)} processes)")
    return 0 if same == len(results) else 1


if __name__ == "__main__":
    def _record_path(argv: list[str]) -> Path:
        args = parse_args(argv)
        return record.default_path(__file__, args.set, f"limit{args.limit}" if args.limit else None)

    sys.exit(record.main_recorded(main, _record_path))
