"""gfx942 (CDNA3) and gfx950 (CDNA4) wait-state hazards that software must cover with independent
instructions or `s_nop N` (N+1 wait states).

Every rule names its source: "ISA" is the CDNA3 ISA guide's "Manually Inserted Wait States"
table, "LLVM" the gfx940 paths of GCNHazardRecognizer (checkVMEMHazards, checkVALUHazards,
checkDPPHazards, checkDivFMasHazards, checkRWLaneHazards, checkGetRegHazards,
checkSetRegHazards, checkReadM0Hazards, checkMAIHazards90A, checkMAIVALUHazards). MFMA pass
counts come from the instruction table (LLVM's SIDPGFX940FullSpeedModel).

gfx950 follows the same rules with LLVM's gfx950 differences (every `hasGFX950Insts()` /
`IsGFX950` site of GCNHazardRecognizer, LLVM 22): XDL results need one more wait state when the
producer has more than 2 passes (SrcA/B, SrcC, VALU/memory reads and overwrites; an XDL SrcC read by
an XDL one +1 always), the 16-pass f64 16x16x4 DGEMM needs 17 (SrcC) / 19 (SrcA/B, VALU read) wait
states, MFMA pass counts come from SIDPGFX950FullSpeedModel (the f8f6f4 ones from their cbsz/blgp
formats), `v_permlane16/32_swap` wait 2 after a VALU writes their VGPRs and 4 after a v_cmpx writes
EXEC (checkPermlaneHazards), and the dst-sel forwarding rule (hasCvtScaleForwardingHazard) also
covers byte-selecting fp8 conversions (op_sel[2]), for any operand of the consumer (LLVM's
consumesDstSelForwardingOperand: reads and overwrites alike). LLVM's fp4 case (its stochastic-rounding
`v_cvt_scalef32_sr_pk_fp4_*`, whatever their op_sel) concerns instructions the gfx950 instruction table
does not list, which the checker refuses (UnsupportedInstruction) before any rule.

For each consumer the search walks backwards over the CFG (through every predecessor path, up
to the largest wait a rule can need) and finds, per path, the nearest instruction that produces
the hazard; the fewest wait states over all paths is what the consumer gets.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from .cfg import CFG, build_cfg
from .instruction import Instruction
from .regs import EXEC, M0, VCC, Reg, RegInfo, def_use_all, is_lds_dma, operand_regs
from .table import instr_info

_HWREG = re.compile(r"hwreg\(\s*([A-Za-z_0-9]+)(?:\s*,\s*(\d+)\s*,\s*(\d+))?\s*\)")
_HWREG_IDS = {"1": "HW_REG_MODE", "2": "HW_REG_STATUS", "3": "HW_REG_TRAPSTS", "4": "HW_REG_HW_ID",
              "5": "HW_REG_GPR_ALLOC", "6": "HW_REG_LDS_ALLOC", "7": "HW_REG_IB_STS"}
_RWLANE = ("v_readlane_b32", "v_writelane_b32")
_READLANE = ("v_readlane_b32", "v_readfirstlane_b32")
_VECTOR = ("valu", "vopc", "mfma", "flat", "mubuf", "ds")
MAX_WAIT = 19  # the most wait states any rule needs


@dataclass(frozen=True)
class HazardViolation:
    """`index` is the consumer's position in the instruction list, `pc` its address (if any)."""

    rule: str
    index: int
    pc: int | None
    needed: int
    found: int
    message: str


# ---- MFMA classification (gfx940), from the instruction table --------------------------------

def mfma_passes(base: str, processor: str = "gfx942") -> int:
    """Passes of an MFMA / SMFMAC (the table's, = LLVM's RThroughput for the processor)."""
    return _shape(base, processor).passes


def instruction_passes(ins: Instruction, processor: str = "gfx942") -> int:
    """Passes of one MFMA instruction: the table's, except the gfx950 f8f6f4 MFMAs, which take half
    as many when neither A (cbsz) nor B (blgp) is an 8-bit format (formats 0 fp8, 1 bf8; LLVM
    SISchedule.td PredIsF8_MFMA_SCALE)."""
    shape = _shape(ins.mnemonic, processor)
    if shape.in_type == "f8f6f4" and min(int(ins.modifier(k) or 0) for k in ("cbsz", "blgp")) > 1:
        return shape.passes // 2
    return shape.passes


def is_dgemm(base: str, processor: str = "gfx942") -> bool:
    shape = instr_info(base, processor).mfma
    return shape is not None and shape.dgemm


