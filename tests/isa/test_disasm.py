"""The in-process listing against llvm-objdump (the oracle): same instruction boundaries, encodings
and text for every instruction of every KernelBench code object; undecodable words are data."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from asmevo.codeobj import CodeObject
from asmevo.isa.disasm import decode_image
from asmevo.toolchain import find_toolchain

ROOT = Path(__file__).resolve().parents[2]
OBJECTS = sorted((ROOT / "benchmarks" / "kernelbench").glob("*/kernel.co"))
_LINE = re.compile(r"^[ \t]+(\S[^/\n]*?)[ \t]*// ([0-9A-F]+): ((?:[0-9A-F]{8} ?)+)", re.M)


@pytest.mark.parametrize("path", OBJECTS[::3], ids=lambda p: p.parent.name)
def test_listing_matches_llvm_objdump(path):
    out = find_toolchain().run("llvm-objdump", ["-d", "--section=.text", str(path)]).decode()
    expected = [(int(a, 16), bytes.fromhex("".join(w[6:8] + w[4:6] + w[2:4] + w[0:2] for w in words.split())), asm)
                for asm, a, words in _LINE.findall(out)]
    listing = CodeObject.from_path(path).listing.instructions
    assert [(i.address, i.encoding) for i in listing] == [(a, e) for a, e, _ in expected]
    for ins, (_, _, asm) in zip(listing, expected):
        assert (".long" if ins.is_data else ins.text()) == (".long" if asm.startswith((".long", "<unknown>")) else asm)


def test_undecodable_words_are_data_and_branches_resolve():
    # s_nop 0; an invalid word; s_branch -3 (back to the s_nop); s_endpgm
    image = bytes.fromhex("000080bf" "ffffffff" "fdff82bf" "000081bf")
    ins = decode_image("gfx942", 0x1000, image)
    assert [i.mnemonic for i in ins] == ["s_nop", ".long", "s_branch", "s_endpgm"]
    assert ins[1].is_data and ins[1].encoding == b"\xff\xff\xff\xff"
    assert ins[2].target == 0x1000


def test_decoding_restarts_at_symbols():
    # An 8-byte instruction whose second half is a symbol start: decoding stops at the symbol.
    image = bytes.fromhex("ff0082be" "0100803f" "000081bf")  # s_mov_b32 s2, 0x3f800001 (literal); s_endpgm
    whole = decode_image("gfx942", 0, image)
    split = decode_image("gfx942", 0, image, starts=(4,))
    assert [i.size for i in whole] == [8, 4]
    assert [i.address for i in split] == [0, 4, 8] and split[0].is_data


def test_instruction_text_does_not_depend_on_the_address():
    # The listing keeps decodings by their bytes (disasm._decoded): LLVM must print every
    # instruction of every KernelBench object the same wherever it lies (branches print offsets).
    from asmevo.llvm_c import Disassembler

    dis = Disassembler("gfx942")
    checked = 0
    for path in OBJECTS:
        for ins in CodeObject.from_path(path).listing.instructions:
            if ins.is_data:
                continue
            here = dis.decode(ins.encoding, ins.address)
            assert here[0] == ins.size
            assert dis.decode(ins.encoding, ins.address + 0x10F0) == here == dis.decode(ins.encoding, 0)
            checked += 1
    assert checked > 10_000
