"""A suite run on the hip device, through real hip-python into the HIP runtime stub: verification is
confirmed on the GPU and the bench shape timed in ms; a candidate that faults on the GPU is a `crashed`
verdict for its kernel while the run finishes the others; cached hardware results are keyed by the
hardware identity, so another machine (here: another GPU target) recomputes them while the
emulator-only stages stay cached; with no usable GPU
the CLI stops before Prefect starts, with one error line."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml


REPO = Path(__file__).resolve().parents[2]
PROBLEMS = ("19_ReLU", "20_LeakyReLU")


def small_suite(out: Path) -> Path:
    """Two KernelBench problems with one verify shape each, and a bench shape small enough for the stub."""
    out.mkdir(parents=True)
    (out / "suite.yaml").write_text(yaml.safe_dump({"name": "hip-small", "description": "test", "problems": list(PROBLEMS)}))
    for name in PROBLEMS:
        src, dst = REPO / "benchmarks" / "kernelbench" / name, out / name
        shutil.copytree(src, dst)
        problem = yaml.safe_load((src / "problem.yaml").read_text())
        problem["shapes"] = [s for s in problem["shapes"] if s["name"] in ("v_3x99", "h_5x777", "bench")]
        (dst / "problem.yaml").write_text(yaml.safe_dump(problem))
        (dst / "launch" / "bench.json").write_text((src / "launch" / "v_7x333.json").read_text())
    return out


@pytest.fixture(scope="module")
def flows(prefect_api):
    from flows import suite

    return suite


def test_suite_on_hip(flows, stub_hip, tmp_path):
    suite = small_suite(tmp_path / "suite")
    stub = stub_hip(fault="relu_f32:2")  # K1 (the rebuilt ReLU) faults in every child that runs it
    run = flows.run_suite(str(suite), device="hip", progress=False)
    from flows.runs import load_run

    rows = {r["kernel"]: r for r in load_run(run["run_id"]).results()}
    relu, leaky = rows["19_ReLU"], rows["20_LeakyReLU"]
    assert relu["roundtrip"] == "crashed" and relu["status"] == "error"
    assert "K1 crashed on hardware: child killed by SIGSEGV" in relu["error"]
    assert leaky["status"] == "ok" and leaky["roundtrip"] == "equivalent" and leaky["unit"] == "ms"
    assert run["config"]["hardware"]["gpu"] == "AMD Instinct MI300X (stub)"
    launched = {line.split()[1] for line in stub.calls("hipModuleLaunchKernel")}
    assert launched == {"relu_f32", "leaky_relu_kernel"}

    stub_hip(arch="gfx942:sramecc-:xnack-")  # another machine
    other = flows.run_suite(str(suite), device="hip", progress=False)
    assert other["config"]["hardware"]["target"] == "gfx942:sramecc-:xnack-"
    # recover, rebuild and profile are cached; verify and time (hardware results) are recomputed
    assert other["cache"]["hits"] == 3 * len(PROBLEMS)


def test_cli_without_a_gpu_stops_before_prefect(stub_hip, tmp_path):
    stub_hip(gpus=0)
    suite = small_suite(tmp_path / "suite")
    done = subprocess.run([sys.executable, "-m", "asmevo.cli", "suite", "run", str(suite), "--device", "hip"],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("error: hip device unavailable: no GPU is visible to HIP") and \
        done.stderr.count("\n") == 1