def is_xdl(base: str, processor: str = "gfx942") -> bool:
    """gfx940 XDL MFMAs: everything but plain-f32 and f64 input types."""
    shape = instr_info(base, processor).mfma
    return shape is not None and shape.xdl


def _shape(base: str, processor: str = "gfx942"):
    shape = instr_info(base, processor).mfma
    if shape is None:
        raise ValueError(f"not an MFMA: {base}")
    return shape


# Fixed wait states per rule: (wait states, producer -> consumer). Each rule's source is named where
# `_queries` checks it; the LLM agent's prompt renders this table (asmevo/agent/facts.py).
FIXED_WAITS: dict[str, tuple[int, str]] = {
    "valu-sgpr-vmem": (5, "VALU writes an SGPR -> a VMEM instruction reads it"),
    "valu-sgpr-valu": (2, "VALU writes an SGPR or VCC -> a VALU reads it as a constant-bus operand"),
    "trans-use": (1, "transcendental VALU (v_exp, v_rcp, ...) writes a VGPR -> a non-transcendental VALU reads it"),
    "dst-sel-forward": (1, "VALU writes part of a VGPR (SDWA dst_sel, op_sel) -> a VALU reads it"),
    "store-data-overwrite": (2, "a store of more than 64 bits issues -> a VALU overwrites its data VGPRs"),
    "valu-vccz-execz": (5, "VALU writes VCC or EXEC -> a VALU reads VCCZ/EXECZ as data"),
    "valu-exec-rwlane": (4, "VALU writes EXEC -> v_readlane/v_readfirstlane/v_writelane"),
    "valu-vgpr-readlane": (1, "VALU writes a VGPR -> v_readlane/v_readfirstlane reads it"),
    "rwlane-lane-select": (4, "VALU writes an SGPR -> v_readlane/v_writelane selects its lane by it"),
    "dpp-vgpr": (2, "any instruction writes a VGPR -> a DPP instruction reads it"),
    "dpp-exec": (5, "VALU writes EXEC -> a DPP instruction"),
    "div-fmas-vcc": (4, "VALU writes VCC -> v_div_fmas reads it"),
    "setreg-getreg": (2, "s_setreg of a hardware register -> s_getreg of the same register"),
    "setvskip-getreg": (2, "s_setvskip -> s_getreg of MODE"),
    "setreg-setreg": (2, "s_setreg of a hardware register -> s_setreg of the same register"),
    "setreg-vskip": (2, "s_setreg of MODE.vskip -> any vector instruction"),
    "salu-m0": (1, "SALU writes M0 -> s_movrel, GDS, LDS DMA, LDS_DIRECT or s_sendmsg reads it"),
    "valu-exec-mfma": (4, "VALU writes EXEC -> an MFMA"),
    "valu-vgpr-mfma": (2, "VALU writes a VGPR -> an MFMA reads it"),
    "dot-read": (3, "v_dot writes a VGPR -> another instruction reads it (0 for the same v_dot's SrcC)"),
    "dot-write": (3, "v_dot writes a VGPR -> a different instruction overwrites it"),
    "dgemm-fma64": (2, "an f64 MFMA (DGEMM) -> v_fma_f64 / v_fmac_f64"),
    "valu-vgpr-permlane-swap": (2, "VALU writes a VGPR -> v_permlane16/32_swap reads it (gfx950)"),
    "vcmpx-exec-permlane-swap": (4, "v_cmpx writes EXEC -> v_permlane16/32_swap (gfx950)"),
}


def fixed(rule: str) -> Callable[[object], int]:
    """The wait-state function of a rule with fixed wait states (`FIXED_WAITS`)."""
    states = FIXED_WAITS[rule][0]
    return lambda p: states


def mfma_result_wait(base: str, memory: bool = False, processor: str = "gfx942") -> int:
    """Wait states between MFMA `base` of `processor` (its table's passes) and an instruction reading
    its result: on gfx942 passes + 3 for XDL, passes + 2 otherwise; DGEMM 6 (4 passes) or 11, read by a
    memory instruction 9 or 18 (LLVM checkMAIHazards90A / checkMAIVALUHazards, gfx940); gfx950 as
    `_result_wait` says."""
    shape = _shape(base, processor)
    return _result_wait(shape.passes, shape.dgemm, shape.xdl, processor, "read-memory" if memory else "read")


