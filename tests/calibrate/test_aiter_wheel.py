import subprocess

import pytest

from asmevo.calibrate import aiter_wheel
from asmevo.errors import AsmEvoError


def test_download_failure_is_one_actionable_line(tmp_path, monkeypatch):
    monkeypatch.setattr(aiter_wheel, "CACHE", tmp_path)
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(
        a, 1, "", "WARNING: retrying\nERROR: Could not find a version that satisfies the requirement\n"))
    with pytest.raises(aiter_wheel.AiterWheelError) as exc:
        aiter_wheel.fetch_wheel()
    msg = str(exc.value)
    assert isinstance(exc.value, AsmEvoError) and "\n" not in msg
    assert "amd-aiter==0.1.7.post2.dev18" in msg and "Could not find a version" in msg and str(tmp_path) in msg


def test_a_wheel_with_another_digest_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(aiter_wheel, "CACHE", tmp_path)
    (tmp_path / aiter_wheel.WHEEL).write_bytes(b"not the wheel")
    with pytest.raises(aiter_wheel.AiterWheelError, match="expected fe139d74"):
        aiter_wheel.fetch_wheel()


def test_elf_processor_reads_the_elf_machine_and_flags():
    elf = bytearray(80)
    elf[:4] = b"\x7fELF"
    elf[18:20] = (224).to_bytes(2, "little")
    elf[48:52] = (0x04C | 0x300).to_bytes(4, "little")  # gfx942 with xnack/sramecc bits set
    assert aiter_wheel.elf_processor(bytes(elf)) == "gfx942"
    elf[48:52] = (0x04F | 0x300).to_bytes(4, "little")  # gfx950 (LLVM's EF_AMDGPU_MACH_AMDGCN_GFX950)
    assert aiter_wheel.elf_processor(bytes(elf)) == "gfx950"
    elf[48:52] = (0x07F).to_bytes(4, "little")  # no processor
    assert aiter_wheel.elf_processor(bytes(elf)) is None
    elf[18:20] = (62).to_bytes(2, "little")  # x86-64
    assert aiter_wheel.elf_processor(bytes(elf)) is None


def test_host_file_and_code_object(wheel):
    table = aiter_wheel.host_file("aiter/configs/tuned_fmoe.csv")
    assert table.read_text().startswith("cu_num,token,model_dim")
    assert aiter_wheel.code_object("gemm_a8w8_m128_noSplitK.co").stat().st_size > 0
    with pytest.raises(aiter_wheel.AiterWheelError, match="no file"):
        aiter_wheel.host_file("aiter/configs/no_such.csv")
    with pytest.raises(aiter_wheel.AiterWheelError, match="no gfx942 code object"):
        aiter_wheel.code_object("no_such.co")


def test_gfx950_code_objects_extract_and_round_trip(wheel):
    """The wheel's 1220 gfx950 objects, apart from its gfx942 ones; an MXFP4 GEMM round-trips identical with
    its prefix-bit scaled MFMAs as `.long` words, a bf16 GEMM with none."""
    from asmevo.roundtrip import roundtrip

    files = aiter_wheel.extract(wheel, "gfx950")
    assert len(files) == 1220 and all("/aiter_meta/hsa/gfx950/" in str(f) for f in files)
    assert not set(files) & set(aiter_wheel.extract(wheel))
    by_name = {f.name: f for f in files}
    f4 = roundtrip(by_name["f4gemm_bf16_per1x32Fp4_BpreShuffle_128x128.co"])
    assert f4.status == "identical", f4.reason
    assert f4.notes == ["256 instruction(s) kept as raw words (v_mfma_scale_f32_16x16x128_f8f6f4)"]
    bf16 = roundtrip(by_name["bf16gemm_outf32_tn_32x64_pf3.co"])
    assert (bf16.status, bf16.notes) == ("identical", [])
