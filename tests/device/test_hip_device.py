"""The hip device: import-safe without ROCm, refused outside an isolated child, and, end to end through
real hip-python (every supported release) into the HIP runtime stub, right about kernargs, geometry,
copy directions, streams and the release of every module, buffer, event and stream; with a one-line
DeviceError for a missing runtime, no GPU, a wrong architecture or a hip-python of another HIP."""
from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
import pytest

from asmevo.codeobj import CodeObject
from asmevo.target import TargetId
from asmevo.device import DeviceError, get_device
from asmevo.device.hip import GpuProperties, target_fits
from asmevo.device.isolated import run_isolated
from asmevo.errors import LaunchSpecError
from hipstub import RELEASES

REPO = Path(__file__).resolve().parents[2]
RELU = REPO / "benchmarks" / "kernelbench" / "19_ReLU" / "kernel.co"
N = 1000
SPEC = {"kernel": "relu_f32", "grid": [4, 1, 1], "block": [256, 1, 1], "dynamic_lds": 512,
        "args": [{"buffer": "x", "dtype": "float32", "shape": [N], "init": "random"},
                 {"buffer": "y", "dtype": "float32", "shape": [N], "init": "zeros"},
                 {"scalar": N, "dtype": "int32"}]}


def relu_inputs() -> dict[str, np.ndarray]:
    x = np.random.default_rng(3).uniform(-1, 1, N).astype(np.float32)
    return {"x": x, "y": np.zeros(N, np.float32)}


def on_gpu(target: str, *args, device_id: int = 0, **kwargs):
    return run_isolated(f"hip_children:{target}", device_id, *args, timeout=60, **kwargs)


def test_import_and_use_without_rocm(monkeypatch):
    monkeypatch.setitem(sys.modules, "hip", None)  # as if hip-python were not installed
    device = get_device("hip")
    assert device.timing_unit == "ms" and not device.sandboxed and device.device_id is None
    with pytest.raises(DeviceError, match="^the hip device runs kernels only in an isolated child"):
        device.alloc(16, "x")
    monkeypatch.setenv("ASMEVO_ISOLATED", "1")
    with pytest.raises(DeviceError) as info:
        get_device("hip", device_id=0).load(RELU.read_bytes())
    assert "\n" not in str(info.value)
    assert str(info.value).startswith("hip device unavailable: cannot import hip-python")
    assert "pip install 'hip-python~=X.Y.Z'" in str(info.value)


def test_kernarg_buffer_layout():
    import ctypes

    from asmevo.device.hip import _KernargBuffer

    packed = _KernargBuffer(b"\x01\x02\x03\x04")
    extra = (ctypes.c_void_p * 5).from_address(packed.address)
    assert [extra[0], extra[2], extra[4]] == [1, 2, 3]
    assert ctypes.string_at(extra[1], 4) == b"\x01\x02\x03\x04"
    assert ctypes.c_size_t.from_address(extra[3]).value == 4


def test_unknown_device_and_bad_id():
    with pytest.raises(DeviceError, match="unknown device 'cuda' \\(valid: emu, hip\\)"):
        get_device("cuda")
    with pytest.raises(DeviceError, match="non-negative integer"):
        get_device("hip", device_id=-1)


def gpu(arch: str) -> GpuProperties:
    return GpuProperties(0, "x", arch, "0000:10:00.0", (2**31 - 1, 65536, 65536), 1, 1, 1, 1)


@pytest.mark.parametrize("target,arch,fits", [
    (TargetId("gfx942", "any", "any"), "gfx942:sramecc+:xnack-", True),
    (TargetId("gfx942", "on", "off"), "gfx942:sramecc+:xnack-", True),
    (TargetId("gfx942", None, "on"), "gfx942:sramecc+:xnack-", False),
    (TargetId("gfx9-4-generic", "any", "any"), "gfx942:sramecc+:xnack-", True),  # AMDGPUUsage generic processors
    (TargetId("gfx9-4-generic", "any", "any"), "gfx90a:sramecc+:xnack-", False),
    (TargetId("gfx942", "any", "any"), "gfx90a:sramecc+:xnack-", False),
    (TargetId("gfx950", "any", "any"), "gfx950:sramecc+:xnack-", True),  # MI355X
    (TargetId("gfx950", "any", "any"), "gfx942:sramecc+:xnack-", False),
    (TargetId("gfx942", "any", "any"), "gfx950:sramecc+:xnack-", False),  # no gfx942 code on CDNA4
    (TargetId("gfx9-4-generic", "any", "any"), "gfx950:sramecc+:xnack-", True),
])
def test_target_fits(target, arch, fits):
    assert (target_fits(target, gpu(arch)) is None) is fits


