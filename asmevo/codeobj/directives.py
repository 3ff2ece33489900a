"""`.amdhsa_kernel` blocks generated from a decoded kernel descriptor.

Fields with a directive are written as that directive; register counts come from an
`Allocation`. Fields no directive can set for the target (privileged bits, reserved bits, the
user-SGPR flags that architected flat scratch forbids, granules llvm-mc cannot reach) are
returned as *carried* fields: the rebuild writes them into the linked descriptor afterwards.
"""
from __future__ import annotations

from dataclasses import replace

from ..isa.resources import Allocation
from ..target import TargetId
from ..target import processor as processor_info
from .descriptor import KernelDescriptor

SIZE_DIRECTIVES = [
    (".amdhsa_group_segment_fixed_size", "group_segment_fixed_size"),
    (".amdhsa_private_segment_fixed_size", "private_segment_fixed_size"),
    (".amdhsa_kernarg_size", "kernarg_size"),
]
FIELD_DIRECTIVES = [
    (".amdhsa_user_sgpr_count", "user_sgpr_count"),
    (".amdhsa_user_sgpr_private_segment_buffer", "enable_sgpr_private_segment_buffer"),
    (".amdhsa_user_sgpr_dispatch_ptr", "enable_sgpr_dispatch_ptr"),
    (".amdhsa_user_sgpr_queue_ptr", "enable_sgpr_queue_ptr"),
    (".amdhsa_user_sgpr_kernarg_segment_ptr", "enable_sgpr_kernarg_segment_ptr"),
    (".amdhsa_user_sgpr_dispatch_id", "enable_sgpr_dispatch_id"),
    (".amdhsa_user_sgpr_flat_scratch_init", "enable_sgpr_flat_scratch_init"),
    (".amdhsa_user_sgpr_kernarg_preload_length", "kernarg_preload_spec_length"),
    (".amdhsa_user_sgpr_kernarg_preload_offset", "kernarg_preload_spec_offset"),
    (".amdhsa_user_sgpr_private_segment_size", "enable_sgpr_private_segment_size"),
    (".amdhsa_uses_dynamic_stack", "uses_dynamic_stack"),
    (".amdhsa_enable_private_segment", "enable_private_segment"),
    (".amdhsa_system_sgpr_workgroup_id_x", "enable_sgpr_workgroup_id_x"),
    (".amdhsa_system_sgpr_workgroup_id_y", "enable_sgpr_workgroup_id_y"),
    (".amdhsa_system_sgpr_workgroup_id_z", "enable_sgpr_workgroup_id_z"),
    (".amdhsa_system_sgpr_workgroup_info", "enable_sgpr_workgroup_info"),
    (".amdhsa_system_vgpr_workitem_id", "enable_vgpr_workitem_id"),
    (".amdhsa_float_round_mode_32", "float_round_mode_32"),
    (".amdhsa_float_round_mode_16_64", "float_round_mode_16_64"),
    (".amdhsa_float_denorm_mode_32", "float_denorm_mode_32"),
    (".amdhsa_float_denorm_mode_16_64", "float_denorm_mode_16_64"),
    (".amdhsa_dx10_clamp", "enable_dx10_clamp"),
    (".amdhsa_ieee_mode", "enable_ieee_mode"),
    (".amdhsa_fp16_overflow", "fp16_overflow"),
    (".amdhsa_tg_split", "tg_split"),
    (".amdhsa_exception_fp_ieee_invalid_op", "enable_exception_ieee_754_fp_invalid_operation"),
    (".amdhsa_exception_fp_denorm_src", "enable_exception_fp_denormal_source"),
    (".amdhsa_exception_fp_ieee_div_zero", "enable_exception_ieee_754_fp_division_by_zero"),
    (".amdhsa_exception_fp_ieee_overflow", "enable_exception_ieee_754_fp_overflow"),
    (".amdhsa_exception_fp_ieee_underflow", "enable_exception_ieee_754_fp_underflow"),
    (".amdhsa_exception_fp_ieee_inexact", "enable_exception_ieee_754_fp_inexact"),
    (".amdhsa_exception_int_div_zero", "enable_exception_int_divide_by_zero"),
]
# Set from the descriptor's raw bytes, never by a directive.
_ARCHITECTED_ONLY_RAW = {"enable_sgpr_private_segment_buffer", "enable_sgpr_flat_scratch_init"}
_NON_ARCHITECTED_ONLY = {"enable_private_segment": ".amdhsa_system_sgpr_private_segment_wavefront_offset"}


