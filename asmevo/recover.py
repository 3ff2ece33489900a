"""Lossless recovery of a code object as an assembly source llvm-mc accepts, plus recovery.json.

The source holds the target id, code-object version, every text byte (instructions with symbolic
branch labels; instructions llvm-mc would not re-encode to their original bytes as raw `.long`
words with the original text in a comment), the text symbols, data sections, one
`.amdhsa_kernel` block per kernel and the metadata as `.amdgpu_metadata` YAML. recovery.json
records what the rebuild must preserve and maps source lines to addresses.
"""
from __future__ import annotations

import bisect
import collections
import json
import re
import struct
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .codeobj.directives import carried_fields, kernel_block
from .codeobj.elf import CodeObject, elf_sections
from .codeobj.metadata import metadata_to_yaml, yaml_lossy_values
from .errors import AsmEvoError, CodeObjectError
from .isa.assemble import assemble, encode_lines, link
from .isa.disasm import branch_target
from .isa.instruction import BRANCH_MNEMONICS
from .isa.resources import choose, declared, required, scan_lines
from .source import digest, end_label, instruction_line, label_line, scanned_lines

S_NOP_0 = 0xBF800000
_S_NOP_0_BYTES = S_NOP_0.to_bytes(4, "little")
MAX_FUNC_ALIGN_LOG2 = 8
# Sections ld.lld synthesises (and the text); everything else allocated is carried as data.
LINKER_SECTIONS = frozenset({".note", ".dynsym", ".gnu.hash", ".hash", ".dynstr", ".dynamic",
                             ".relro_padding", ".text"})
_IDENT_RE = re.compile(r"^[A-Za-z_.$][\w.$]*$")


@dataclass(slots=True)
class TextItem:
    """One run of text bytes: an instruction (text) or raw words (text None)."""

    address: int
    encoding: bytes
    text: str | None
    original: str = ""
    branch_target: int | None = None
    note: str = ""
    symbolic: str | None = None  # text with a relocation in place of a pc-relative literal

    @property
    def size(self) -> int:
        return len(self.encoding)


@dataclass
class Recovered:
    """The recovered source and the recovery.json content."""

    name: str
    source: str
    info: dict
    warnings: list[str] = field(default_factory=list)

    def write(self, outdir: str | Path) -> Path:
        out = Path(outdir)
        try:
            out.mkdir(parents=True, exist_ok=True)
            src = out / f"{self.name}.s"
            src.write_text(self.source)
            (out / "recovery.json").write_text(json.dumps(self.info, indent=1, default=_json_default) + "\n")
        except OSError as exc:
            raise AsmEvoError(f"cannot write to {out}: {exc.strerror}") from None
        return src


def _json_default(obj):
    if isinstance(obj, bytes):
        return obj.hex()
    raise TypeError(type(obj).__name__)


def _symbols(co: CodeObject) -> list[dict]:
    """K0's named symbols defined in a section."""
    return [s for s in co.symbols if s["section"] is not None]


def disassemble_text(co: CodeObject) -> list[TextItem]:
    """The text section as Items, from the code object's listing; raises when it does not cover
    the text."""
    text = co.text
    base = text["address"]
    items = [TextItem(ins.address, ins.encoding, None if ins.is_data else ins.text(), "" if ins.is_data else ins.text())
             for ins in co.listing.instructions]
    covered = sum(len(i.encoding) for i in items)
    if covered != text["size"] or (items and items[0].address != base):
        raise CodeObjectError(f"{co.path}: disassembly covers {covered} of {text['size']} text bytes")
    return items


def _prepare_branches(items: list[TextItem]) -> None:
    """Give SOPP branches their target address and a numeric operand (labels come at render)."""
    for item in items:
        if item.text is None or not item.text.startswith(("s_branch", "s_cbranch")):  # every branch mnemonic
            continue
        mnemonic = item.text.split(None, 1)[0]
        if mnemonic in BRANCH_MNEMONICS and len(item.encoding) == 4:
            item.branch_target = branch_target(item.address, item.encoding)
            simm = int.from_bytes(item.encoding[:2], "little", signed=True)
            item.text = f"{mnemonic} {simm}"


