"""A code object's text disassembled in this process (LLVM's MC disassembler through `asmevo.llvm_c`)
into the instruction model: the one listing every analysis, the emulator and recovery read.

Decoding runs from the start of `.text` and restarts at every symbol in it, as llvm-objdump does;
bytes LLVM cannot decode become 4-byte `.long` data words. The instruction text is LLVM's
(identical to llvm-objdump's, `tests/isa/test_disasm.py`); branch targets are computed from the
encoding. Listings are cached by content.
"""
from __future__ import annotations

import functools
import hashlib
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..errors import DisassemblyError
from ..llvm_c import Disassembler
from .instruction import Instruction, parse_instruction

if TYPE_CHECKING:
    from ..codeobj import CodeObject

_LISTINGS_KEPT = 256


@dataclass(frozen=True)
class Listing:
    """Instructions of one code object's text in address order, and the symbols that start runs."""

    instructions: tuple[Instruction, ...]
    symbols: dict[str, int]

    def by_address(self) -> dict[int, Instruction]:
        return {ins.address: ins for ins in self.instructions}

    def between(self, start: int, end: int, *, data: bool = False) -> list[Instruction]:
        """The instructions in [start, end) (data words only when `data`)."""
        return [i for i in self.instructions if start <= i.address < end and (data or not i.is_data)]


_CACHE: OrderedDict[str, Listing] = OrderedDict()


def disassemble(co: "CodeObject") -> Listing:
    """The listing of `co`'s `.text` (cached by the code object's content)."""
    key = hashlib.sha256(co.data).hexdigest()
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    text = co.text
    symbols = {s["name"]: s["address"] for s in co.symbols
               if s["section"] == ".text" and text["address"] <= s["address"] < text["address"] + text["size"]}
    listing = Listing(tuple(decode_image(co.target.processor, text["address"], co.section_data(text),
                                         tuple(symbols.values()))), symbols)
    _CACHE[key] = listing
    if len(_CACHE) > _LISTINGS_KEPT:
        _CACHE.popitem(last=False)
    return listing


def decode_image(processor: str, base: int, image: bytes, starts: tuple[int, ...] = ()) -> list[Instruction]:
    """Instructions of `image` loaded at `base`, decoding restarting at each address in `starts`.
    Decoded words are remembered by their bytes (`_decoded`): a candidate repeats most of K0's."""
    out: list[Instruction] = []
    stops = sorted(a - base for a in starts if base < a < base + len(image)) + [len(image)]
    offset = 0
    for stop in stops:
        while offset < stop:
            address = base + offset
            size, template = _decoded(processor, image[offset:min(stop, offset + 16)], address)
            if template is None:
                size = min(4, stop - offset)
                out.append(Instruction(".long", address=address, encoding=image[offset:offset + size]))
            else:
                ins = replace(template, address=address)
                if ins.is_branch:
                    ins.target = branch_target(address, ins.encoding)
                out.append(ins)
            offset += size
    return out


_DECODED: dict[tuple[str, bytes], tuple[int, Instruction | None]] = {}
_DECODED_KEPT = 1 << 16


def _decoded(processor: str, window: bytes, address: int) -> tuple[int, Instruction | None]:
    """(size, the instruction without address, or None for undecodable bytes) of the bytes at the
    start of `window`. LLVM's text of an instruction does not depend on its address (branches print
    their offset; `tests/isa/test_disasm.py`), so the decoding of a window is kept by its bytes."""
    key = (processor, window)
    hit = _DECODED.get(key)
    if hit is None:
        size, text = _disassembler(processor).decode(window, address)
        hit = (size, None if size == 0 else _instruction(text, address, window[:size]))
        if len(_DECODED) >= _DECODED_KEPT:
            _DECODED.clear()
        _DECODED[key] = hit
    return hit


def _instruction(text: str, address: int, encoding: bytes) -> Instruction:
    try:
        ins = parse_instruction(text.split(";", 1)[0])
    except DisassemblyError as exc:
        raise DisassemblyError(f"0x{address:x}: {exc}") from None
    ins.encoding = encoding
    return ins


@functools.lru_cache(maxsize=None)
def _disassembler(processor: str) -> Disassembler:
    return Disassembler(processor)


def branch_target(address: int, encoding: bytes) -> int:
    """A SOPP branch jumps to address + 4 + 4 * simm16 (simm16 = low half of the word; LLVM
    prints it as a number)."""
    simm = int.from_bytes(encoding[:2], "little", signed=True)
    return address + 4 + 4 * simm