def _result_wait(passes: int, dgemm: bool, xdl: bool, processor: str, use: str) -> int:
    """Wait states after an MFMA of `passes` passes before `use` of its result: "read" (VALU, or an
    MFMA's SrcA/B), "read-memory" (a memory instruction), "write" (a VALU overwrites it). gfx950:
    XDL +1 beyond 2 passes, the 16-pass DGEMM read by VALU or as SrcA/B 19 (LLVM IsGFX950 paths)."""
    gfx950 = processor == "gfx950"
    if dgemm:
        if passes == 4:
            return 9 if use == "read-memory" else 6
        if use == "read-memory":
            return 18
        return 19 if gfx950 and use == "read" else 11
    return passes + (3 + (gfx950 and passes != 2) if xdl else 2)


# ---- per-instruction facts -----------------------------------------------------------------

@dataclass
class _Facts:
    ins: Instruction
    info: RegInfo
    waits: int
    valu: bool
    mfma: bool
    vmem: bool
    explicit_uses: frozenset[Reg]
    dst_regs: frozenset[Reg]
    dot: bool     # v_dot*
    setreg: tuple[str, int, int] | None  # (register, offset, size) an s_setreg writes
    vskip: bool   # s_setreg of MODE.vskip
    processor: str
    passes: int = 0   # MFMA passes (instruction_passes)
    dgemm: bool = False
    xdl: bool = False


def _facts(ins: Instruction, info: RegInfo, processor: str) -> _Facts:
    """The hazard facts of `ins` as an instruction of `processor`, kept on the instruction (`hazard_memo`)."""
    memo = ins.hazard_memo
    if memo is not None and memo[0] == processor and memo[1].info is info:
        return memo[1]
    f = _new_facts(ins, info, processor)
    ins.hazard_memo = (processor, f)
    return f


def _new_facts(ins: Instruction, info: RegInfo, processor: str) -> _Facts:
    waits = int(ins.operands[0].value) + 1 if info.base == "s_nop" and ins.operands else 1
    explicit: set[Reg] = set()
    for op in info.srcs:
        explicit |= operand_regs(op)
    dst: set[Reg] = set()
    for op in info.dst:
        dst |= operand_regs(op)
    explicit |= dst & info.uses
    target = _setreg_target(ins, info)
    vskip = bool(target) and target[0] == "HW_REG_MODE" and target[1] <= 28 < target[1] + target[2]
    f = _Facts(ins, info, waits, info.family in ("valu", "vopc", "mfma"),
               info.family == "mfma", info.family in ("mubuf", "flat"),
               frozenset(explicit), frozenset(dst), info.base.startswith("v_dot"), target, vskip, processor)
    if f.mfma:
        f.passes = instruction_passes(ins, processor)
        f.dgemm, f.xdl = is_dgemm(info.base, processor), is_xdl(info.base, processor)
    return f


def hwreg_field(op_text: str) -> tuple[str, int, int] | None:
    """(register name, bit offset, bit size) of a `hwreg(...)` operand (the whole register without offset and
    size); None for other text."""
    m = _HWREG.search(op_text)
    if not m:
        return None
    name = _HWREG_IDS.get(m.group(1), m.group(1))
    return name, int(m.group(2) or 0), int(m.group(3) or 32)


def _setreg_target(ins: Instruction, info: RegInfo) -> tuple[str, int, int] | None:
    if info.base in ("s_setreg_b32", "s_setreg_imm32_b32") and ins.operands:
        return hwreg_field(ins.operands[0].text)
    return None


def _store_data(f: _Facts) -> frozenset[Reg]:
    """Store data wider than 64 bits whose VGPRs a following VALU must not overwrite early
    (MUBUF/MTBUF only without an SGPR soffset)."""
    info, ops = f.info, f.ins.operands
    if f.info.dst or not ops or is_lds_dma(f.ins, f.processor):
        return frozenset()
    if info.family == "mubuf" and ("_store_" in info.base or "_atomic_" in info.base):
        data = ops[0]
        if len(ops) > 3 and ops[3].kind in ("sgpr", "ttmp", "special") and ops[3].is_reg:
            return frozenset()
    elif info.family == "flat" and ("_store_" in info.base or "_atomic_" in info.base) and len(ops) > 1:
        data = ops[1]
    else:
        return frozenset()
    return frozenset(operand_regs(data)) if data.count > 2 else frozenset()


# ---- the checker ----------------------------------------------------------------------------

