"""The frozen ABI: what a candidate must keep from K0, stated once for the rebuild and verification.

Everything of a kernel's metadata and descriptor is frozen except the resource counts a rebuild
rescans (`RESOURCE_METADATA`, `RESOURCE_FIELDS`); so are the target, code-object version, kernel
names and, for a kernarg-preloading kernel, its compatibility preamble.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .target import processor

if TYPE_CHECKING:
    from .codeobj import CodeObject
    from .codeobj.descriptor import KernelDescriptor

# Metadata keys and descriptor fields that describe resources, which a candidate may change.
RESOURCE_METADATA = frozenset({".vgpr_count", ".sgpr_count", ".agpr_count", ".vgpr_spill_count",
                               ".sgpr_spill_count", ".group_segment_fixed_size", ".private_segment_fixed_size"})
RESOURCE_FIELDS = frozenset({"granulated_workitem_vgpr_count", "granulated_wavefront_sgpr_count", "accum_offset"})


def metadata_differences(kernel: str, k0: dict, k1: dict) -> list[str]:
    """Frozen metadata keys of `kernel` whose K1 value differs from K0's."""
    return [f"kernel {kernel}: metadata {key} {k1.get(key)!r} != {k0.get(key)!r}"
            for key in sorted((set(k0) | set(k1)) - RESOURCE_METADATA) if k0.get(key) != k1.get(key)]


def descriptor_differences(kernel: str, d0: "KernelDescriptor", d1: "KernelDescriptor") -> list[str]:
    """Frozen descriptor fields (the kernarg size and every non-resource field) that differ."""
    out = []
    if d0.kernarg_size != d1.kernarg_size:
        out.append(f"kernel {kernel}: descriptor kernarg_size {d1.kernarg_size} != {d0.kernarg_size}")
    for name in sorted(set(d0.fields) - RESOURCE_FIELDS):
        if d0.fields[name] != d1.fields.get(name):
            out.append(f"kernel {kernel}: descriptor {name} {d1.fields.get(name)} != {d0.fields[name]}")
    return out


def abi_differences(k0: "CodeObject", k1: "CodeObject") -> list[str]:
    """How K1's frozen ABI differs from K0's: target, code-object version, kernel symbols, metadata
    (kernarg layout and every other non-resource key), non-resource descriptor fields and, for a
    kernarg-preloading kernel, its compatibility preamble (the first 256 bytes: firmware without
    preloading runs them, hardware with it starts after them)."""
    out = []
    preamble = processor(k0.target.processor).preload_preamble_bytes
    if str(k0.target) != str(k1.target) or k0.code_object_version != k1.code_object_version:
        out.append(f"target {k1.target} v{k1.code_object_version} != {k0.target} v{k0.code_object_version}")
    if k0.kernel_names != k1.kernel_names:
        out.append(f"kernels {k1.kernel_names} != {k0.kernel_names}")
        return out
    for a, b in zip(k0.kernels, k1.kernels):
        out += metadata_differences(a.name, a.metadata, b.metadata)
        out += descriptor_differences(a.name, a.descriptor, b.descriptor)
        da = a.descriptor
        if da.fields["kernarg_preload_spec_length"] and \
                k0.read(a.code_address, preamble) != k1.read(b.code_address, preamble):
            out.append(f"kernel {a.name}: kernarg-preload preamble (first {preamble} bytes) changed")
    return out
