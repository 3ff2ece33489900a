"""Benchmark records: what a benchmark printed, in a file under benchmarks/, headed by what made it.

A record is a text file whose first lines are

    # commit: 0123456789ab (clean)        or (dirty: uncommitted changes to code), or a note for old records
    # command: python benchmarks/emulator/bench_emulator.py --repeat 3
    # machine: 2 CPUs, Intel(R) Xeon(R) Processor, Linux x86_64; load average 0.4 at start
    # date: 2026-12-01 15:30 UTC

followed by everything the benchmark printed on stdout and a last line `# exit 0 after 12.3 s`.
README.md and docs cite records by path (see benchmarks/README.md); `benchmarks/figures.py` checks them.

A benchmark script ends with

    if __name__ == "__main__":
        sys.exit(record.main_recorded(main, record.default_path(__file__, args...)))

and `main(argv)` stays a plain function (tests call it without writing a record). `--record FILE` on the
script's command line writes the record elsewhere, `--record -` writes none. Commands that are not Python
scripts (the `asmevo` CLI) are recorded by running this module:

    python benchmarks/record.py benchmarks/kernelbench/suite_check.txt -- python -m asmevo.cli suite check kernelbench
"""
from __future__ import annotations

import os
import platform
import re
import shlex
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, TextIO

ROOT = Path(__file__).resolve().parents[1]
HEADER_KEYS = ("commit", "command", "machine", "date")


# Changes that cannot alter what a benchmark measures: tests, prose, and the records themselves (the text records
# and the calibration runs' `--json` outputs).
NOT_CODE = (":(exclude)tests", ":(exclude)docs", ":(exclude)*.md", ":(exclude)benchmarks/*.txt",
            ":(exclude)benchmarks/calibration/*.json")


def commit() -> str:
    """HEAD's short hash and whether the work tree's code differs from it (untracked files, tests, prose and
    records aside)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()

    try:
        head = git("rev-parse", "--short=12", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no", "--", ".", *NOT_CODE)
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return f"{head} ({'dirty: uncommitted changes to code' if dirty else 'clean'})"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU model"


def machine() -> str:
    load = f"; load average {os.getloadavg()[0]:.1f} at start" if hasattr(os, "getloadavg") else ""
    return f"{os.cpu_count()} CPUs, {cpu_model()}, {platform.system()} {platform.machine()}{load}"


def header(command: list[str]) -> str:
    date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    return (f"# commit: {commit()}\n# command: {shlex.join(command)}\n# machine: {machine()}\n"
            f"# date: {date}\n")


def read_header(path: Path) -> dict[str, str]:
    """The `# key: value` lines at the top of a record."""
    out: dict[str, str] = {}
    for line in path.read_text().splitlines():
        m = re.match(r"#\s*(\w+):\s*(.*)", line)
        if not m:
            break
        out.setdefault(m.group(1), m.group(2))
    return out


def default_path(script: str, *params: object, stem: str | None = None) -> Path:
    """`<stem>[-<params>].txt` beside the script (stem: the script's); params name a run's non-default
    settings, and falsy ones are left out."""
    here = Path(script).resolve()
    tag = "-".join(re.sub(r"[^A-Za-z0-9_.]+", "_", str(p)).strip("_") for p in params if p)
    return here.with_name((stem or here.stem) + (f"-{tag}" if tag else "") + ".txt")


class _Tee:
    def __init__(self, *streams: TextIO):
        self.streams = streams

    def write(self, text: str) -> int:
        for s in self.streams:
            s.write(text)
        return len(text)

    def flush(self) -> None:
        for s in self.streams:
            s.flush()

    def isatty(self) -> bool:
        """Never a terminal: output redrawn in place would garble the record."""
        return False


@contextmanager
def recording(path: Path, command: list[str]) -> Iterator[Callable[[int], None]]:
    """Tee stdout into `path` after the header; the yielded function writes the exit footer. The record
    replaces `path` only when the block finishes (an exception leaves the previous record in place)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".partial")
    start = time.perf_counter()
    with tmp.open("w") as f:
        f.write(header(command))
        f.flush()
        saved = sys.stdout
        sys.stdout = _Tee(saved, f)
        try:
            yield lambda code: f.write(f"# exit {code} after {time.perf_counter() - start:.1f} s\n")
        except BaseException:
            sys.stdout = saved
            f.close()
            tmp.unlink()
            raise
        sys.stdout = saved
    tmp.replace(path)
    print(f"record: {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}", file=sys.stderr)


def split_record_arg(argv: list[str]) -> tuple[str | None, list[str]]:
    """(`--record` value or None, the other arguments)."""
    rest, value, i = [], None, 0
    while i < len(argv):
        if argv[i] == "--record" and i + 1 < len(argv):
            value, i = argv[i + 1], i + 2
        elif argv[i].startswith("--record="):
            value, i = argv[i].split("=", 1)[1], i + 1
        else:
            rest.append(argv[i])
            i += 1
    return value, rest


def main_recorded(main: Callable[[list[str]], int | None], default: Path | Callable[[list[str]], Path]) -> int:
    """Run `main(argv)` with sys.argv's arguments, recording its stdout (see the module docstring)."""
    chosen, argv = split_record_arg(sys.argv[1:])
    if chosen == "-":
        return main(argv) or 0
    path = Path(chosen) if chosen else default(argv) if callable(default) else default
    script = Path(sys.argv[0]).resolve()
    shown = str(script.relative_to(ROOT)) if script.is_relative_to(ROOT) else str(script)
    with recording(path, ["python", shown, *argv]) as footer:
        code = main(argv) or 0
        sys.stdout.flush()
        footer(code)
    return code


def run_command(path: Path, command: list[str]) -> int:
    """Run `command` from the repository root, its stdout recorded in `path` (stderr passes through).
    A leading `python` runs this interpreter, so `python -m asmevo.cli` is this checkout's CLI."""
    run = [sys.executable, *command[1:]] if command[0] == "python" else command
    with recording(path, command) as footer:
        proc = subprocess.Popen(run, cwd=ROOT, stdout=subprocess.PIPE, text=True)
        for line in proc.stdout:
            sys.stdout.write(line)
        code = proc.wait()
        footer(code)
    return code


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) < 3 or args[1] != "--":
        sys.exit("usage: python benchmarks/record.py RECORD.txt -- COMMAND [ARGS...]")
    sys.exit(run_command(Path(args[0]), args[2:]))
