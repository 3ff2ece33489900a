"""The emulator refuses code it does not model (asmevo.emu.program.require_emulated), never running it as gfx942."""
from __future__ import annotations

import json

import numpy as np
import pytest

from asmevo.cli import main
from asmevo.codeobj import CodeObject
from asmevo.device import get_device
from asmevo.device.launch import LaunchSpec, run_launch
from asmevo.errors import UnsupportedInstruction
from asmevo.target import UnsupportedTarget
from cotools import gfx950_code_object

SPEC = {"kernel": "k", "grid": [1], "block": [64], "args": [{"buffer": "a", "dtype": "int32", "shape": [64], "init": "zeros"}]}


def _run(path):
    return run_launch(get_device("emu"), path, LaunchSpec.from_dict(SPEC), {"a": np.zeros(64, np.int32)})


def test_a_cdna4_instruction_is_a_named_error_at_its_address(tmp_path):
    path = gfx950_code_object(tmp_path / "scaled.co")
    with pytest.raises(UnsupportedInstruction) as exc:
        _run(path)
    assert exc.value.mnemonic == "v_mfma_scale_f32_16x16x128_f8f6f4"
    assert exc.value.pc == CodeObject.from_path(path).text["address"] + 8  # after the 8-byte s_load_dwordx2
    assert "gfx950 (CDNA4) instruction the emulator does not model" in str(exc.value)


def test_gfx950_code_of_gfx942_instructions_is_refused_too(tmp_path):
    """Shared instructions differ on CDNA4 (fp8 formats, hazards): the processor itself is refused."""
    path = gfx950_code_object(tmp_path / "plain.co", "  s_endpgm")
    with pytest.raises(UnsupportedTarget, match="^the emulator runs gfx942 code only, not gfx950: .*OCP E4M3"):
        _run(path)


def test_cli_emulate_prints_one_line(tmp_path, capsys):
    path = gfx950_code_object(tmp_path / "scaled.co")
    spec = tmp_path / "launch.json"
    spec.write_text(json.dumps(SPEC))
    assert main(["emulate", str(path), "--launch", str(spec), "--out", str(tmp_path / "out")]) != 0
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: unsupported: v_mfma_scale_f32_16x16x128_f8f6f4 at pc 0x") and "\n" not in err
