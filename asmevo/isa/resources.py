"""Resource scan of an instruction list and the register allocation a kernel must declare.

`scan` finds the highest VGPR/AGPR/SGPR referenced and the use of VCC, flat scratch, the XNACK
mask, scratch and LDS. `Allocation` is what a descriptor and the metadata declare
(`.amdhsa_next_free_vgpr`, `.amdhsa_next_free_sgpr`, `.amdhsa_accum_offset`, reserve flags,
`.vgpr_count`/`.sgpr_count`/`.agpr_count`): `required` derives it from a scan, `declared` reads it
from a code object, `choose` applies the rebuild policy.

With a unified register file (gfx90a/gfx94x) VGPRs and AGPRs share one file: AGPRs start at
accum_offset, the total is accum_offset + AGPRs. Granules and the extra SGPRs (VCC, flat scratch,
XNACK mask) are the processor's (`asmevo.target.Processor`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Iterable

from ..errors import UnsupportedInstruction
from ..target import processor as processor_info
from .instruction import Instruction
from .table import VCC, InstrInfo, implicit_registers, instr_info

if TYPE_CHECKING:
    from ..codeobj.descriptor import KernelDescriptor

_SEPARATORS = str.maketrans({c: " " for c in ",()|-"})
_REG_NEXT = frozenset("0123456789[")
_REG_RE = re.compile(r"^([vsa])(?:(\d+)|\[\d+:(\d+)\])$")
_LDS_DMA = re.compile(r"^buffer_\S+ .* lds\b", re.M)


@dataclass
class ResourceUsage:
    """What an instruction list touches. Register counts are `highest index + 1` (0 when none)."""

    vgprs: int = 0
    agprs: int = 0
    sgprs: int = 0
    vcc: bool = False
    flat_scratch: bool = False
    xnack_mask: bool = False
    scratch: bool = False
    lds: bool = False

    def merge(self, other: "ResourceUsage") -> "ResourceUsage":
        return ResourceUsage(
            max(self.vgprs, other.vgprs), max(self.agprs, other.agprs), max(self.sgprs, other.sgprs),
            self.vcc or other.vcc, self.flat_scratch or other.flat_scratch,
            self.xnack_mask or other.xnack_mask, self.scratch or other.scratch, self.lds or other.lds)


def scan_lines(lines: Iterable[str], processor: str = "gfx942") -> ResourceUsage:
    """Scan instruction lines (no labels, directives or comments) of `processor`. Works on the distinct lines
    (the scan depends on neither order nor repetition) joined: one split into tokens, then per
    distinct token and mnemonic."""
    distinct = set(lines)
    text = "\n".join(distinct)
    top = {"v": 0, "a": 0, "s": 0}
    tokens = {t for t in set(text.translate(_SEPARATORS).split()) if t[0] in "vsa" and len(t) > 1 and t[1] in _REG_NEXT}
    for token in tokens:
        m = _REG_RE.match(token)
        if m:
            end = int(m.group(2) or m.group(3)) + 1
            if end > top[m.group(1)]:
                top[m.group(1)] = end
    known = _known({line.split(None, 1)[0] for line in distinct if line[:1].strip()}, processor)
    infos = [info for _, info in known]
    return ResourceUsage(
        vgprs=top["v"], agprs=top["a"], sgprs=top["s"],
        vcc="vcc" in text or any(not (d | u).isdisjoint(VCC) for (d, u), _ in known),
        flat_scratch="flat_scratch" in text, xnack_mask="xnack_mask" in text,
        scratch=any(i.family == "flat" and i.segment == "scratch" for i in infos),
        lds=any((i.family == "ds" and i.memory) or i.lds_dma for i in infos) or bool(_LDS_DMA.search(text)))


def _known(mnemonics: set[str], processor: str) -> list[tuple[tuple[frozenset, frozenset], InstrInfo]]:
    """(implicit registers, table record) of the mnemonics `processor`'s table knows; the others are
    the assembler's to report."""
    out = []
    for m in mnemonics:
        try:
            out.append((implicit_registers(m, processor), instr_info(m, processor)))
        except UnsupportedInstruction:
            pass
    return out


def scan(instructions: Iterable[Instruction], processor: str = "gfx942") -> ResourceUsage:
    """Scan instruction objects of `processor` (raw data words are skipped)."""
    return scan_lines((ins.text() for ins in instructions if not ins.is_data), processor)