class _LazyFacts:
    """Each instruction's hazard facts, computed when first asked for."""

    def __init__(self, instructions: list[Instruction], infos: list[RegInfo], processor: str):
        self.instructions, self.infos, self.processor = instructions, infos, processor
        self._done: list[_Facts | None] = [None] * len(instructions)

    def __len__(self) -> int:
        return len(self.instructions)

    def __getitem__(self, i: int) -> _Facts:
        f = self._done[i]
        if f is None:
            f = self._done[i] = _facts(self.instructions[i], self.infos[i], self.processor)
        return f

    def __iter__(self) -> Iterator[_Facts]:
        return (self[i] for i in range(len(self)))


Query = tuple[str, Callable[[_Facts], bool], Callable[[_Facts], int], str]


class _Checker:
    def __init__(self, instructions: list[Instruction], cfg: CFG, xnack: bool, infos: list[RegInfo] | None = None,
                 whole: bool = True, processor: str = "gfx942"):
        self.cfg = cfg
        self.xnack = xnack
        lazy = _LazyFacts(instructions, infos if infos is not None else def_use_all(instructions, processor),
                          processor)
        self.f = list(lazy) if whole else lazy  # a whole-kernel check reads every instruction's facts, often
        # LLVM's recognizer only remembers the last 5 emitted instructions (19 when AGPR0 is used);
        # clauses are formed within that window, so longer runs are not hazards by its definition.
        uses_a0 = any(("a", 0) in info.defs or ("a", 0) in info.uses for info in lazy.infos)
        self.clause_window = 19 if uses_a0 else 5
        # producer classes present in the kernel: a query whose producers are absent finds nothing (a check
        # of a few consumers skips this shortcut, which would need every instruction's facts)
        self.present = ({name for name, has in _PRODUCERS.items() if any(has(f) for f in self.f)} if whole
                        else set(_PRODUCERS))

    def soft_clause(self, i: int) -> HazardViolation | None:
        """LLVM checkSoftClauseHazards (XNACK replay): a run of back-to-back SMEM, or of VMEM,
        instructions may be replayed, so no member may write a register another member (or
        itself) reads, and a store may not join a clause that writes registers: 1 wait state."""
        f, c = self.f, self.f[i]
        kind = _clause_kind(c)
        if not self.xnack or kind is None:
            return None
        defs: set[Reg] = set()
        uses: set[Reg] = set()
        j = i - 1
        first = max(self.cfg.blocks[self.cfg.block_of[i]].start, i - self.clause_window)
        while j >= first and _clause_kind(f[j]) == kind:
            defs |= f[j].info.defs
            uses |= f[j].info.uses
            j -= 1
        if not defs:
            return None
        stores = not c.info.dst and any(t in c.info.base for t in ("_store", "_atomic_"))
        if not stores and (defs | c.info.defs).isdisjoint(uses | c.info.uses):
            return None
        where = f" at 0x{c.ins.address:x}" if c.ins.address is not None else f" (#{i})"
        return HazardViolation("soft-clause", i, c.ins.address, 1, 0,
                               f"soft-clause: '{c.ins.text()}'{where} joins a {kind} clause whose registers "
                               f"it {'stores after' if stores else 'overlaps'} (XNACK replay): needs 1 wait state, has 0")

    def window(self, i: int, limit: int) -> tuple[list[tuple[_Facts, int, int]], int | None]:
        """The instructions of i's block before it, nearest first, as (facts, index, wait states between it
        and i) while fewer than `limit`; and the wait states from the block's start to i when the block
        starts within `limit` (a producer may then be in a predecessor), else None."""
        f, j, ws, out = self.f, i - 1, 0, []
        start = self.cfg.blocks[self.cfg.block_of[i]].start
        while j >= start:
            fj = f[j]
            out.append((fj, j, ws))
            ws += fj.waits
            if ws >= limit:
                return out, None
            j -= 1
        return out, ws

    def hits(self, i: int, pred: Callable[[_Facts], bool], limit: int,
             window: tuple[list[tuple[_Facts, int, int]], int | None]) -> dict[int, int]:
        """Nearest producer on each backward path from instruction i: {index: fewest wait states}
        (`window`: i's `window(i, limit)`)."""
        near, ws = window
        for fj, j, w in near:  # i's own block first: its nearest producer ends the only path there
            if pred(fj):
                return {j: w}
        if ws is None:
            return {}
        cfg, f = self.cfg, self.f
        found: dict[int, int] = {}
        best: dict[int, int] = {}
        b = cfg.block_of[i]
        work = [(b, cfg.blocks[b].start, ws)]  # i's block is scanned: go on to its predecessors
        while work:
            b, top, ws = work.pop()
            j, start, done = top - 1, cfg.blocks[b].start, False
            while j >= start:
                if pred(f[j]):
                    found[j] = min(found.get(j, ws), ws)
                    done = True
                    break
                ws += f[j].waits
                if ws >= limit:
                    done = True
                    break
                j -= 1
            if done:
                continue
            for p in cfg.blocks[b].preds:
                if best.get(p, limit) > ws:
                    best[p] = ws
                    work.append((p, cfg.blocks[p].end, ws))
        return found

    def check(self, i: int) -> Iterator[HazardViolation]:
        c = self.f[i]
        clause = self.soft_clause(i)
        if clause:
            yield clause
        window = None
        for rule, pred, need, what in _queries(c):
            if _PRODUCER_OF.get(rule, "any") not in self.present:
                continue
            window = window or self.window(i, MAX_WAIT)
            for j, ws in sorted(self.hits(i, pred, MAX_WAIT, window).items()):
                needed = need(self.f[j])
                if ws < needed:
                    p = self.f[j].ins
                    where = f" at 0x{c.ins.address:x}" if c.ins.address is not None else f" (#{i})"
                    pwhere = f" at 0x{p.address:x}" if p.address is not None else f" (#{j})"
                    yield HazardViolation(rule, i, c.ins.address, needed, ws,
                                          f"{rule}: '{c.ins.text()}'{where} {what} '{p.text()}'"
                                          f"{pwhere}: needs {needed} wait states, has {ws}")


