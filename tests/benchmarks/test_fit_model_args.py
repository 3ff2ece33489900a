"""fit_model.py's arguments: a bad GPU or row count is a one-line usage error, not a traceback; the record is
named after the thinning."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks/calibration/fit_model.py"


@pytest.fixture(scope="module")
def fit_model():
    spec = importlib.util.spec_from_file_location("bench_calibration_fit_model_args", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("argv", [["--per-family", "0"], ["--sample", "-3"], ["--gpu", "mi999x"],
                                  ["--sample", "4", "--per-family", "4"]])
def test_bad_arguments_are_usage_errors(fit_model, argv, capsys):
    with pytest.raises(SystemExit) as exc:
        fit_model.parse_args(argv)
    assert exc.value.code == 2 and "error:" in capsys.readouterr().err


def test_the_record_names_the_thinning(fit_model):
    assert fit_model.record_path(["--gpu", "mi355x", "--per-family", "27"]).name == "fit_model-mi355x-per_family27.txt"
    assert fit_model.record_path(["--gpu", "mi355x", "--sample", "40"]).name == "fit_model-mi355x-sample40.txt"
    assert fit_model.record_path([]).name == "fit_model-mi308x.txt"
