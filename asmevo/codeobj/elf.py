"""A code object (AMDGPU ELF) read with pyelftools: target, version, sections, symbols, kernels,
descriptors, metadata. The ELF is walked once; sections and symbols are kept as plain dicts."""
from __future__ import annotations

import io
import threading
from collections import OrderedDict
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from elftools.elf.elffile import ELFFile

from ..errors import CodeObjectError
from ..isa.disasm import Listing, disassemble
from ..isa.instruction import Instruction
from ..target import TargetId
from .descriptor import SIZE as KD_SIZE
from .descriptor import KernelDescriptor
from .metadata import NT_AMDGPU_METADATA, Note, decode_metadata, parse_notes

EM_AMDGPU = 224
ELFOSABI_AMDGPU_HSA = 64
# ABI version -> code-object version.
CODE_OBJECT_VERSIONS = {2: 4, 3: 5, 4: 6}
SUPPORTED_VERSIONS = (4, 5, 6)
EF_AMDGPU_MACH = 0xFF
MACH_NAMES = {0x02C: "gfx900", 0x02F: "gfx906", 0x030: "gfx908", 0x03F: "gfx90a", 0x040: "gfx940",
              0x04B: "gfx941", 0x04C: "gfx942", 0x04F: "gfx950"}
FEATURE_STATES = {0: None, 1: "any", 2: "off", 3: "on"}


def _section_dicts(sections: list, size: int, path: str) -> list[dict]:
    out = []
    for index, sec in enumerate(sections):
        h = sec.header
        info = {"index": index, "name": sec.name, "address": h.sh_addr, "offset": h.sh_offset, "size": h.sh_size,
                "type": h.sh_type, "flags": h.sh_flags, "align": h.sh_addralign, "link": h.sh_link}
        if h.sh_offset + (0 if h.sh_type == "SHT_NOBITS" else h.sh_size) > size:
            raise CodeObjectError(f"{path}: truncated (section {sec.name} runs past end of file)")
        out.append(info)
    return out


def elf_sections(data: bytes, path: str = "<bytes>") -> list[dict]:
    """The section headers of an ELF file in order: index, name, address, offset, size, type,
    flags, align, link."""
    return _section_dicts(list(ELFFile(io.BytesIO(data)).iter_sections()), len(data), path)


def without_linker_comment(data: bytes) -> bytes:
    """A canonical form of an ELF file that leaves out its `.comment` section (the linker's name and
    version, e.g. `Linker: LLD 24.0.0`) and the file offsets it shifts: two links by different lld
    versions of the same object are equal in this form iff they differ only there. Every other byte is
    kept: the ELF header (but `e_shoff`), everything before `.comment`, the content of each later
    section, and every section header (but `sh_offset`)."""
    sections = elf_sections(data)
    comment = next((sec for sec in sections if sec["name"] == ".comment"), None)
    if comment is None:
        return data
    later = [data[sec["offset"]:sec["offset"] + sec["size"]] for sec in sections
             if sec["offset"] > comment["offset"] and sec["type"] != "SHT_NOBITS"]
    shoff = int.from_bytes(data[0x28:0x30], "little")
    headers = []
    for sec in sections:  # Elf64_Shdr: 64 bytes, sh_offset at 0x18, sh_size at 0x20
        header = bytearray(data[shoff + 64 * sec["index"]:shoff + 64 * (sec["index"] + 1)])
        header[0x18:0x20] = bytes(8)
        if sec is comment:
            header[0x20:0x28] = bytes(8)
        headers.append(bytes(header))
    return b"".join([data[:0x28], bytes(8), data[0x30:comment["offset"]], *later, *headers])


@dataclass
class Kernel:
    """A kernel: its code symbol, its descriptor and its entry in the metadata."""

    name: str
    code_address: int
    code_size: int
    descriptor_address: int
    descriptor: KernelDescriptor
    metadata: dict

    @property
    def entry_address(self) -> int:
        return self.descriptor_address + self.descriptor.kernel_code_entry_byte_offset


