"""Finding and calling the LLVM AMDGPU toolchain (llvm-mc, llvm-objdump, ld.lld, clang, libLLVM).

Search order: $ASMEVO_LLVM_BIN (alone when set), /opt/rocm/llvm/bin, then versioned Debian tools
(`llvm-mc-N` on PATH or /usr/lib/llvm-N/bin, newest N first), then unversioned tools on PATH, then
the PyPI toolchain: `ziglang` (clang's integrated assembler `clang -cc1as` and `ld.lld`, run as
`zig clang` / `zig ld.lld`) with `rocm-llvm-python`'s libLLVM (`rocm/llvm/librocmllvm.so`, the
in-process disassembler). `find_toolchain(processor)` takes the first one at least as new as the
processor's `min_llvm` (`asmevo.target`): LLVM 19 for gfx942, 21 for gfx950.

Assembling and linking (`find_assembler(processor)`) prefer Triton's bundled LLVM in a resident worker
(`asmevo.triton_llvm`: no process start per call) when ASMEVO_LLVM_BIN is unset, Triton is installed and
its LLVM is new enough for the processor; else the toolchain's own tools run per call. ASMEVO_ASSEMBLER
overrides: `tools` (always the toolchain's tools) or `triton` (Triton's LLVM or an error).
"""
from __future__ import annotations

import functools
import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from . import triton_llvm
from .errors import ToolchainError, ToolchainTooOld
from .target import PROCESSORS

MIN_MAJOR = 19
TOOLS = ("llvm-mc", "llvm-objdump", "ld.lld", "clang", "llvm-mca")
FIX = "install LLVM >= 19 (Debian: apt-get install llvm-19 lld-19 clang-19) or set ASMEVO_LLVM_BIN"
PYPI_PACKAGES = ("rocm-llvm-python==7.2.2.562.46", "ziglang==0.17.1")  # LLVM 22; also in pyproject.toml
PYPI_ORIGIN = "PyPI (ziglang + rocm-llvm-python)"