def _check_encodings(items: list[TextItem], co: CodeObject) -> list[dict]:
    """Re-encode every instruction in one llvm-mc call; mismatches become raw words."""
    index = [i for i, item in enumerate(items) if item.text is not None]
    check = [items[i].text for i in index]
    encs, errors = encode_lines(check, co.target)
    raw = []
    for k, (i, enc) in enumerate(zip(index, encs)):
        item = items[i]
        if enc == item.encoding:
            continue
        reason = errors.get(k) or (_reencoding(item.encoding, enc) if enc is not None else "needs a fixup")
        item.text, item.branch_target, item.note = None, None, reason
        raw.append({"address": item.address, "text": item.original, "reason": reason})
    return raw


def _reencoding(original: bytes, enc: bytes) -> str:
    """Why an instruction's text does not give back its bytes: the re-encoding, and the bits that
    differ when the sizes agree (e.g. bits 0x6000 of a gfx950 `v_mfma_scale` prefix, which no LLVM
    syntax sets)."""
    if len(enc) != len(original):
        return f"re-encodes as {enc.hex()} ({len(enc)} bytes, not {len(original)})"
    words = struct.unpack(f"<{len(enc) // 4}I", bytes(a ^ b for a, b in zip(original, enc)))
    differ = ", ".join(f"0x{w:x} of dword {i}" for i, w in enumerate(words) if w)
    return f"re-encodes as {enc.hex()} (bits {differ} differ)"


def _func_align(address: int, text_addr: int, text_align_log2: int) -> int:
    offset = address - text_addr
    k = 0
    while k < min(MAX_FUNC_ALIGN_LOG2, text_align_log2) and offset % (1 << (k + 1)) == 0:
        k += 1
    return k


def _is_padding(item: TextItem) -> bool:
    return item.encoding == _S_NOP_0_BYTES and item.text is not None


