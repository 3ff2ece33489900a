"""A kernel's code decoded once: every instruction of the code object prepared into an Op, with the
register sets the strictness checks need."""
from __future__ import annotations

import copy
import hashlib

from ..codeobj import CodeObject, Kernel
from ..errors import UnsupportedInstruction
from ..isa.hazards import check_hazards
from ..isa.instruction import Instruction
from ..isa.regs import SCC, reg_info
from ..isa.table import instr_info, mnemonics, split_mnemonic
from ..target import UnsupportedTarget, processor as processor_info
from .ds import compile_ds
from .gpridx import index_mode_addresses, index_mode_op
from .ops import Context, Op
from .smem import compile_smem
from .sop import compile_sop
from .vmem import compile_vmem
from .vop import compile_vop
from .vop3p import compile_vop3p

# Which compiler prepares an instruction, by its table family (packed VALU goes to the VOP3P one).
_COMPILERS = {"smem": compile_smem, "salu": compile_sop, "sopp": compile_sop, "flat": compile_vmem,
              "mubuf": compile_vmem, "ds": compile_ds, "mfma": compile_vop3p, "valu": compile_vop,
              "vopc": compile_vop}


def compile_family(ins: Instruction, ctx: Context) -> Op:
    """Prepare one decoded instruction with its family's compiler; UnsupportedInstruction if the
    emulator does not model it."""
    info = instr_info(ins.mnemonic, ctx.processor)
    return (compile_vop3p if info.packed else _COMPILERS[info.family])(ins, ctx)


def compile_instruction(ins: Instruction, ctx: Context) -> Op:
    """Prepare one instruction; unsupported ones become an Op that raises when executed."""
    n = ins.mnemonic
    try:
        if ins.is_data:
            raise UnsupportedInstruction(".long (undecodable word)", ins.address)
        op = compile_family(ins, ctx)
    except UnsupportedInstruction as exc:
        err = UnsupportedInstruction(n, ins.address, _detail(exc))

        def fail(m, g, err=err):
            raise err
        op = Op(ins, fail)
    op.next_pc = ins.address + ins.size
    op.reads, op.writes = register_sets(ins, ctx.processor)
    op.s_writes = [i for f, i in op.writes if f == "s"]
    return op


def _detail(exc: UnsupportedInstruction) -> str:
    msg = str(exc)
    return msg[msg.index("(") + 1:-1] if "(" in msg else ""


def register_sets(ins: Instruction, processor: str = "gfx942") -> tuple[list, list]:
    """(registers read, registers written), SGPR-file and VGPR/AGPR only, from the ISA's def/use model;
    an instruction it does not know touches none (executing it raises anyway)."""
    try:
        info = reg_info(ins, processor)
    except UnsupportedInstruction:
        return [], []
    return sorted(r for r in info.uses if r != SCC), sorted(r for r in info.defs if r != SCC)


# Prepared instructions by (processor, encoding, address): a candidate keeps most of K0's
# instructions, and those before its edit at the same addresses. An Op depends on nothing else (its
# branch target and next PC follow from the two; findings name its address), and is copied into each
# Program, which sets the program-wide fields.
_PREPARED: dict[tuple[str, bytes, int], Op] = {}
_PREPARED_KEPT = 1 << 16


def _prepared(processor: str, ins: Instruction, ctx: Context) -> Op:
    key = (processor, ins.encoding, ins.address)
    op = _PREPARED.get(key)
    if op is None:
        op = compile_instruction(ins, ctx)
        if len(_PREPARED) >= _PREPARED_KEPT:
            _PREPARED.clear()
        _PREPARED[key] = op
    return copy.copy(op)


def require_emulated(processor: str, instructions: tuple[Instruction, ...]) -> None:
    """Refuse code the emulator does not model: a processor with no record (UnsupportedTarget); for one
    whose record says why it is not emulated, its first instruction the processor's instruction table
    lacks (UnsupportedInstruction), else the processor itself (UnsupportedTarget). The processors it
    runs (gfx942, gfx950) each run with their own instruction table, formats, LDS size and hazard
    rules; an instruction of theirs the emulator does not model raises when executed."""
    info = processor_info(processor)
    if not info.not_emulated:
        return
    known = mnemonics(processor)
    for ins in instructions:
        if not ins.is_data and split_mnemonic(ins.mnemonic)[0] not in known:
            raise UnsupportedInstruction(ins.mnemonic, ins.address,
                                         f"a {processor} ({info.family}) instruction the emulator does not model")
    raise UnsupportedTarget(f"the emulator does not run {processor} code: {info.not_emulated}")


class Program:
    """All instructions of a code object's text, prepared; `ops[address]`."""

    def __init__(self, code_object: CodeObject, ctx: Context):
        self.ops: dict[int, Op] = {}
        self.listing = code_object.listing
        self.instructions = code_object.listing.instructions
        self.xnack = code_object.target.xnack != "off"
        self._hazards: dict[str, dict[int, str]] = {}
        processor = self.processor = code_object.target.processor
        require_emulated(processor, self.instructions)
        for ins in self.instructions:
            self.ops[ins.address] = _prepared(processor, ins, ctx)
        tracked = set()
        for op in self.ops.values():
            for file, first, count in op.loads:
                tracked.update((file, first + i) for i in range(count))
        self.tracked = tracked
        for op in self.ops.values():
            op.chk_reads = [r for r in op.reads if r in tracked]
            op.chk_writes = [r for r in op.writes if r in tracked]
        used = [r for op in self.ops.values() for r in op.reads + op.writes + _load_regs(op)]
        # every register an operand names, also the half of a packed-FP32 pair `op_sel` leaves unread
        named = [(op.kind[0], op.index + op.count - 1) for ins in self.instructions for op in ins.operands
                 if op.kind in ("vgpr", "agpr")]
        self.nvgpr = 1 + max((i for f, i in used + named if f == "v"), default=0)
        self.nagpr = 1 + max((i for f, i in used + named if f == "a"), default=0)
        indexed = index_mode_addresses(self.instructions)
        self.indexed = bool(indexed)  # VGPR index mode: registers beyond those named may be addressed
        for ins in indexed:
            self.ops[ins.address] = index_mode_op(self.ops[ins.address], lambda i: compile_instruction(i, ctx),
                                                  tracked)

    def hazards(self, kernel: Kernel) -> dict[int, str]:
        """Wait-state hazards of a kernel's code (static rules of its processor): address -> message."""
        if kernel.name not in self._hazards:
            body = self.listing.between(kernel.code_address, kernel.code_address + kernel.code_size, data=True)
            self._hazards[kernel.name] = {v.pc: f"{v.rule}: {v.message}"
                                          for v in check_hazards(body, xnack=self.xnack, processor=self.processor)}
        return self._hazards[kernel.name]


def _load_regs(op: Op) -> list:
    return [(f, first + i) for f, first, count in op.loads for i in range(count)]


_PROGRAMS: dict[str, Program] = {}


def program_for(code_object: CodeObject) -> Program:
    """The prepared Program of a code object (cached by content)."""
    key = hashlib.sha256(code_object.data).hexdigest()
    if key not in _PROGRAMS:
        _PROGRAMS[key] = Program(code_object, Context(code_object.path, code_object.target.processor))
    return _PROGRAMS[key]