class CodeObject:
    """An AMDGPU HSA code object; construct with `from_path` or `from_bytes`."""

    def __init__(self, data: bytes, path: str = "<bytes>"):
        self.data = data
        self.path = path
        if data[:4] != b"\x7fELF":
            raise CodeObjectError(f"{path}: not an ELF file")
        try:
            self.elf = ELFFile(io.BytesIO(data))
            header = self.elf.header
            if header["e_machine"] not in ("EM_AMDGPU", EM_AMDGPU):
                raise CodeObjectError(f"{path}: ELF machine is {header['e_machine']}, not AMDGPU")
            if self.elf.elfclass != 64 or not self.elf.little_endian:
                raise CodeObjectError(f"{path}: not a 64-bit little-endian ELF file")
            osabi, abi = data[7], data[8]  # EI_OSABI, EI_ABIVERSION (pyelftools misnames 64)
            if osabi != ELFOSABI_AMDGPU_HSA:
                raise CodeObjectError(f"{path}: ELF OS ABI {osabi} is not AMDGPU HSA ({ELFOSABI_AMDGPU_HSA})")
            version = CODE_OBJECT_VERSIONS.get(abi)
            if version not in SUPPORTED_VERSIONS:
                raise CodeObjectError(
                    f"{path}: unsupported code-object ABI version {abi} (supported: v4, v5, v6)")
            self.code_object_version = version
            self.e_flags = header["e_flags"]
            self.target = self._target(self.e_flags)
            sections = list(self.elf.iter_sections())  # pyelftools re-parses headers on every walk
            self.section_list = _section_dicts(sections, len(data), path)
            self.sections = {sec["name"]: sec for sec in self.section_list}
            self.notes = self._notes()
            self.metadata = self._metadata()
            self.symbols = self._symbols({sec.name: sec for sec in sections})
            self.kernels = self._kernels()
        except CodeObjectError:
            raise
        except Exception as exc:  # pyelftools raises ELFError, construct/struct errors on truncation
            raise CodeObjectError(f"{path}: corrupt or truncated ELF ({type(exc).__name__}: {exc})") from None

    @classmethod
    def from_path(cls, path: str | Path) -> "CodeObject":
        p = Path(path)
        try:
            data = p.read_bytes()
        except FileNotFoundError:
            raise CodeObjectError(f"{p}: no such file") from None
        except IsADirectoryError:
            raise CodeObjectError(f"{p}: is a directory, expected a code object") from None
        except OSError as exc:
            raise CodeObjectError(f"{p}: cannot read ({exc.strerror})") from None
        return cls(data, str(p))

    def _target(self, flags: int) -> TargetId:
        mach = flags & EF_AMDGPU_MACH
        if mach not in MACH_NAMES:
            raise CodeObjectError(f"{self.path}: unknown AMDGPU processor 0x{mach:x} in ELF flags")
        xnack = FEATURE_STATES[(flags >> 8) & 3]
        sramecc = FEATURE_STATES[(flags >> 10) & 3]
        return TargetId(MACH_NAMES[mach], sramecc, xnack)

    def section_data(self, sec: dict) -> bytes:
        """The bytes of a section (empty for SHT_NOBITS)."""
        return b"" if sec["type"] == "SHT_NOBITS" else self.data[sec["offset"]:sec["offset"] + sec["size"]]

    def _notes(self) -> list[Note]:
        notes = []
        for sec in self.section_list:
            if sec["type"] == "SHT_NOTE":
                notes.extend(parse_notes(self.section_data(sec)))
        return notes

    def _symbols(self, by_name: dict) -> list[dict]:
        """Named symbols of .symtab (else .dynsym): name, address, size, type, bind, visibility and
        section (None when undefined, absolute or common)."""
        symtab = by_name.get(".symtab") or by_name.get(".dynsym")
        if symtab is None:
            raise CodeObjectError(f"{self.path}: no symbol table")
        names = {sec["index"]: sec["name"] for sec in self.section_list}
        return [{"name": sym.name, "address": sym["st_value"], "size": sym["st_size"],
                 "type": sym["st_info"]["type"], "bind": sym["st_info"]["bind"],
                 "visibility": sym["st_other"]["visibility"],
                 "section": names.get(sym["st_shndx"]) if isinstance(sym["st_shndx"], int) else None}
                for sym in symtab.iter_symbols() if sym.name]

    def _metadata(self) -> dict:
        for note in self.notes:
            if note.type == NT_AMDGPU_METADATA and note.name.rstrip(b"\0") == b"AMDGPU":
                return decode_metadata(note.desc)
        raise CodeObjectError(f"{self.path}: no NT_AMDGPU_METADATA note (not an HSA code object v3+)")

    def _kernels(self) -> list[Kernel]:
        symbols = {s["name"]: s for s in self.symbols}
        by_name = {k.get(".name"): k for k in self.metadata.get("amdhsa.kernels", [])}
        kernels = []
        for name, meta in by_name.items():
            kd_name = meta.get(".symbol", f"{name}.kd")
            kd = symbols.get(kd_name)
            code = symbols.get(name)
            if kd is None:
                raise CodeObjectError(f"{self.path}: kernel {name} has no descriptor symbol {kd_name}")
            kd_addr = kd["address"]
            desc = KernelDescriptor.decode(self.read(kd_addr, KD_SIZE))
            code_addr = code["address"] if code is not None else kd_addr + desc.kernel_code_entry_byte_offset
            code_size = code["size"] if code is not None else 0
            kernels.append(Kernel(name, code_addr, code_size, kd_addr, desc, meta))
        kernels.sort(key=lambda k: k.code_address)
        text = self.sections.get(".text")
        for k, nxt in zip(kernels, kernels[1:] + [None]):
            if k.code_size == 0 and text is not None:  # hand-written code without `.size`
                k.code_size = (nxt.code_address if nxt else text["address"] + text["size"]) - k.code_address
        return kernels

    def kernel(self, name: str) -> Kernel:
        for k in self.kernels:
            if k.name == name:
                return k
        raise CodeObjectError(f"{self.path}: no kernel named {name!r} (has: {', '.join(self.kernel_names)})")

    @property
    def kernel_names(self) -> list[str]:
        return [k.name for k in self.kernels]

    def address_to_offset(self, address: int) -> int:
        """File offset of a virtual address inside a PROGBITS section."""
        for info in self.sections.values():
            if info["type"] != "SHT_NOBITS" and info["address"] <= address < info["address"] + info["size"] \
                    and info["address"]:
                return info["offset"] + address - info["address"]
        raise CodeObjectError(f"{self.path}: address 0x{address:x} is in no section")

    def read(self, address: int, size: int) -> bytes:
        off = self.address_to_offset(address)
        chunk = self.data[off:off + size]
        if len(chunk) != size:
            raise CodeObjectError(f"{self.path}: truncated at 0x{address:x}")
        return chunk

    @property
    def listing(self) -> Listing:
        """The disassembled `.text` (one decoding per content, shared by every analysis)."""
        return disassemble(self)

    def kernel_instructions(self, name: str, *, data: bool = False) -> list[Instruction]:
        """Kernel `name`'s instructions in address order: [code address, + code size), data words
        (`.long`) only when `data`."""
        k = self.kernel(name)
        out = self.listing.between(k.code_address, k.code_address + k.code_size, data=data)
        if not out:
            raise CodeObjectError(f"{self.path}: kernel {name}: no instructions at 0x{k.code_address:x}")
        return out

    @cached_property
    def text(self) -> dict:
        if ".text" not in self.sections:
            raise CodeObjectError(f"{self.path}: no .text section")
        return self.sections[".text"]


_PARSED: OrderedDict[bytes, CodeObject] = OrderedDict()
_PARSED_KEPT = 64
_PARSED_LOCK = threading.Lock()


def parsed(data: bytes) -> CodeObject:
    """`CodeObject(data)`, parsed once per content (an emulated launch loads the same few objects
    again and again; CodeObjects are not changed after construction)."""
    with _PARSED_LOCK:
        co = _PARSED.get(data)
        if co is not None:
            _PARSED.move_to_end(data)
            return co
    co = CodeObject(data)
    with _PARSED_LOCK:
        _PARSED[data] = co
        if len(_PARSED) > _PARSED_KEPT:
            _PARSED.popitem(last=False)
    return co
