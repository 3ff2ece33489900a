"""Rebuild: unedited rebuilds are identical, edits rescan resources, the ABI is frozen."""
from __future__ import annotations

import re

import pytest

from asmevo.cli import main
from asmevo.codeobj import CodeObject
from asmevo import rebuild as rebuild_module
from asmevo import triton_llvm
from asmevo.errors import RebuildError
from asmevo.rebuild import rebuild
from asmevo.recover import recover
from asmevo.roundtrip import compare

from cotools import text_bytes


@pytest.fixture
def recovered(code_object, tmp_path):
    """(K0 path, source path) of the multi-kernel HIP object recovered into tmp_path."""
    k0 = code_object("hip-O3")
    return k0, recover(k0).write(tmp_path / "rec")


def _kernel(path, name):
    co = CodeObject.from_path(path)
    return co.kernel(name)


def _edit(src, old, new, count=1):
    text = src.read_text()
    assert old in text
    src.write_text(text.replace(old, new, count))


def test_unedited_rebuild_is_identical(recovered, tmp_path, capsys):
    k0, src = recovered
    out = tmp_path / "k2.co"
    assert main(["rebuild", str(src), "-o", str(out)]) == 0
    assert compare(CodeObject.from_path(k0), CodeObject.from_path(out)) is None
    assert text_bytes(out) == text_bytes(k0)
    for a, b in zip(CodeObject.from_path(k0).kernels, CodeObject.from_path(out).kernels):
        assert a.descriptor.encode()[:16] == b.descriptor.encode()[:16]
        assert a.descriptor.encode()[24:] == b.descriptor.encode()[24:]
        assert b.entry_address == b.code_address


def test_metadata_is_parsed_only_when_edited(recovered, tmp_path, monkeypatch):
    k0, src = recovered
    real_load = rebuild_module.yaml.load
    monkeypatch.setattr(rebuild_module.yaml, "load", None)  # unedited: recovery.json's metadata
    rebuild(src, tmp_path / "k2.co")
    monkeypatch.setattr(rebuild_module.yaml, "load", real_load)
    _edit(src, ".wavefront_size: 64", ".wavefront_size: 0x40")  # the same value, spelt otherwise
    rebuild(src, tmp_path / "k3.co")
    for out in ("k2.co", "k3.co"):
        assert compare(CodeObject.from_path(k0), CodeObject.from_path(tmp_path / out)) is None


def test_edit_raises_vgprs_and_metadata(recovered, tmp_path):
    k0, src = recovered
    _edit(src, "add:                          ; kernel\n",
          "add:                          ; kernel\n\tv_mov_b32_e32 v40, 0\n")
    out = tmp_path / "k2.co"
    rebuild(src, out)
    before, after = _kernel(k0, "add"), _kernel(out, "add")
    assert after.metadata[".vgpr_count"] == 41
    assert after.descriptor["granulated_workitem_vgpr_count"] == 5  # 48 VGPRs
    assert after.descriptor.accum_offset >= 41
    assert after.metadata[".sgpr_count"] == before.metadata[".sgpr_count"]
    # Other kernels are untouched.
    assert _kernel(out, "lds").descriptor.encode()[24:] == _kernel(k0, "lds").descriptor.encode()[24:]


def test_edit_adds_agprs(recovered, tmp_path):
    k0, src = recovered
    _edit(src, "mfma:                          ; kernel\n",
          "mfma:                          ; kernel\n\tv_accvgpr_write_b32 a40, 0\n")
    out = tmp_path / "k2.co"
    rebuild(src, out)
    k = _kernel(out, "mfma")
    accum = k.descriptor.accum_offset
    assert k.metadata[".agpr_count"] == 41
    assert k.descriptor.vgpr_granule_count >= accum + 41
    assert k.metadata[".vgpr_count"] == accum + 41


def test_shrink_versus_keep(recovered, tmp_path):
    k0, src = recovered
    text = src.read_text()
    body = re.search(r"^add:.*?\n(.*?)^\.Lend_add:", text, re.M | re.S).group(1)
    src.write_text(text.replace(body, "\ts_endpgm\n", 1))
    kept, shrunk = tmp_path / "keep.co", tmp_path / "shrink.co"
    rebuild(src, kept)
    rebuild(src, shrunk, shrink=True)
    k0_add = _kernel(k0, "add")
    assert _kernel(kept, "add").metadata[".vgpr_count"] == k0_add.metadata[".vgpr_count"]
    assert _kernel(kept, "add").descriptor.fields == k0_add.descriptor.fields
    small = _kernel(shrunk, "add")
    assert small.metadata[".vgpr_count"] == 1
    assert small.metadata[".sgpr_count"] == 3 + 6  # kernarg ptr + workgroup id + extra SGPRs


