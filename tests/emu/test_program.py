"""The emulator refuses code it does not model (asmevo.emu.program.require_emulated), never running it as
another processor, and an instruction it cannot run exactly as a named error."""
from __future__ import annotations

import json

import numpy as np
import pytest

from asmevo.cli import main
from asmevo.codeobj import CodeObject
from asmevo.device import get_device
from asmevo.device.launch import LaunchSpec, run_launch
from asmevo.emu.program import require_emulated
from asmevo.errors import UnsupportedInstruction
from asmevo.target import UnsupportedTarget
from cotools import GFX950_SCALED_MFMA, gfx950_code_object

SPEC = {"kernel": "k", "grid": [1], "block": [64], "args": [{"buffer": "a", "dtype": "int32", "shape": [64], "init": "zeros"}]}


def _run(path):
    return run_launch(get_device("emu"), path, LaunchSpec.from_dict(SPEC), {"a": np.zeros(64, np.int32)})


# GFX950_SCALED_MFMA with neg_hi[0] (bit 8) set in the `.long` MFMA's prefix: LLVM decodes it without printing it
NEG_HI_PREFIX = GFX950_SCALED_MFMA.replace("0xd3ac6000", "0xd3ac6100")


def test_scaled_mfmas_run_and_a_prefix_field_llvm_drops_is_a_named_error_at_its_address(tmp_path):
    """The default body's scaled MFMAs run (the `.long` one sets prefix bits 0x6000, which select nothing);
    with neg_hi set in that prefix (LLVM's listing drops it too) the emulator refuses to run it as if clear."""
    _, result = _run(gfx950_code_object(tmp_path / "ok.co"))
    assert result.ok, result.findings
    path = gfx950_code_object(tmp_path / "scaled.co", NEG_HI_PREFIX)
    with pytest.raises(UnsupportedInstruction, match="v_mfma_ld_scale prefix sets vdst, neg_hi or clamp") as exc:
        _run(path)
    assert exc.value.mnemonic == "v_mfma_scale_f32_16x16x128_f8f6f4"
    assert exc.value.pc == CodeObject.from_path(path).text["address"] + 8 + 16  # s_load_dwordx2, first MFMA


def test_a_processor_without_a_record_is_refused(tmp_path):
    """Code for a processor the emulator has no description of never runs as another processor."""
    path = gfx950_code_object(tmp_path / "plain.co", "  s_endpgm")
    with pytest.raises(UnsupportedTarget, match="processor gfx9999 is not supported"):
        require_emulated("gfx9999", CodeObject.from_path(path).listing.instructions)


def test_cli_emulate_prints_one_line(tmp_path, capsys):
    path = gfx950_code_object(tmp_path / "scaled.co", NEG_HI_PREFIX)
    spec = tmp_path / "launch.json"
    spec.write_text(json.dumps(SPEC))
    assert main(["emulate", str(path), "--launch", str(spec), "--out", str(tmp_path / "out")]) != 0
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: unsupported: v_mfma_scale_f32_16x16x128_f8f6f4 at pc 0x") and "\n" not in err
    assert "v_mfma_ld_scale prefix sets vdst, neg_hi or clamp" in err
