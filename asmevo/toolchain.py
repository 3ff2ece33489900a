"""Finding and calling the LLVM AMDGPU toolchain (llvm-mc, llvm-objdump, ld.lld, clang).

Search order: $ASMEVO_LLVM_BIN, /opt/rocm/llvm/bin, then versioned Debian tools
(`llvm-mc-N` on PATH or /usr/lib/llvm-N/bin, newest N first), then unversioned tools on PATH.
LLVM >= 19 is required: older releases cannot disassemble gfx94x kernel descriptors.
"""
from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .errors import ToolchainError

MIN_MAJOR = 19
TOOLS = ("llvm-mc", "llvm-objdump", "ld.lld", "clang", "llvm-mca")
FIX = "install LLVM >= 19 (Debian: apt-get install llvm-19 lld-19 clang-19) or set ASMEVO_LLVM_BIN"


@dataclass(frozen=True)
class Toolchain:
    """Resolved paths of the LLVM tools and their major version."""

    paths: dict[str, str]
    major: int
    origin: str

    def path(self, tool: str) -> str:
        try:
            return self.paths[tool]
        except KeyError:
            raise ToolchainError(f"{tool} not found next to {self.origin}; {FIX}") from None

    def run(self, tool: str, args: list[str], *, input: bytes | None = None, cwd: str | None = None) -> bytes:
        """Run a tool; a non-zero exit raises ToolchainError with the tool's first error line."""
        proc = self.run_unchecked(tool, args, input=input, cwd=cwd)
        if proc.returncode != 0:
            raise ToolchainError(f"{tool} failed: {_first_error(proc.stderr)}")
        return proc.stdout

    def run_unchecked(self, tool: str, args: list[str], *, input: bytes | None = None,
                      cwd: str | None = None) -> subprocess.CompletedProcess:
        """Run a tool and return the finished process whatever its exit code. Its stdout goes
        through a temporary file: LLVM tools write it a line per write(), which read from a pipe
        costs this process more CPU than the tool itself spends."""
        try:
            with tempfile.TemporaryFile() as out:
                proc = subprocess.run([self.path(tool), *args], input=input, cwd=cwd, stdout=out,
                                      stderr=subprocess.PIPE)
                out.seek(0)
                proc.stdout = out.read()
                return proc
        except OSError as exc:
            raise ToolchainError(f"cannot run {tool}: {exc.strerror}") from None


def _first_error(stderr: bytes) -> str:
    lines = [ln.strip() for ln in stderr.decode(errors="replace").splitlines() if ln.strip()]
    for ln in lines:
        if "error" in ln:
            return ln
    return lines[0] if lines else "no message"


def _major_version(exe: str) -> int | None:
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"(?:LLVM|clang) version (\d+)", out)
    return int(m.group(1)) if m else None


def _from_dir(directory: Path, suffix: str = "") -> dict[str, str]:
    found = {}
    for tool in TOOLS:
        exe = directory / f"{tool}{suffix}"
        if exe.is_file() and os.access(exe, os.X_OK):
            found[tool] = str(exe)
    return found


def _candidates() -> list[tuple[str, dict[str, str]]]:
    cands: list[tuple[str, dict[str, str]]] = []
    env = os.environ.get("ASMEVO_LLVM_BIN")
    if env:
        found = _from_dir(Path(env))
        if "llvm-mc" not in found:
            raise ToolchainError(f"ASMEVO_LLVM_BIN={env} has no llvm-mc; {FIX}")
        return [(f"ASMEVO_LLVM_BIN={env}", found)]
    cands.append(("/opt/rocm/llvm/bin", _from_dir(Path("/opt/rocm/llvm/bin"))))
    for major in range(30, MIN_MAJOR - 1, -1):
        libdir = Path(f"/usr/lib/llvm-{major}/bin")
        if libdir.is_dir():
            cands.append((str(libdir), _from_dir(libdir)))
        onpath = {t: p for t in TOOLS if (p := shutil.which(f"{t}-{major}"))}
        if onpath:
            cands.append((f"PATH (-{major})", onpath))
    cands.append(("PATH", {t: p for t in TOOLS if (p := shutil.which(t))}))
    return cands


@functools.lru_cache(maxsize=None)
def _discover(env_key: str | None) -> Toolchain:
    seen_old = []
    for origin, paths in _candidates():
        if "llvm-mc" not in paths:
            continue
        major = _major_version(paths["llvm-mc"])
        if major is None:
            continue
        if major < MIN_MAJOR:
            seen_old.append(f"{paths['llvm-mc']} is LLVM {major}")
            continue
        return Toolchain(paths=paths, major=major, origin=origin)
    if seen_old:
        raise ToolchainError(f"LLVM too old ({'; '.join(seen_old)}); {FIX}")
    raise ToolchainError(f"no LLVM toolchain found; {FIX}")


def find_toolchain() -> Toolchain:
    """The toolchain to use; raises ToolchainError naming the fix when none fits."""
    return _discover(os.environ.get("ASMEVO_LLVM_BIN"))
