"""How much host time lands inside the timed window: the pre-#17 protocol against the current one,
measured through hip-python into the HIP runtime stub (tests/device/hip_stub), whose stream models a
device timeline with a known kernel duration. No GPU: the stub executes nothing on a device, so what
this measures is the protocol's own bias (host submission time counted as kernel time), which carries
over to hardware; a real GPU adds its own launch costs on top of the old protocol's windows.

* old: events recorded around one launch on an idle stream, one synchronisation per sample (no flush).
* new: `asmevo.device.hip_timing` (device-side fill, start, launch, stop; one synchronisation per batch).

For each modelled kernel duration it prints the median and the 5th-95th percentile of
(measured - modelled) over the samples, and writes the table with its provenance to
benchmarks/hardware/stub_timing_overhead.txt.

    python benchmarks/hardware/stub_timing_overhead.py [--release 7.2.2.562.43] [--samples 200]
"""
from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from asmevo.device import gpus  # noqa: E402
from asmevo.device.hip_timing import Protocol, measure  # noqa: E402
from asmevo.device.isolated import run_isolated  # noqa: E402
from asmevo.device.launch import LaunchSpec  # noqa: E402
from hipstub import RELEASES, StubHip, build_stub  # noqa: E402

KERNEL = REPO / "benchmarks" / "kernelbench" / "19_ReLU" / "kernel.co"
SPEC = {"kernel": "relu_f32", "grid": [4], "block": [256],
        "args": [{"buffer": "x", "dtype": "float32", "shape": [1024], "init": "random"},
                 {"buffer": "y", "dtype": "float32", "shape": [1024], "init": "zeros"},
                 {"scalar": 1024, "dtype": "int32"}]}
DURATIONS_US = (2, 10, 50, 200)
OUT = Path(__file__).with_suffix(".txt")


def provenance(command: str) -> list[str]:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO).stdout.strip()
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    return [f"commit: {commit}", f"command: {command}", f"machine: {os.cpu_count()} x {cpu}",
            f"date: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--release", default="7.2.2.562.43", choices=sorted(RELEASES), help="hip-python release")
    ap.add_argument("--samples", type=int, default=200, help="samples per protocol and duration")
    args = ap.parse_args(argv)
    code = KERNEL.read_bytes()
    lines = [f"{'kernel us':>9} {'old: median bias us':>20} {'old p5..p95':>16} {'new: median bias us':>20} "
             f"{'new p5..p95':>16}"]
    with tempfile.TemporaryDirectory(prefix="asmevo-stub-bench-") as tmp:
        stub = StubHip(build_stub(Path(tmp)), args.release, Path(tmp) / "stub.log")
        os.environ.update(stub.env)
        gpus.LOCK_DIR = Path(tmp) / "locks"
        for us in DURATIONS_US:
            os.environ["ASMEVO_STUB_KERNEL_NS"] = str(us * 1000)
            old = np.array(run_isolated("hip_children:naive_samples", 0, code, SPEC, args.samples, timeout=120))
            new = np.array(measure([code], LaunchSpec.from_dict(SPEC), device_id=0,
                                   protocol=Protocol(pairs=args.samples, batch=20))["samples"][0])
            cells = []
            for samples in (old, new):
                bias = samples * 1e3 - us
                p5, p50, p95 = (round(float(v), 2) + 0.0 for v in np.percentile(bias, [5, 50, 95]))
                cells += [f"{p50:>20.2f}", f"{p5:>7.2f}..{p95:<7.2f}"]
            lines.append(f"{us:>9} {cells[0]} {cells[1]:>16} {cells[2]} {cells[3]:>16}")
            print(lines[-1] if len(lines) > 2 else "\n".join(lines), flush=True)
    command = "python benchmarks/hardware/stub_timing_overhead.py " + " ".join(argv or sys.argv[1:])
    OUT.write_text("\n".join([*provenance(command.strip()), f"hip-python: {args.release}", "", *lines]) + "\n")
    print(f"wrote {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
