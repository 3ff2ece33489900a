"""Verification with the hip device, through real hip-python into the HIP runtime stub: the emulator
decides first; only an equivalent candidate runs on the GPU, in an isolated child, and a fault, a hang
or a wrong result there becomes the verdict while the caller goes on (a hang is the same child
failure, cut at the timeout: tests/device/test_hip_timing.py, test_isolated.py)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from asmevo.codeobj import CodeObject
from asmevo.device import DeviceError, get_device
from asmevo.launches import launch_from_dict
from asmevo.verify import verify

REPO = Path(__file__).resolve().parents[2]
K0 = CodeObject.from_path(REPO / "benchmarks/kernelbench/19_ReLU/kernel.co")
K1 = CodeObject(K0.data + b"\0" * 8)
SPEC = {"kernel": "relu_f32", "grid": [2], "block": [256], "seed": 1,
        "args": [{"buffer": "x", "dtype": "float32", "shape": [2048], "init": "random"},
                 {"buffer": "y", "dtype": "float32", "shape": [2048], "init": "zeros"},
                 {"scalar": 2048, "dtype": "int32"}]}
LAUNCH = launch_from_dict(SPEC, label="relu")
PROBE = launch_from_dict({**SPEC, "probe": {"workgroups": 2}}, label="relu-probe")


def run(**kwargs):
    return verify(K0, K1, [LAUNCH], trials=1, special=False, device=get_device("hip"), **kwargs)


def test_equivalent_candidate_is_confirmed_on_the_gpu(stub_hip):
    stub = stub_hip()
    v = verify(K0, K1, [LAUNCH, PROBE], trials=2, special=False, device=get_device("hip"))
    assert v.kind == "equivalent" and "confirmed on GPU 0" in v.reason
    hw = v.evidence["hardware"]
    assert hw["launches"] == ["relu"] and hw["input_sets"] == 2 and hw["gpu"]["gpu"] == "AMD Instinct MI300X (stub)"
    assert len(stub.launches()) == 4  # K0 and K1 on 2 input sets; never the probe
    assert stub.balance() == {"modules": 0, "buffers": 0, "events": 0, "streams": 0}


def test_a_candidate_the_emulator_rejects_never_runs_on_the_gpu(stub_hip):
    stub = stub_hip()
    other = CodeObject.from_path(REPO / "benchmarks/kernelbench/20_LeakyReLU/kernel.co")
    v = verify(K0, other, [LAUNCH], trials=1, device=get_device("hip"))
    assert v.kind == "different" and v.reason.startswith("static check")
    assert stub.launches() == []


@pytest.mark.parametrize("knobs,kind,reason", [
    ({"fault": "relu_f32:2"}, "crashed", "K1 crashed on hardware: child killed by SIGSEGV during K1 on relu"),
    ({"fault": "relu_f32:1"}, "invalid", "K0 crashed on hardware: child killed by SIGSEGV during K0 on relu"),
    ({"wrong": 3}, "different", "hardware confirmation on GPU 0: relu (trial 0 (seed 1)): y[0]: expected 0.0"),
])
def test_hardware_failures_are_verdicts(stub_hip, knobs, kind, reason):
    stub_hip(**knobs)
    v = run()
    assert v.kind == kind and reason in v.reason and v.evidence["stage"] == "hardware"


def test_no_usable_gpu_is_an_error_before_the_emulator_runs(stub_hip):
    stub_hip(arch="gfx90a:sramecc+:xnack-")
    with pytest.raises(DeviceError, match="no GPU can run this code object: code object targets gfx942, GPU 0 is gfx90a"):
        run()


def test_cli_device_flag(stub_hip, tmp_path):
    stub_hip()
    spec = tmp_path / "relu.json"
    spec.write_text(__import__("json").dumps(SPEC))
    k1 = tmp_path / "k1.co"
    k1.write_bytes(K1.data)
    base = [sys.executable, "-m", "asmevo.cli", "verify", str(REPO / "benchmarks/kernelbench/19_ReLU/kernel.co"),
            str(k1), "--launch", str(spec), "--trials", "1", "--no-special"]
    done = subprocess.run([*base, "--device", "hip"], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0 and "confirmed on GPU 0" in done.stdout, done.stderr
    stub_hip(gpus=0)
    done = subprocess.run([*base, "--device", "hip"], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("error: hip device unavailable: no GPU is visible to HIP") and \
        done.stderr.count("\n") == 1
