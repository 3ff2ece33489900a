"""A code object (AMDGPU ELF): target, version, sections, symbols, kernels, descriptors, metadata.

The ELF64 headers and symbol tables are read with `struct` (pyelftools re-parses them on every
walk and dominates the cost of loading small objects); `CodeObject.elf` gives pyelftools' view
for anything else.
"""
from __future__ import annotations

import io
import struct
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from elftools.elf.elffile import ELFFile

from ..errors import CodeObjectError
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
_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_SHDR = struct.Struct("<IIQQQQIIQQ")
_SYM = struct.Struct("<IBBHQQ")
SHN_LORESERVE = 0xFF00
# Names as pyelftools gives them (other values stay numbers).
SECTION_TYPES = {0: "SHT_NULL", 1: "SHT_PROGBITS", 2: "SHT_SYMTAB", 3: "SHT_STRTAB", 4: "SHT_RELA",
                 5: "SHT_HASH", 6: "SHT_DYNAMIC", 7: "SHT_NOTE", 8: "SHT_NOBITS", 9: "SHT_REL",
                 11: "SHT_DYNSYM", 0x6FFFFFF6: "SHT_GNU_HASH"}
SYMBOL_TYPES = {0: "STT_NOTYPE", 1: "STT_OBJECT", 2: "STT_FUNC", 3: "STT_SECTION", 4: "STT_FILE",
                5: "STT_COMMON", 6: "STT_TLS"}
SYMBOL_BINDS = {0: "STB_LOCAL", 1: "STB_GLOBAL", 2: "STB_WEAK"}
VISIBILITIES = ("STV_DEFAULT", "STV_INTERNAL", "STV_HIDDEN", "STV_PROTECTED")


def _string(data: bytes, table_offset: int, index: int) -> str:
    start = table_offset + index
    return data[start:data.index(b"\0", start)].decode()


def elf_sections(data: bytes, path: str = "<bytes>") -> list[dict]:
    """The section headers of an ELF64 file in order: index, name, address, offset, size, type,
    flags, align, link. Raises struct.error / ValueError on a truncated file."""
    header = _EHDR.unpack_from(data)
    shoff, count, names_index = header[6], header[12], header[13]
    headers = [_SHDR.unpack_from(data, shoff + i * _SHDR.size) for i in range(count)]
    names = headers[names_index][4] if count else 0
    out = []
    for index, (name, stype, flags, addr, offset, size, link, _, align, _) in enumerate(headers):
        sec = {"index": index, "name": _string(data, names, name), "address": addr, "offset": offset,
               "size": size, "type": SECTION_TYPES.get(stype, stype), "flags": flags, "align": align,
               "link": link}
        if offset + (0 if stype == 8 else size) > len(data):
            raise CodeObjectError(f"{path}: truncated (section {sec['name']} runs past end of file)")
        out.append(sec)
    return out


@dataclass(frozen=True)
class TargetId:
    """`amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-` split into processor and feature states."""

    processor: str
    sramecc: str | None  # None (unsupported), "any", "on", "off"
    xnack: str | None

    def __str__(self) -> str:
        parts = [f"amdgcn-amd-amdhsa--{self.processor}"]
        for name, state in (("sramecc", self.sramecc), ("xnack", self.xnack)):
            if state in ("on", "off"):
                parts.append(f"{name}{'+' if state == 'on' else '-'}")
        return ":".join(parts)


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
            header = _EHDR.unpack_from(data)
            machine, self.e_flags = header[2], header[7]
            if machine != EM_AMDGPU:
                raise CodeObjectError(f"{path}: ELF machine is {machine}, not AMDGPU")
            if data[4:6] != b"\x02\x01":  # EI_CLASS, EI_DATA
                raise CodeObjectError(f"{path}: not a 64-bit little-endian ELF file")
            osabi, abi = data[7], data[8]  # EI_OSABI, EI_ABIVERSION
            if osabi != ELFOSABI_AMDGPU_HSA:
                raise CodeObjectError(f"{path}: ELF OS ABI {osabi} is not AMDGPU HSA ({ELFOSABI_AMDGPU_HSA})")
            version = CODE_OBJECT_VERSIONS.get(abi)
            if version not in SUPPORTED_VERSIONS:
                raise CodeObjectError(
                    f"{path}: unsupported code-object ABI version {abi} (supported: v4, v5, v6)")
            self.code_object_version = version
            self.target = self._target(self.e_flags)
            self.sections = self._sections()
            self.notes = self._notes()
            self.metadata = self._metadata()
            self.symbols = self._symbols()
            self.kernels = self._kernels()
        except CodeObjectError:
            raise
        except Exception as exc:  # struct errors, bad indices or offsets: a truncated or corrupt file
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

    def _sections(self) -> dict[str, dict]:
        self.section_list = elf_sections(self.data, self.path)
        return {sec["name"]: sec for sec in self.section_list}

    def section_data(self, sec: dict) -> bytes:
        """The bytes of a section (empty for SHT_NOBITS)."""
        return b"" if sec["type"] == "SHT_NOBITS" else self.data[sec["offset"]:sec["offset"] + sec["size"]]

    def _notes(self) -> list[Note]:
        notes = []
        for sec in self.section_list:
            if sec["type"] == "SHT_NOTE":
                notes.extend(parse_notes(self.section_data(sec)))
        return notes

    def _symbols(self) -> list[dict]:
        """Named symbols of .symtab (else .dynsym): name, address, size, type, bind, visibility and
        section (None when undefined, absolute or common)."""
        symtab = self.sections.get(".symtab") or self.sections.get(".dynsym")
        if symtab is None:
            raise CodeObjectError(f"{self.path}: no symbol table")
        strings = self.section_list[symtab["link"]]["offset"]
        by_index = {sec["index"]: sec["name"] for sec in self.section_list}
        out = []
        for pos in range(symtab["offset"], symtab["offset"] + symtab["size"] - _SYM.size + 1, _SYM.size):
            name, info, other, shndx, value, size = _SYM.unpack_from(self.data, pos)
            if not name:
                continue
            out.append({"name": _string(self.data, strings, name), "address": value, "size": size,
                        "type": SYMBOL_TYPES.get(info & 0xF, info & 0xF),
                        "bind": SYMBOL_BINDS.get(info >> 4, info >> 4), "visibility": VISIBILITIES[other & 3],
                        "section": by_index.get(shndx) if 0 < shndx < SHN_LORESERVE else None})
        return out

    @cached_property
    def elf(self) -> ELFFile:
        """pyelftools' view of the file."""
        return ELFFile(io.BytesIO(self.data))

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

    @cached_property
    def text(self) -> dict:
        if ".text" not in self.sections:
            raise CodeObjectError(f"{self.path}: no .text section")
        return self.sections[".text"]