def _round(n: int, granule: int) -> int:
    return -(-n // granule) * granule


@dataclass(frozen=True)
class Allocation:
    """Declared register allocation: descriptor directives and metadata counts."""

    next_free_vgpr: int  # unified VGPR+AGPR total on gfx90a/gfx94x
    next_free_sgpr: int
    accum_offset: int
    reserve_vcc: bool
    reserve_xnack_mask: bool
    vgpr_count: int
    sgpr_count: int
    agpr_count: int

    def granulated(self, processor: str) -> tuple[int, int]:
        """(granulated_workitem_vgpr_count, granulated_wavefront_sgpr_count) as llvm-mc encodes them."""
        p = processor_info(processor)
        sgprs = self.next_free_sgpr + p.extra_sgprs(self.reserve_vcc, False, self.reserve_xnack_mask)
        return (-(-max(1, self.next_free_vgpr) // p.vgpr_granule) - 1, -(-max(1, sgprs) // p.sgpr_granule) - 1)


def hardware_sgprs(desc: "KernelDescriptor") -> int:
    """SGPRs the hardware initialises at wave launch (user SGPRs then system SGPRs)."""
    f = desc.fields
    system = sum(f[k] for k in ("enable_sgpr_workgroup_id_x", "enable_sgpr_workgroup_id_y",
                                "enable_sgpr_workgroup_id_z", "enable_sgpr_workgroup_info",
                                "enable_private_segment"))
    return f["user_sgpr_count"] + system


def required(use: ResourceUsage, desc: "KernelDescriptor", processor: str, *,
             dispatch_floor: bool = False) -> Allocation:
    """The smallest allocation that covers `use` (counted like LLVM: registers the code names).
    `dispatch_floor` also covers the user and system SGPRs the hardware initialises."""
    p = processor_info(processor)
    vgprs = max(1, use.vgprs)
    if p.unified_vgpr_file:
        accum = _round(vgprs, p.accum_granule)
        total = accum + use.agprs if use.agprs else vgprs
    else:
        accum, total = 0, max(vgprs, use.agprs)
    sgprs = max(use.sgprs, hardware_sgprs(desc)) if dispatch_floor else use.sgprs
    extra = p.extra_sgprs(use.vcc, use.flat_scratch, use.xnack_mask)
    return Allocation(total, sgprs, accum, use.vcc, use.xnack_mask, total, sgprs + extra, use.agprs)


def declared(desc: "KernelDescriptor", meta: dict, processor: str) -> Allocation:
    """What a code object declares: descriptor capacities (granule-rounded) and metadata counts."""
    f = desc.fields
    p = processor_info(processor)
    vgpr_cap = (f["granulated_workitem_vgpr_count"] + 1) * p.vgpr_granule
    sgpr_cap = (f["granulated_wavefront_sgpr_count"] + 1) * p.sgpr_granule - p.extra_sgprs(False, False, False)
    accum = desc.accum_offset if p.unified_vgpr_file else 0
    return Allocation(vgpr_cap, sgpr_cap, accum, False, False, int(meta.get(".vgpr_count", 0)),
                      int(meta.get(".sgpr_count", 0)), int(meta.get(".agpr_count", 0)))


def choose(need: Allocation, have: Allocation, shrink: bool, need0: Allocation | None = None) -> Allocation:
    """Rebuild policy. With `shrink`: exactly `need`. Otherwise K0's declared values (`have`)
    are kept for whatever the code needs no more of than K0's own code did (`need0`; hand-written
    objects may declare differently from LLVM's counting), and anything that grew is raised to
    at least `need`, never lowered below K0's. Without `need0` everything counts as grown."""
    if shrink:
        return need
    base = need0 or Allocation(0, 0, 0, False, False, 0, 0, 0)

    def pick(attr: str) -> int:
        mine, theirs = getattr(need, attr), getattr(have, attr)
        return theirs if mine <= getattr(base, attr) else max(mine, theirs)

    vgprs_grew = any(getattr(need, a) > getattr(base, a) for a in ("next_free_vgpr", "accum_offset", "agpr_count"))
    accum, total, vgpr_count = have.accum_offset, have.next_free_vgpr, have.vgpr_count
    if vgprs_grew:
        accum = max(have.accum_offset, need.accum_offset)
        unified = accum + need.agpr_count if need.agpr_count else 0
        total = max(have.next_free_vgpr, need.next_free_vgpr, unified)
        vgpr_count = max(have.vgpr_count, need.vgpr_count, unified)
    return replace(need, next_free_vgpr=total, next_free_sgpr=pick("next_free_sgpr"), accum_offset=accum,
                   vgpr_count=vgpr_count, sgpr_count=pick("sgpr_count"), agpr_count=pick("agpr_count"))