class _Emitter:
    """Accumulates source lines; `add` returns the 1-based line number."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.bodies: list[tuple[int, str]] = []  # (address, instruction text) as emitted

    def add(self, line: str) -> int:
        self.lines.append(line)
        return len(self.lines)


def _assembled_text(source: str, co: CodeObject) -> bytes:
    """Text of the assembled and linked source (relocations applied, as in the original)."""
    linked = link(assemble(source, co.target), co.target)
    text = next(sec for sec in elf_sections(linked) if sec["name"] == ".text")
    return linked[text["offset"]:text["offset"] + text["size"]]


_GETPC_RE = re.compile(r"^s_getpc_b64 s\[(\d+):(\d+)\]$")
_PC_WINDOW = 8


def pc_relative_pairs(items: list[TextItem]) -> list[tuple[TextItem, TextItem, int, int]]:
    """`s_getpc_b64 s[a:b]` followed by `s_add_u32 sa, sa, lit` (32-bit literal) and
    `s_addc_u32 sb, sb, hi` (literal, or inline 0 / -1 for a near target): (lo item, hi item,
    pc value, target address) per such pair, as used for calls and computed jumps."""
    found = []
    for i, item in enumerate(items):
        m = _GETPC_RE.match(item.text) if item.text and item.text.startswith("s_getpc") else None
        if not m:
            continue
        lo_reg, hi_reg = f"s{m.group(1)}", f"s{m.group(2)}"
        lo = hi = None
        for nxt in items[i + 1:i + 1 + _PC_WINDOW]:
            t = nxt.text or ""
            if t.startswith("s_getpc_b64") or nxt.branch_target is not None:
                break
            if nxt.size == 8 and lo is None and t.startswith(f"s_add_u32 {lo_reg}, {lo_reg}, "):
                lo = nxt
            elif lo is not None and t.startswith(f"s_addc_u32 {hi_reg}, {hi_reg}, "):
                if nxt.size == 8 or t.endswith((", 0", ", -1")):
                    hi = nxt
                break
        if lo is not None and hi is not None:
            high = hi.encoding[4:8] if hi.size == 8 else (b"\xff" * 4 if hi.text.endswith("-1") else bytes(4))
            offset = int.from_bytes(lo.encoding[4:8] + high, "little", signed=True)
            found.append((lo, hi, item.address + 4, item.address + 4 + offset))
    return found


def recover(path: str | Path, *, verify: bool = True, code_object: CodeObject | None = None) -> Recovered:
    """Recover the code object at `path`. With `verify`, the source is assembled and its text
    compared with the original; on a difference every instruction is re-encoded (one batched
    llvm-mc call) and those that do not reproduce their bytes become raw words. `code_object`
    is `path` already loaded."""
    co = code_object or CodeObject.from_path(path)
    items = disassemble_text(co)
    _prepare_branches(items)
    rec = _render(co, items, path, [])
    if verify:
        original = co.read(co.text["address"], co.text["size"])
        if _assembled_text(rec.source, co) != original:
            rec = _render(co, items, path, _check_encodings(items, co))
            again = _assembled_text(rec.source, co)
            if again != original:
                at = next((i for i in range(min(len(again), len(original))) if again[i] != original[i]),
                          min(len(again), len(original)))
                rec.info["text_mismatch"] = f"reassembled text differs at 0x{co.text['address'] + at:x}"
                rec.warnings.append(rec.info["text_mismatch"])
    return rec


@dataclass
class _Plan:
    """Names for text addresses: labels, function symbols and function end labels."""

    labels: dict[int, str]
    funcs: dict[int, dict]
    ends: dict[int, list[str]]
    numeric_branches: list[int]

    def name(self, addr: int) -> str:
        return self.funcs[addr]["name"] if addr in self.funcs and addr not in self.labels else self.labels[addr]


def _plan(co: CodeObject, items: list[TextItem], symbols: list[dict], warnings: list[str]) -> _Plan:
    """Labels for K0's local text symbols, branch targets and pc-relative targets; pc-relative
    literals become relocations against them."""
    lo_text, hi_text = co.text["address"], co.text["address"] + co.text["size"]
    boundaries = {item.address for item in items} | {hi_text}
    text_syms = sorted((s for s in symbols if s["section"] == ".text"), key=lambda s: s["address"])
    funcs = {s["address"]: s for s in text_syms if s["type"] == "STT_FUNC"}
    counts = collections.Counter(s["name"] for s in text_syms)
    labels: dict[int, str] = {}
    for s in text_syms:
        if s["type"] == "STT_FUNC":
            continue
        if s["address"] in boundaries and _IDENT_RE.match(s["name"]) and counts[s["name"]] == 1 \
                and s["address"] not in labels:
            labels[s["address"]] = s["name"]
        else:
            warnings.append(f"local symbol {s['name']} at 0x{s['address']:x} not kept")
    plan = _Plan(labels, funcs, {}, [])

    def label(addr: int) -> bool:
        if addr not in boundaries or not lo_text <= addr <= hi_text:
            return False
        if addr not in labels and addr not in funcs:
            labels[addr] = f".Lbb_{addr:x}"
        return True

    for item in items:
        if item.branch_target is not None and not label(item.branch_target):
            plan.numeric_branches.append(item.address)
            warnings.append(f"branch at 0x{item.address:x} targets 0x{item.branch_target:x}, "
                            "not an instruction: kept numeric")
            item.branch_target = None
    data_at = {s["address"]: s["name"] for s in symbols if s["section"] != ".text" and _IDENT_RE.match(s["name"])}
    for lo, hi, pc, tgt in pc_relative_pairs(items):
        if tgt < hi_text and label(tgt):
            sym = plan.name(tgt)
        elif tgt in data_at:
            sym = data_at[tgt]
        else:
            warnings.append(f"pc-relative address at 0x{lo.address:x} targets 0x{tgt:x}: kept numeric")
            continue
        for part, ins in (("lo", lo), ("hi", hi)) if hi.size == 8 else (("lo", lo),):
            ins.symbolic = f"{ins.text.rsplit(',', 1)[0]}, {sym}@rel32@{part}+{ins.address + 4 - pc}"
    for f in funcs.values():
        if f["size"] and f["address"] + f["size"] in boundaries:
            plan.ends.setdefault(f["address"] + f["size"], []).append(f["name"])
    return plan


def _item_text(item: TextItem, plan: _Plan) -> str:
    """The instruction as written in the source (`.long ...` for raw words)."""
    if item.text is None:
        return ".long " + ", ".join(f"0x{w:08x}" for w in struct.unpack(f"<{item.size // 4}I", item.encoding))
    if item.branch_target is not None:
        return f"{item.text.split(None, 1)[0]} {plan.name(item.branch_target)}"
    return item.symbolic or item.text


def _padding_run(items: list[TextItem], i: int, plan: _Plan) -> int:
    """End index of the run of unlabeled `s_nop 0` starting at `i`."""
    j = i
    while j < len(items) and _is_padding(items[j]) and items[j].address not in plan.labels \
            and items[j].address not in plan.funcs and (j == i or items[j].address not in plan.ends):
        j += 1
    return j


def _emit_text(em: _Emitter, co: CodeObject, items: list[TextItem], plan: _Plan, align_log2: int) -> list[list[int]]:
    """Emit the text; returns [address, source line (0 for elided padding), size] per item."""
    kernels = set(co.kernel_names)
    text_addr = co.text["address"]
    positions: list[list[int]] = []
    starts = sorted(plan.funcs)
    funcs, labels, ends = plan.funcs, plan.labels, plan.ends
    lines, bodies = em.lines, em.bodies
    i = 0
    while i < len(items):
        item = items[i]
        addr = item.address
        if addr in ends:
            for fname in ends[addr]:
                em.add(label_line(end_label(fname)))
        if item.encoding == _S_NOP_0_BYTES and item.text is not None and addr not in labels and addr not in funcs:
            j = _padding_run(items, i, plan)
            k = bisect.bisect_left(starts, addr)
            nxt = starts[k] if k < len(starts) else None
            if nxt is not None and i < j < len(items) and items[j].address == nxt:
                # Alignment padding before a function: elastic, so edits above it re-align.
                align = _func_align(nxt, text_addr, align_log2)
                if nxt - addr < (1 << align):
                    em.add(f"\t.p2align {align}".ljust(48) + f"; padding to 0x{nxt:x}")
                    positions.extend([pad.address, 0, 4] for pad in items[i:j])
                    i = j
                    continue
            if nxt is None and j == len(items):
                em.add(f"\t.fill {j - i}, 4, 0x{S_NOP_0:08x}".ljust(48) + f"; 0x{addr:x}: trailing padding")
                positions.extend([pad.address, 0, 4] for pad in items[i:j])
                break
        if addr in funcs:
            _emit_symbol(em, funcs[addr], _func_align(addr, text_addr, align_log2), addr, kernels)
        if addr in labels:
            em.add(label_line(labels[addr]))
        if item.text is None:
            note = f"  ({item.note})" if item.note else ""
            lines.append(instruction_line(_item_text(item, plan), addr, f"{item.original or '<unknown>'}{note}"))
        else:
            body = item.text if item.branch_target is None and item.symbolic is None else _item_text(item, plan)
            bodies.append((addr, body))
            lines.append(instruction_line(body, addr))
        positions.append([addr, len(lines), len(item.encoding)])
        i += 1
    for fname in plan.ends.get(text_addr + co.text["size"], []):
        em.add(label_line(end_label(fname)))
    for f in plan.funcs.values():
        if f["size"]:
            ended = f["name"] in plan.ends.get(f["address"] + f["size"], [])
            em.add(f"\t.size {f['name']}, " + (f"{end_label(f['name'])}-{f['name']}" if ended else str(f["size"])))
    return positions


def _emit_symbol(em: _Emitter, f: dict, align_log2: int, addr: int, kernels: set[str]) -> None:
    name = f["name"]
    if f["visibility"] == "STV_PROTECTED":
        em.add(f"\t.protected {name}")
    elif f["visibility"] == "STV_HIDDEN":
        em.add(f"\t.hidden {name}")
    em.add(f"\t.{ {'STB_GLOBAL': 'globl', 'STB_WEAK': 'weak'}.get(f['bind'], 'local')} {name}")
    em.add(f"\t.p2align {align_log2}")
    em.add(f"\t.type {name},@function")
    em.add(f"{name}:" + ("                          ; kernel" if name in kernels else ""))


def _bodies(em: _Emitter, plan: _Plan) -> dict[str, list[str]]:
    """Instruction lines of each text function as emitted (what the rebuild will read)."""
    starts = sorted(plan.funcs)
    bodies: dict[str, list[str]] = {plan.funcs[a]["name"]: [] for a in starts}
    k, current = -1, None
    for addr, text in em.bodies:
        while k + 1 < len(starts) and starts[k + 1] <= addr:
            k += 1
            current = bodies[plan.funcs[starts[k]]["name"]]
        if current is not None:
            current.append(text)
    return bodies


def _emit_kernels(em: _Emitter, co: CodeObject, plan: _Plan, warnings: list[str]) -> list[dict]:
    """One `.amdhsa_kernel` block per kernel; returns the kernels' recovery info."""
    infos = []
    bodies = _bodies(em, plan)
    helpers = [ln for name, body in bodies.items() if name not in co.kernel_names for ln in body]
    em.add("\t.rodata")
    for kernel in co.kernels:
        desc = kernel.descriptor
        scanned = scanned_lines(bodies.get(kernel.name, []), helpers)
        need0 = required(scan_lines(scanned, co.target.processor), desc, co.target.processor)
        # What an unedited rebuild declares: K0's values (and the scan's reserve flags).
        have = choose(need0, declared(desc, kernel.metadata, co.target.processor), False, need0)
        em.add("\t.p2align 6")
        carried = carried_fields(desc, co.target, have)
        if carried:
            em.add("; descriptor fields no directive sets, written by the rebuild from recovery.json: "
                   + ", ".join(f"{k}={v}" for k, v in carried.items()))
        for line in kernel_block(kernel.name, desc, co.target, have):
            em.add(line)
        if any(desc.reserved):
            warnings.append(f"kernel {kernel.name}: reserved descriptor bytes are not zero (carried)")
        infos.append({
            "name": kernel.name, "descriptor_symbol": kernel.metadata.get(".symbol", f"{kernel.name}.kd"),
            "code_address": kernel.code_address, "code_size": kernel.code_size,
            "entry_address": kernel.entry_address, "descriptor_address": kernel.descriptor_address,
            "descriptor": desc.as_dict(), "descriptor_bytes": desc.encode().hex(),
            "descriptor_reserved": desc.reserved.hex(),
            "carried_fields": carried, "k0_need": asdict(need0),
            "k0_digest": digest(scanned),
            "metadata": kernel.metadata})
    return infos


