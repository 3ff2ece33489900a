"""In-place patching: replace an instruction range of K0's text with code of the same size.

The new instructions are assembled with llvm-mc (one call) and padded with `s_nop 0`; nothing
else in the file changes. Branches may name K0's text symbols, recovered labels `.Lbb_<hex>`
(any instruction address), function names, or labels defined in the patch itself. Refused
(PatchError) when the code would grow, a range end splits an instruction, or the patch needs
more registers, scratch or LDS than the kernel's descriptor provides.
"""
from __future__ import annotations

import re
from pathlib import Path

from .codeobj.elf import CodeObject
from .errors import PatchError
from .isa.assemble import encode_lines
from .isa.instruction import BRANCH_MNEMONICS
from .isa.resources import declared, scan_lines
from .target import processor as processor_info
from .recover import S_NOP_0, disassemble_text
from .source import strip_comment

_LBB_RE = re.compile(r"^\.Lbb_([0-9a-fA-F]+)$")
_NUM_RE = re.compile(r"^[-+]?(?:0x[0-9a-fA-F]+|\d+)$")


def _text_symbols(co: CodeObject) -> dict[str, int]:
    symtab = co.elf.get_section_by_name(".symtab") or co.elf.get_section_by_name(".dynsym")
    lo, hi = co.text["address"], co.text["address"] + co.text["size"]
    return {s.name: s["st_value"] for s in symtab.iter_symbols() if s.name and lo <= s["st_value"] <= hi}


def _parse_patch(new_text: str) -> tuple[list[str], dict[int, str], dict[str, int]]:
    """Instruction lines, branch label per instruction index, patch-local label -> index."""
    lines, branches, local = [], {}, {}
    for raw in new_text.splitlines():
        line = strip_comment(raw)
        while line and re.match(r"^[A-Za-z_.$][\w.$]*:", line):
            label, _, line = line.partition(":")
            local[label] = len(lines)
            line = line.strip()
        if not line:
            continue
        parts = line.split(None, 1)
        if parts[0] in BRANCH_MNEMONICS and len(parts) == 2 and not _NUM_RE.match(parts[1].strip()):
            branches[len(lines)] = parts[1].strip()
            line = f"{parts[0]} 0"
        lines.append(line)
    return lines, branches, local


def _check_resources(co: CodeObject, lines: list[str], start: int, end: int, items) -> None:
    """Refuse a patch needing more than the descriptor of every kernel whose code it touches."""
    processor = co.target.processor
    use = scan_lines(lines, processor)
    owners = [k for k in co.kernels if k.code_address <= start < k.code_address + k.code_size]
    proc = processor_info(processor)
    for k in owners or co.kernels:
        have = declared(k.descriptor, k.metadata, processor)
        k_end = k.code_address + k.code_size
        k0_use = scan_lines([i.text for i in items if k.code_address <= i.address < k_end and i.text], processor)
        agprs = max(use.agprs, k0_use.agprs)
        if proc.unified_vgpr_file and agprs:
            vgpr_cap, agpr_cap = have.accum_offset, have.next_free_vgpr - have.accum_offset
        else:
            vgpr_cap = agpr_cap = have.next_free_vgpr
        sgpr_cap = have.next_free_sgpr + proc.extra_sgprs(False, False, False) - \
            proc.extra_sgprs(use.vcc, use.flat_scratch, use.xnack_mask)
        why = None
        if use.vgprs > vgpr_cap:
            why = f"uses v{use.vgprs - 1}, kernel {k.name} has {vgpr_cap} VGPRs"
        elif use.agprs > agpr_cap:
            why = f"uses a{use.agprs - 1}, kernel {k.name} has {agpr_cap} AGPRs"
        elif use.sgprs > sgpr_cap:
            why = f"uses s{use.sgprs - 1}, kernel {k.name} has {sgpr_cap} SGPRs"
        elif use.scratch and not k.descriptor["enable_private_segment"]:
            why = f"uses scratch, kernel {k.name} has no private segment"
        elif use.lds and not k0_use.lds and not k.descriptor.group_segment_fixed_size:
            why = f"uses LDS, kernel {k.name} allocates none"
        if why:
            raise PatchError(f"patch raises resource use beyond the descriptor: {why}")


def patch(k0_path: str | Path, start_address: int, end_address: int, new_text: str) -> bytes:
    """K0's bytes with [start_address, end_address) replaced by `new_text` padded with s_nop 0."""
    co = CodeObject.from_path(k0_path)
    text_lo, text_hi = co.text["address"], co.text["address"] + co.text["size"]
    if not text_lo <= start_address < end_address <= text_hi:
        raise PatchError(f"range 0x{start_address:x}-0x{end_address:x} is not inside the text "
                         f"0x{text_lo:x}-0x{text_hi:x}")
    items = disassemble_text(co)
    boundaries = {i.address for i in items} | {text_hi}
    for addr in (start_address, end_address):
        if addr not in boundaries:
            raise PatchError(f"range end 0x{addr:x} would split an instruction")
    lines, branches, local = _parse_patch(new_text)
    encs, errors = encode_lines(lines, co.target)
    if errors:
        k, msg = min(errors.items())
        raise PatchError(f"patch line {lines[k]!r} does not assemble: {msg}")
    if any(e is None for e in encs):
        raise PatchError("patch needs relocations; only branches may name labels")
    addrs, pos = [start_address], start_address
    for enc in encs:
        pos += len(enc)
        addrs.append(pos)
    size, room = pos - start_address, end_address - start_address
    if size > room:
        raise PatchError(f"patch is {size} bytes, range is {room}: it would grow the code")
    symbols = _text_symbols(co)
    out = bytearray()
    for k, enc in enumerate(encs):
        if k in branches:
            enc = _resolve_branch(enc, addrs[k], branches[k], local, addrs, symbols, boundaries)
        out += enc
    _check_resources(co, lines, start_address, end_address, items)
    out += S_NOP_0.to_bytes(4, "little") * ((room - size) // 4)
    data = bytearray(co.data)
    off = co.address_to_offset(start_address)
    data[off:off + room] = out
    return bytes(data)


def _resolve_branch(enc: bytes, addr: int, label: str, local: dict[str, int], addrs: list[int],
                    symbols: dict[str, int], boundaries: set[int]) -> bytes:
    if label in local:
        target = addrs[local[label]]
    elif (m := _LBB_RE.match(label)) is not None:
        target = int(m.group(1), 16)
    elif label in symbols:
        target = symbols[label]
    else:
        raise PatchError(f"branch target {label!r} is not a label of the patch or of K0")
    if target not in boundaries and label not in local:
        raise PatchError(f"branch target {label} (0x{target:x}) is not an instruction of K0")
    delta = target - addr - 4
    if delta % 4 or not -0x8000 <= delta // 4 < 0x8000:
        raise PatchError(f"branch to {label} at 0x{addr:x} is out of range")
    return (delta // 4 & 0xFFFF).to_bytes(2, "little") + enc[2:]
