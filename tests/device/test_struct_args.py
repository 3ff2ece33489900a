"""Struct launch-spec args: packed host structs with pointer fields, as one by-value arg or as the whole
explicit kernarg area (AITer's KernelArgs), against synthetic metadata."""
from __future__ import annotations

import struct
from types import SimpleNamespace

import pytest

from asmevo.device.kernarg import KernargImage, Scalar, make_geometry, pack_kernargs
from asmevo.device.launch import LaunchSpec, StructArg, launch_args
from asmevo.errors import LaunchSpecError

GEOM = make_geometry([2], [256])
AITER_LIKE = {".name": "k", ".kernarg_segment_size": 64, ".kernarg_segment_align": 4, ".args": [
    {".name": "T", ".offset": 0, ".size": 8, ".value_kind": "global_buffer"},
    {".name": "pad", ".offset": 8, ".size": 8, ".value_kind": "by_value"},
    {".name": "A", ".offset": 16, ".size": 8, ".value_kind": "global_buffer"},
    {".name": "batch", ".offset": 32, ".size": 4, ".value_kind": "by_value"}]}
ONE_STRUCT = {".name": "k", ".kernarg_segment_size": 48, ".kernarg_segment_align": 8, ".args": [
    {".offset": 0, ".size": 40, ".value_kind": "by_value"},
    {".offset": 40, ".size": 8, ".value_kind": "hidden_block_count_x"}]}


def kernel(meta: dict):
    return SimpleNamespace(name=meta[".name"], metadata=meta)


def struct_spec(fields, size=64, extra=()):
    return LaunchSpec.from_dict({"kernel": "k", "grid": [2], "block": [256],
                                 "args": [{"struct": fields, "size": size}, *extra]})


FIELDS = [{"offset": 0, "buffer": "T", "dtype": "int32", "shape": [4], "init": "zeros"},
          {"offset": 16, "buffer": "A", "dtype": "float32", "shape": [8], "init": "random"},
          {"offset": 32, "scalar": 7, "dtype": "uint32", "name": "batch"},
          {"offset": 48, "scalar": 1.5, "dtype": "float32"}]


def test_struct_parses_buffers_and_encodes_addresses():
    spec = struct_spec(FIELDS)
    s = spec.args[0]
    assert isinstance(s, StructArg) and list(spec.buffers) == ["T", "A"]
    assert s.scalar_values == {"batch": 7}
    data = s.encode({"T": 0x1000, "A": 0x2000})
    assert len(data) == 64
    assert struct.unpack_from("<Q8xQ8xI12xf", data) == (0x1000, 0x2000, 7, 1.5)


def test_lone_struct_is_a_kernarg_image():
    spec = struct_spec(FIELDS)
    spec.check(kernel(AITER_LIKE))
    bufs = {"T": SimpleNamespace(address=0x1000), "A": SimpleNamespace(address=0x2000)}
    args = launch_args(spec, kernel(AITER_LIKE), bufs)
    assert len(args) == 1 and isinstance(args[0], KernargImage)
    packed = pack_kernargs(AITER_LIKE, args, GEOM)
    assert packed == args[0].data


def test_image_needs_a_buffer_at_every_metadata_pointer():
    fields = [f for f in FIELDS if f.get("buffer") != "A"]
    with pytest.raises(LaunchSpecError, match="pointer A at kernarg offset 16"):
        struct_spec(fields).check(kernel(AITER_LIKE))
    null = [*fields, {"offset": 16, "scalar": 0, "dtype": "uint64", "name": "ptr_A"}]
    struct_spec(null).check(kernel(AITER_LIKE))


def test_image_must_fit_the_segment_and_cover_every_arg():
    with pytest.raises(LaunchSpecError, match="exceeds its 64-byte kernarg segment"):
        struct_spec(FIELDS, size=72).check(kernel(AITER_LIKE))
    with pytest.raises(LaunchSpecError, match="does not cover argument batch"):
        struct_spec(FIELDS[:2], size=24).check(kernel(AITER_LIKE))


def test_struct_as_one_by_value_arg_keeps_hidden_args():
    fields = [{"offset": 0, "buffer": "x", "dtype": "float32", "shape": [2], "init": "ones"},
              {"offset": 36, "scalar": 3, "dtype": "int32", "name": "n"}]
    spec = struct_spec(fields, size=40)
    spec.check(kernel(ONE_STRUCT))
    args = launch_args(spec, kernel(ONE_STRUCT), {"x": SimpleNamespace(address=0xABC0)})
    assert isinstance(args[0], Scalar)
    packed = pack_kernargs(ONE_STRUCT, args, GEOM)
    assert struct.unpack_from("<Q28xiQ", packed) == (0xABC0, 3, 2)


def test_struct_size_must_match_a_by_value_slot_among_other_args():
    meta = {**ONE_STRUCT, ".args": [*ONE_STRUCT[".args"][:1], {".offset": 40, ".size": 4, ".value_kind": "by_value"}]}
    spec = struct_spec([{"offset": 0, "scalar": 1, "dtype": "int32"}], size=32,
                       extra=[{"scalar": 1, "dtype": "int32"}])
    with pytest.raises(LaunchSpecError, match="expects a 40-byte value"):
        spec.check(kernel(meta))


@pytest.mark.parametrize("fields,size,message", [
    ([{"offset": 0, "scalar": 1, "dtype": "int64"}, {"offset": 4, "scalar": 1, "dtype": "int32"}], 16, "overlaps"),
    ([{"offset": 12, "scalar": 1, "dtype": "int64"}], 16, "runs past"),
    ([{"offset": -1, "scalar": 1, "dtype": "int32"}], 16, "non-negative integer offset"),
    ([{"offset": 0, "scalar": 1, "dtype": "int32", "bogus": 1}], 16, "unknown key"),
    ([], 16, "non-empty list"),
])
def test_malformed_structs_are_rejected(fields, size, message):
    with pytest.raises(LaunchSpecError, match=message):
        struct_spec(fields, size=size)


def test_struct_buffer_can_be_reused_by_name():
    fields = [{"offset": 0, "buffer": "x", "dtype": "float32", "shape": [2], "init": "ones"},
              {"offset": 8, "buffer": "x"}]
    spec = struct_spec(fields, size=16)
    data = spec.args[0].encode({"x": 0x40})
    assert struct.unpack("<QQ", data) == (0x40, 0x40)
