"""In-place patching: same-size replacement, padding, branch resolution and refusals."""
from __future__ import annotations

import pytest

from asmevo.codeobj import CodeObject
from asmevo.errors import CodeObjectError, PatchError
from asmevo.isa.disasm import branch_target
from asmevo.patch import patch
from asmevo.recover import disassemble_text

S_NOP_0 = bytes.fromhex("000080bf")


@pytest.fixture(scope="module")
def k0(code_object):
    path = code_object("hip-O3")
    co = CodeObject.from_path(path)
    return path, co, disassemble_text(co)


def _items_of(k0, kernel):
    _, co, items = k0
    k = co.kernel(kernel)
    return [i for i in items if k.code_address <= i.address < k.code_address + k.code_size]


def _diff_range(a: bytes, b: bytes) -> tuple[int, int]:
    idx = [i for i in range(len(a)) if a[i] != b[i]]
    return (idx[0], idx[-1] + 1) if idx else (0, 0)


def test_same_instruction_is_a_no_op(k0):
    path, co, _ = k0
    first = _items_of(k0, "add")[0]
    assert patch(path, first.address, first.address + first.size, first.original) == co.data


def test_shorter_patch_is_padded_and_nothing_else_changes(k0):
    path, co, _ = k0
    items = _items_of(k0, "add")
    start, end = items[0].address, items[2].address + items[2].size  # 8 + 8 + 4 bytes
    out = patch(path, start, end, "s_mov_b32 s3, 0\n; a comment\ns_mov_b32 s4, 1")
    assert len(out) == len(co.data)
    off = co.address_to_offset(start)
    lo, hi = _diff_range(co.data, out)
    assert off <= lo and hi <= off + (end - start)
    assert out[off + 8:off + 20] == S_NOP_0 * 3
    assert CodeObject(out).kernel("add").descriptor.encode() == co.kernel("add").descriptor.encode()


def test_growing_is_refused(k0):
    path, _, _ = k0
    first = _items_of(k0, "add")[0]
    with pytest.raises(PatchError, match="grow"):
        patch(path, first.address, first.address + first.size, "s_nop 0\ns_nop 0\ns_nop 0")


def test_splitting_an_instruction_is_refused(k0):
    path, _, _ = k0
    eight = next(i for i in _items_of(k0, "add") if i.size == 8)
    with pytest.raises(PatchError, match="split"):
        patch(path, eight.address + 4, eight.address + 8, "s_nop 0")


def test_out_of_text_is_refused(k0):
    path, co, _ = k0
    with pytest.raises(PatchError, match="not inside the text"):
        patch(path, co.text["address"] - 8, co.text["address"], "s_nop 0")


@pytest.mark.parametrize("text,reason", [
    ("v_mov_b32_e32 v200, 0", "VGPRs"),
    ("s_mov_b32 s90, 0", "SGPRs"),
    ("v_accvgpr_write_b32 a100, 0", "AGPRs"),
    ("scratch_load_dword v1, off, s0", "private segment"),
    ("ds_read_b32 v1, v0", "LDS"),
])
def test_resource_growth_is_refused(k0, text, reason):
    path, _, _ = k0
    first = _items_of(k0, "add")[0]
    with pytest.raises(PatchError, match=reason):
        patch(path, first.address, first.address + first.size, text)


def test_bad_assembly_is_refused(k0):
    path, _, _ = k0
    first = _items_of(k0, "add")[0]
    with pytest.raises(PatchError, match="does not assemble"):
        patch(path, first.address, first.address + first.size, "v_bogus v1")


def test_branches_to_k0_labels_and_symbols(k0):
    path, co, _ = k0
    items = _items_of(k0, "loop")
    last = items[-1]
    first = items[0]
    text = f"s_branch .Lbb_{last.address:x}\ns_cbranch_scc0 loop"
    out = patch(path, first.address, first.address + first.size, text)
    off = co.address_to_offset(first.address)
    assert branch_target(first.address, out[off:off + 4]) == last.address
    assert branch_target(first.address + 4, out[off + 4:off + 8]) == co.kernel("loop").code_address


def test_branch_to_patch_local_label(k0):
    path, co, _ = k0
    items = _items_of(k0, "add")
    start, end = items[0].address, items[1].address + items[1].size
    out = patch(path, start, end, "s_branch skip\ns_nop 1\nskip:\ns_nop 2")
    off = co.address_to_offset(start)
    assert branch_target(start, out[off:off + 4]) == start + 8


def test_unknown_label_is_refused(k0):
    path, _, _ = k0
    first = _items_of(k0, "add")[0]
    with pytest.raises(PatchError, match="not a label"):
        patch(path, first.address, first.address + first.size, "s_branch nowhere")


def test_patch_bad_input(tmp_path):
    bad = tmp_path / "x.co"
    bad.write_bytes(b"\x7fELF" + bytes(10))
    with pytest.raises(CodeObjectError):
        patch(bad, 0, 4, "s_nop 0")


def test_patch_cli(k0, tmp_path, capsys):
    from asmevo.cli import main
    path, co, _ = k0
    first = _items_of(k0, "add")[0]
    src = tmp_path / "p.s"
    src.write_text("s_nop 0\n")
    out = tmp_path / "k1.co"
    assert main(["patch", str(path), hex(first.address), hex(first.address + first.size), str(src),
                 "-o", str(out)]) == 0
    data = out.read_bytes()
    off = co.address_to_offset(first.address)
    assert data[off:off + first.size] == S_NOP_0 * (first.size // 4)
    src.write_text("s_nop 0\ns_nop 0\ns_nop 0\n")
    assert main(["patch", str(path), hex(first.address), hex(first.address + first.size), str(src),
                 "-o", str(out)]) == 2
    assert "error: patch is 12 bytes, range is 8" in capsys.readouterr().err


def test_a_gfx950_patch_assembles_with_the_gfx950_toolchain(tmp_path):
    """gfx950 patches are encoded by the toolchain found for gfx950 (LLVM >= 21): `s_waitcnt` -> `s_nop 0`
    changes exactly its 4 bytes."""
    from cotools import gfx950_code_object

    path = gfx950_code_object(tmp_path / "k950.co")
    k0 = CodeObject.from_path(path)
    wait = next(i for i in disassemble_text(k0) if i.text and i.text.startswith("s_waitcnt"))
    out = patch(path, wait.address, wait.address + 4, "s_nop 0")
    at = k0.text["offset"] + wait.address - k0.text["address"]
    assert out[at:at + 4] == (0xBF800000).to_bytes(4, "little")
    assert out[:at] == k0.data[:at] and out[at + 4:] == k0.data[at + 4:]
