"""Parsing llvm-objdump output: every line is an instruction, a symbol header or a header."""
import pytest

from asmevo.errors import DisassemblyError
from asmevo.isa.disasm import objdump_records, parse_objdump

LISTING = """
/x/k.co:\tfile format elf64-amdgpu

Disassembly of section .text:

0000000000001900 <add>:
\ts_load_dwordx2 s[0:1], s[0:1], 0x0                         // 000000001900: C0060000 00000000
\tv_and_b32_e32 v2, 0x3ff, v2                                // 000000001908: 260404FF 000003FF
\ts_cbranch_scc1 label_1                                      // 000000001910: BF850001 <label_1>
\t<unknown>                                                  // 000000001914: FFFFFFFF
\ts_endpgm                                                   // 000000001918: BF810000
"""


def test_records_and_listing():
    records = [r for r in objdump_records(LISTING) if r[1] or r[4]]
    assert records[0] == ("", "", "", "0000000000001900", "add")
    assert records[2][:3] == ("v_and_b32_e32 v2, 0x3ff, v2                                ", "000000001908",
                              " 260404FF 000003FF")
    listing = parse_objdump(LISTING)
    assert listing.symbols == {"add": 0x1900}
    assert [i.address for i in listing.instructions] == [0x1900, 0x1908, 0x1910, 0x1914, 0x1918]
    assert listing.instructions[1].encoding == bytes.fromhex("ff040426ff030000")
    assert listing.instructions[2].target == 0x1918
    assert listing.instructions[3].is_data


@pytest.mark.parametrize("line", ["\ts_nop 0   // 00001900 BF800000", "garbage line", "\tv_mov_b32 v0, 0"])
def test_unparsed_line_raises(line):
    with pytest.raises(DisassemblyError, match="unparsed llvm-objdump line"):
        objdump_records(LISTING + line + "\n")
