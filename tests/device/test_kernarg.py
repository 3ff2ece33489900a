"""Kernarg packing against hand-computed byte layouts of real gfx942 metadata."""
from __future__ import annotations

import struct

import pytest

from asmevo.codeobj import CodeObject
from asmevo.device.base import Buffer
from asmevo.device.dtypes import encode_scalar
from asmevo.device.kernarg import (GFX9_PRIVATE_BASE_HI, GFX9_SHARED_BASE_HI, Apertures, Scalar, check_geometry,
                                   make_geometry, pack_kernargs)
from asmevo.errors import LaunchSpecError


def meta(kernels, which, name):
    return CodeObject.from_path(kernels[which]).kernel(name).metadata


def ptr(address):
    return Buffer("b", address, 16)


GEOM = make_geometry([5, 3, 2], [64, 2, 1], 512)


@pytest.mark.parametrize("which", ["hip4", "hip5"])
def test_vadd_explicit_layout(kernels, which):
    m = meta(kernels, which, "vadd")
    got = pack_kernargs(m, [ptr(0x7F00_0000_1000), ptr(0x7F00_0000_2000), ptr(0x7F00_0000_3000),
                            Scalar(encode_scalar(4096, "int32"))], make_geometry([16], [256]))
    explicit = struct.pack("<QQQi", 0x7F00_0000_1000, 0x7F00_0000_2000, 0x7F00_0000_3000, 4096)
    if which == "hip4":
        assert got == explicit + b"\0" * 4  # 28 bytes rounded up to the 8-byte alignment
    else:
        # v5: workgroup_size_x comes from the implicit args (block counts at 32, group sizes at 44).
        assert got[:28] == explicit and len(got) == m[".kernarg_segment_size"] == 288
        assert struct.unpack_from("<3I3H3H", got, 32) == (16, 1, 1, 256, 1, 1, 0, 0, 0)


@pytest.mark.parametrize("which", ["hip4", "hip5"])
def test_mixed_scalars_and_struct_layout(kernels, which):
    m = meta(kernels, which, "mixed")
    args = [Scalar(encode_scalar(-3, "int8")), ptr(0xABCD_0000), Scalar(encode_scalar(-2, "int16")),
            Scalar(encode_scalar(2.5, "float64")),
            Scalar(encode_scalar([7, 1.5, -4.25], ["int32", "float32", "float64"])),
            Scalar(encode_scalar(-(1 << 40), "int64")), Scalar(encode_scalar(0.75, "float32"))]
    got = pack_kernargs(m, args, make_geometry([1], [64]))
    expected = bytearray(64)  # char@0, ptr@8, short@16, double@24, struct S@32 (int, float, double), llong@48, float@56
    struct.pack_into("<b", expected, 0, -3)
    struct.pack_into("<Q", expected, 8, 0xABCD_0000)
    struct.pack_into("<h", expected, 16, -2)
    struct.pack_into("<d", expected, 24, 2.5)
    struct.pack_into("<ifd", expected, 32, 7, 1.5, -4.25)
    struct.pack_into("<q", expected, 48, -(1 << 40))
    struct.pack_into("<f", expected, 56, 0.75)
    assert got == bytes(expected)


def test_v5_hidden_args(kernels):
    m = meta(kernels, "hip5", "bsize")
    got = pack_kernargs(m, [ptr(0x1000), Scalar(encode_scalar(99, "int32"))], GEOM)
    assert len(got) == 272
    assert struct.unpack_from("<Qi", got, 0) == (0x1000, 99)
    assert struct.unpack_from("<3I", got, 16) == (5, 3, 2)          # hidden_block_count_x..z = grid
    assert struct.unpack_from("<3H", got, 28) == (64, 2, 1)         # hidden_group_size_x..z = block
    assert struct.unpack_from("<3H", got, 34) == (0, 0, 0)          # hidden_remainder_x..z
    assert struct.unpack_from("<3Q", got, 56) == (0, 0, 0)          # hidden_global_offset_x..z
    assert struct.unpack_from("<H", got, 80) == (3,)                # hidden_grid_dims
    assert got[82:] == b"\0" * (272 - 82)


def test_v5_runtime_pointers_are_zero(kernels):
    m = meta(kernels, "hip5", "implicit")
    got = pack_kernargs(m, [ptr(0x2000)], GEOM)
    assert len(got) == 264
    for off in (88, 96, 104, 112, 120, 208):  # hostcall, multigrid, heap, default queue, completion, queue ptr
        assert struct.unpack_from("<Q", got, off) == (0,)
    assert struct.unpack_from("<3I3H", got, 8) == (5, 3, 2, 64, 2, 1)


