"""NT_AMDGPU_METADATA: the msgpack map describing a code object's kernels, and its notes."""
from __future__ import annotations

import struct
from dataclasses import dataclass

import msgpack

from ..errors import CodeObjectError

NT_AMDGPU_METADATA = 32


@dataclass(frozen=True)
class Note:
    """One ELF note record."""

    name: bytes
    type: int
    desc: bytes


def _align4(n: int) -> int:
    return (n + 3) & ~3


def parse_notes(data: bytes) -> list[Note]:
    """Split a note section (or PT_NOTE segment) into records."""
    notes, pos = [], 0
    while pos < len(data):
        if pos + 12 > len(data):
            raise CodeObjectError("truncated ELF note header")
        namesz, descsz, ntype = struct.unpack_from("<III", data, pos)
        pos += 12
        name = data[pos:pos + namesz]
        pos += _align4(namesz)
        desc = data[pos:pos + descsz]
        pos += _align4(descsz)
        if len(name) != namesz or len(desc) != descsz:
            raise CodeObjectError("truncated ELF note")
        notes.append(Note(name, ntype, desc))
    return notes


def encode_notes(notes: list[Note]) -> bytes:
    out = bytearray()
    for note in notes:
        out += struct.pack("<III", len(note.name), len(note.desc), note.type)
        out += note.name + b"\0" * (_align4(len(note.name)) - len(note.name))
        out += note.desc + b"\0" * (_align4(len(note.desc)) - len(note.desc))
    return bytes(out)


def decode_metadata(desc: bytes) -> dict:
    try:
        meta = msgpack.unpackb(desc, raw=False, strict_map_key=False)
    except (msgpack.UnpackException, ValueError) as exc:
        raise CodeObjectError(f"NT_AMDGPU_METADATA is not valid msgpack: {exc}") from None
    if not isinstance(meta, dict):
        raise CodeObjectError("NT_AMDGPU_METADATA is not a msgpack map")
    return meta


def encode_metadata(meta: dict) -> bytes:
    return msgpack.packb(meta, use_bin_type=True)
