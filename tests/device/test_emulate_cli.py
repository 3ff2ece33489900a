"""`asmevo emulate`: bad input exits 2 with one line; end to end on vadd once the emulator exists."""
from __future__ import annotations

import json

import numpy as np
import pytest

from asmevo.cli import main

VADD = {"kernel": "vadd", "grid": [4, 1, 1], "block": [256, 1, 1], "dynamic_lds": 0, "seed": 3,
        "args": [{"buffer": "a", "dtype": "float32", "shape": [1000], "init": "random"},
                 {"buffer": "b", "dtype": "float32", "shape": [1000], "init": "random"},
                 {"buffer": "c", "dtype": "float32", "shape": [1000], "init": "zeros"},
                 {"scalar": 1000, "dtype": "int32"}]}


def write_spec(tmp_path, spec, name="launch.json"):
    path = tmp_path / name
    path.write_text(json.dumps(spec))
    return path


@pytest.mark.parametrize("spec, message", [
    ({**VADD, "args": VADD["args"][:3]}, "kernel vadd takes 4 arguments"),
    ({**VADD, "kernel": "vsub"}, "no kernel named 'vsub'"),
    ({**VADD, "grid": "big"}, "grid must be a list"),
])
def test_bad_input_exits_2_with_one_line(kernels, tmp_path, capsys, spec, message):
    code = main(["emulate", str(kernels["hip5"]), "--launch", str(write_spec(tmp_path, spec)),
                 "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and message in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_missing_files_exit_2(kernels, tmp_path, capsys):
    assert main(["emulate", str(tmp_path / "none.co"), "--launch", str(write_spec(tmp_path, VADD)),
                 "--out", str(tmp_path / "o")]) == 2
    assert main(["emulate", str(kernels["hip5"]), "--launch", str(tmp_path / "none.json"),
                 "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert "none.co: no such file" in err[0] and "none.json: no such file" in err[1]


def test_emulate_vadd_end_to_end(kernels, tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["emulate", str(kernels["hip5"]), "--launch", str(write_spec(tmp_path, VADD)), "--out", str(out)])
    assert code == 0, capsys.readouterr()
    a, b, c = (np.load(out / f"{n}.npy") for n in "abc")
    assert c.dtype == np.float32 and np.array_equal(c, a + b)
    report = json.loads((out / "report.json").read_text())
    assert report["kernel"] == "vadd" and report["grid"] == [4, 1, 1] and report["block"] == [256, 1, 1]
    assert report["ok"] and report["findings"] == [] and report["waves"] == 16
    assert report["instructions"] > 0 and report["lane_instructions"] >= report["instructions"]
    assert report["wall_time_s"] >= 0 and set(report["buffers"]) == {"a", "b", "c"}