_PRODUCERS: dict[str, Callable[[_Facts], bool]] = {
    "any": lambda f: True,
    "mfma": lambda f: f.mfma,
    "dot": lambda f: f.dot,
    "trans": lambda f: f.valu and instr_info(f.info.base, f.processor).trans,
    "shift": lambda f: f.valu and _shifts_dst(f),
    "wide-store": lambda f: bool(_store_data(f)),
    "vskip": lambda f: f.vskip,
    "vcmpx": lambda f: _writes_exec_by_vcmpx(f),
}
# the producer class each rule's predicate requires (rules not listed: checked always)
_PRODUCER_OF = {"mfma-srcc": "mfma", "mfma-srcab": "mfma", "mfma-result-read": "mfma", "mfma-result-write": "mfma",
                "mfma-srcc-overwrite": "mfma", "dgemm-fma64": "mfma", "dot-read": "dot", "dot-write": "dot",
                "trans-use": "trans", "dst-sel-forward": "shift", "store-data-overwrite": "wide-store",
                "setreg-vskip": "vskip", "vcmpx-exec-permlane-swap": "vcmpx"}


def _queries(c: _Facts) -> Iterator[Query]:
    """Hazard queries for consumer `c`: (rule, producer predicate, needed(producer), relation)."""
    info, base = c.info, c.info.base
    s_uses = {r for r in info.uses if r[0] == "s"}

    def valu_def(regs: frozenset[Reg] | set[Reg]) -> Callable[[_Facts], bool]:
        return lambda p: p.valu and not p.info.defs.isdisjoint(regs)


    # LLVM checkVMEMHazards / ISA: VALU writes SGPR -> VMEM reads that SGPR: 5.
    if c.vmem and s_uses:
        yield "valu-sgpr-vmem", valu_def(s_uses), fixed("valu-sgpr-vmem"), "reads an SGPR written by VALU"
    if c.valu:
        ex_s = {r for r in c.explicit_uses if r[0] == "s"}
        if base.startswith("v_div_fmas_") or VCC & info.uses:
            ex_s |= VCC & info.uses
        # LLVM checkVALUHazards (hasVDecCoExecHazard, gfx940): VALU writes SGPR -> VALU reads it: 2.
        if ex_s:
            yield "valu-sgpr-valu", valu_def(ex_s), fixed("valu-sgpr-valu"), "reads an SGPR/VCC written by VALU"
        # LLVM checkVALUHazards (hasTransForwardingHazard, gfx940): trans -> non-trans use: 1.
        vuses = {r for r in c.explicit_uses if r[0] in "va"}
        trans = instr_info(base, c.processor).trans
        if vuses and not trans:
            yield ("trans-use", lambda p: p.valu and instr_info(p.info.base, p.processor).trans
                   and not p.dst_regs.isdisjoint(vuses), fixed("trans-use"), "uses the result of transcendental")
        if c.processor == "gfx950" and not trans:
            # LLVM 22 checkVALUHazards (hasDstSelForwardingHazard / hasCvtScaleForwardingHazard): any
            # operand of the consumer (read or overwritten) overlapping a dst-sel forwarded result: 1.
            operands = {r for op in c.info.dst + c.info.srcs for r in operand_regs(op) if r[0] in "va"}
            if operands:
                yield ("dst-sel-forward", lambda p: p.valu and _shifts_dst(p) and not p.dst_regs.isdisjoint(operands),
                       fixed("dst-sel-forward"), "uses or overwrites the bit-shifted result of")
        elif vuses and not trans:
            # LLVM checkVALUHazards (hasDstSelForwardingHazard, gfx940): SDWA dst_sel / op_sel dst: 1.
            yield ("dst-sel-forward", lambda p: p.valu and _shifts_dst(p) and not p.dst_regs.isdisjoint(vuses),
                   fixed("dst-sel-forward"), "uses the bit-shifted result of")
        # LLVM checkVALUHazards (has12DWordStoreHazard, 2 on gfx940): >64-bit store data overwritten.
        vdefs = {r for r in info.defs if r[0] in "va"}
        if vdefs:
            yield ("store-data-overwrite", lambda p: not _store_data(p).isdisjoint(vdefs), fixed("store-data-overwrite"),
                   "overwrites the >64-bit store data of")
        # ISA: VALU writes VCC/EXEC -> VALU reads VCCZ/EXECZ as data: 5.
        if any(op.kind == "special" and op.name in ("vccz", "execz", "src_vccz", "src_execz") for op in info.srcs):
            yield "valu-vccz-execz", valu_def(VCC | EXEC), fixed("valu-vccz-execz"), "reads VCCZ/EXECZ after VALU wrote VCC/EXEC of"
    if base in _READLANE + ("v_writelane_b32",):
        # LLVM (hasVDecCoExecHazard): VALU writes EXEC -> v_readlane/readfirstlane/writelane: 4.
        yield "valu-exec-rwlane", valu_def(EXEC), fixed("valu-exec-rwlane"), "follows an EXEC write by"
    if base in _READLANE and info.srcs and info.srcs[0].kind == "vgpr":
        # LLVM (hasVDecCoExecHazard): VALU writes VGPR -> v_readlane reads it as vsrc0: 1.
        yield "valu-vgpr-readlane", valu_def(operand_regs(info.srcs[0])), fixed("valu-vgpr-readlane"), "reads a VGPR written by"
    if base in _RWLANE and len(info.srcs) > 1 and info.srcs[1].sgpr_range() is not None:
        # LLVM checkRWLaneHazards / ISA: VALU writes SGPR -> lane select of v_readlane/writelane: 4.
        yield ("rwlane-lane-select", valu_def(operand_regs(info.srcs[1])), fixed("rwlane-lane-select"),
               "selects its lane by an SGPR written by")
    if c.ins.mnemonic.endswith("_dpp"):
        # LLVM checkDPPHazards / ISA: any write of a VGPR -> DPP reads it: 2; VALU writes EXEC -> DPP: 5.
        vuses = {r for r in c.explicit_uses if r[0] == "v"}
        yield "dpp-vgpr", lambda p: not p.info.defs.isdisjoint(vuses), fixed("dpp-vgpr"), "DPP-reads a VGPR written by"
        yield "dpp-exec", valu_def(EXEC), fixed("dpp-exec"), "is DPP after the EXEC write by"
    if base in ("v_permlane16_swap_b32", "v_permlane32_swap_b32"):
        # LLVM checkPermlaneHazards (gfx950): VALU writes a VGPR the swap reads (both operands are
        # tied inputs): 2; v_cmpx writes EXEC -> the swap: 4.
        vregs = {r for op in info.dst + info.srcs for r in operand_regs(op) if r[0] == "v"}
        yield ("valu-vgpr-permlane-swap", valu_def(vregs), fixed("valu-vgpr-permlane-swap"),
               "swaps a VGPR written by")
        yield ("vcmpx-exec-permlane-swap", _writes_exec_by_vcmpx, fixed("vcmpx-exec-permlane-swap"),
               "follows the EXEC write by")
    if base.startswith("v_div_fmas_"):
        # LLVM checkDivFMasHazards / ISA: VALU writes VCC -> v_div_fmas: 4.
        yield "div-fmas-vcc", valu_def(VCC), fixed("div-fmas-vcc"), "reads VCC written by"
    if base == "s_getreg_b32" and len(c.ins.operands) > 1:
        target = hwreg_field(c.ins.operands[1].text)
        if target:
            # LLVM checkGetRegHazards / ISA: s_setreg -> s_getreg of the same register: 2.
            yield ("setreg-getreg", lambda p: (p.setreg or ("",))[0] == target[0], fixed("setreg-getreg"),
                   "reads a hardware register set by")
            if target[0] == "HW_REG_MODE":
                # ISA: s_setvskip -> s_getreg MODE: 2.
                yield "setvskip-getreg", lambda p: p.info.base == "s_setvskip", fixed("setvskip-getreg"), "reads MODE after"
    if base in ("s_setreg_b32", "s_setreg_imm32_b32"):
        target = c.setreg
        if target:
            # LLVM checkSetRegHazards (getSetRegWaitStates = 2 on gfx9) / ISA: setreg -> setreg: 2.
            yield ("setreg-setreg", lambda p: (p.setreg or ("",))[0] == target[0], fixed("setreg-setreg"),
                   "sets a hardware register just set by")
    if info.family in _VECTOR:
        # ISA: s_setreg of MODE.vskip (bit 28) -> any vector instruction: 2.
        yield "setreg-vskip", lambda p: p.vskip, fixed("setreg-vskip"), "is a vector op right after the MODE.vskip write by"
    if _reads_m0_hazardously(c):
        # LLVM checkReadM0Hazards / ISA: SALU writes M0 -> s_movrel, add-TID DS, GDS, s_sendmsg,
        # s_ttracedata, LDS DMA, LDS_DIRECT: 1.
        yield ("salu-m0", lambda p: p.info.family == "salu" and M0 in p.info.defs, fixed("salu-m0"),
               "reads M0 written by")
    if c.mfma:
        yield from _mfma_queries(c)
    elif c.valu or info.family in ("mubuf", "flat", "ds"):
        yield from _mai_valu_queries(c)