def test_candidates_naming_fewer_registers_shrink(recovered):
    _, src = recovered
    text = src.read_text()
    info = rebuild_module.load_info(src)
    assert not rebuild_module.shrinks(text, info)
    body = re.search(r"^add:.*?\n(.*?)^\.Lend_add:", text, re.M | re.S).group(1)
    fewer = text.replace(body, "\ts_endpgm\n", 1)
    assert rebuild_module.shrinks(fewer, info)
    # registers addressed through M0 are not all named: never shrink
    assert not rebuild_module.shrinks(text.replace(body, "\tv_movrels_b32_e32 v0, v1\n\ts_endpgm\n", 1), info)


@pytest.mark.parametrize("old,new,reason", [
    (".kernarg_segment_size: 280", ".kernarg_segment_size: 288", ".kernarg_segment_size"),
    (".wavefront_size: 64", ".wavefront_size: 32", ".wavefront_size"),
    (".max_flat_workgroup_size: 1024", ".max_flat_workgroup_size: 256", ".max_flat_workgroup_size"),
    ("\t\t.amdhsa_kernarg_size 280", "\t\t.amdhsa_kernarg_size 296", ".amdhsa_kernarg_size"),
    ("    .name: add\n", "    .name: add2\n", "kernels changed"),
])
def test_abi_change_refused(recovered, tmp_path, capsys, old, new, reason):
    _, src = recovered
    _edit(src, old, new)
    with pytest.raises(RebuildError, match=re.escape(reason)):
        rebuild(src, tmp_path / "k2.co")
    assert main(["rebuild", str(src), "-o", str(tmp_path / "k2.co")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and reason in err


def test_scratch_without_private_segment_refused(recovered, tmp_path):
    _, src = recovered
    _edit(src, "add:                          ; kernel\n",
          "add:                          ; kernel\n\tscratch_load_dword v1, off, s0\n")
    with pytest.raises(RebuildError, match="scratch"):
        rebuild(src, tmp_path / "k2.co")


@pytest.mark.parametrize("assembler", ["tools", "triton"])
def test_assembler_error_names_the_line(recovered, tmp_path, capsys, monkeypatch, assembler):
    """Whoever assembles (asmevo.toolchain.find_assembler), the error is one line naming the line."""
    if assembler == "triton" and not triton_llvm.installed():
        pytest.skip("Triton is not installed")
    monkeypatch.setenv("ASMEVO_ASSEMBLER", assembler)
    _, src = recovered
    _edit(src, "add:                          ; kernel\n", "add:                          ; kernel\n\tv_bogus v1\n")
    line = src.read_text().splitlines().index("\tv_bogus v1") + 1
    with pytest.raises(RebuildError, match=rf"hip-O3\.s:{line}:\d+: error: invalid instruction"):
        rebuild(src, tmp_path / "k2.co")
    assert main(["rebuild", str(src), "-o", str(tmp_path / "k2.co")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and f"hip-O3.s:{line}:" in err


def test_missing_recovery_json(recovered, tmp_path):
    _, src = recovered
    (src.parent / "recovery.json").unlink()
    with pytest.raises(RebuildError, match="recovery.json"):
        rebuild(src, tmp_path / "k2.co")


def test_pc_relative_call_follows_edits(recovered, tmp_path):
    """The getpc/add/addc address of `helper` is a relocation in the source, so code inserted
    before it keeps the call pointing at `helper`."""
    k0, src = recovered
    text = src.read_text()
    assert "helper@rel32@lo+4" in text and "helper@rel32@hi+12" in text
    _edit(src, "calls:                          ; kernel\n",
          "calls:                          ; kernel\n\ts_nop 0\n\ts_nop 1\n")
    out = tmp_path / "k2.co"
    rebuild(src, out)
    co = CodeObject.from_path(out)
    from asmevo.recover import pc_relative_pairs, disassemble_text
    pairs = pc_relative_pairs(disassemble_text(co))
    helper = next(s["st_value"] for s in co.elf.get_section_by_name(".symtab").iter_symbols() if s.name == "helper")
    assert pairs and all(target == helper for _, _, _, target in pairs)


def test_resource_scan_and_policy(code_object):
    from asmevo.isa.resources import choose, declared, required, scan_lines
    use = scan_lines(["v_cmp_gt_i32_e32 s4, v0", "v_mov_b32 v[4:7], a3", "s_load_dword s33, s[0:1], 0x0",
                      "ds_read_b32 v1, v2", "scratch_load_dword v9, off, s0", "s_branch label_s99",
                      "v_add_f32 v1, 0xa1, -v[2:3]", "v_mov_b32 v5, sext(v40)"])
    assert (use.vgprs, use.agprs, use.sgprs) == (41, 4, 34)
    assert use.vcc and use.lds and use.scratch and not use.flat_scratch
    assert scan_lines(["v_cndmask_b32_e32 v1, v2, v3"]).vcc
    k = CodeObject.from_path(code_object("hip-O3")).kernel("mfma")
    need = required(use, k.descriptor, "gfx942")
    assert need.accum_offset == 44 and need.next_free_vgpr == 48 and need.sgpr_count == 34 + 6
    have = declared(k.descriptor, k.metadata, "gfx942")
    kept = choose(need, have, shrink=False)
    assert kept.next_free_vgpr >= max(need.next_free_vgpr, have.next_free_vgpr)
    assert choose(need, have, shrink=True) == need


def test_resource_scan_reads_the_processors_table():
    from asmevo.isa.resources import scan_lines
    lds_only_by_gfx950 = ["ds_read_b64_tr_b16 v[0:1], v2"]  # a CDNA4 transposing LDS read
    assert scan_lines(lds_only_by_gfx950, "gfx950").lds
    assert not scan_lines(lds_only_by_gfx950).lds  # gfx942's table does not know it: the assembler's to report


COMPUTED_JUMP = """\
\t.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
\t.amdhsa_code_object_version 5
\t.text
\t.globl k
\t.p2align 8
\t.type k,@function
k:
\ts_getpc_b64 s[0:1]
.Lpc:
\ts_add_u32 s0, s0, .Ltarget-.Lpc
\ts_addc_u32 s1, s1, 0
\ts_setprio 3
\ts_setpc_b64 s[0:1]
\ts_nop 0
.Ltarget:
\tbuffer_load_dword v1, v0, s[4:7], 0 offen
\ts_endpgm
.Lend:
\t.size k, .Lend-k
\t.rodata
\t.p2align 6
\t.amdhsa_kernel k
\t\t.amdhsa_user_sgpr_kernarg_segment_ptr 1
\t\t.amdhsa_next_free_vgpr 2
\t\t.amdhsa_next_free_sgpr 8
\t\t.amdhsa_accum_offset 4
\t.end_amdhsa_kernel
\t.amdgpu_metadata
---
amdhsa.kernels:
  - .args: []
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 0
    .max_flat_workgroup_size: 256
    .name: k
    .private_segment_fixed_size: 0
    .sgpr_count: 14
    .symbol: k.kd
    .vgpr_count: 2
    .wavefront_size: 64
amdhsa.target: amdgcn-amd-amdhsa--gfx942
amdhsa.version: [1, 2]
...
\t.end_amdgpu_metadata
"""


def test_computed_jump_follows_edits(tmp_path):
    """Hand-written `s_getpc` + `s_add_u32 lit` + `s_addc_u32 0` + `s_setpc`: the literal becomes
    a relocation against the target label, so an insertion keeps the jump on its target."""
    from asmevo.target import TargetId
    from asmevo.isa.assemble import assemble, link
    from asmevo.recover import disassemble_text, pc_relative_pairs
    from asmevo.roundtrip import roundtrip
    k0 = tmp_path / "jump.co"
    target = TargetId("gfx942", "any", "any")
    k0.write_bytes(link(assemble(COMPUTED_JUMP, target), target))
    assert roundtrip(k0).status == "identical"
    src = recover(k0).write(tmp_path / "rec")
    text = src.read_text()
    assert re.search(r"s_add_u32 s0, s0, \.Lbb_[0-9a-f]+@rel32@lo\+4", text)
    _edit(src, "\ts_setprio 3", "\ts_setprio 3\n\ts_nop 1\n\ts_nop 2")
    out = tmp_path / "k2.co"
    rebuild(src, out)
    items = disassemble_text(CodeObject.from_path(out))
    (_, _, _, target), = pc_relative_pairs(items)
    assert next(i for i in items if i.address == target).text.startswith("buffer_load_dword")
