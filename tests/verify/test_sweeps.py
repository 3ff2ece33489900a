"""The survivor sweeps of benchmarks/verification: they find differences where there are some."""
import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "verification"


def _load(name: str):
    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_shape_sweep_tells_a_breaking_edit_from_a_survivor(capsys):
    sweep = _load("shape_sweep")
    relu_min = "0x1788=v_max_f32_e32 v0, 0, v0=v_min_f32_e32 v0, 0, v0"  # relu becomes min(x, 0)
    assert sweep.main(["19_ReLU", "--edit", relu_min, "--dims", "1", "4..6"]) == 1
    assert "DIFFER (1, 5)" in capsys.readouterr().out
    survivor = "0x173c=s_andn2_b64 exec, exec, s[8:9]=s_andn2_b64 exec, s[8:9], exec"
    assert sweep.main(["19_ReLU", "--edit", survivor, "--dims", "1", "1..12"]) == 0
    assert "12 shapes, 0 differing" in capsys.readouterr().out


def test_softplus_sweep_runs_both_survivors_and_the_log1p_patch(capsys):
    sweep = _load("softplus_sweep")
    for mutation in ("0x1d98", "0x1fac"):
        assert sweep.main(["--mutation", mutation, "--range", "0x3f800000:0x3f800400", "--chunk", "1024"]) == 0
        assert sweep.main(["--log1p", "--mutation", mutation, "--range", "0x40000000:0x40000400"]) == 0
    out = capsys.readouterr().out
    assert "1024 log1p inputs through element 2 (0x1fac), 0 differing" in out
