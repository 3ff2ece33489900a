"""`asmevo doctor`'s checks: what this machine offers AsmEvo (LLVM, Triton, hip-python, ROCm, GPUs) and
whether each device works, with the fix for what does not.

The emulator check compiles a small OpenCL kernel with the found clang and runs it on the emulator
against numpy; the hip checks ask HIP in an isolated child (`asmevo.device.gpus.runtime_report`), so a
broken driver cannot take the doctor down.
"""
from __future__ import annotations

import importlib.metadata
import os
import platform
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .device.hip import INSTALL
from .errors import AsmEvoError

SUPPORTED_PROCESSORS = ("gfx942",)  # the emulator's and the suites' target (MI300X)
SMOKE_SOURCE = ("__kernel void smoke(__global int* out) {\n"
                "  int i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();\n"
                "  out[i] = 3 * i + 1;\n}\n")


@dataclass(frozen=True)
class Check:
    """One line of the report: `name`, whether it is fine, what was found, and the fix when it is not."""

    name: str
    ok: bool
    detail: str
    fix: str = ""

    def line(self) -> str:
        text = f"{self.name:<12} {self.detail}"
        return text + (f" (fix: {self.fix})" if self.fix else "")


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def check_llvm() -> tuple[Check, object | None]:
    from .toolchain import FIX, find_toolchain

    try:
        tc = find_toolchain()
    except AsmEvoError as exc:
        return Check("llvm", False, str(exc).split(";")[0], FIX), None
    tool = "llvm-mc" if "llvm-mc" in tc.paths else "clang"
    out = subprocess.run([*tc.argv(tool), "--version"], capture_output=True, text=True).stdout
    version = next((line.split("version", 1)[1].strip() for line in out.splitlines() if "version" in line), str(tc.major))
    return Check("llvm", True, f"{version} from {tc.origin} ({', '.join(sorted(tc.paths))})"), tc


def check_llvm_for(processor: str) -> Check:
    """The toolchain that serves `processor` (recovery, rebuilds), or why none does."""
    from .toolchain import find_toolchain

    name = f"llvm {processor}"
    try:
        tc = find_toolchain(processor)
    except AsmEvoError as exc:
        problem, _, fix = str(exc).rpartition("; ")
        return Check(name, False, problem.removeprefix(f"{processor} "), fix)
    return Check(name, True, f"LLVM {tc.major} from {tc.origin}")


def check_assembler_for(processor: str) -> Check:
    """Who assembles and links for `processor` (`asmevo.toolchain.find_assembler`), or why nobody can."""
    from .toolchain import find_assembler, triton_backend
    from .triton_llvm import TritonLLVM

    name = f"asm {processor}"
    try:
        backend = find_assembler(processor)
    except AsmEvoError as exc:
        problem, _, fix = str(exc).rpartition("; ")
        return Check(name, False, problem or fix, fix if problem else "")
    if isinstance(backend, TritonLLVM):
        info = backend.info
        return Check(name, True, f"Triton {info.triton}'s LLVM {info.major} in a resident worker (assembler "
                                 f"revision {info.assembler_revision[:12]}, lld {info.linker.split()[0]})")
    tools = "llvm-mc" if "llvm-mc" in backend.paths else "clang -cc1as"
    if os.environ.get("ASMEVO_ASSEMBLER") == "tools":
        why = "ASMEVO_ASSEMBLER=tools"
    elif os.environ.get("ASMEVO_LLVM_BIN"):
        why = "ASMEVO_LLVM_BIN is set"
    else:
        why = triton_backend()[1] or f"its LLVM is older than {processor} needs"
    return Check(name, True, f"{tools} + ld.lld of LLVM {backend.major} from {backend.origin}, a process per call "
                             f"(not Triton's LLVM: {why})")


