"""NT_AMDGPU_METADATA: the msgpack map describing a code object's kernels, and its notes."""
from __future__ import annotations

import re
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


_PLAIN_RE = re.compile(r"^[A-Za-z_.$][\w.$\-+/@ ]*$")
_NUMBERISH_RE = re.compile(r"^[-+]?(?:0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|\d[\d_]*)$"
                           r"|^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")
# Scalars llvm-mc's YAML reader would not read back as strings (it types plain and quoted
# scalars alike: integers, YAML booleans, floats); such strings are written with the `!str` tag.
_BOOLISH = frozenset("y Y yes Yes YES n N no No NO true True TRUE false False FALSE on On ON off Off OFF".split())
_FLOATISH_RE = re.compile(r"^[-+]?(\.?inf|\.?Inf|\.?INF|\.?nan|\.?NaN|\.?NAN|infinity|Infinity)$")


def _scalar(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    text = str(value)
    if text == "" or text in _BOOLISH or _NUMBERISH_RE.match(text) or _FLOATISH_RE.match(text):
        return "!str '" + text.replace("'", "''") + "'"
    if _PLAIN_RE.match(text) and not text.endswith(" ") and text != "null":
        return text
    return "'" + text.replace("'", "''") + "'"


def _emit(node, indent: int, out: list[str]) -> None:
    pad = " " * indent
    for key, value in node.items():
        if isinstance(value, dict):
            out.append(f"{pad}{_scalar(key)}:")
            _emit(value, indent + 2, out)
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            out.append(f"{pad}{_scalar(key)}:")
            for item in value:
                sub: list[str] = []
                _emit(item, indent + 4, sub)
                out.append(f"{pad}  - {sub[0].lstrip()}" if sub else f"{pad}  - {{}}")
                out.extend(sub[1:])
        elif isinstance(value, list):
            out.append(f"{pad}{_scalar(key)}: [{', '.join(_scalar(v) for v in value)}]")
        else:
            out.append(f"{pad}{_scalar(key)}: {_scalar(value)}")


def metadata_to_yaml(meta: dict) -> str:
    """The metadata as the YAML document `.amdgpu_metadata` takes (`---` ... `...`)."""
    lines = ["---"]
    _emit(meta, 0, lines)
    return "\n".join(lines + ["..."]) + "\n"


def yaml_lossy_values(meta, path: str = "") -> list[str]:
    """Paths of values llvm-mc's YAML reader cannot give back unchanged (floats, byte strings,
    nil, integers beyond 64 bits)."""
    if isinstance(meta, dict):
        return [p for k, v in meta.items() for p in yaml_lossy_values(v, f"{path}/{k}")]
    if isinstance(meta, list):
        return [p for i, v in enumerate(meta) for p in yaml_lossy_values(v, f"{path}[{i}]")]
    if isinstance(meta, (float, bytes)) or meta is None:
        return [path]
    if isinstance(meta, int) and not isinstance(meta, bool) and not -(1 << 63) <= meta < (1 << 64):
        return [path]
    return []