@pytest.mark.parametrize("release", sorted(RELEASES))
def test_launch_end_to_end_through_hip_python(release, stub_hip):
    stub = stub_hip(release)
    inputs = relu_inputs()
    got = on_gpu("run_launch_on_gpu", RELU.read_bytes(), SPEC, inputs)
    assert got["ok"] and got["findings"] == []
    np.testing.assert_array_equal(got["outputs"]["y"], np.maximum(inputs["x"], 0))  # the stub's relu ran
    np.testing.assert_array_equal(got["outputs"]["x"], inputs["x"])
    (launch,) = stub.launches()
    assert (launch["grid"], launch["block"], launch["shmem"]) == ((4, 1, 1), (256, 1, 1), 512)
    assert launch["stream"] != 0 and launch["params"] == "null" and launch["extra"] == "set"
    meta = CodeObject.from_path(RELU).kernel("relu_f32").metadata
    assert (meta[".kernarg_segment_size"], meta[".kernarg_segment_align"]) == (20, 8)
    assert launch["size"] == len(launch["kernarg"]) == 24  # the segment rounded up to its alignment
    mallocs = [int(line.split()[1], 16) for line in stub.calls("hipMalloc")]
    assert struct.unpack_from("<QQi", launch["kernarg"]) == (mallocs[0], mallocs[1], N)
    kinds = [line.split()[1] for line in stub.calls("hipMemcpy")]
    assert kinds == ["kind=1", "kind=1", "kind=2", "kind=2"]  # x, y to the device; both back
    assert stub.balance() == {"modules": 0, "buffers": 0, "events": 0, "streams": 0}


def test_hidden_arguments_reach_the_launch(kernels, stub_hip):
    stub = stub_hip()
    spec = {"kernel": "bsize", "grid": [3], "block": [64],
            "args": [{"buffer": "out", "dtype": "float32", "shape": [192], "init": "zeros"}, {"scalar": 192, "dtype": "int32"}]}
    assert on_gpu("run_launch_on_gpu", kernels["hip5"].read_bytes(), spec, {"out": np.zeros(192, np.float32)})["ok"]
    (launch,) = stub.launches()
    args = {a[".value_kind"]: a[".offset"] for a in CodeObject.from_path(kernels["hip5"]).kernel("bsize").metadata[".args"]}
    assert struct.unpack_from("<I", launch["kernarg"], args["hidden_block_count_x"])[0] == 3
    assert struct.unpack_from("<H", launch["kernarg"], args["hidden_group_size_x"])[0] == 64
    assert struct.unpack_from("<Q", launch["kernarg"], args["global_buffer"])[0] == \
        int(stub.calls("hipMalloc")[0].split()[1], 16)


def test_kernel_without_explicit_arguments_gets_no_extra(kernels, stub_hip):
    stub = stub_hip()
    spec = {"kernel": "noargs", "grid": [2], "block": [64], "args": []}
    got = on_gpu("run_launch_on_gpu", kernels["hip5"].read_bytes(), spec, {})
    assert got["ok"]
    (launch,) = stub.launches()
    assert launch["kernel"] == "noargs" and launch["extra"] == "null" and launch["size"] == 0


def test_grid_beyond_max_grid_size_is_a_launch_spec_error(stub_hip):
    stub = stub_hip()
    spec = {**SPEC, "grid": [1, 70000, 1]}
    with pytest.raises(LaunchSpecError, match=r"exceeds GPU 0's maxGridSize \[2147483647, 65536, 65536\] in "
                                              r"dimension y"):
        on_gpu("run_launch_on_gpu", RELU.read_bytes(), spec, relu_inputs())
    assert stub.launches() == [] and stub.balance()["modules"] == 0


def test_current_device_is_bound_per_thread(stub_hip):
    stub = stub_hip(gpus=2)
    on_gpu("load_from_another_thread", RELU.read_bytes(), device_id=1)
    loads = stub.calls("hipModuleLoadData")
    assert len(loads) == 2 and all(line.endswith("device=1") for line in loads)


@pytest.mark.parametrize("knobs,env,message", [
    ({"gpus": 0}, {}, "hip device unavailable: no GPU is visible to HIP"),
    ({"arch": "gfx90a:sramecc+:xnack-"}, {}, "code object targets gfx942, GPU 0 is gfx90a:sramecc+:xnack-"),
    ({"hip_version": 60443484}, {}, "hip-python 7.2.2.562.43 is built for HIP 7.2 (ROCm 7.2.2), the HIP runtime "
                                    "is 6.4.43484: pip install 'hip-python~="),
    ({}, {"LD_LIBRARY_PATH": "/nonexistent", "ROCM_PATH": "/nonexistent"},
     "hip device unavailable: the HIP runtime cannot be loaded"),
])
def test_environment_problems_are_one_line_device_errors(stub_hip, monkeypatch, knobs, env, message):
    stub_hip(**knobs)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(DeviceError) as info:
        on_gpu("run_launch_on_gpu", RELU.read_bytes(), SPEC, relu_inputs())
    assert message in str(info.value) and "\n" not in str(info.value)