def check_emulator(toolchain) -> Check:
    """Compile SMOKE_SOURCE for gfx942 and run it on the emulator."""
    if toolchain is None:
        return Check("device emu", False, "not usable: no LLVM toolchain", "see the llvm line")
    from .device import get_device
    from .device.launch import LaunchSpec, run_launch

    try:
        with tempfile.TemporaryDirectory(prefix="asmevo-doctor-") as tmp:
            src, co = Path(tmp) / "smoke.cl", Path(tmp) / "smoke.co"
            src.write_text(SMOKE_SOURCE)
            toolchain.run("clang", ["-x", "cl", "--target=amdgcn-amd-amdhsa", "-mcpu=gfx942", "-nogpulib", "-O2",
                                    "-o", str(co), str(src)])
            spec = LaunchSpec.from_dict({"kernel": "smoke", "grid": [2], "block": [64],
                                         "args": [{"buffer": "out", "dtype": "int32", "shape": [128], "init": "zeros"}]})
            out, result = run_launch(get_device("emu"), co, spec, {"out": np.zeros(128, np.int32)})
    except AsmEvoError as exc:
        return Check("device emu", False, f"not usable: {exc}", "reinstall asmevo with its dependencies")
    if not result.ok or not np.array_equal(out["out"], 3 * np.arange(128) + 1):
        return Check("device emu", False, "not usable: the test kernel computed a wrong result",
                     "report this as a bug")
    return Check("device emu", True, "usable (compiled and emulated a test kernel)")


def check_hip() -> tuple[list[Check], Check]:
    """(hip-python, ROCm and GPU lines, whether the hip device can be used)."""
    from .device.gpus import runtime_report
    from .device.hip import hip_python_versions, installed_rocm

    rocm = installed_rocm()
    try:
        versions = hip_python_versions()
    except ImportError:
        return ([Check("hip-python", False, "not installed", INSTALL),
                 Check("rocm", rocm is not None, rocm or "no release file under $ROCM_PATH or /opt/rocm")],
                Check("device hip", False, "not usable: hip-python is not installed", INSTALL))
    lines = [Check("hip-python", True, f"{versions['hip_python']} (built for ROCm {versions['built_for_rocm']}, "
                                       f"HIP {versions['built_for_hip']})")]
    try:
        report = runtime_report()
    except AsmEvoError as exc:
        lines += [Check("rocm", rocm is not None, rocm or "no release file under $ROCM_PATH or /opt/rocm"),
                  Check("gpus", False, "none usable")]
        return lines, Check("device hip", False, f"not usable: {exc}")
    lines.append(Check("rocm", True, f"{report['rocm'] or 'release unknown'}, HIP runtime {report['hip_runtime']}"))
    gpus = report["gpus"]
    lines += [Check(f"gpu {g['index']}", True, f"{g['name']} {g['arch']} (PCI {g['pci_bus_id']})") for g in gpus]
    if not any(g["arch"].split(":")[0] in SUPPORTED_PROCESSORS for g in gpus):
        found = ", ".join(g["arch"] for g in gpus) or "none"
        return lines, Check("device hip", False, f"not usable: no {'/'.join(SUPPORTED_PROCESSORS)} GPU (found "
                                                 f"{found})", "run on an MI300X (gfx942) machine")
    return lines, Check("device hip", True, "usable")


def run_checks() -> list[Check]:
    """Every check, in report order; `device emu` and `device hip` come last."""
    llvm, toolchain = check_llvm()
    triton = _version("triton")
    hip_lines, hip_device = check_hip()
    return [Check("python", True, f"{platform.python_version()} ({sys.executable})"),
            Check("asmevo", True, _version("asmevo") or "source checkout"),
            llvm, check_llvm_for("gfx950"), check_assembler_for("gfx942"), check_assembler_for("gfx950"),
            Check("triton", True, triton or "not installed (optional: compiles the Triton suites' kernels)",
                  "" if triton else "pip install 'asmevo[triton]'"),
            *hip_lines, check_emulator(toolchain), hip_device]
