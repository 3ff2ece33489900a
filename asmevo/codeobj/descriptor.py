"""The 64-byte AMDHSA kernel descriptor (code-object v3+), decoded into named fields and back.

Layout and bit fields follow LLVM's AMDGPUUsage "Kernel Descriptor" tables for GFX9 (gfx90a/gfx94x
compute_pgm_rsrc3 holds accum_offset and tg_split).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from ..errors import CodeObjectError

SIZE = 64
_HEADER = struct.Struct("<IIII q 20s I I I H H 4s")

# (register, field name, low bit, width)
RSRC1_FIELDS = [
    ("granulated_workitem_vgpr_count", 0, 6), ("granulated_wavefront_sgpr_count", 6, 4),
    ("priority", 10, 2), ("float_round_mode_32", 12, 2), ("float_round_mode_16_64", 14, 2),
    ("float_denorm_mode_32", 16, 2), ("float_denorm_mode_16_64", 18, 2), ("priv", 20, 1),
    ("enable_dx10_clamp", 21, 1), ("debug_mode", 22, 1), ("enable_ieee_mode", 23, 1), ("bulky", 24, 1),
    ("cdbg_user", 25, 1), ("fp16_overflow", 26, 1), ("rsrc1_reserved", 27, 5),
]
RSRC2_FIELDS = [
    ("enable_private_segment", 0, 1), ("user_sgpr_count", 1, 5), ("enable_trap_handler", 6, 1),
    ("enable_sgpr_workgroup_id_x", 7, 1), ("enable_sgpr_workgroup_id_y", 8, 1),
    ("enable_sgpr_workgroup_id_z", 9, 1), ("enable_sgpr_workgroup_info", 10, 1),
    ("enable_vgpr_workitem_id", 11, 2), ("enable_exception_address_watch", 13, 1),
    ("enable_exception_memory", 14, 1), ("granulated_lds_size", 15, 9),
    ("enable_exception_ieee_754_fp_invalid_operation", 24, 1),
    ("enable_exception_fp_denormal_source", 25, 1), ("enable_exception_ieee_754_fp_division_by_zero", 26, 1),
    ("enable_exception_ieee_754_fp_overflow", 27, 1), ("enable_exception_ieee_754_fp_underflow", 28, 1),
    ("enable_exception_ieee_754_fp_inexact", 29, 1), ("enable_exception_int_divide_by_zero", 30, 1),
    ("rsrc2_reserved", 31, 1),
]
RSRC3_FIELDS = [("accum_offset", 0, 6), ("rsrc3_reserved0", 6, 10), ("tg_split", 16, 1), ("rsrc3_reserved1", 17, 15)]
PROPERTY_FIELDS = [
    ("enable_sgpr_private_segment_buffer", 0, 1), ("enable_sgpr_dispatch_ptr", 1, 1),
    ("enable_sgpr_queue_ptr", 2, 1), ("enable_sgpr_kernarg_segment_ptr", 3, 1),
    ("enable_sgpr_dispatch_id", 4, 1), ("enable_sgpr_flat_scratch_init", 5, 1),
    ("enable_sgpr_private_segment_size", 6, 1), ("properties_reserved0", 7, 3),
    ("enable_wavefront_size32", 10, 1), ("uses_dynamic_stack", 11, 1), ("properties_reserved1", 12, 4),
]
PRELOAD_FIELDS = [("kernarg_preload_spec_length", 0, 7), ("kernarg_preload_spec_offset", 7, 9)]
# User SGPRs in the order the hardware loads them, with their size in SGPRs.
USER_SGPR_ORDER = [
    ("enable_sgpr_private_segment_buffer", 4), ("enable_sgpr_dispatch_ptr", 2), ("enable_sgpr_queue_ptr", 2),
    ("enable_sgpr_kernarg_segment_ptr", 2), ("enable_sgpr_dispatch_id", 2),
    ("enable_sgpr_flat_scratch_init", 2), ("enable_sgpr_private_segment_size", 1),
]
_REGISTERS = {
    "compute_pgm_rsrc1": RSRC1_FIELDS, "compute_pgm_rsrc2": RSRC2_FIELDS,
    "compute_pgm_rsrc3": RSRC3_FIELDS, "kernel_code_properties": PROPERTY_FIELDS,
    "kernarg_preload": PRELOAD_FIELDS,
}


def _unpack(value: int, fields) -> dict[str, int]:
    return {name: (value >> lo) & ((1 << width) - 1) for name, lo, width in fields}


def _pack(values: dict[str, int], fields) -> int:
    out = 0
    for name, lo, width in fields:
        v = values[name]
        if not 0 <= v < (1 << width):
            raise CodeObjectError(f"kernel descriptor field {name}={v} does not fit in {width} bits")
        out |= v << lo
    return out


@dataclass
class KernelDescriptor:
    """Decoded kernel descriptor: the three fixed sizes, the entry offset, and every bit field."""

    group_segment_fixed_size: int
    private_segment_fixed_size: int
    kernarg_size: int
    kernel_code_entry_byte_offset: int
    fields: dict[str, int] = field(default_factory=dict)
    reserved: bytes = b"\0" * 28

    @classmethod
    def decode(cls, data: bytes) -> "KernelDescriptor":
        if len(data) != SIZE:
            raise CodeObjectError(f"kernel descriptor is {len(data)} bytes, expected {SIZE}")
        (group, private, kernarg, res0, entry, res1, rsrc3, rsrc1, rsrc2, props, preload,
         res2) = _HEADER.unpack(data)
        raw = {"compute_pgm_rsrc1": rsrc1, "compute_pgm_rsrc2": rsrc2, "compute_pgm_rsrc3": rsrc3,
               "kernel_code_properties": props, "kernarg_preload": preload}
        fields = {}
        for reg, table in _REGISTERS.items():
            fields.update(_unpack(raw[reg], table))
        reserved = res0.to_bytes(4, "little") + res1 + res2
        return cls(group, private, kernarg, entry, fields, reserved)

    def encode(self) -> bytes:
        regs = {reg: _pack(self.fields, table) for reg, table in _REGISTERS.items()}
        return _HEADER.pack(
            self.group_segment_fixed_size, self.private_segment_fixed_size, self.kernarg_size,
            int.from_bytes(self.reserved[:4], "little"), self.kernel_code_entry_byte_offset,
            self.reserved[4:24], regs["compute_pgm_rsrc3"], regs["compute_pgm_rsrc1"],
            regs["compute_pgm_rsrc2"], regs["kernel_code_properties"], regs["kernarg_preload"],
            self.reserved[24:28])

    def __getitem__(self, name: str) -> int:
        return self.fields[name]

    def as_dict(self) -> dict[str, int]:
        return {
            "group_segment_fixed_size": self.group_segment_fixed_size,
            "private_segment_fixed_size": self.private_segment_fixed_size,
            "kernarg_size": self.kernarg_size,
            "kernel_code_entry_byte_offset": self.kernel_code_entry_byte_offset,
            **self.fields,
        }

    # Derived quantities used by the emulator and resource checks.
    def user_sgpr_layout(self) -> list[tuple[str, int, int]]:
        """(name, first SGPR, count) for each enabled user SGPR, in hardware order."""
        layout, sgpr = [], 0
        for name, count in USER_SGPR_ORDER:
            if self.fields[name]:
                layout.append((name, sgpr, count))
                sgpr += count
        return layout

    @property
    def vgpr_granule_count(self) -> int:
        """VGPRs allocated (unified VGPR+AGPR file on gfx90a/gfx94x, granule of 8)."""
        return (self.fields["granulated_workitem_vgpr_count"] + 1) * 8

    @property
    def accum_offset(self) -> int:
        """First AGPR's position in the unified register file, in VGPRs."""
        return (self.fields["accum_offset"] + 1) * 4

    @property
    def lds_bytes(self) -> int:
        return self.group_segment_fixed_size