def _directives(processor: str) -> list[tuple[str, str]]:
    out = []
    for directive, name in FIELD_DIRECTIVES:
        if processor_info(processor).architected_flat_scratch and name in _ARCHITECTED_ONLY_RAW:
            continue
        if not processor_info(processor).architected_flat_scratch and name in _NON_ARCHITECTED_ONLY:
            directive = _NON_ARCHITECTED_ONLY[name]
        if not processor_info(processor).unified_vgpr_file and name == "tg_split":
            continue
        out.append((directive, name))
    return out


def expressible_fields(processor: str) -> set[str]:
    """Descriptor bit fields some directive sets on `processor` (resource fields included)."""
    fields = {name for _, name in _directives(processor)} | {"granulated_workitem_vgpr_count",
                                                              "granulated_wavefront_sgpr_count"}
    return fields | ({"accum_offset"} if processor_info(processor).unified_vgpr_file else set())


def clamp_allocation(alloc: Allocation, target: TargetId) -> Allocation:
    """The allocation llvm-mc accepts (it rejects next_free_sgpr above the addressable SGPRs)."""
    addressable = processor_info(target.processor).addressable_sgprs
    if alloc.next_free_sgpr <= addressable:
        return alloc
    return replace(alloc, next_free_sgpr=addressable)


def _effective(alloc: Allocation, target: TargetId) -> Allocation:
    return replace(clamp_allocation(alloc, target), reserve_xnack_mask=target.xnack != "off")


def carried_fields(desc: KernelDescriptor, target: TargetId, alloc: Allocation) -> dict[str, int]:
    """Fields the block cannot express but the descriptor has: written after linking."""
    expressible = expressible_fields(target.processor)
    carried = {k: v for k, v in desc.fields.items() if k not in expressible and v}
    gran_v, gran_s = _effective(alloc, target).granulated(target.processor)
    if desc["granulated_workitem_vgpr_count"] > gran_v:
        carried["granulated_workitem_vgpr_count"] = desc["granulated_workitem_vgpr_count"]
    if desc["granulated_wavefront_sgpr_count"] > gran_s:
        carried["granulated_wavefront_sgpr_count"] = desc["granulated_wavefront_sgpr_count"]
    return carried


def kernel_block(name: str, desc: KernelDescriptor, target: TargetId, alloc: Allocation) -> list[str]:
    """Lines of the `.amdhsa_kernel` block for kernel `name`. The XNACK-mask reservation follows
    the target id (llvm-mc requires them to agree)."""
    processor = target.processor
    alloc = _effective(alloc, target)
    lines = [f"\t.amdhsa_kernel {name}"]
    values = desc.as_dict()
    for directive, key in SIZE_DIRECTIVES + _directives(processor):
        lines.append(f"\t\t{directive} {values[key]}")
    lines.append(f"\t\t.amdhsa_next_free_vgpr {alloc.next_free_vgpr}")
    lines.append(f"\t\t.amdhsa_next_free_sgpr {alloc.next_free_sgpr}")
    if processor_info(processor).unified_vgpr_file:
        lines.append(f"\t\t.amdhsa_accum_offset {alloc.accum_offset}")
    lines.append(f"\t\t.amdhsa_reserve_vcc {int(alloc.reserve_vcc)}")
    lines.append(f"\t\t.amdhsa_reserve_xnack_mask {int(alloc.reserve_xnack_mask)}")
    lines.append("\t.end_amdhsa_kernel")
    return lines
