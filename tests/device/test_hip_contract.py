"""Contract tests against the real hip-python releases the device supports (6.4, 7.2 and the 10.x
metapackage), each installed apart under benchmarks/.cache/hip-python and imported in a subprocess:
every function in the device's HIP_API exists with an argument count the device uses, and the enums,
the launch-parameter constants and the device-properties layout are what the device and the HIP
runtime stub assume. The return shapes are checked by the end-to-end tests through the stub."""
from __future__ import annotations

import ctypes
import json
import subprocess
import sys

import pytest

from asmevo.device.hip import (HIP_API, HIP_LAUNCH_PARAM_BUFFER_POINTER, HIP_LAUNCH_PARAM_BUFFER_SIZE,
                               HIP_LAUNCH_PARAM_END)
from hipstub import RELEASES, hip_python

PROBE = r"""
import inspect, json, sys
import hip as package
from hip import hip
names = json.loads(sys.argv[1])
out = {"functions": {n: (len(inspect.signature(getattr(hip, n)).parameters) if hasattr(hip, n) else None)
                     for n in names},
       "hip_version": list(package.HIP_VERSION_TUPLE[:2]),
       "enums": {"hipSuccess": int(hip.hipError_t.hipSuccess), "hipErrorNoDevice": int(hip.hipError_t.hipErrorNoDevice),
                 "H2D": int(hip.hipMemcpyKind.hipMemcpyHostToDevice), "D2H": int(hip.hipMemcpyKind.hipMemcpyDeviceToHost)},
       "prop_size": hip.hipDeviceProp_t().c_sizeof(),
       "launch_params": [int(hip.HIP_LAUNCH_PARAM_BUFFER_POINTER), int(hip.HIP_LAUNCH_PARAM_BUFFER_SIZE),
                         int(hip.HIP_LAUNCH_PARAM_END)]}
print(json.dumps(out))
"""


@pytest.fixture(scope="module", params=sorted(RELEASES))
def release(request):
    path = hip_python(request.param)
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(sorted(HIP_API))], capture_output=True, text=True,
                          env={"PYTHONPATH": str(path), "PATH": "/usr/bin:/bin"}, check=True)
    return request.param, json.loads(done.stdout)


def test_every_call_exists_with_an_argument_count_the_device_uses(release):
    name, found = release
    for fn, (counts, _) in HIP_API.items():
        assert found["functions"][fn] in counts, f"hip-python {name}: {fn} takes {found['functions'][fn]} arguments"


def test_device_properties_signature_matches_the_release(release):
    name, found = release
    takes = found["functions"]["hipGetDeviceProperties"]
    assert takes == (1 if name.startswith("10.") else 2)  # 10.x: (dev) -> (err, props); before: (props, dev)


def test_enums_constants_and_the_stub_layout(release, stub_root):
    name, found = release
    assert found["enums"] == {"hipSuccess": 0, "hipErrorNoDevice": 100, "H2D": 1, "D2H": 2}
    assert found["launch_params"] == [HIP_LAUNCH_PARAM_BUFFER_POINTER, HIP_LAUNCH_PARAM_BUFFER_SIZE,
                                      HIP_LAUNCH_PARAM_END]
    stub = ctypes.CDLL(str(stub_root / "lib" / "libamdhip64.so"))
    stub.stub_device_prop_size.restype = ctypes.c_size_t
    assert stub.stub_device_prop_size() == found["prop_size"]  # the stub fills the same hipDeviceProp_tR0600
    assert found["hip_version"] == [RELEASES[name][0] // 10_000_000, RELEASES[name][0] // 100_000 % 100]
