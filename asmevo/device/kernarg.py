"""Kernel-argument (kernarg) segment packing from code-object metadata, shared by every device.

Explicit arguments follow the metadata's `.args` order: a `global_buffer` takes a pointer (any
object with an integer `.address`, e.g. a device Buffer), a `by_value` argument a `Scalar` of
exactly its size. Hidden arguments (code-object v4 and v5) are filled from the launch geometry:

* `grid` counts workgroups (HIP convention), so `hidden_block_count_*` = grid, `hidden_group_size_*`
  = block, and `hidden_remainder_*` = 0: the grid is always whole workgroups, no partial one.
* `hidden_grid_dims` = 3, as HIP's hipModuleLaunchKernel dispatches every launch as a 3-D range.
* `hidden_global_offset_*` = 0; `hidden_dynamic_lds_size` = the launch's dynamic LDS bytes.
* `hidden_private_base` / `hidden_shared_base` = high 32 bits of the device's scratch and LDS
  apertures: the emulator's own on the emu device, the gfx9 KFD values otherwise (on hardware the
  HIP runtime writes its own; AMDGPUUsage documents these two as used by GFX8 only).
* Runtime-service pointers (queue, hostcall/printf buffer, heap, default queue, completion
  action, multigrid sync) = 0: the emulator offers none of these services, so a kernel that
  dereferences one faults visibly; on hardware the HIP runtime overwrites them with its own.

The segment is `.kernarg_segment_size` rounded up to `.kernarg_segment_align`, zero-padded.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from ..errors import LaunchSpecError
from ..target import processor

# High 32 bits of the gfx9 apertures. Linux KFD (amdkfd/kfd_flat_memory.c) places them at
# MAKE_LDS_APP_BASE_V9() = 1 << 48 and MAKE_SCRATCH_APP_BASE_V9() = 2 << 48; 0x2000_0000 and 0x2000_0001
# are its GFX8 (VI) values.
GFX9_SHARED_BASE_HI = 0x0001_0000
GFX9_PRIVATE_BASE_HI = 0x0002_0000
MAX_WORKGROUP_SIZE = 1024


@dataclass(frozen=True)
class Scalar:
    """A by-value argument's bytes; `label` names it in error messages."""

    data: bytes
    label: str = "scalar"


@dataclass(frozen=True)
class KernargImage:
    """The explicit part of the kernarg segment as one host-packed byte image, placed at offset 0 (what
    AITer's host code passes with HIP_LAUNCH_PARAM_BUFFER_POINTER: its packed `KernelArgs` struct)."""

    data: bytes
    label: str = "kernarg image"


@dataclass(frozen=True)
class Geometry:
    """A launch's shape: grid in workgroups, block in work-items, dynamic LDS in bytes."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    dynamic_lds: int = 0


@dataclass(frozen=True)
class Apertures:
    """High 32 bits of the flat-address apertures a device maps scratch and LDS to."""

    private_base_hi: int = GFX9_PRIVATE_BASE_HI
    shared_base_hi: int = GFX9_SHARED_BASE_HI


def _dims(value: object, what: str) -> tuple[int, int, int]:
    if not isinstance(value, (list, tuple)) or not 1 <= len(value) <= 3:
        raise LaunchSpecError(f"{what} must be a list of 1 to 3 positive integers, got {value!r}")
    dims = list(value) + [1] * (3 - len(value))
    if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 1 for d in dims):
        raise LaunchSpecError(f"{what} must be a list of 1 to 3 positive integers, got {value!r}")
    return dims[0], dims[1], dims[2]


def make_geometry(grid: object, block: object, dynamic_lds: object = 0) -> Geometry:
    """A Geometry from 1-3 element grid/block lists (missing dimensions are 1)."""
    if not isinstance(dynamic_lds, int) or isinstance(dynamic_lds, bool) or dynamic_lds < 0:
        raise LaunchSpecError(f"dynamic_lds must be a non-negative integer, got {dynamic_lds!r}")
    return Geometry(_dims(grid, "grid"), _dims(block, "block"), dynamic_lds)


def check_geometry(metadata: dict, geometry: Geometry, processor_name: str = "gfx942") -> None:
    """Reject a geometry the kernel cannot be launched with (workgroup size, grid size, the LDS one
    workgroup of `processor_name` may allocate)."""
    name = metadata.get(".name", "?")
    grid, block = geometry.grid, geometry.block
    flat = block[0] * block[1] * block[2]
    limit = metadata.get(".max_flat_workgroup_size", MAX_WORKGROUP_SIZE)
    if flat > min(limit, MAX_WORKGROUP_SIZE):
        raise LaunchSpecError(f"block {list(block)} has {flat} work-items; kernel {name} allows at most {limit}")
    reqd = metadata.get(".reqd_workgroup_size")
    if reqd is not None and list(reqd) != list(block):
        raise LaunchSpecError(f"block {list(block)} differs from kernel {name}'s .reqd_workgroup_size {list(reqd)}")
    for axis, (g, b) in enumerate(zip(grid, block)):
        if g * b > 0xFFFFFFFF:
            raise LaunchSpecError(f"grid {list(grid)} x block {list(block)} exceeds 2^32-1 work-items in "
                                  f"dimension {'xyz'[axis]}")
    lds = metadata.get(".group_segment_fixed_size", 0) + geometry.dynamic_lds
    lds_limit = processor(processor_name).lds_bytes
    if lds > lds_limit:
        raise LaunchSpecError(f"kernel {name} needs {lds} bytes of LDS (static + dynamic_lds), {processor_name} has "
                              f"{lds_limit}")


def explicit_args(metadata: dict) -> list[dict]:
    """The metadata's non-hidden arguments, in order."""
    return [a for a in metadata.get(".args", []) if not a[".value_kind"].startswith("hidden_")]


