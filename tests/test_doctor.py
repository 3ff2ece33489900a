"""`asmevo doctor` as a user runs it: what it finds, what it says to fix, and its exit code (0 exactly
when the emulator works)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from asmevo.doctor import run_checks

REPO = Path(__file__).resolve().parents[1]


def doctor(env: dict[str, str] | None = None) -> tuple[int, dict[str, str]]:
    done = subprocess.run([sys.executable, "-m", "asmevo.cli", "doctor"], capture_output=True, text=True, cwd=REPO,
                          env={**os.environ, **(env or {})})
    assert done.stderr == "", done.stderr
    lines = {line[:12].strip(): line[13:] for line in done.stdout.splitlines()}
    return done.returncode, lines


def test_without_hip_python(monkeypatch):
    monkeypatch.setitem(sys.modules, "hip", None)  # as if hip-python were not installed
    lines = {c.name: c.line()[13:] for c in run_checks()}
    assert lines["llvm"].startswith("19.") and "llvm-mc" in lines["llvm"]
    assert lines["llvm gfx950"].startswith("LLVM 2")  # the PyPI toolchain (LLVM 22) or another >= 21
    assert lines["device emu"] == "usable (compiled and emulated a test kernel)"
    assert lines["hip-python"].startswith("not installed (fix: pip install 'hip-python~=X.Y.Z'")
    assert lines["device hip"].startswith("not usable: hip-python is not installed")


def test_with_a_gpu(stub_hip, stub_root, tmp_path):
    stub_hip()
    rocm = tmp_path / "rocm"
    (rocm / ".info").mkdir(parents=True)
    (rocm / ".info" / "version").write_text("7.2.2-43\n")
    (rocm / "lib").symlink_to(stub_root / "lib")
    code, lines = doctor({"ROCM_PATH": str(rocm)})
    assert code == 0
    assert lines["hip-python"] == "7.2.2.562.43 (built for ROCm 7.2.2, HIP 7.2)"
    assert lines["rocm"] == "7.2.2-43, HIP runtime 7.2.53211"
    assert lines["gpu 0"] == "AMD Instinct MI300X (stub) gfx942:sramecc+:xnack- (PCI 0000:10:00.0)"
    assert lines["device hip"] == "usable"


def test_a_gpu_of_another_target(stub_hip):
    stub_hip(arch="gfx90a:sramecc+:xnack-")
    assert doctor()[1]["device hip"] == ("not usable: no gfx942 GPU (found gfx90a:sramecc+:xnack-) "
                                         "(fix: run on an MI300X (gfx942) machine)")


def test_without_llvm_the_emulator_is_not_usable(tmp_path):
    code, lines = doctor({"ASMEVO_LLVM_BIN": str(tmp_path)})  # the exit code is the command's
    assert code == 1
    assert "has no llvm-mc" in lines["llvm"] and "ASMEVO_LLVM_BIN" in lines["llvm"]
    assert "has no llvm-mc" in lines["llvm gfx950"]
    assert lines["device emu"].startswith("not usable: no LLVM toolchain")


def test_the_assembler_lines_name_who_assembles_and_links():
    """Triton's LLVM worker by default (when installed); the subprocess tools, and why, otherwise."""
    from asmevo.triton_llvm import installed

    env = {"ASMEVO_LLVM_BIN": "", "ASMEVO_ASSEMBLER": ""}
    lines = doctor(env)[1]
    if installed():
        assert lines["asm gfx942"].startswith("Triton ") and "in a resident worker" in lines["asm gfx942"]
        assert lines["asm gfx950"].startswith("Triton ")
    lines = doctor({**env, "ASMEVO_ASSEMBLER": "tools"})[1]
    assert lines["asm gfx942"].startswith("llvm-mc + ld.lld of LLVM 19")
    assert lines["asm gfx942"].endswith("a process per call (not Triton's LLVM: ASMEVO_ASSEMBLER=tools)")
