"""An oracle for kernarg packing that shares no code with asmevo: kernel metadata read straight from the
ELF note with pyelftools and msgpack, and the bytes each launch-spec argument must leave in the kernarg
segment, written with `struct` at the offsets that metadata gives."""
from __future__ import annotations

import struct
from pathlib import Path

import msgpack
from elftools.elf.elffile import ELFFile

FORMAT = {"int8": "b", "uint8": "B", "int16": "h", "uint16": "H", "int32": "i", "uint32": "I", "int64": "q",
          "uint64": "Q", "float16": "e", "float32": "f", "float64": "d", "bool": "?"}
HIDDEN_GEOMETRY = {"hidden_block_count_x": ("grid", 0, "I"), "hidden_block_count_y": ("grid", 1, "I"),
                   "hidden_block_count_z": ("grid", 2, "I"), "hidden_group_size_x": ("block", 0, "H"),
                   "hidden_group_size_y": ("block", 1, "H"), "hidden_group_size_z": ("block", 2, "H")}


def note_metadata(path: Path) -> dict[str, dict]:
    """Kernel metadata by name, from the NT_AMDGPU_METADATA note (type 32, owner AMDGPU)."""
    with Path(path).open("rb") as f:
        for sec in ELFFile(f).iter_sections():
            if sec.header.sh_type != "SHT_NOTE":
                continue
            for note in sec.iter_notes():
                if note["n_name"] == "AMDGPU" and note["n_type"] == 32:
                    desc = note["n_desc"]
                    meta = msgpack.unpackb(desc if isinstance(desc, bytes) else desc.encode("latin-1"))
                    return {k[".name"]: k for k in meta["amdhsa.kernels"]}
    raise AssertionError(f"{path}: no AMDGPU metadata note")


def _scalar(value, dtype) -> bytes:
    if isinstance(dtype, list):  # a C struct: each field at its natural alignment, tail padded
        out, align = b"", 1
        for v, d in zip(value, dtype):
            size = struct.calcsize("<" + FORMAT[d])
            out += b"\0" * (-len(out) % size) + struct.pack("<" + FORMAT[d], v)
            align = max(align, size)
        return out + b"\0" * (-len(out) % align)
    values = value if isinstance(value, list) else [value]
    return b"".join(struct.pack("<" + FORMAT[dtype], v) for v in values)


def _struct(fields: list[dict], size: int, addresses: dict[str, int]) -> bytes:
    out = bytearray(size)
    for f in fields:
        data = struct.pack("<Q", addresses[f["buffer"]]) if "buffer" in f else _scalar(f["scalar"], f["dtype"])
        out[f["offset"]:f["offset"] + len(data)] = data
    return bytes(out)


def expected_kernargs(spec: dict, meta: dict, addresses: dict[str, int]) -> dict[int, bytes]:
    """{offset: bytes} the spec (as written, a JSON dict) must put in the kernarg segment of the kernel
    `meta` describes, with buffers at `addresses`: explicit arguments, and the grid and block sizes."""
    explicit = [a for a in meta[".args"] if not a[".value_kind"].startswith("hidden_")]
    args = spec["args"]
    out: dict[int, bytes] = {}
    single_struct = len(args) == 1 and "struct" in args[0]
    if single_struct and not (len(explicit) == 1 and explicit[0][".size"] == args[0]["size"]):
        out[0] = _struct(args[0]["struct"], args[0]["size"], addresses)  # the whole explicit area
    else:
        assert len(explicit) == len(args), (len(explicit), len(args))
        for m, a in zip(explicit, args):
            if "buffer" in a:
                assert m[".value_kind"] == "global_buffer" and m[".size"] == 8
                data = struct.pack("<Q", addresses[a["buffer"]])
            elif "struct" in a:
                data = _struct(a["struct"], a["size"], addresses)
            else:
                data = _scalar(a["scalar"], a["dtype"])
            assert len(data) == m[".size"], (m, a)
            out[m[".offset"]] = data
    dims = {"grid": (list(spec["grid"]) + [1, 1])[:3], "block": (list(spec["block"]) + [1, 1])[:3]}
    for m in meta[".args"]:
        if m[".value_kind"] in HIDDEN_GEOMETRY:
            which, axis, fmt = HIDDEN_GEOMETRY[m[".value_kind"]]
            out[m[".offset"]] = struct.pack("<" + fmt, dims[which][axis])
    return out


def assert_packed(packed: bytes, expected: dict[int, bytes]) -> None:
    for offset, data in expected.items():
        assert packed[offset:offset + len(data)] == data, (offset, packed[offset:offset + len(data)].hex(), data.hex())