def _render(co: CodeObject, items: list[TextItem], path: str | Path, raw: list[dict]) -> Recovered:
    """The source and recovery info for `items` (raw words already marked)."""
    name = Path(path).stem
    align_log2 = max(0, (co.text["align"] or 1).bit_length() - 1)
    symbols = _symbols(co)
    warnings: list[str] = []
    plan = _plan(co, items, symbols, warnings)
    em = _Emitter()
    em.add(f"; Recovered by asmevo from {Path(path).name}")
    em.add(f'\t.amdgcn_target "{co.target}"')
    em.add(f"\t.amdhsa_code_object_version {co.code_object_version}")
    em.add("\t.text")
    em.add(f"\t.p2align {align_log2}")
    positions = _emit_text(em, co, items, plan, align_log2)
    data_sections = _emit_data(co, symbols, em)
    infos = _emit_kernels(em, co, plan, warnings)
    em.add("\t.amdgpu_metadata")
    yaml_lines = metadata_to_yaml(co.metadata).splitlines()
    em.lines.extend(yaml_lines)
    em.add("\t.end_amdgpu_metadata")
    info = {
        "source": f"{name}.s", "input": str(path), "target": str(co.target),
        "processor": co.target.processor, "code_object_version": co.code_object_version,
        "e_flags": co.e_flags,
        "text": {"address": co.text["address"], "size": co.text["size"], "alignment": 1 << align_log2},
        "kernels": infos,
        "functions": [{k: f[k] for k in ("name", "address", "size", "bind", "visibility")}
                      for f in plan.funcs.values() if f["name"] not in co.kernel_names],
        "data_sections": data_sections,
        "metadata": co.metadata, "metadata_lossy": yaml_lossy_values(co.metadata),
        "metadata_digest": digest(yaml_lines),
        "raw_words": raw, "numeric_branches": plan.numeric_branches,
        "instructions": positions,
    }
    return Recovered(name, "\n".join(em.lines) + "\n", info, warnings)