def _clause_kind(f: _Facts) -> str | None:
    if f.info.family == "smem":
        return "SMEM"
    return "VMEM" if f.vmem else None


def _shifts_dst(p: _Facts) -> bool:
    """LLVM getDstSelForwardingOperand: SDWA dst_sel other than DWORD, a VOP3 op_sel writing the high
    half; on gfx950 also a byte-selecting fp8 conversion (`v_cvt_sr_fp8/bf8_f32` with op_sel[2])."""
    sel = p.ins.modifier("dst_sel")
    if sel is not None:
        return sel != "DWORD"
    base = p.info.base
    op_sel = p.ins.modifier("op_sel")
    if op_sel and not re.match(r"^v_(pk_|dot|fma_mix|mad_mix|mfma_|smfmac_)", base):
        bits = [b.strip() for b in op_sel.strip("[]").split(",")]
        if p.processor == "gfx950" and re.match(r"^v_cvt_sr_(fp8|bf8)_f32$", base) and len(bits) > 2 \
                and bits[2] == "1":
            return True
        return bits[-1] == "1"
    return False


def _writes_exec_by_vcmpx(p: _Facts) -> bool:
    return p.info.base.startswith("v_cmpx_") and not EXEC.isdisjoint(p.info.defs)


def _reads_m0_hazardously(c: _Facts) -> bool:
    base = c.info.base
    return (base.startswith("s_movrel") or base in ("ds_read_addtid_b32", "ds_write_addtid_b32",
                                                     "s_sendmsg", "s_sendmsghalt", "s_ttracedata")
            or (c.info.family == "ds" and c.ins.modifier("gds") is not None) or is_lds_dma(c.ins, c.processor)
            or any(op.kind == "special" and op.name in ("lds_direct", "src_lds_direct") for op in c.info.srcs))


