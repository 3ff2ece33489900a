"""A code object (AMDGPU ELF) read with pyelftools: target, version, kernels, descriptors, metadata."""
from __future__ import annotations

import io
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from elftools.common.exceptions import ELFError
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
            self.elf = ELFFile(io.BytesIO(data))
            header = self.elf.header
            if header["e_machine"] != "EM_AMDGPU" and header["e_machine"] != EM_AMDGPU:
                raise CodeObjectError(f"{path}: ELF machine is {header['e_machine']}, not AMDGPU")
            osabi, abi = data[7], data[8]  # EI_OSABI, EI_ABIVERSION (pyelftools misnames 64)
            if osabi != ELFOSABI_AMDGPU_HSA:
                raise CodeObjectError(f"{path}: ELF OS ABI {osabi} is not AMDGPU HSA ({ELFOSABI_AMDGPU_HSA})")
            version = CODE_OBJECT_VERSIONS.get(abi)
            if version not in SUPPORTED_VERSIONS:
                raise CodeObjectError(
                    f"{path}: unsupported code-object ABI version {abi} (supported: v4, v5, v6)")
            self.code_object_version = version
            self.target = self._target(header["e_flags"])
            sections = list(self.elf.iter_sections())  # pyelftools re-parses headers on every walk
            self.sections = self._sections(sections)
            self.notes = self._notes(sections)
            self.metadata = self._metadata()
            self.kernels = self._kernels({sec.name: sec for sec in sections})
        except (ELFError, ValueError, KeyError, IndexError) as exc:
            raise CodeObjectError(f"{path}: corrupt or truncated ELF ({exc})") from None
        except Exception as exc:  # pyelftools raises construct/struct errors on truncation
            if isinstance(exc, CodeObjectError):
                raise
            raise CodeObjectError(f"{path}: corrupt or truncated ELF ({type(exc).__name__})") from None

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

    def _sections(self, sections: list) -> dict[str, dict]:
        out = {}
        for sec in sections:
            out[sec.name] = {"address": sec["sh_addr"], "offset": sec["sh_offset"], "size": sec["sh_size"],
                             "type": sec["sh_type"], "flags": sec["sh_flags"]}
            end = sec["sh_offset"] + (0 if sec["sh_type"] == "SHT_NOBITS" else sec["sh_size"])
            if end > len(self.data):
                raise CodeObjectError(f"{self.path}: truncated (section {sec.name} runs past end of file)")
        return out

    def _notes(self, sections: list) -> list[Note]:
        notes = []
        for sec in sections:
            if sec["sh_type"] == "SHT_NOTE":
                notes.extend(parse_notes(sec.data()))
        return notes

    def _metadata(self) -> dict:
        for note in self.notes:
            if note.type == NT_AMDGPU_METADATA and note.name.rstrip(b"\0") == b"AMDGPU":
                return decode_metadata(note.desc)
        raise CodeObjectError(f"{self.path}: no NT_AMDGPU_METADATA note (not an HSA code object v3+)")

    def _kernels(self, by_name: dict) -> list[Kernel]:
        symtab = by_name.get(".symtab") or by_name.get(".dynsym")
        if symtab is None:
            raise CodeObjectError(f"{self.path}: no symbol table")
        symbols = {s.name: s for s in symtab.iter_symbols() if s.name}
        by_name = {k.get(".name"): k for k in self.metadata.get("amdhsa.kernels", [])}
        kernels = []
        for name, meta in by_name.items():
            kd_name = meta.get(".symbol", f"{name}.kd")
            kd = symbols.get(kd_name)
            code = symbols.get(name)
            if kd is None:
                raise CodeObjectError(f"{self.path}: kernel {name} has no descriptor symbol {kd_name}")
            kd_addr = kd["st_value"]
            desc = KernelDescriptor.decode(self.read(kd_addr, KD_SIZE))
            code_addr = code["st_value"] if code is not None else kd_addr + desc.kernel_code_entry_byte_offset
            code_size = code["st_size"] if code is not None else 0
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