def _data_spans(sec: dict, co: CodeObject, symbols: list[dict]) -> list[tuple[int, int]]:
    """Address ranges of a data section to carry: all of it but the kernel descriptors (and, in
    .rodata, descriptor-only padding)."""
    base = sec["address"]
    spans = [(base, base + sec["size"])]
    for k in co.kernels:
        lo, hi = k.descriptor_address, k.descriptor_address + 64
        spans = [s for a, b in spans for s in ((a, min(b, lo)), (max(a, hi), b)) if s[0] < s[1]]
    if sec["name"] == ".rodata":
        data = co.section_data(sec)
        spans = [(a, b) for a, b in spans if any(data[a - base:b - base])
                 or any(a <= s["address"] < b for s in symbols if s["section"] == ".rodata")]
    return spans


def _emit_data_symbol(em: _Emitter, s: dict) -> None:
    name = s["name"]
    if s["bind"] == "STB_GLOBAL":
        em.add(f"\t.globl {name}")
    if s["visibility"] in ("STV_PROTECTED", "STV_HIDDEN"):
        em.add(f"\t.{s['visibility'][4:].lower()} {name}")
    if s["type"] == "STT_OBJECT":
        em.add(f"\t.type {name},@object")
    em.add(f"{name}:")
    if s["size"]:
        em.add(f"\t.size {name}, {s['size']}")