def _mfma_queries(c: _Facts) -> Iterator[Query]:
    """LLVM checkMAIHazards90A, gfx940 paths."""
    base = c.info.base
    yield ("valu-exec-mfma", lambda p: p.valu and not p.mfma and not EXEC.isdisjoint(p.info.defs),
           fixed("valu-exec-mfma"), "follows an EXEC write by")
    srcs = c.info.srcs
    srcc = operand_regs(srcs[2]) if len(srcs) > 2 else set()
    srcc_full = (srcs[2].kind, srcs[2].index, srcs[2].count) if len(srcs) > 2 else None
    for pos, op in enumerate(srcs):
        regs = frozenset(operand_regs(op))
        if not regs:
            continue
        yield ("valu-vgpr-mfma",
               lambda p, regs=regs: p.valu and not p.mfma and not p.dot
               and not p.info.defs.isdisjoint(regs), fixed("valu-vgpr-mfma"), "reads a register written by VALU")
        if pos == 2 and regs == srcc:
            def need_c(p: _Facts) -> int:
                pb = p.info.base
                d = p.info.dst[0]
                gfx950 = c.processor == "gfx950"
                if (d.kind, d.index, d.count) == srcc_full:
                    if base == pb == "v_mfma_f64_4x4x4_4b_f64":
                        return 4
                    return 2 if p.passes == 2 else 0
                if p.dgemm:
                    if c.xdl:
                        return 0
                    return 4 if p.passes == 4 else (17 if gfx950 else 9)
                if c.xdl and not p.xdl:
                    return 0
                if not p.xdl:
                    return p.passes
                if gfx950:
                    return p.passes + 1 + (1 if c.xdl else p.passes != 2)
                return p.passes + 1
            yield ("mfma-srcc", lambda p, regs=regs: p.mfma and not p.dst_regs.isdisjoint(regs), need_c,
                   "reads as SrcC the result of")
        else:
            yield ("mfma-srcab", lambda p, regs=regs: p.mfma and not p.dst_regs.isdisjoint(regs),
                   lambda p: _result_wait(p.passes, p.dgemm, p.xdl, p.processor, "read"),
                   "reads as SrcA/B the result of")


