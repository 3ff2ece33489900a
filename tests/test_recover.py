"""Recovery: the source llvm-mc accepts, recovery.json, raw words, and bad inputs."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from asmevo.cli import main
from asmevo.codeobj import CodeObject
from asmevo.rebuild import rebuild
from asmevo.recover import recover
from asmevo.roundtrip import roundtrip


def _recover_cli(path, out):
    assert main(["recover", str(path), "-o", str(out)]) == 0
    return (out / f"{path.stem}.s").read_text(), json.loads((out / "recovery.json").read_text())


def test_source_structure(code_object, tmp_path):
    path = code_object("hip-O3")
    source, info = _recover_cli(path, tmp_path)
    assert '\t.amdgcn_target "amdgcn-amd-amdhsa--gfx942"' in source
    assert "\t.amdhsa_code_object_version 5" in source
    names = [k["name"] for k in info["kernels"]]
    assert names == ["add", "lds", "spill", "mfma", "calls", "loop"]
    for name in names:
        for directive in (f".globl {name}", f".type {name},@function", f".amdhsa_kernel {name}",
                          f".size {name}, .Lend_{name}-{name}"):
            assert directive in source
    assert re.search(r"^\.amdgpu_metadata|^\t\.amdgpu_metadata\n---\namdhsa\.kernels:", source, re.M)
    assert "\t.end_amdgpu_metadata" in source
    assert [f["name"] for f in info["functions"]] == ["helper"]
    assert info["target"] == "amdgcn-amd-amdhsa--gfx942" and info["code_object_version"] == 5


def test_branches_are_symbolic(code_object, tmp_path):
    source, _ = _recover_cli(code_object("hip-O3"), tmp_path)
    branches = re.findall(r"^\t(s_c?branch\w*) (\S+)", source, re.M)
    assert branches
    assert all(not re.match(r"^-?\d+$", target) for _, target in branches)
    for _, target in branches:
        assert re.search(rf"^{re.escape(target)}:", source, re.M)


def test_line_map(code_object, tmp_path):
    source, info = _recover_cli(code_object("hip-O1"), tmp_path)
    lines = source.splitlines()
    mapped = [(addr, line) for addr, line, _ in info["instructions"] if line]
    assert len(mapped) > 50
    for addr, line in mapped:
        assert f"; 0x{addr:x}" in lines[line - 1]
    co = CodeObject.from_path(code_object("hip-O1"))
    assert sum(size for _, _, size in info["instructions"]) == co.text["size"]


@pytest.mark.parametrize("kind,target,version", [
    ("hip-sramecc", "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-", 5),
    ("hip-xnack", "amdgcn-amd-amdhsa--gfx942:xnack+", 5),
    ("hip-v4", "amdgcn-amd-amdhsa--gfx942", 4),
    ("hip-v6", "amdgcn-amd-amdhsa--gfx942", 6),
])
def test_target_and_version(code_object, kind, target, version):
    rec = recover(code_object(kind))
    assert f'.amdgcn_target "{target}"' in rec.source
    assert f".amdhsa_code_object_version {version}" in rec.source


def test_lds_scratch_agpr_fields(code_object):
    info = recover(code_object("hip-O3")).info
    k = {x["name"]: x for x in info["kernels"]}
    assert k["lds"]["descriptor"]["group_segment_fixed_size"] == 1024
    assert k["spill"]["descriptor"]["private_segment_fixed_size"] > 0
    assert k["spill"]["descriptor"]["enable_private_segment"] == 1
    assert k["mfma"]["metadata"][".agpr_count"] == 16 and k["mfma"]["k0_need"]["agpr_count"] == 16


def test_triton_preload(code_object):
    rec = recover(code_object("triton"))
    assert re.search(r"\.amdhsa_user_sgpr_kernarg_preload_length [1-9]", rec.source)
    assert rec.info["raw_words"] == []


def test_raw_words_reported_and_exact(code_object, tmp_path):
    """A literal where llvm-mc would pick an inline constant, and an undecodable word, survive
    as raw `.long` words with the original text in a comment."""
    rec = recover(code_object("hip-O3"))
    src = rec.write(tmp_path / "a")
    text = src.read_text().replace(
        "add:                          ; kernel\n",
        "add:                          ; kernel\n\t.long 0x7e0002ff, 0x3f800000\n\t.long 0xffffffff\n", 1)
    src.write_text(text)
    k1 = tmp_path / "k1.co"
    rebuild(src, k1)
    rec1 = recover(k1)
    raw = rec1.info["raw_words"]
    assert len(raw) == 2
    assert raw[0]["text"].startswith("v_mov_b32_e32 v0") and "re-encodes as" in raw[0]["reason"]
    assert "0x7e0002ff, 0x3f800000" in rec1.source
    assert roundtrip(k1).status == "identical"


def _cli_error(args, capsys):
    rc = main(args)
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert len(err) == 1 and err[0].startswith("error: ") and "Traceback" not in err[0]
    return err[0]


def test_bad_inputs(code_object, tmp_path, capsys):
    out = str(tmp_path / "out")
    not_elf = tmp_path / "x.co"
    not_elf.write_bytes(b"hello world, not an ELF")
    assert "not an ELF" in _cli_error(["recover", str(not_elf), "-o", out], capsys)
    assert "not AMDGPU" in _cli_error(["recover", sys.executable, "-o", out], capsys)
    data = code_object("hip-O3").read_bytes()
    trunc = tmp_path / "t.co"
    trunc.write_bytes(data[: len(data) // 2])
    assert "truncated" in _cli_error(["recover", str(trunc), "-o", out], capsys)
    v3 = tmp_path / "v3.co"
    v3.write_bytes(data[:8] + bytes([1]) + data[9:])
    assert "unsupported code-object" in _cli_error(["recover", str(v3), "-o", out], capsys)
    assert "no such file" in _cli_error(["recover", str(tmp_path / "missing.co"), "-o", out], capsys)
    assert "no such file" in _cli_error(["rebuild", str(tmp_path / "missing.s"), "-o", out], capsys)


def test_missing_toolchain(code_object, tmp_path):
    env = {"ASMEVO_LLVM_BIN": str(tmp_path), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-m", "asmevo.cli", "recover", str(code_object("hip-O3")),
                           "-o", str(tmp_path / "o")], capture_output=True, text=True, env=env)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and len(proc.stderr.strip().splitlines()) == 1
    assert "llvm-mc" in proc.stderr


def test_function_starting_with_padding_nops(code_object, tmp_path):
    """s_nop 0 at a function's first address is code, not alignment padding."""
    rec = recover(code_object("hip-O3"))
    src = rec.write(tmp_path / "a")
    src.write_text(src.read_text().replace(
        "lds:                          ; kernel\n", "lds:                          ; kernel\n\ts_nop 0\n\ts_nop 0\n", 1))
    k1 = tmp_path / "k1.co"
    rebuild(src, k1)
    rec1 = recover(k1)
    assert re.search(r"^lds:.*\n\ts_nop 0 +; 0x[0-9a-f]+\n\ts_nop 0 ", rec1.source, re.M)
    assert roundtrip(k1).status == "identical"


def test_descriptor_fields_without_directive_are_carried(code_object, tmp_path):
    """Bits no `.amdhsa_*` directive sets (priority, memory-exception enable) survive the rebuild."""
    from asmevo.codeobj.descriptor import KernelDescriptor
    data = bytearray(code_object("hip-O3").read_bytes())
    co = CodeObject(bytes(data))
    kernel = co.kernel("add")
    desc = KernelDescriptor.decode(co.read(kernel.descriptor_address, 64))
    desc.fields["priority"] = 2
    desc.fields["enable_exception_memory"] = 1
    off = co.address_to_offset(kernel.descriptor_address)
    data[off:off + 64] = desc.encode()
    k0 = tmp_path / "k0.co"
    k0.write_bytes(bytes(data))
    rec = recover(k0)
    assert rec.info["kernels"][0]["carried_fields"] == {"priority": 2, "enable_exception_memory": 1}
    assert "written by the rebuild from recovery.json: priority=2, enable_exception_memory=1" in rec.source
    assert roundtrip(k0).status == "identical"
