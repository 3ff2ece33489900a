"""Check that every figure in README.md and docs/*.md names its record and agrees with it.

The convention (benchmarks/README.md): a paragraph, list item or table row that quotes a measured
figure links the file it comes from, `[label](benchmarks/agents/search_kernelbench.txt)` (a record under
benchmarks/, see benchmarks/record.py) or, for a design constant, the source file that sets it. Every
figure in that block must occur in one of the files it links, at the precision written: `1.209x` matches
1.2088, `5225 s` matches 5224.8, `188/193` must appear as such. A figure in a block that links no file
is an error, and so is a linked record without its header or made from an uncommitted tree.

Figures are the numbers written the way measurements are: a speedup with a decimal point (`1.21x`), a
ratio (`29/30`), a percentage, a duration (`35 s`, `74 ms`, `296 CPU-s`, `0.15-2.3 s`), a number in
e-notation (`6.7e7`), or a size in MiB or kB. Numbers in code spans and fenced code are not figures.

    python benchmarks/figures.py [FILE.md ...]      # default: README.md and docs/*.md; exit 1 on problems
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.record import HEADER_KEYS, read_header  # noqa: E402

_NUM = r"\d+(?:\.\d+)?"
FIGURE = re.compile(
    rf"(?<![\w.^/-])(?:"
    rf"(?P<ratio>\d+/\d+)(?![\w/])"
    rf"|(?P<sci>{_NUM}e[+-]?\d{{1,3}})\b"      # at most 3 exponent digits: 8e11764 is a commit
    rf"|(?P<speedup>\d+\.\d+)x\b"
    rf"|(?P<lo>{_NUM})(?:\s?-\s?(?P<hi>{_NUM}))?\s?(?:%|(?:s|ms|min|CPU-s|MiB|kB)\b)"
    rf")")
LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)\)")
# A number in a record: not inside a word or hex literal, but a speedup may be written `x1.365`.
RECORD_NUMBER = re.compile(r"(?:(?<=\bx)|(?<![\w.]))\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?")


@dataclass(frozen=True)
class Block:
    """A paragraph, list item, table row or heading of a Markdown file."""

    path: Path
    line: int
    text: str

    @property
    def where(self) -> str:
        return f"{shown(self.path)}:{self.line}"


def shown(path: Path) -> str:
    return str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


def blocks(path: Path) -> list[Block]:
    """The file's blocks outside fenced code; a list item or table row starts a block of its own."""
    out: list[Block] = []
    lines: list[str] = []
    start, fenced = 0, False

    def flush() -> None:
        if lines:
            out.append(Block(path, start, "\n".join(lines)))
            lines.clear()

    for n, line in enumerate(path.read_text().splitlines(), 1):
        if line.lstrip().startswith("```"):
            flush()
            fenced = not fenced
            continue
        if fenced:
            continue
        if not line.strip():
            flush()
            continue
        if re.match(r"\s*([-*]|\d+\.)\s|\s*\||#", line):
            flush()
        if not lines:
            start = n
        lines.append(line)
    flush()
    return out


def prose(text: str) -> str:
    """The block's text without code spans, HTML comments and link targets (link labels stay)."""
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    text = re.sub(r"`[^`]*`", "", text)
    return LINK.sub(lambda m: m.group(1), text)


def figures(text: str) -> list[str]:
    return [m.group(0) for m in FIGURE.finditer(prose(text))]


def linked_files(block: Block) -> list[Path]:
    """Files the block links to (relative to its Markdown file), anchors dropped; URLs are not files."""
    out = []
    for _, target in LINK.findall(re.sub(r"`[^`]*`", "", block.text)):
        if "://" in target or target.startswith("#"):
            continue
        out.append((block.path.parent / target.split("#")[0]).resolve())
    return out


def is_record(path: Path, bench: Path) -> bool:
    return path.is_relative_to(bench) and path.suffix in (".txt", ".md") and path.name != "README.md"


def _decimals(number: str) -> int:
    mantissa = number.lower().split("e")[0]
    return len(mantissa.split(".")[1]) if "." in mantissa else 0


def matches(value: str, text: str) -> bool:
    """Whether `text` holds a number that rounds to `value` at the precision `value` is written with."""
    want = float(value)
    exponent = int(value.lower().split("e")[1]) if "e" in value.lower() else 0
    half = 0.5 * 10.0 ** (exponent - _decimals(value))
    for token in RECORD_NUMBER.findall(text):
        try:
            got = float(token.replace(",", ""))
        except ValueError:
            continue
        if abs(got - want) <= half * (1 + 1e-9):
            return True
    return False


def found(figure: str, text: str) -> bool:
    m = FIGURE.fullmatch(figure)
    if m.group("ratio"):
        a, b = m.group("ratio").split("/")
        return re.search(rf"(?<![\d.]){a}\s*/\s*{b}(?![\d.])", text) is not None
    values = [m.group("sci") or m.group("speedup") or m.group("lo")] + ([m.group("hi")] if m.group("hi") else [])
    return all(matches(v, text) for v in values)


def check_record(path: Path) -> list[str]:
    header = read_header(path)
    missing = [k for k in HEADER_KEYS if k not in header]
    if missing:
        return [f"{shown(path)} has no {', '.join(missing)} line in its header (benchmarks/record.py)"]
    problems = []
    commit = header["commit"]
    if "dirty" in commit:
        problems.append(f"{shown(path)} was made from an uncommitted tree ({commit}); re-run it clean")
    sha = commit.split()[0]
    if not re.fullmatch(r"[0-9a-f]{7,40}", sha):
        problems.append(f"{shown(path)}: its commit line does not start with a commit hash")
    elif _git("cat-file", "-e", f"{sha}^{{commit}}") is False:
        problems.append(f"{shown(path)} names commit {sha}, which this repository does not have")
    return problems


def _git(*args: str) -> bool | None:
    """True/False: the git command's success; None without git or outside a checkout."""
    try:
        inside = subprocess.run(["git", "rev-parse", "--git-dir"], cwd=ROOT, capture_output=True)
        if inside.returncode:
            return None
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True).returncode == 0
    except OSError:
        return None


def check_files(paths: list[Path], bench: Path = ROOT / "benchmarks") -> list[str]:
    """Every problem with the figures of `paths`, one line each (empty: all figures resolve); linked files
    under `bench` are records, and every linked file must exist."""
    problems: list[str] = []
    checked: set[Path] = set()
    for path in paths:
        for block in blocks(path):
            figs, files = figures(block.text), linked_files(block)
            if figs and not files:
                problems.append(f"{block.where}: {', '.join(figs)} name no record (link the file they come from)")
            texts = []
            for f in files:
                if not f.is_file():
                    problems.append(f"{block.where}: links {shown(f)}, which does not exist")
                    continue
                if is_record(f, bench) and f not in checked:
                    checked.add(f)
                    problems += check_record(f)
                texts.append(f.read_text())
            for fig in figs:
                if texts and not any(found(fig, t) for t in texts):
                    problems.append(f"{block.where}: {fig} is not in {', '.join(shown(f) for f in files)}")
    return problems


def default_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path, help="Markdown files (default: README.md and docs/*.md)")
    files = [f.resolve() for f in ap.parse_args(argv).files]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        print(f"figures.py: no such file: {', '.join(missing)}", file=sys.stderr)
        return 2
    problems = check_files(files or default_files())
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
