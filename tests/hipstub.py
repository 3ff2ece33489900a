"""Test double of the HIP runtime for CI machines without a GPU (tests/device/hip_stub/).

`build_stub(dir)` compiles the stub libamdhip64.so with gcc; `hip_python(version)` finds, or installs
with `pip install --no-deps --target`, a hip-python release under benchmarks/.cache/hip-python (never
into the venv); `StubHip` points the environment of isolated children (and of the hip-python
subprocesses the contract tests start) at one release and the stub, and reads the stub's call log.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
STUB_SOURCE = REPO / "tests" / "device" / "hip_stub" / "stub_libamdhip64.c"
CACHE = REPO / "benchmarks" / ".cache" / "hip-python"
# hip-python releases the tests run against: (release, HIP version the stub must report, extra wheels).
RELEASES = {
    "6.4.4.555.40": (60443484, ()),
    "7.2.2.562.43": (70253211, ()),
    "10.0.0.0.1.2": (71526333, ("rocm-bindings-hip==10.0.0.0.1.2", "rocm-bindings-core==10.0.0.0.1.2")),
}
DEFAULT_RELEASE = "7.2.2.562.43"


def build_stub(out: Path) -> Path:
    """Compile the stub runtime to out/lib/libamdhip64.so; returns `out` (a ROCM_PATH look-alike)."""
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        pytest.skip("no C compiler to build the HIP runtime stub")
    (out / "lib").mkdir(parents=True, exist_ok=True)
    subprocess.run([gcc, "-O2", "-shared", "-fPIC", "-Wall", "-Werror", "-o", str(out / "lib" / "libamdhip64.so"),
                    str(STUB_SOURCE)], check=True, capture_output=True)
    return out


def hip_python(release: str) -> Path:
    """The directory holding hip-python `release` (installed there on first use)."""
    target = CACHE / release
    if (target / "hip").is_dir():
        return target
    extra = RELEASES[release][1]
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target),
                           f"hip-python=={release}", *extra], capture_output=True, text=True)
    if done.returncode != 0 or not (target / "hip").is_dir():
        shutil.rmtree(target, ignore_errors=True)
        pytest.skip(f"cannot install hip-python {release}: {done.stderr.strip().splitlines()[-1:]}")
    return target


@dataclass
class StubHip:
    """Environment for one hip-python release over the stub; `knobs` are ASMEVO_STUB_* settings."""

    root: Path
    release: str
    log: Path
    knobs: dict[str, str] = field(default_factory=dict)

    @property
    def env(self) -> dict[str, str]:
        parts = (str(hip_python(self.release)), str(REPO / "tests"), os.environ.get("PYTHONPATH", ""))
        path = os.pathsep.join(p for p in parts if p)
        return {"PYTHONPATH": path, "LD_LIBRARY_PATH": str(self.root / "lib"), "ROCM_PATH": str(self.root),
                "ASMEVO_STUB_LOG": str(self.log), "ASMEVO_STUB_HIP_VERSION": str(RELEASES[self.release][0]),
                **self.knobs}

    def apply(self, monkeypatch) -> "StubHip":
        """Set the environment (isolated children inherit it) and forget cached runtime reports."""
        from asmevo.device import gpus

        for key in [k for k in os.environ if k.startswith("ASMEVO_STUB_")]:
            monkeypatch.delenv(key)
        for key, value in self.env.items():
            monkeypatch.setenv(key, value)
        gpus.runtime_report.cache_clear()
        return self

    def calls(self, name: str | None = None) -> list[str]:
        """Logged calls (lines), optionally only those of one function."""
        if not self.log.exists():
            return []
        lines = self.log.read_text().splitlines()
        return [line for line in lines if name is None or line.split(" ", 1)[0] == name]

    def launches(self) -> list[dict]:
        """Each hipModuleLaunchKernel: kernel, module, grid, block, shmem, stream, extra, kernarg bytes."""
        out = []
        for line in self.calls("hipModuleLaunchKernel"):
            m = re.match(r"hipModuleLaunchKernel (\S+) m(\d+) grid=(\S+) block=(\S+) shmem=(\d+) stream=(\d+) "
                         r"params=(\w+) extra=(\w+) size=(\d+) kernarg=(\w*)", line)
            assert m, line
            out.append({"kernel": m[1], "module": int(m[2]), "grid": tuple(map(int, m[3].split(","))),
                        "block": tuple(map(int, m[4].split(","))), "shmem": int(m[5]), "stream": int(m[6]),
                        "params": m[7], "extra": m[8], "size": int(m[9]), "kernarg": bytes.fromhex(m[10])})
        return out

    def balance(self) -> dict[str, int]:
        """Live objects at the end: modules loaded - unloaded, buffers allocated - freed, events, streams."""
        def count(name: str) -> int:
            return sum("invalid" not in line for line in self.calls(name))
        return {"modules": count("hipModuleLoadData") - count("hipModuleUnload"),
                "buffers": count("hipMalloc") - count("hipFree"),
                "events": count("hipEventCreate") - count("hipEventDestroy"),
                "streams": count("hipStreamCreate") - count("hipStreamDestroy")}


@pytest.fixture(scope="session")
def stub_root(tmp_path_factory) -> Path:
    """The stub runtime, built once per session (a ROCM_PATH look-alike with lib/libamdhip64.so)."""
    return build_stub(tmp_path_factory.mktemp("hip-stub"))


@pytest.fixture
def stub_hip(stub_root, tmp_path, monkeypatch):
    """`stub_hip(release=DEFAULT_RELEASE, **knobs)` -> a StubHip applied to this test's environment, with
    GPU locks in the test's directory."""
    from asmevo.device import gpus

    monkeypatch.setattr(gpus, "LOCK_DIR", tmp_path / "gpu-locks")

    def make(release: str = DEFAULT_RELEASE, **knobs: object) -> StubHip:
        stub = StubHip(stub_root, release, tmp_path / f"stub-{release}.log",
                       {f"ASMEVO_STUB_{k.upper()}": str(v) for k, v in knobs.items()})
        return stub.apply(monkeypatch)

    yield make
    gpus.runtime_report.cache_clear()
