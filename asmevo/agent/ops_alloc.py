"""Release a padded VGPR allocation: a kernel may declare more VGPRs than its code names, which caps the
waves a SIMD holds (vLLM's decode attention kernels, compiled by Triton with `waves_per_eu` 1 and 4,
declare 264 VGPRs for code naming 78 and 104 for 12: exactly one and four waves per SIMD). When the
code's own need fits more waves per SIMD, the edit lowers the kernel's `.amdhsa_next_free_vgpr` to that
need (granule-rounded); the rebuild grants a lowered directive down to what the code names
(`asmevo.rebuild`) and refuses it for code that addresses registers through M0. The code is unchanged; only how many waves share a SIMD is, so every gate still
runs and the timing gate decides whether the extra waves pay (more waves also share the caches).
"""
from __future__ import annotations

from ..codeobj.descriptor import KernelDescriptor
from ..isa.resources import required, scan_lines
from ..rebuild import addresses_indirectly, helper_lines
from ..source import scanned_lines, strip_comment
from ..target import processor as processor_info
from .edit import Edit
from .ops_regs import waves_per_simd
from .source import KernelSource

OPERATOR = "release_vgpr_padding"
_DIRECTIVE = ".amdhsa_next_free_vgpr"


def _directive_line(src: KernelSource) -> tuple[int, int] | None:
    """(line number, value) of the kernel's `.amdhsa_next_free_vgpr` directive."""
    first, last = src.file.blocks[src.kernel]
    for n in range(first + 1, last):
        parts = strip_comment(src.line(n)).split()
        if len(parts) == 2 and parts[0] == _DIRECTIVE and parts[1].isdigit():
            return n, int(parts[1])
    return None


def release_vgpr_padding(src: KernelSource, descriptor: KernelDescriptor, processor: str) -> Edit | None:
    """The edit lowering the kernel's declared VGPRs to what its code needs, when that fits more waves
    per SIMD than the declaration does; None otherwise (or when the code addresses registers through M0)."""
    found = _directive_line(src)
    if found is None:
        return None
    line, declared = found
    scanned = scanned_lines(src.file.instruction_lines(src.kernel), helper_lines(src.file, set(src.file.blocks)))
    if addresses_indirectly(scanned):
        return None
    use = scan_lines(scanned, processor)
    before, after = waves_per_simd(declared, 0, processor), waves_per_simd(max(1, use.vgprs), use.agprs, processor)
    if after <= before:
        return None  # more waves per SIMD also means a smaller allocation: asked < declared
    granule = processor_info(processor).vgpr_granule
    asked = -(-required(use, descriptor, processor).next_free_vgpr // granule) * granule
    return Edit(line, line, f"\t\t{_DIRECTIVE} {asked}", OPERATOR,
                f"declare {asked} VGPRs (the code names {use.vgprs} VGPRs, {use.agprs} AGPRs) instead of "
                f"{declared}: {before} -> {after} waves per SIMD")