@dataclass(frozen=True)
class Toolchain:
    """Resolved paths of the LLVM tools and their major version. `prefixes` holds the arguments a
    tool's executable needs before its own (`zig clang`); `library` is the libLLVM for in-process
    disassembly when known (else looked up next to the tools, `asmevo.llvm_c`)."""

    paths: dict[str, str]
    major: int
    origin: str
    prefixes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    library: str | None = None

    def path(self, tool: str) -> str:
        try:
            return self.paths[tool]
        except KeyError:
            raise ToolchainError(f"{tool} not found next to {self.origin}; {FIX}") from None

    def argv(self, tool: str) -> list[str]:
        """The command line that starts `tool` (its executable and prefix arguments)."""
        return [self.path(tool), *self.prefixes.get(tool, ())]

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
                proc = subprocess.run([*self.argv(tool), *args], input=input, cwd=cwd, stdout=out,
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


@functools.lru_cache(maxsize=None)
def _major_version(argv: tuple[str, ...]) -> int | None:
    try:
        out = subprocess.run([*argv, "--version"], capture_output=True, text=True, timeout=30).stdout
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


def _package_dir(name: str) -> Path | None:
    """The directory of an installed top-level package, without importing it."""
    spec = importlib.util.find_spec(name)
    locations = list(spec.submodule_search_locations or []) if spec else []
    return Path(locations[0]) if locations else None


def _pypi_toolchain() -> Toolchain | None:
    """The PyPI toolchain when both of its packages are installed: zig's clang (integrated
    assembler, `-cc1as`) and ld.lld, and rocm-llvm-python's libLLVM."""
    zig_dir, rocm_dir = _package_dir("ziglang"), _package_dir("rocm")
    if zig_dir is None or rocm_dir is None:
        return None
    zig, library = zig_dir / "zig", rocm_dir / "llvm" / "librocmllvm.so"
    if not (zig.is_file() and library.is_file()):
        return None
    prefixes = {"clang": ("clang",), "ld.lld": ("ld.lld",)}
    major = _major_version((str(zig), "clang"))
    if major is None:
        return None
    return Toolchain(paths={"clang": str(zig), "ld.lld": str(zig)}, major=major, origin=PYPI_ORIGIN,
                     prefixes=prefixes, library=str(library))


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


def _toolchains(env_key: str | None, seen_old: list[str]) -> Iterator[Toolchain]:
    """Every usable toolchain (LLVM >= MIN_MAJOR) in search order, found lazily; older ones seen are
    appended to `seen_old` (as text)."""
    for origin, paths in _candidates():
        if "llvm-mc" not in paths:
            continue
        major = _major_version((paths["llvm-mc"],))
        if major is None:
            continue
        if major < MIN_MAJOR:
            seen_old.append(f"{paths['llvm-mc']} is LLVM {major}")
            continue
        yield Toolchain(paths=paths, major=major, origin=origin)
    if env_key is None and (pypi := _pypi_toolchain()) is not None:
        yield pypi


def find_toolchain(processor: str | None = None) -> Toolchain:
    """The toolchain to use (for `processor`: the first one at least its `min_llvm`); raises
    ToolchainError naming the fix when none fits, ToolchainTooOld when only older ones exist."""
    return _find(os.environ.get("ASMEVO_LLVM_BIN"), MIN_MAJOR if processor is None else _min_llvm(processor),
                 processor)


@functools.lru_cache(maxsize=None)
def _find(env_key: str | None, need: int, processor: str | None) -> Toolchain:
    found: list[Toolchain] = []
    seen_old: list[str] = []
    for tc in _toolchains(env_key, seen_old):
        if tc.major >= need:
            return tc
        found.append(tc)
    if found:
        best = max(found, key=lambda tc: tc.major)
        fix = (f"point ASMEVO_LLVM_BIN at LLVM >= {need} or unset it" if env_key
               else f"pip install {' '.join(PYPI_PACKAGES)}")
        raise ToolchainTooOld(f"{processor} needs LLVM >= {need}; found LLVM {best.major} at {best.origin}; {fix}")
    if seen_old:
        raise ToolchainError(f"LLVM too old ({'; '.join(seen_old)}); {FIX}")
    raise ToolchainError(f"no LLVM toolchain found; {FIX}")


def _min_llvm(processor: str) -> int:
    """The processor's `min_llvm`; MIN_MAJOR for one AsmEvo has no record of (its own check names it)."""
    info = PROCESSORS.get(processor)
    return info.min_llvm if info else MIN_MAJOR


ASSEMBLER_CHOICES = ("auto", "tools", "triton")


def find_assembler(processor: str) -> Toolchain | triton_llvm.TritonLLVM:
    """Who assembles and links for `processor`: Triton's LLVM worker, or the toolchain whose tools
    (llvm-mc or `clang -cc1as`, ld.lld) run per call. See the module docstring for the rule."""
    choice = os.environ.get("ASMEVO_ASSEMBLER") or "auto"
    if choice not in ASSEMBLER_CHOICES:
        raise ToolchainError(f"ASMEVO_ASSEMBLER={choice} is not one of {', '.join(ASSEMBLER_CHOICES)}")
    if choice == "tools" or (choice == "auto" and os.environ.get("ASMEVO_LLVM_BIN")):
        return find_toolchain(processor)
    triton, reason = triton_backend()
    need = _min_llvm(processor)
    if triton is not None and triton.info.major >= need:
        return triton
    if choice == "triton":
        why = reason or f"Triton's LLVM {triton.info.major} is older than {processor} needs ({need})"
        raise ToolchainError(f"ASMEVO_ASSEMBLER=triton: {why}")
    return find_toolchain(processor)


_TRITON_START = threading.Lock()


def triton_backend() -> tuple[triton_llvm.TritonLLVM | None, str]:
    """This process's Triton LLVM worker (a forked child starts its own), or None and why not (Triton
    absent, or its LLVM failed to start: then the subprocess tools serve every processor)."""
    with _TRITON_START:
        return _triton_backend(os.getpid())


@functools.lru_cache(maxsize=None)
def _triton_backend(pid: int) -> tuple[triton_llvm.TritonLLVM | None, str]:
    if not triton_llvm.installed():
        return None, "Triton is not installed (pip install 'asmevo[triton]')"
    try:
        return triton_llvm.TritonLLVM(), ""
    except ToolchainError as exc:
        return None, str(exc)
