"""asmevo.codeobj.elf.without_linker_comment: two links that differ only in the linker's `.comment`."""
from __future__ import annotations

import pytest

from asmevo.codeobj.elf import elf_sections, without_linker_comment
from asmevo.isa import assemble as assembler
from asmevo.target import TargetId
from asmevo.triton_llvm import installed

SOURCE = ('.amdgcn_target "amdgcn-amd-amdhsa--gfx942"\n'
          ".amdhsa_code_object_version 5\n"  # stated, as recovered sources do: LLVM 19 defaults to 5, LLVM 24 to 6
          ".text\n.globl f\nf:\ns_nop 0\ns_endpgm\n")
GFX942 = TargetId("gfx942", None, None)


def _section(data: bytes, name: str) -> dict:
    return next(sec for sec in elf_sections(data) if sec["name"] == name)


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 1]) + data[at + 1:]


@pytest.mark.skipif(not installed(), reason="Triton is not installed")
def test_links_by_two_lld_versions_differ_only_in_the_comment(monkeypatch):
    links = {}
    for backend in ("tools", "triton"):
        monkeypatch.setenv("ASMEVO_ASSEMBLER", backend)
        links[backend] = assembler.link(assembler.assemble(SOURCE, GFX942), GFX942)
    tools, triton = links["tools"], links["triton"]
    comments = [d[_section(d, ".comment")["offset"]:][:40] for d in (tools, triton)]
    assert tools != triton and comments[0] != comments[1]
    assert without_linker_comment(tools) == without_linker_comment(triton)
    for name in (".text", ".symtab", ".strtab"):  # before and after .comment
        at = _section(triton, name)["offset"]
        assert without_linker_comment(_flip(triton, at)) != without_linker_comment(tools)
