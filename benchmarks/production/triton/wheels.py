"""The pinned vLLM and SGLang wheels whose Triton kernels this suite compiles.

Wheels are fetched with `pip download --no-deps` (platform pinned, so every host gets the same file) into
benchmarks/.cache/triton (gitignored), checked against their sha256, and read in place with zipfile; nothing
from them is imported or committed.
"""
from __future__ import annotations

import hashlib
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CACHE = ROOT / "benchmarks" / ".cache" / "triton"


@dataclass(frozen=True)
class Wheel:
    package: str
    version: str
    filename: str
    sha256: str
    platform: str

    @property
    def path(self) -> Path:
        return CACHE / self.filename


WHEELS = {
    "vllm": Wheel("vllm", "0.33.0", "vllm-0.33.0-cp38-abi3-manylinux_2_28_x86_64.whl",
                  "4b6bdec4ab269990bf70d45a3c1e94c3760a27064513760193b26d6f0da883aa", "manylinux_2_28_x86_64"),
    "sglang": Wheel("sglang", "0.5.23", "sglang-0.5.23-cp311-cp311-manylinux_2_34_x86_64.whl",
                    "00b3cd5b265ac76c64185fbb6b95424f324ddd9f428d0306b77bc9db9d859937", "manylinux_2_34_x86_64"),
}


class FetchError(RuntimeError):
    """A wheel could not be downloaded or does not match its pinned sha256."""


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@lru_cache(maxsize=None)
def fetch(package: str) -> Path:
    """The pinned wheel of `package`, downloaded once and verified."""
    w = WHEELS[package]
    if not w.path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--python-version",
               "3.11", "--platform", w.platform, "-d", str(CACHE), f"{w.package}=={w.version}"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0 or not w.path.exists():
            tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise FetchError(f"pip download {w.package}=={w.version} failed: {tail}")
    digest = _sha256(w.path)
    if digest != w.sha256:
        raise FetchError(f"{w.path} has sha256 {digest}, expected {w.sha256}")
    return w.path


@lru_cache(maxsize=None)
def _zip(package: str) -> zipfile.ZipFile:
    return zipfile.ZipFile(fetch(package))


def read_source(package: str, member: str) -> str | None:
    """A Python source file of the pinned wheel ('vllm', 'vllm/lora/ops/triton_ops/utils.py'), or None."""
    try:
        return _zip(package).read(member).decode()
    except KeyError:
        return None
