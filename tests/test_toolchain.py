"""asmevo.toolchain: the toolchain per processor, and the one line when the one found is too old."""
from __future__ import annotations

from pathlib import Path

import pytest

from asmevo.cli import main
from asmevo.errors import ToolchainTooOld
from asmevo.target import processor
from asmevo.toolchain import find_toolchain

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