_ZERO_HIDDEN = {"hidden_remainder_x", "hidden_remainder_y", "hidden_remainder_z",
                "hidden_global_offset_x", "hidden_global_offset_y", "hidden_global_offset_z",
                "hidden_none", "hidden_queue_ptr", "hidden_hostcall_buffer", "hidden_printf_buffer",
                "hidden_heap_v1", "hidden_default_queue", "hidden_completion_action",
                "hidden_multigrid_sync_arg"}


def hidden_value(kind: str, geometry: Geometry, apertures: Apertures) -> int:
    """The integer a hidden argument of `kind` holds for this launch."""
    if kind in _ZERO_HIDDEN:
        return 0
    axis = "xyz".find(kind[-1]) if kind[-2] == "_" else -1
    if kind.startswith("hidden_block_count_") and axis >= 0:
        return geometry.grid[axis]
    if kind.startswith("hidden_group_size_") and axis >= 0:
        return geometry.block[axis]
    values = {"hidden_grid_dims": 3, "hidden_dynamic_lds_size": geometry.dynamic_lds,
              "hidden_private_base": apertures.private_base_hi, "hidden_shared_base": apertures.shared_base_hi}
    if kind not in values:
        raise LaunchSpecError(f"unsupported hidden kernel argument kind {kind}")
    return values[kind]


def check_image(metadata: dict, size: int) -> None:
    """An image of `size` bytes must fit the segment, cover every explicit argument and no hidden one."""
    name = metadata.get(".name", "?")
    if size > metadata[".kernarg_segment_size"]:
        raise LaunchSpecError(f"kernel {name}: kernarg image of {size} bytes exceeds its "
                              f"{metadata['.kernarg_segment_size']}-byte kernarg segment")
    for arg in metadata.get(".args", []):
        end = arg[".offset"] + arg[".size"]
        hidden = arg[".value_kind"].startswith("hidden_")
        if hidden and arg[".offset"] < size:
            raise LaunchSpecError(f"kernel {name}: kernarg image of {size} bytes overlaps hidden argument "
                                  f"{arg['.value_kind']} at offset {arg['.offset']}")
        if not hidden and end > size:
            raise LaunchSpecError(f"kernel {name}: kernarg image of {size} bytes does not cover argument "
                                  f"{arg.get('.name', '?')} at offset {arg['.offset']}")


def _put_image(metadata: dict, image: KernargImage, out: bytearray) -> None:
    check_image(metadata, len(image.data))
    out[:len(image.data)] = image.data


def _describe(value: object) -> str:
    return value.label if isinstance(value, Scalar) else f"pointer 0x{value.address:x}"


def pack_kernargs(metadata: dict, args: list, geometry: Geometry, apertures: Apertures = Apertures()) -> bytes:
    """The kernarg segment for `metadata`'s kernel launched with explicit `args` and `geometry`."""
    name = metadata.get(".name", "?")
    size = metadata[".kernarg_segment_size"]
    align = max(metadata.get(".kernarg_segment_align", 8), 1)
    explicit = explicit_args(metadata)
    image = len(args) == 1 and isinstance(args[0], KernargImage)
    if len(args) != len(explicit) and not image:
        raise LaunchSpecError(f"kernel {name} takes {len(explicit)} explicit arguments, got {len(args)}")
    out = bytearray(-(-size // align) * align)

    def put(arg: dict, data: bytes, what: str) -> None:
        off = arg[".offset"]
        if len(data) != arg[".size"] or off + len(data) > size:
            raise LaunchSpecError(f"kernel {name}: {what} does not fit its {arg['.size']}-byte slot at offset {off}")
        out[off:off + len(data)] = data

    if image:
        _put_image(metadata, args[0], out)
        explicit = []
    for i, (arg, value) in enumerate(zip(explicit, args)):
        kind, nbytes = arg[".value_kind"], arg[".size"]
        where = f"kernel {name} argument {i}"
        if kind == "global_buffer":
            if isinstance(value, Scalar):
                raise LaunchSpecError(f"{where} is a pointer (global_buffer), got {value.label}")
            put(arg, struct.pack("<Q", value.address), f"argument {i}")
        elif kind == "by_value":
            if not isinstance(value, Scalar):
                raise LaunchSpecError(f"{where} is a {nbytes}-byte value (by_value), got a {_describe(value)}")
            if len(value.data) != nbytes:
                raise LaunchSpecError(f"{where} is {nbytes} bytes by value, got {value.label} of {len(value.data)} bytes")
            put(arg, value.data, f"argument {i}")
        else:
            raise LaunchSpecError(f"{where} has unsupported kind {kind}")
    for arg in metadata.get(".args", []):
        kind = arg[".value_kind"]
        if kind.startswith("hidden_"):
            value = hidden_value(kind, geometry, apertures)
            put(arg, value.to_bytes(arg[".size"], "little"), kind)
    return bytes(out)
