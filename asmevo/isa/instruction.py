"""The instruction model shared by recovery, editing, analyses and the emulator.

An `Instruction` is one line of LLVM AMDGPU assembly: mnemonic, operands, trailing modifiers,
and, when it came from a code object, its address and encoding bytes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .operands import Operand, parse_operand, split_top

BRANCH_MNEMONICS = frozenset({
    "s_branch", "s_cbranch_scc0", "s_cbranch_scc1", "s_cbranch_vccz", "s_cbranch_vccnz",
    "s_cbranch_execz", "s_cbranch_execnz", "s_cbranch_cdbgsys", "s_cbranch_cdbguser",
    "s_cbranch_cdbgsys_or_user", "s_cbranch_cdbgsys_and_user",
})
PROGRAM_ENDS = frozenset({"s_endpgm", "s_endpgm_saved", "s_endpgm_ordered_ps_done"})
# Mnemonics whose operand field is a list of space-separated modifiers only.
MODIFIER_ONLY = frozenset({"s_waitcnt", "s_endpgm", "s_barrier", "s_dcache_wb", "s_icache_inv"})
_MOD_RE = re.compile(r"^[a-z_0-9]+(?::.*|\(.*\))?$")


@dataclass(slots=True)
class Instruction:
    """One instruction. `address` is its virtual address in the code object (None when the
    instruction was written by hand); `encoding` its bytes; `target` a branch's destination
    address; `label` the symbolic branch target when the source names one."""

    mnemonic: str
    operands: tuple[Operand, ...] = ()
    modifiers: tuple[str, ...] = ()
    address: int | None = None
    encoding: bytes = b""
    target: int | None = None
    label: str | None = None
    # `asmevo.isa.regs.reg_info` of this instruction, filled on first use (instructions are never
    # mutated; `dataclasses.replace` starts a copy without it).
    reg_info_memo: object = field(default=None, init=False, repr=False, compare=False)
    # `asmevo.isa.waitcnt`'s per-instruction facts for one processor, filled likewise.
    waitcnt_memo: object = field(default=None, init=False, repr=False, compare=False)
    # `asmevo.isa.hazards`' per-instruction facts for one processor, filled likewise.
    hazard_memo: object = field(default=None, init=False, repr=False, compare=False)

    @property
    def size(self) -> int:
        return len(self.encoding)

    @property
    def is_branch(self) -> bool:
        return self.mnemonic in BRANCH_MNEMONICS

    @property
    def ends_program(self) -> bool:
        return self.mnemonic in PROGRAM_ENDS

    @property
    def falls_through(self) -> bool:
        """Whether the next instruction may run after this one (not a program end, `s_branch` or `s_setpc_b64`)."""
        return not (self.ends_program or self.mnemonic in ("s_branch", "s_setpc_b64"))

    @property
    def is_data(self) -> bool:
        return self.mnemonic == ".long"

    def modifier(self, name: str) -> str | None:
        """Value of a `name:value` modifier, '' for a bare flag, None when absent."""
        for mod in self.modifiers:
            if mod == name:
                return ""
            if mod.startswith(name + ":"):
                return mod[len(name) + 1:]
        return None

    def modifier_bits(self, name: str, n: int, default: int = 0) -> list[int]:
        """The n per-source bits of a list modifier (`op_sel:[0,1]`, `neg_lo`, ...), `default` where it names fewer
        or is absent."""
        value = self.modifier(name)
        bits = [int(x) for x in value.strip("[]").split(",")] if value else []
        return bits + [default] * (n - len(bits))

    def text(self) -> str:
        """The instruction as assembly text (branches to their label when one is set)."""
        ops = [op.text for op in self.operands]
        if self.is_branch and self.label is not None:
            ops = [self.label]
        body = ", ".join(ops)
        if self.modifiers:
            body = (body + " " if body else "") + " ".join(self.modifiers)
        return f"{self.mnemonic} {body}".rstrip()


def parse_instruction(text: str) -> Instruction:
    """Parse `mnemonic operands modifiers` (no comment) into an Instruction."""
    text = text.strip()
    mnemonic, _, rest = text.partition(" ")
    rest = rest.strip()
    if not rest:
        return Instruction(mnemonic)
    if mnemonic in MODIFIER_ONLY:
        return Instruction(mnemonic, modifiers=tuple(split_top(rest, " ")))
    pieces = split_top(rest, ",")
    last_tokens = split_top(pieces[-1], " ")
    operand_texts = pieces[:-1] + last_tokens[:1]
    modifiers = tuple(last_tokens[1:])
    if len(pieces) == 1 and last_tokens and _looks_like_modifier(last_tokens[0]) and mnemonic.startswith("s_"):
        operand_texts, modifiers = [], tuple(last_tokens)
    return Instruction(mnemonic, tuple(parse_operand(t) for t in operand_texts), modifiers)


def _looks_like_modifier(token: str) -> bool:
    return ":" in token and not token.startswith(("v[", "s[", "a[", "ttmp["))