def test_v4_hidden_args(kernels):
    m = meta(kernels, "hip4", "implicit")
    got = pack_kernargs(m, [ptr(0x2000)], GEOM)
    assert got == struct.pack("<Q", 0x2000) + b"\0" * 56  # global offsets, hostcall, queue, ... all zero
    assert pack_kernargs(meta(kernels, "hip4", "bsize"), [ptr(8), Scalar(b"\1\0\0\0")], GEOM) == \
        struct.pack("<Qi", 8, 1) + b"\0" * 4


def test_synthetic_lds_and_aperture_hidden_args():
    m = {".name": "k", ".kernarg_segment_size": 20, ".kernarg_segment_align": 8,
         ".args": [{".offset": 0, ".size": 4, ".value_kind": "hidden_dynamic_lds_size"},
                   {".offset": 4, ".size": 4, ".value_kind": "hidden_private_base"},
                   {".offset": 8, ".size": 4, ".value_kind": "hidden_shared_base"},
                   {".offset": 12, ".size": 8, ".value_kind": "hidden_none"}]}
    got = pack_kernargs(m, [], GEOM)
    assert got == struct.pack("<3I", 512, GFX9_PRIVATE_BASE_HI, GFX9_SHARED_BASE_HI) + b"\0" * 12
    assert (GFX9_SHARED_BASE_HI << 32, GFX9_PRIVATE_BASE_HI << 32) == (1 << 48, 2 << 48)  # KFD's gfx9 apertures
    got = pack_kernargs(m, [], GEOM, Apertures(private_base_hi=7, shared_base_hi=9))
    assert struct.unpack_from("<3I", got) == (512, 7, 9)
    m[".args"].append({".offset": 16, ".size": 4, ".value_kind": "hidden_something_new"})
    with pytest.raises(LaunchSpecError, match="unsupported hidden kernel argument kind hidden_something_new"):
        pack_kernargs(m, [], GEOM)


def test_argument_errors(kernels):
    m = meta(kernels, "hip5", "vadd")
    four = Scalar(encode_scalar(1, "int32"), "scalar 1 (int32)")
    with pytest.raises(LaunchSpecError, match="takes 4 explicit arguments, got 3"):
        pack_kernargs(m, [ptr(1), ptr(2), ptr(3)], GEOM)
    with pytest.raises(LaunchSpecError, match=r"argument 1 is a pointer \(global_buffer\), got scalar 1 \(int32\)"):
        pack_kernargs(m, [ptr(1), four, ptr(3), four], GEOM)
    with pytest.raises(LaunchSpecError, match="argument 3 is a 4-byte value"):
        pack_kernargs(m, [ptr(1), ptr(2), ptr(3), ptr(4)], GEOM)
    with pytest.raises(LaunchSpecError, match="argument 3 is 4 bytes by value, got scalar of 8 bytes"):
        pack_kernargs(m, [ptr(1), ptr(2), ptr(3), Scalar(b"\0" * 8)], GEOM)


def test_geometry_checks(kernels):
    small = meta(kernels, "hip5", "small")
    check_geometry(small, make_geometry([4], [256]))
    with pytest.raises(LaunchSpecError, match="has 512 work-items; kernel small allows at most 256"):
        check_geometry(small, make_geometry([4], [256, 2]))
    reqd = meta(kernels, "cl5", "reqd")
    check_geometry(reqd, make_geometry([1], [64, 2, 1]))
    with pytest.raises(LaunchSpecError, match=r"differs from kernel reqd's .reqd_workgroup_size \[64, 2, 1\]"):
        check_geometry(reqd, make_geometry([1], [128]))
    with pytest.raises(LaunchSpecError, match="exceeds 2\\^32-1 work-items in dimension x"):
        check_geometry(small, make_geometry([1 << 24], [256]))
    with pytest.raises(LaunchSpecError, match="needs 65537 bytes of LDS .*gfx942 has 65536"):
        check_geometry(small, make_geometry([1], [64], 65537))
    check_geometry(small, make_geometry([1], [64], 160 * 1024), "gfx950")   # CDNA4: 160 KiB per workgroup
    with pytest.raises(LaunchSpecError, match="gfx950 has 163840"):
        check_geometry(small, make_geometry([1], [64], 160 * 1024 + 1), "gfx950")
    for bad in ([], [0], [1, 2, 3, 4], "16", [1.5]):
        with pytest.raises(LaunchSpecError, match="grid must be a list of 1 to 3 positive integers"):
            make_geometry(bad, [64])
    with pytest.raises(LaunchSpecError, match="dynamic_lds must be a non-negative integer"):
        make_geometry([1], [64], -4)
