"""benchmarks/record.py: the header every record starts with, the teed output, the exit footer."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks import record  # noqa: E402


def test_recording_tees_stdout_under_the_header_and_ends_with_the_exit(tmp_path, capsys):
    out = tmp_path / "r.txt"
    with record.recording(out, ["python", "bench.py", "--x", "a b"]) as footer:
        print("figure 1.25x")
        footer(0)
    assert "figure 1.25x" in capsys.readouterr().out
    lines = out.read_text().splitlines()
    header = record.read_header(out)
    assert list(header) == list(record.HEADER_KEYS)
    assert header["command"] == "python bench.py --x 'a b'"
    assert header["commit"].split()[1] in ("(clean)", "(dirty:")
    assert subprocess.run(["git", "cat-file", "-e", header["commit"].split()[0]], cwd=ROOT).returncode == 0
    assert header["machine"].startswith(f"{os.cpu_count()} CPUs, ")
    assert lines[4] == "figure 1.25x" and lines[5].startswith("# exit 0 after ")


def test_a_failing_benchmark_leaves_the_previous_record(tmp_path):
    out = tmp_path / "r.txt"
    out.write_text("old\n")
    with pytest.raises(RuntimeError):
        with record.recording(out, ["python", "bench.py"]):
            print("partial")
            raise RuntimeError("boom")
    assert out.read_text() == "old\n" and not list(tmp_path.glob("*.partial"))


def test_default_paths_name_non_default_runs():
    script = str(ROOT / "benchmarks" / "verification" / "mutations.py")
    assert record.default_path(script) == ROOT / "benchmarks" / "verification" / "mutations.txt"
    assert record.default_path(script, "seed1", None, False, "19_ReLU,23_Softmax").name == \
        "mutations-seed1-19_ReLU_23_Softmax.txt"
    assert record.default_path(script, stem="x").name == "x.txt"


def test_record_argument_is_taken_out_of_the_script_arguments():
    assert record.split_record_arg(["--seed", "1", "--record", "f.txt"]) == ("f.txt", ["--seed", "1"])
    assert record.split_record_arg(["--record=-", "a"]) == ("-", ["a"])
    assert record.split_record_arg(["a"]) == (None, ["a"])


def test_a_command_is_recorded_with_its_exit_status(tmp_path):
    out = tmp_path / "cmd.txt"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "record.py"), str(out), "--",
                           "python", "-c", "print('7/9 ok'); raise SystemExit(3)"], capture_output=True, text=True)
    assert proc.returncode == 3 and "7/9 ok" in proc.stdout
    text = out.read_text()
    assert "# command: python -c " in text and "7/9 ok\n# exit 3 after " in text
