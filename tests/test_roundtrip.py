"""Round trip (recover + rebuild, no edit) on code objects compiled here, and bad inputs."""
from __future__ import annotations

import json
import resource
import sys
from pathlib import Path

import pytest

from asmevo.cli import main
from asmevo.codeobj import CodeObject
from asmevo.isa import assemble as assembler
from asmevo.patch import patch
from asmevo.recover import disassemble_text, recover
from asmevo.roundtrip import roundtrip

from cotools import KINDS, gfx950_code_object

ALL_KINDS = sorted(KINDS) + ["triton"]


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_roundtrip_identical(code_object, kind):
    result = roundtrip(code_object(kind))
    assert result.status == "identical", result.reason


def test_roundtrip_cli_json_and_exit_code(code_object, tmp_path, capsys):
    out = tmp_path / "rt.json"
    rc = main(["roundtrip", str(code_object("hip-O3")), str(code_object("ocl-O2")), "--json", str(out)])
    assert rc == 0
    data = json.loads(out.read_text())
    assert [d["status"] for d in data] == ["identical", "identical"]
    assert "2 identical, 0 patch-only, 0 failed" in capsys.readouterr().out


def test_roundtrip_failed_input_exit_code(code_object, tmp_path, capsys):
    bad = tmp_path / "bad.co"
    bad.write_bytes(b"not an elf at all")
    rc = main(["roundtrip", str(code_object("hip-O3")), str(bad)])
    assert rc == 1
    out = capsys.readouterr().out
    assert "failed" in out and "not an ELF file" in out


def _cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def test_roundtrip_is_fast(code_object, monkeypatch):
    """CPU time (ours and the LLVM tools') of a round trip of the largest fixture (~20 kB) with the
    subprocess tools, whose CPU time is counted here: three tool runs, no per-instruction subprocesses.
    CPU time, not wall time, so that a busy machine does not make the test flaky."""
    monkeypatch.setenv("ASMEVO_ASSEMBLER", "tools")
    path = code_object("hip-O0")
    assembler._assemble.cache_clear()
    assembler._link.cache_clear()
    start = _cpu()
    assert roundtrip(path).status == "identical"
    assert _cpu() - start < 1.0


def test_an_encoding_llvm_mc_would_change_is_kept_as_raw_words(tmp_path):
    """`v_mov_b32 v0, 1.0` hand-encoded with a 32-bit literal (0x3f800000) where llvm-mc writes the inline
    constant (4 bytes shorter): the recovered source keeps the original words, so the rebuild is identical."""
    sys.path.insert(0, str(Path(__file__).parent / "emu"))
    from emutools import asm

    path = tmp_path / "literal.co"
    path.write_bytes(asm("  .long 0x7e0002ff, 0x3f800000\n  s_endpgm").data)
    result = roundtrip(path)
    assert result.status == "identical" and result.notes == ["1 instruction(s) kept as raw words (v_mov_b32_e32)"]
    line = next(ln for ln in recover(path).source.splitlines() if "v_mov_b32" in ln)
    assert line.startswith("\t.long 0x7e0002ff, 0x3f800000") and "re-encodes as f202007e (4 bytes, not 8)" in line


def test_patch_only_when_the_rebuild_differs(code_object, monkeypatch):
    """A rebuild that is not exact leaves the file `patch-only`, naming the first difference, once a no-op
    in-place patch reproduces K0 byte for byte. No object seen so far takes this path (encodings llvm-mc
    would change are kept as raw words, above), so a rebuild from a source with its first `s_endpgm` turned
    into `s_nop 0` stands in for an inexact one."""
    import asmevo.roundtrip as rt

    path = code_object("hip-O3")
    k0 = CodeObject.from_path(path)
    rebuild = rt.rebuild_source

    def inexact(source, info, **kwargs):
        return rebuild(source.replace("\ts_endpgm", "\ts_nop 0", 1), info, **kwargs)

    monkeypatch.setattr(rt, "rebuild_source", inexact)
    result = roundtrip(path)
    assert result.status == "patch-only" and result.reason.startswith("text differs at 0x"), result.reason
    differs = int(result.reason.split()[3], 16)
    item = next(i for i in disassemble_text(k0) if i.address <= differs < i.address + i.size)
    at = item.address
    assert item.text.startswith("s_endpgm")
    assert patch(path, at, at + item.size, item.original) == k0.data
    nop = patch(path, at, at + item.size, "s_nop 0")
    changed = [i for i, (a, b) in enumerate(zip(nop, k0.data)) if a != b]
    offset = k0.address_to_offset(at)
    assert len(nop) == len(k0.data) and changed and offset <= changed[0] < offset + 4



def test_a_gfx950_scaled_mfma_with_prefix_bits_no_llvm_expresses_is_kept_as_long_words(tmp_path):
    """gfx950 (LLVM >= 21): the `.long` words are an AITer MXFP4 `v_mfma_scale_f32_16x16x128_f8f6f4`
    (f4gemm_bf16_per1x32Fp4_BpreShuffle_128x128.co at 0x3564) whose `v_mfma_ld_scale` prefix sets bits
    0x6000 of dword 0; LLVM decodes it but writes those bits as 0. Recovery keeps exactly that instruction
    as raw words, naming the bits, and the rebuild is identical; the same instruction without those bits
    stays text."""
    path = gfx950_code_object(tmp_path / "scaled.co")
    assert CodeObject.from_path(path).target.processor == "gfx950"
    result = roundtrip(path)
    assert result.status == "identical", result.reason
    assert result.notes == ["1 instruction(s) kept as raw words (v_mfma_scale_f32_16x16x128_f8f6f4)"]
    rec = recover(path)
    [raw] = rec.info["raw_words"]
    assert raw["reason"] == "re-encodes as 0000acd38c110300008cadd348110284 (bits 0x6000 of dword 0 differ)"
    lines = [ln for ln in rec.source.splitlines() if "v_mfma_scale" in ln]
    assert lines[0].startswith("\tv_mfma_scale_f32_16x16x128_f8f6f4 a[4:7], v[8:11], v[16:19], a[4:7], v1, v2")
    assert lines[1].startswith("\t.long 0xd3ac6000, 0x0003118c, 0xd3ad8c00, 0x84021148")
