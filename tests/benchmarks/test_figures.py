"""benchmarks/figures.py: README.md and docs/*.md figures resolve to their records, and the checker finds
stale, unlinked and unbacked figures."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks import figures  # noqa: E402

HEAD = ("# commit: {commit}\n# command: python bench.py\n# machine: 2 CPUs, some CPU\n# date: 2026-12-01 10:00 UTC\n")
HEAD_COMMIT = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True,
                             text=True).stdout.strip()


def test_every_readme_and_docs_figure_names_its_record_and_agrees_with_it():
    assert figures.check_files(figures.default_files()) == []


@pytest.fixture
def site(tmp_path):
    """check(markdown) -> the checker's problems for a README.md beside benchmarks/run.txt (paths relative)."""
    bench = tmp_path / "benchmarks"
    bench.mkdir()
    (bench / "run.txt").write_text(HEAD.format(commit=f"{HEAD_COMMIT} (clean)") +
                                   "improved 29/30; geomean 1.2088x; took 5224.8 s; 6.712e+07 lane-instr/s; 97.43%\n")

    def check(markdown: str) -> list[str]:
        (tmp_path / "README.md").write_text(markdown)
        return [p.replace(f"{tmp_path}/", "") for p in figures.check_files([tmp_path / "README.md"], bench)]
    return check, bench


def test_figures_rounded_as_written_resolve(site):
    check, _ = site
    assert check("- Run ([record](benchmarks/run.txt)): 29/30, 1.209x, 5225 s, 6.7e7 per second, 97.4 %.\n") == []


def test_a_stale_figure_is_named(site):
    check, _ = site
    assert check("\nRun ([record](benchmarks/run.txt)): 1.21x and 5230 s,\n28/30.\n") == [
        "README.md:2: 5230 s is not in benchmarks/run.txt", "README.md:2: 28/30 is not in benchmarks/run.txt"]


def test_a_figure_without_a_link_and_a_broken_record(site):
    check, bench = site
    assert check("Took 35 s; `35 s` in code is not a figure.\n") == [
        "README.md:1: 35 s name no record (link the file they come from)"]
    assert check("Swept every shape ([record](benchmarks/gone.txt)).\n") == [
        "README.md:1: links benchmarks/gone.txt, which does not exist"]
    (bench / "bare.txt").write_text("29/30\n")
    assert "has no commit, command, machine, date line" in check("29/30 ([r](benchmarks/bare.txt))\n")[0]
    dirty = f"{HEAD_COMMIT} (dirty: uncommitted changes to code)"
    (bench / "dirty.txt").write_text(HEAD.format(commit=dirty) + "29/30\n")
    assert "uncommitted tree" in check("29/30 ([r](benchmarks/dirty.txt))\n")[0]
    (bench / "ghost.txt").write_text(HEAD.format(commit="0123456789ab (clean)") + "29/30\n")
    assert "which this repository does not have" in check("29/30 ([r](benchmarks/ghost.txt))\n")[0]


def test_figure_shapes():
    assert figures.figures("1.209x, 29/30, 1.1 %, 97.4%, 74 ms, 296 CPU-s, 0.15-2.3 s, 6.7e7, 18 MiB") == [
        "1.209x", "29/30", "1.1 %", "97.4%", "74 ms", "296 CPU-s", "0.15-2.3 s", "6.7e7", "18 MiB"]
    assert figures.figures("8x the budget, 2^31 - 1024, 64 KiB, gfx942, `1.5x`, 16 cycles") == []


def test_a_record_speedup_written_with_a_leading_x_matches_but_hex_does_not():
    assert figures.matches("1.365", "40_Matmul ok 5523.7 model_us x1.365 (0/9 cached)")
    assert not figures.matches("1", "s_cbranch_execz 0x1")
