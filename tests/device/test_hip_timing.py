"""The hardware timing protocol through hip-python into the HIP runtime stub, whose streams follow a
modelled device timeline (a kernel lasts what ASMEVO_STUB_KERNEL_NS says): the measured times must be
the modelled kernel times, not the host's launch latency; each sample is fill, start, launch, stop;
pairs come in random order; one synchronisation per batch; a warm-up of at least the asked time; a
crash or a hang in a timed kernel is a TimingCrashed for that kernel and nothing leaks."""
from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import numpy as np
import pytest

from asmevo.codeobj import CodeObject
from asmevo.device.hip_timing import Protocol, TimingCrashed, measure
from asmevo.device.isolated import run_isolated
from asmevo.device.launch import LaunchSpec
from asmevo.timing import NotVerified, time_on_hardware
from asmevo.launches import launch_from_dict
from asmevo.verify import Verdict, sha256

REPO = Path(__file__).resolve().parents[2]
K0 = CodeObject(REPO.joinpath("benchmarks/kernelbench/19_ReLU/kernel.co").read_bytes())
K1 = CodeObject(K0.data + b"\0" * 8)  # same code, another identity
SPEC = {"kernel": "relu_f32", "grid": [4], "block": [256],
        "args": [{"buffer": "x", "dtype": "float32", "shape": [1024], "init": "random"},
                 {"buffer": "y", "dtype": "float32", "shape": [1024], "init": "zeros"},
                 {"scalar": 1024, "dtype": "int32"}]}
LAUNCH = launch_from_dict(SPEC, label="relu")
# 1 MiB fills modelled at 200 ps/byte last 210 us: longer than the host needs to submit a launch.
FAST = Protocol(warmup_ms=25.0, pairs=12, batch=4, flush_bytes=1 << 20)
FILL = {"fill_ps_per_byte": 200}


def timed_phase(stub) -> list[list[str]]:
    """The calls after the first fill (the timed batches), split at each stream synchronisation."""
    lines = stub.calls()
    start = next(i for i, line in enumerate(lines) if line.startswith("hipMemsetAsync"))
    batches, current = [], []
    for line in lines[start:]:
        name = line.split(" ", 1)[0]
        if name == "hipStreamSynchronize":
            batches.append(current)
            current = []
        elif name in ("hipMemsetAsync", "hipEventRecord", "hipModuleLaunchKernel"):
            current.append(name)
    return batches


def test_samples_are_the_kernel_time_not_the_launch_latency(stub_hip):
    stub = stub_hip(kernel_ns="50000,40000", **FILL)  # K0 50 us, K1 40 us
    run = measure([K0.data, K1.data], LaunchSpec.from_dict(SPEC), device_id=0, protocol=FAST)
    k0, k1 = (np.array(s) for s in run["samples"])
    assert len(k0) == len(k1) == FAST.pairs
    assert np.median(k0) == pytest.approx(0.050, abs=2e-4) and np.median(k1) == pytest.approx(0.040, abs=2e-4)
    batches = timed_phase(stub)
    assert len(batches) == 3  # 12 pairs, 4 per synchronisation
    for batch in batches:
        assert batch == ["hipMemsetAsync", "hipEventRecord", "hipModuleLaunchKernel", "hipEventRecord"] * 8
    order = [int(line.split()[2][1:]) for line in stub.calls("hipModuleLaunchKernel")][-2 * FAST.pairs:]
    firsts = {order[i] for i in range(0, len(order), 2)}
    assert len(firsts) == 2  # both kernels come first in some pair: the order is randomised
    assert run["warmup_launches"] * 0.045 >= 0.8 * FAST.warmup_ms  # >= the asked warm-up, in modelled time
    assert run["hardware"]["gpu"] == "AMD Instinct MI300X (stub)" and run["protocol"] == FAST.to_json()
    assert stub.balance() == {"modules": 0, "buffers": 0, "events": 0, "streams": 0}


def test_the_old_protocol_counted_the_launch_latency(stub_hip):
    """The pre-#17 protocol (events on an idle stream, a synchronisation per sample) on the same stub
    measures the modelled 50 us plus the host's submission time."""
    stub_hip(kernel_ns=50000, **FILL)
    naive = run_isolated("hip_children:naive_samples", 0, K0.data, SPEC, 30, timeout=60)
    assert np.median(naive) > 0.050 + 1e-3 * 0.5  # > 0.5 us of host time inside every window


def test_a_fault_in_the_candidate_names_it_and_the_run_goes_on(stub_hip):
    stub = stub_hip(fault="relu_f32:2", **FILL)  # the 2nd launch: K1's first run
    with pytest.raises(TimingCrashed, match=r"^K1 crashed or hung on GPU 0: child killed by SIGSEGV during K1 first run"):
        measure([K0.data, K1.data], LaunchSpec.from_dict(SPEC), device_id=0, protocol=FAST)
    stub_hip(**FILL)
    assert len(measure([K0.data], LaunchSpec.from_dict(SPEC), device_id=0, protocol=FAST)["samples"][0]) == 12


def test_a_hang_is_cut_at_the_timeout(stub_hip):
    stub_hip(hang="relu_f32:2", **FILL)
    began = time.monotonic()
    with pytest.raises(TimingCrashed, match=r"^K1 crashed or hung on GPU 0: no progress for 2 s during K1 first run"):
        measure([K0.data, K1.data], LaunchSpec.from_dict(SPEC), device_id=0, protocol=FAST, timeout=2.0)
    assert time.monotonic() - began < 15


def fake_smi(directory: Path) -> None:
    """An `amd-smi` that prints a clock report."""
    exe = directory / "amd-smi"
    exe.write_text('#!/bin/sh\necho \'[{"gpu": 0, "clock": {"gfx_0": {"clk": {"value": 2100, "unit": "MHz"}}}}]\'\n')
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)


def test_time_on_hardware_json(stub_hip, tmp_path, monkeypatch):
    stub_hip(kernel_ns="50000,40000", **FILL)
    fake_smi(tmp_path)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(NotVerified):
        time_on_hardware(K0, K1, LAUNCH, 0, warmup_ms=25.0, pairs=12, batch=4, flush_bytes=1 << 20)
    verdict = Verdict("equivalent", "test", k0_sha256=sha256(K0.data), k1_sha256=sha256(K1.data))
    out = time_on_hardware(K0, K1, LAUNCH, 0, verdict=verdict, warmup_ms=25.0, pairs=12, batch=4,
                           flush_bytes=1 << 20)
    json.dumps(out)
    assert out["unit"] == "ms" and [k["code_sha256"] for k in out["kernels"]] == [sha256(K0.data), sha256(K1.data)]
    assert out["kernels"][0]["median"] == pytest.approx(0.050, abs=2e-4) and len(out["kernels"][1]["samples"]) == 12
    assert out["speedup"] == pytest.approx(1.25, abs=0.01) and out["accepted"] and out["interval"][0] > 1.0
    assert out["hardware"]["target"] == "gfx942:sramecc+:xnack-" and out["hardware"]["device_id"] == 0
    assert out["clocks"]["before"]["output"][0]["clock"]["gfx_0"]["clk"]["value"] == 2100
    single = time_on_hardware(K0, None, LAUNCH, 0, warmup_ms=25.0, pairs=12, batch=4, flush_bytes=1 << 20)
    assert len(single["kernels"]) == 1 and "speedup" not in single and single["unit"] == "ms"


def test_protocol_limits():
    with pytest.raises(Exception, match="at least 25 ms"):
        Protocol(warmup_ms=5)
    with pytest.raises(Exception, match="pairs 2"):
        Protocol(pairs=2)