def _emit_data(co: CodeObject, symbols: list[dict], em: _Emitter) -> list[str]:
    """Emit allocated non-text sections (other than the kernel descriptors) with their symbols."""
    emitted = []
    for sec in co.section_list:
        flags = sec["flags"]
        if not flags & 0x2 or flags & 0x4 or sec["name"] in LINKER_SECTIONS \
                or sec["type"] not in ("SHT_PROGBITS", "SHT_NOBITS"):
            continue
        spans = _data_spans(sec, co, symbols)
        if not spans:
            continue
        nobits = sec["type"] == "SHT_NOBITS"
        em.add(f'\t.section {sec["name"]},"a{"w" if flags & 0x1 else ""}",{"@nobits" if nobits else "@progbits"}')
        em.add(f"\t.p2align {max(0, (sec['align'] or 1).bit_length() - 1)}")
        base, data = sec["address"], co.section_data(sec)
        secsyms = sorted((s for s in symbols if s["section"] == sec["name"] and not s["name"].endswith(".kd")),
                         key=lambda s: s["address"])
        for a, b in spans:
            pos = a
            for s in [s for s in secsyms if a <= s["address"] < b] + [None]:
                stop = s["address"] if s else b
                if stop > pos and nobits:
                    em.add(f"\t.zero {stop - pos}")
                elif stop > pos:
                    for k in range(pos, stop, 16):
                        em.add("\t.byte " + ", ".join(f"0x{x:02x}" for x in data[k - base:min(stop, k + 16) - base]))
                pos = stop
                if s is not None:
                    _emit_data_symbol(em, s)
        emitted.append(sec["name"])
    return emitted
