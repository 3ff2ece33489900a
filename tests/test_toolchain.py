"""asmevo.toolchain: the toolchain per processor, the one line when the one found is too old, and who
assembles and links (Triton's LLVM worker or the subprocess tools)."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from asmevo import toolchain, triton_llvm
from asmevo.cli import main
from asmevo.errors import ToolchainError, ToolchainTooOld
from asmevo.target import processor
from asmevo.toolchain import find_assembler, find_toolchain

from cotools import gfx950_code_object


def test_each_processor_gets_a_toolchain_at_least_its_minimum():
    assert find_toolchain("gfx950").major >= processor("gfx950").min_llvm == 21
    assert find_toolchain("gfx942") == find_toolchain()  # gfx942 keeps the first toolchain found
    assert find_toolchain("gfx942").major >= processor("gfx942").min_llvm == 19


@pytest.fixture
def llvm_before_21(monkeypatch) -> Path:
    """ASMEVO_LLVM_BIN set to the gfx942 toolchain's directory when that is older than LLVM 21."""
    tc = find_toolchain("gfx942")
    if tc.major >= 21 or "llvm-mc" not in tc.paths:
        pytest.skip(f"the gfx942 toolchain here is LLVM {tc.major} from {tc.origin}, not an LLVM < 21 directory")
    bin_dir = Path(tc.path("llvm-mc")).parent
    monkeypatch.setenv("ASMEVO_LLVM_BIN", str(bin_dir))
    return bin_dir


def test_gfx950_with_only_an_older_llvm_is_one_named_line(llvm_before_21):
    with pytest.raises(ToolchainTooOld) as exc:
        find_toolchain("gfx950")
    major = find_toolchain("gfx942").major
    assert str(exc.value) == (f"gfx950 needs LLVM >= 21; found LLVM {major} at ASMEVO_LLVM_BIN={llvm_before_21}; "
                              "point ASMEVO_LLVM_BIN at LLVM >= 21 or unset it")


def test_cli_recover_of_gfx950_with_an_older_llvm_prints_the_line(llvm_before_21, tmp_path, capsys):
    """The CLI path: a gfx950 code object (ELF flags only need to name gfx950) fails on its toolchain."""
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("ASMEVO_LLVM_BIN")
        path = gfx950_code_object(tmp_path / "k950.co")
    assert main(["recover", str(path), "-o", str(tmp_path / "rec")]) != 0
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: gfx950 needs LLVM >= 21; found LLVM ") and "\n" not in err


# ---- who assembles and links: find_assembler


def _fake_triton(major: int) -> SimpleNamespace:
    return SimpleNamespace(info=SimpleNamespace(major=major))


@pytest.fixture
def no_overrides(monkeypatch):
    monkeypatch.delenv("ASMEVO_LLVM_BIN", raising=False)
    monkeypatch.delenv("ASMEVO_ASSEMBLER", raising=False)


@pytest.mark.skipif(not triton_llvm.installed(), reason="Triton is not installed")
def test_triton_assembles_by_default(no_overrides):
    for name in ("gfx942", "gfx950"):
        assert isinstance(find_assembler(name), triton_llvm.TritonLLVM)


def test_explicit_llvm_bin_or_tools_choose_the_subprocess_toolchain(no_overrides, monkeypatch):
    tc = find_toolchain("gfx942")
    monkeypatch.setenv("ASMEVO_ASSEMBLER", "tools")
    assert find_assembler("gfx942") == tc
    monkeypatch.delenv("ASMEVO_ASSEMBLER")
    if "llvm-mc" in tc.paths:
        bin_dir = str(Path(tc.path("llvm-mc")).parent)
        monkeypatch.setenv("ASMEVO_LLVM_BIN", bin_dir)
        assert find_assembler("gfx942").origin == f"ASMEVO_LLVM_BIN={bin_dir}"


def test_triton_serves_only_processors_its_llvm_is_new_enough_for(no_overrides, monkeypatch):
    old = _fake_triton(20)  # at least gfx942's 19, below gfx950's 21
    monkeypatch.setattr(toolchain, "triton_backend", lambda: (old, ""))
    assert find_assembler("gfx942") is old
    assert find_assembler("gfx950") == find_toolchain("gfx950")
    monkeypatch.setenv("ASMEVO_ASSEMBLER", "triton")
    with pytest.raises(ToolchainError, match="^ASMEVO_ASSEMBLER=triton: Triton's LLVM 20 is older than gfx950 needs"):
        find_assembler("gfx950")


def test_an_unusable_triton_falls_back_to_the_tools(no_overrides, monkeypatch):
    monkeypatch.setattr(toolchain, "triton_backend", lambda: (None, "Triton's LLVM is not usable: ImportError: x"))
    assert find_assembler("gfx942") == find_toolchain("gfx942")
    monkeypatch.setenv("ASMEVO_ASSEMBLER", "triton")
    with pytest.raises(ToolchainError, match="^ASMEVO_ASSEMBLER=triton: Triton's LLVM is not usable"):
        find_assembler("gfx942")


def test_an_unknown_assembler_choice_is_one_line(no_overrides, monkeypatch):
    monkeypatch.setenv("ASMEVO_ASSEMBLER", "gas")
    with pytest.raises(ToolchainError, match="^ASMEVO_ASSEMBLER=gas is not one of auto, tools, triton$"):
        find_assembler("gfx942")