def _mai_valu_queries(c: _Facts) -> Iterator[Query]:
    """LLVM checkMAIVALUHazards, gfx940 paths: VALU / memory ops near MFMA and DOT results."""
    base = c.info.base
    mem = c.info.family in ("mubuf", "flat", "ds")
    srcs = c.info.srcs
    for pos, op in enumerate(srcs):
        regs = frozenset(operand_regs(op))
        if not regs:
            continue
        same_dot_srcc = pos == 2
        yield ("dot-read", lambda p, regs=regs: p.dot
               and not p.dst_regs.isdisjoint(regs),
               lambda p, s=same_dot_srcc: 0 if (p.info.base == base and s) else FIXED_WAITS["dot-read"][0],
               "reads the result of DOT")
        yield ("mfma-result-read", lambda p, regs=regs: p.mfma and not p.dst_regs.isdisjoint(regs),
               lambda p: _result_wait(p.passes, p.dgemm, p.xdl, p.processor, "read-memory" if mem else "read"),
               "reads the result of")
    if base in ("v_fma_f64", "v_fmac_f64"):
        yield "dgemm-fma64", lambda p: p.dgemm, fixed("dgemm-fma64"), "is an f64 FMA right after DGEMM"
    vdefs = frozenset(c.dst_regs)
    if not vdefs:
        return
    yield ("dot-write", lambda p: p.dot and p.info.base != base
           and not p.dst_regs.isdisjoint(vdefs), fixed("dot-write"), "overwrites the result of DOT")
    yield ("mfma-result-write", lambda p: p.mfma and not p.dst_regs.isdisjoint(vdefs),
           lambda p: _result_wait(p.passes, p.dgemm, p.xdl, p.processor, "write"), "overwrites the result of")
    war_need = {2: 1, 4: 3, 8: 7, 16: 15}
    yield ("mfma-srcc-overwrite",
           lambda p: p.mfma and p.xdl and len(p.info.srcs) > 2
           and not vdefs.isdisjoint(operand_regs(p.info.srcs[2])),
           lambda p: war_need[p.passes], "overwrites the SrcC still being read by")


def check_hazards(instructions: list[Instruction], labels: dict[str, int] | None = None,
                  cfg: CFG | None = None, xnack: bool = True, consumers: Iterable[int] | None = None,
                  infos: list[RegInfo] | None = None, processor: str = "gfx942") -> list[HazardViolation]:
    """Every wait-state hazard of `processor` (gfx942 or gfx950) in `instructions` (one kernel, entry
    first), or only those whose consumer is one of the instruction indices `consumers` (`infos`: their
    def-use facts when the caller has them). `xnack=False` (a code object built with xnack-) drops the
    soft-clause rule, which only XNACK replay needs."""
    if not instructions:
        return []
    cfg = cfg or build_cfg(instructions, labels)
    checker = _Checker(instructions, cfg, xnack, infos, whole=consumers is None, processor=processor)
    reachable = set(cfg.reachable())
    if consumers is None:
        consumers = (i for b in sorted(reachable) for i in range(cfg.blocks[b].start, cfg.blocks[b].end))
    out: list[HazardViolation] = []
    for i in consumers:
        if cfg.block_of[i] in reachable:
            out.extend(checker.check(i))
    return out
