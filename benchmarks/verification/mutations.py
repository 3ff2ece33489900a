"""Mutation benchmark for AsmEvo's verification.

Each KernelBench code object is recovered to assembly, edited, rebuilt and verified against the
original on the problem's verify shapes. Semantics-breaking edits (operands swapped, a memory
offset changed, a wait or barrier dropped, an instruction deleted, a destination renamed into a
live register, a store widened) must all be rejected; semantics-preserving edits (no-op
reassembly, s_nop padding, reordering two adjacent independent ALU instructions) must all be
accepted. Edits are placed on instructions the verify launches execute (per-PC counts of K0), so
a breaking edit in code no launch reaches is not counted as a miss.

A breaking edit that verification accepts (so it passed the static hazard and s_waitcnt checks)
is checked for a proof that it is an equivalent mutant, one that cannot change any result:
either the edited instruction has no effect but its register writes, the edit keeps the
registers written, and they are dead there (register liveness over K0's CFG; VGPR writes never
kill, as they may cover only the active lanes), or the edit deletes an `s_barrier` after which no
wave can observe the order of another wave's accesses (no LDS access after it, and no conflicting
global access to the same buffer argument; `barrier_proof`), or K1's disassembly equals K0's. Proved equivalents
are reported with their proof and left out of the rejection rate; every other accepted breaking
edit is a survivor. Prints both rates, the per-operator table, the proved equivalents, the
survivors, and the time of one full verification per kernel.

    python benchmarks/verification/mutations.py [--problems 19_ReLU,23_Softmax] [--trials 3] [--json out.json]
"""
from __future__ import annotations

import argparse
import functools
import json
import re
import sys
import time
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from asmevo.codeobj import CodeObject, Kernel  # noqa: E402
from asmevo.cycle_model import kernel_instructions  # noqa: E402
from asmevo.device import get_device  # noqa: E402
from asmevo.device.launch import BufferArg, StructArg, make_inputs, run_launch  # noqa: E402
from asmevo.emu import PRELOAD_SKIP  # noqa: E402
from asmevo.emu.lds_order import lds_conflicts  # noqa: E402
from asmevo.errors import AsmEvoError  # noqa: E402
from asmevo.isa.cfg import build_cfg  # noqa: E402
from asmevo.isa.instruction import Instruction, parse_instruction  # noqa: E402
from asmevo.isa.regs import (EXEC, SCC, Reg, RegInfo, def_use_all, is_lds_dma, is_returning_atomic,  # noqa: E402
                             operand_regs, reg_info)
from asmevo.rebuild import rebuild_source  # noqa: E402
from asmevo.recover import recover  # noqa: E402
from asmevo.suites import load_suite  # noqa: E402
from asmevo.verify import ReferenceCache, static_differences, suite_launches, verify  # noqa: E402

_LINE = re.compile(r"^\t(?P<text>[a-z_][^;]*?)\s*; 0x(?P<addr>[0-9a-f]+)$")
_NON_COMMUTATIVE = re.compile(r"^[vs]_(sub|subrev|lshl|lshr|ashr|bfe|cmp_(lt|gt|le|ge)|cndmask|ldexp|"
                              r"alignbit|alignbyte|perm|cvt_pk|pack|andn2|orn2)")
_NOT_ALU = re.compile(r"^(s_waitcnt|s_barrier|s_nop|s_endpgm|s_branch|s_cbranch|s_setpc|s_swappc|s_getpc|"
                      r"s_sendmsg|s_setprio|s_sleep|s_dcache|s_icache|v_readlane|v_writelane|v_readfirstlane)")
_MEMORY = re.compile(r"^(global_|buffer_|flat_|scratch_|ds_|s_load|s_buffer_load|s_store)")
# Instructions whose only effect is writing their registers: ALU, and the LDS lane shuffles (which
# touch no memory). Kernels with mode-setting SALU, register indexing or indirect control flow get
# no dead-write proofs.
_PURE_FAMILIES = frozenset({"salu", "valu", "vopc"})
_LANE_SHUFFLES = frozenset({"ds_bpermute_b32", "ds_permute_b32", "ds_swizzle_b32"})
_IMPURE = re.compile(r"^s_(setreg|set_gpr_idx|setvskip|movrel|setpc|swappc|call|rfe)")


@dataclass
class Site:
    """One instruction of the recovered source: its line index, address and parsed form."""

    line: int
    address: int
    ins: Instruction


@dataclass
class Outcome:
    """A mutant's verdict on the verify shapes; a breaking survivor is re-verified with the
    held-out shape added (`heldout_verdict`), as final acceptance would."""

    problem: str
    operator: str
    breaking: bool
    description: str
    verdict: str
    reason: str
    seconds: float
    heldout_verdict: str = ""
    proof: str = ""  # why an accepted breaking edit is an equivalent mutant

    @property
    def correct(self) -> bool:
        if self.breaking:
            return self.verdict != "equivalent" or bool(self.proof)
        return self.verdict == "equivalent"


Edit = tuple[str, list[str]]  # (description, edited source lines)


def sites(lines: list[str], executed: set[int]) -> list[Site]:
    out = []
    for n, line in enumerate(lines):
        m = _LINE.match(line)
        if m and int(m["addr"], 16) in executed and not m["text"].startswith("."):
            out.append(Site(n, int(m["addr"], 16), parse_instruction(m["text"])))
    return out


def _replace(lines: list[str], site: Site, text: str) -> list[str]:
    out = list(lines)
    out[site.line] = f"\t{text}".ljust(48) + f"; 0x{site.address:x} (mutated)"
    return out


def _delete(lines: list[str], site: Site) -> list[str]:
    return lines[:site.line] + lines[site.line + 1:]


def _with_operands(ins: Instruction, ops: list[str]) -> str:
    return f"{ins.mnemonic} {', '.join(ops)}" + (" " + " ".join(ins.modifiers) if ins.modifiers else "")


# ---- semantics-breaking edits ---------------------------------------------------------------------

def swap_operands(lines, ss):
    for s in ss:
        ops = [o.text for o in s.ins.operands]
        if _NON_COMMUTATIVE.match(s.ins.mnemonic) and len(ops) >= 3 and ops[1] != ops[2]:
            ops[1], ops[2] = ops[2], ops[1]
            yield f"swap sources of {s.ins.text()} at 0x{s.address:x}", _replace(lines, s, _with_operands(s.ins, ops))


def change_offset(lines, ss):
    for s in ss:
        name = s.ins.mnemonic
        if not _MEMORY.match(name):
            continue
        if name.startswith(("s_load", "s_buffer_load")) and s.ins.operands and s.ins.operands[-1].kind == "imm":
            ops = [o.text for o in s.ins.operands]
            ops[-1] = hex(int(s.ins.operands[-1].value) + 4)
            text = _with_operands(s.ins, ops)
        else:
            off = s.ins.modifier("offset")
            mods = [m for m in s.ins.modifiers if not m.startswith("offset:")]
            mods.append(f"offset:{int(off or '0', 0) + 4}")
            text = f"{name} {', '.join(o.text for o in s.ins.operands)} {' '.join(mods)}"
        yield f"offset +4 on {s.ins.text()} at 0x{s.address:x}", _replace(lines, s, text)


def drop_wait(lines, ss):
    for s in ss:
        if s.ins.mnemonic == "s_waitcnt":
            yield f"drop {s.ins.text()} at 0x{s.address:x}", _delete(lines, s)


def drop_barrier(lines, ss):
    for s in ss:
        if s.ins.mnemonic == "s_barrier":
            yield f"drop s_barrier at 0x{s.address:x}", _delete(lines, s)


def delete_instruction(lines, ss):
    for s in ss:
        if not _NOT_ALU.match(s.ins.mnemonic) and reg_info(s.ins).dst:
            yield f"delete {s.ins.text()} at 0x{s.address:x}", _delete(lines, s)


def rename_into_live(lines, ss):
    """Rename a single-VGPR destination to a VGPR that a following instruction reads before any
    redefinition (a live value), clobbering it."""
    for i, s in enumerate(ss):
        info = reg_info(s.ins)
        if _NOT_ALU.match(s.ins.mnemonic) or len(info.dst) != 1 or info.dst[0].kind != "vgpr" or info.dst[0].count != 1:
            continue
        dst = info.dst[0].index
        defined: set[int] = set()
        live = None
        for later in ss[i + 1:i + 8]:
            li = reg_info(later.ins)
            reads = sorted(r[1] for r in li.uses if r[0] == "v" and r[1] != dst and r[1] not in defined)
            if reads:
                live = reads[0]
                break
            defined |= {r[1] for r in li.defs if r[0] == "v"}
        if live is not None:
            ops = [o.text for o in s.ins.operands]
            ops[0] = f"v{live}"
            yield (f"rename v{dst} -> live v{live} in {s.ins.text()} at 0x{s.address:x}",
                   _replace(lines, s, _with_operands(s.ins, ops)))


_WIDER = {"global_store_dword": ("global_store_dwordx2", 2), "global_store_dwordx2": ("global_store_dwordx4", 4),
          "buffer_store_dword": ("buffer_store_dwordx2", 2), "ds_write_b32": ("ds_write_b64", 2),
          "global_store_short": ("global_store_dword", 1), "ds_write_b64": ("ds_write_b128", 4)}


def _offset(ins: Instruction) -> int:
    return int(ins.modifier("offset") or "0", 0)


def widen_store(lines, ss):
    """Widen a store so it also writes the next element(s); stores whose extra bytes the same code
    overwrites next (another store through the same address at the following offset) are skipped,
    since the final memory would not change."""
    for s in ss:
        if s.ins.mnemonic not in _WIDER:
            continue
        wide, n = _WIDER[s.ins.mnemonic]
        ops = [o.text for o in s.ins.operands]
        data = s.ins.operands[1]
        if data.kind != "vgpr":
            continue
        width = 4 * data.count if n > 1 else 2
        if any(o is not s and o.ins.mnemonic.startswith(s.ins.mnemonic.split("_")[0]) and "store" in o.ins.mnemonic
               and o.ins.operands and o.ins.operands[0].text == ops[0] and _offset(o.ins) == _offset(s.ins) + width
               for o in ss):
            continue
        ops[1] = f"v{data.index}" if n == 1 else f"v[{data.index}:{data.index + n - 1}]"
        text = f"{wide} {', '.join(ops)}" + (" " + " ".join(s.ins.modifiers) if s.ins.modifiers else "")
        yield f"widen {s.ins.text()} to {wide} at 0x{s.address:x}", _replace(lines, s, text)


# ---- equivalent-mutant proofs ---------------------------------------------------------------------

def _kills(info: RegInfo) -> set[Reg]:
    """Registers an instruction overwrites whole: SGPR and SCC results (VGPR writes may cover only
    the active lanes, so they never kill)."""
    return {r for r in info.defs if r[0] in ("s", "scc")} - info.uses


def live_after(instructions: list[Instruction], i: int) -> frozenset[Reg]:
    """Registers some path from after instruction `i` may read before overwriting them whole."""
    cfg = build_cfg(instructions)
    infos = def_use_all(instructions)
    live_in: list[frozenset[Reg]] = [frozenset()] * len(cfg.blocks)

    def through(start: int, end: int, live: set[Reg]) -> set[Reg]:
        for j in range(end - 1, start - 1, -1):
            live = (live - _kills(infos[j])) | infos[j].uses
        return live

    def out(block) -> set[Reg]:
        return set().union(*(live_in[s] for s in block.succs))

    changed = True
    while changed:
        changed = False
        for b in reversed(cfg.blocks):
            new = frozenset(through(b.start, b.end, out(b)))
            changed |= new != live_in[b.index]
            live_in[b.index] = new
    block = cfg.blocks[cfg.block_of[i]]
    return frozenset(through(i + 1, block.end, out(block)))


def _changed_line(lines: list[str], edited: list[str]) -> tuple[int, str | None]:
    """(index in `lines`, replacement or None when deleted) of a single-line edit."""
    n = next((k for k, (a, b) in enumerate(zip(lines, edited)) if a != b), len(edited))
    return n, (edited[n] if len(edited) == len(lines) else None)


def _kernel_of(k0: CodeObject, address: int) -> tuple[Kernel, list[Instruction], int] | None:
    """The kernel holding `address`, its instructions, and the index of `address` there."""
    for k in k0.kernels:
        instructions = kernel_instructions(k0, k.name)
        for i, ins in enumerate(instructions):
            if ins.address == address:
                return k, instructions, i
    return None


def dead_write_proof(k0: CodeObject, lines: list[str], edited: list[str]) -> str:
    """A proof that a single-instruction edit (replaced or deleted) cannot change any result: the
    instruction's only effect is its register writes, the edit keeps the registers written, and
    no path reads them afterwards. "" when there is none."""
    n, new = _changed_line(lines, edited)
    m = _LINE.match(lines[n])
    found = _kernel_of(k0, int(m["addr"], 16)) if m else None
    if found is None:
        return ""
    _, instructions, i = found
    info = reg_info(instructions[i])
    pure = info.family in _PURE_FAMILIES or info.base in _LANE_SHUFFLES
    if not pure or not info.dst or any(_IMPURE.match(x.mnemonic) for x in instructions):
        return ""
    if new is not None and reg_info(parse_instruction(new.split(";")[0].strip())).defs != info.defs:
        return ""
    if info.defs & live_after(instructions, i):
        return ""
    regs = ", ".join(f"{f}{r}" if f != "scc" else "scc" for f, r in sorted(info.defs))
    return f"liveness: {regs} written at 0x{instructions[i].address:x} are dead (no path reads them before a full overwrite)"


_GLOBAL = re.compile(r"^(global_|buffer_|s_load|s_buffer_|s_store|s_atomic|flat_)")
# By-value and hidden integer kernel arguments; any other kind may hold an address.
_INTEGER_ARGS = re.compile(r"^(by_value|hidden_(block_count|group_size|remainder|global_offset)_[xyz]|hidden_grid_dims|"
                           r"hidden_dynamic_lds_size)$")
# Instructions that read other lanes' VGPR values (which may be lanes EXEC leaves out).
_CROSS_LANE = re.compile(r"^(ds_bpermute|ds_permute|ds_swizzle|v_readlane|v_readfirstlane|v_permlane)")
UNKNOWN = "*"  # provenance tag: a value read from memory, or derived from the kernarg pointer
Tags = frozenset[str]
Parked = frozenset[tuple[Reg, str]] | None  # (VGPR, tag) pairs; None: unknown
# Per VGPR: (tags in the lanes EXEC enables, tags in any lane). Per SGPR: (tags, and for a lane mask
# the tags each VGPR may hold in the mask's lanes that EXEC leaves out).
State = dict[Reg, tuple[Tags, Tags | Parked]]
MAX_ROUNDS = 50  # of the provenance fixpoint; a kernel that needs more gets no barrier proof


def _is_lds(ins: Instruction) -> bool:
    """Accesses LDS memory (the lane shuffles ds_bpermute/ds_permute/ds_swizzle do not)."""
    base = reg_info(ins).base
    return (base.startswith("ds_") and base not in _LANE_SHUFFLES) or is_lds_dma(ins)


def _arg_tags(kernel: Kernel, offset: int) -> Tags:
    """What a kernarg dword at byte `offset` may point into: the argument's name for a buffer."""
    for a in kernel.metadata.get(".args", []):
        if a[".offset"] <= offset < a[".offset"] + a[".size"]:
            return frozenset() if _INTEGER_ARGS.match(a[".value_kind"]) else frozenset({f"arg@{a['.offset']}"})
    return frozenset({UNKNOWN})


def _vector(r: Reg) -> bool:
    return r[0] in ("v", "a")


def _get(state: State, r: Reg) -> tuple:
    return state.get(r, (frozenset(), frozenset() if _vector(r) else None))


def _tags(state: State, regs, lanes: int = 0) -> Tags:
    """Union of the tags of `regs` in the active lanes (`lanes` 0) or in any lane (1)."""
    return frozenset().union(*(_get(state, r)[lanes] if _vector(r) else _get(state, r)[0] for r in regs))


def _merge(a: tuple, b: tuple) -> tuple:
    if a[1] is None or b[1] is None:
        return a[0] | b[0], None
    return a[0] | b[0], a[1] | b[1]


def _kernarg_load(ins: Instruction, state: State) -> bool:
    ops = ins.operands
    return (ins.mnemonic.startswith("s_load") and ops[-1].kind == "imm"
            and all(_get(state, r)[0] == {"kernarg"} for r in operand_regs(ops[1])))


def _address_regs(ins: Instruction) -> set[Reg]:
    """The registers a global memory access takes its address from (not the data it stores)."""
    ops, base = ins.operands, reg_info(ins).base
    if base.startswith("buffer_"):
        picked = ops[1:4]
    elif base.startswith("s_"):
        picked = ops[1:3]
    else:  # global_: [vdst,] vaddr, [vdata,] saddr|off
        returns = ("load" in base and not is_lds_dma(ins)) or ("atomic" in base and is_returning_atomic(ins))
        picked = [ops[1 if returns else 0], ops[-1]]
    return set().union(*(operand_regs(o) for o in picked))


def _mask(state: State, op) -> Parked:
    """Parked tags of a lane-mask operand (an SGPR pair, EXEC, or the constant 0)."""
    if op.text in ("0", "exec"):
        return frozenset()  # no lanes, or only active ones
    halves = [_get(state, r)[1] for r in sorted(operand_regs(op))]
    return None if len(halves) != 2 or None in halves else halves[0] | halves[1]


def _mask_result(ins: Instruction, state: State, active: Parked) -> Parked:
    """Parked tags of the lane mask a 64-bit mask instruction writes (`active`: the VGPR tags of
    the lanes active before it); None when the result may hold lanes whose values are unknown."""
    base, ops = reg_info(ins).base, ins.operands
    if base.startswith("v_cmp_"):
        return frozenset()  # the active lanes' compare results; inactive lanes get 0
    if base in ("s_and_saveexec_b64", "s_andn2_saveexec_b64", "s_or_saveexec_b64"):
        return active  # the old EXEC, whose lanes this may disable
    srcs = [_mask(state, o) for o in ops[1:3]]
    known = [m for m in srcs if m is not None]
    if base in ("s_mov_b64", "s_andn2_b64"):
        return srcs[0]
    if base == "s_and_b64" and known:
        return frozenset().union(*known)  # a subset of either source
    if base in ("s_or_b64", "s_xor_b64", "s_cselect_b64") and len(known) == 2:
        return known[0] | known[1]
    return None


def _exec_gains(ins: Instruction, state: State) -> Parked:
    """Parked tags of the lanes an EXEC write may enable: those of the masks it takes lanes from."""
    base, ops = reg_info(ins).base, ins.operands
    if base in ("s_or_b64", "s_xor_b64", "s_and_b64", "s_cselect_b64"):
        sources = ops[1:3]
    elif base in ("s_mov_b64", "s_andn2_b64", "s_or_saveexec_b64", "s_andn2_saveexec_b64"):
        sources = ops[1:2]
    else:
        return None
    masks = [_mask(state, o) for o in sources]
    if base == "s_and_b64" and any(m is not None for m in masks):
        masks = [m for m in masks if m is not None]  # a subset of either source
    return None if None in masks else frozenset().union(*masks)


def _narrows_exec(ins: Instruction) -> bool:
    """EXEC = EXEC & x: s_and_saveexec, s_and_b64 exec, exec, x, s_andn2_b64 exec, exec, x."""
    ops = [o.text for o in ins.operands]
    return (ins.mnemonic == "s_and_saveexec_b64"
            or (ins.mnemonic in ("s_and_b64", "s_andn2_b64") and ops[0] == "exec"
                and (ops[1] == "exec" or (ins.mnemonic == "s_and_b64" and ops[2] == "exec"))))


def _partial_write(ins: Instruction) -> bool:
    """A VGPR write that may keep part of the old value (16-bit halves, single lanes)."""
    return (ins.mnemonic.endswith("_sdwa") or "_d16" in ins.mnemonic or ins.mnemonic.startswith("v_writelane")
            or any(m.startswith("op_sel") for m in ins.modifiers))


def _transfer(kernel: Kernel, ins: Instruction, state: State) -> None:
    """Pointer provenance through one instruction. An `s_load` from the untouched kernarg pointer
    gives each loaded dword its argument's tag, other memory reads give UNKNOWN, anything else
    gives its destinations the union of its sources' tags (implicit EXEC and SCC reads pass no
    value on: they mask lanes or carry a bit; DPP and lane reads see every lane). A VGPR write
    replaces the active lanes' tags. Lane masks remember what the lanes they hold but EXEC leaves
    out may contain: when EXEC changes, every mask's lanes may go inactive holding the current
    values; when EXEC gains the lanes of a mask (any EXEC write but `EXEC & x`), the active tags
    gain that mask's parked tags (all tags ever written, if the mask is unknown)."""
    info = reg_info(ins)
    if _kernarg_load(ins, state):
        dst, offset = ins.operands[0], int(ins.operands[-1].value)
        for j in range(dst.count):
            state[("s", dst.index + j)] = (_arg_tags(kernel, offset + 4 * j), None)
        return
    if _GLOBAL.match(info.base) or _is_lds(ins) or info.base.startswith("scratch_"):
        tags = frozenset({UNKNOWN})
    else:
        uses = (set(info.uses) - EXEC - {SCC}) | set().union(*(operand_regs(o) for o in info.srcs))
        tags = _tags(state, uses, lanes=1 if info.encoding == "dpp" or _CROSS_LANE.match(info.base) else 0)
        tags = frozenset({UNKNOWN}) if "kernarg" in tags else tags
    vgprs = [(r, v) for r, v in state.items() if _vector(r)]
    active = frozenset((r, t) for r, (tags_on, _) in vgprs for t in tags_on)
    mask = _mask_result(ins, state, active) if info.base.endswith("_b64") or info.family == "vopc" else None
    gained = _exec_gains(ins, state) if info.defs & EXEC and not _narrows_exec(ins) else frozenset()
    ignores_exec = info.family == "mfma" or info.base.startswith("v_writelane")
    written = frozenset((d, t) for d in info.defs if _vector(d) for t in tags) if ignores_exec else frozenset()
    if info.defs & EXEC or written:
        for r, (t, parked) in list(state.items()):
            if not _vector(r) and parked is not None:
                state[r] = (t, parked | (active if info.defs & EXEC else written))
    whole = not ignores_exec and not _partial_write(ins)
    for d in info.defs:
        if _vector(d):
            tags_on, every = _get(state, d)
            state[d] = (tags if whole else tags_on | tags, every | tags)
        else:
            state[d] = (tags, frozenset() if d in EXEC else mask)
    if gained is None:
        for r, (tags_on, every) in vgprs:
            state[r] = (state[r][0] | every, state[r][1])
    else:
        for r, t in gained:
            state[r] = (_get(state, r)[0] | {t}, _get(state, r)[1])


def _global_accesses(kernel: Kernel, instructions: list[Instruction], cfg) -> dict[int, tuple[bool, Tags]] | None:
    """(writes, buffer tags of its address) of every reachable global memory access except kernarg
    loads, by index; UNKNOWN when the address derives from no buffer argument. A forward
    may-analysis to a fixpoint; None if it takes more than MAX_ROUNDS rounds."""
    entry: State = {r: (frozenset(), frozenset()) for r in EXEC}
    for name, first, _ in kernel.descriptor.user_sgpr_layout():
        if name == "enable_sgpr_kernarg_segment_ptr":
            entry.update({("s", first + k): (frozenset({"kernarg"}), None) for k in (0, 1)})
    live = cfg.reachable()
    block_in: dict[int, State] = {}
    block_out: dict[int, State] = {}
    for _ in range(MAX_ROUNDS):
        changed = False
        for b in live:
            preds = [block_out[p] for p in cfg.blocks[b].preds if p in block_out] + ([entry] if b == 0 else [])
            regs = set().union(*preds) if preds else set()
            state = {r: functools.reduce(_merge, (_get(ps, r) for ps in preds)) for r in regs}
            block_in[b] = dict(state)
            for j in range(cfg.blocks[b].start, cfg.blocks[b].end):
                _transfer(kernel, instructions[j], state)
            changed |= block_out.get(b) != state
            block_out[b] = state
        if not changed:
            break
    else:
        return None
    accesses = {}
    for b in live:
        state = block_in[b]
        for j in range(cfg.blocks[b].start, cfg.blocks[b].end):
            ins = instructions[j]
            if _GLOBAL.match(ins.mnemonic) and not _kernarg_load(ins, state):
                base = reg_info(ins).base
                tags = _tags(state, _address_regs(ins))
                accesses[j] = ("store" in base or "atomic" in base, tags or frozenset({UNKNOWN}))
            _transfer(kernel, ins, state)
    return accesses


def _blocks_reachable(cfg, start: int, forward: bool) -> set[int]:
    """Blocks reachable from block `start` over one or more edges (forward or backward)."""
    seen: set[int] = set()
    work = [start]
    while work:
        for n in (cfg.blocks[work.pop()].succs if forward else cfg.blocks[work.pop()].preds):
            if n not in seen:
                seen.add(n)
                work.append(n)
    return seen


def preamble_matches_preload(kernel: Kernel, instructions: list[Instruction]) -> bool:
    """For a kernarg-preloading kernel: its compatibility preamble (the first PRELOAD_SKIP bytes,
    run where the firmware does not preload) does nothing but load into each preloaded SGPR the
    kernarg dword the hardware would put there. Then an analysis from the first instruction sees
    what both entries see. True for kernels that preload nothing."""
    f = kernel.descriptor.fields
    count, first_dword = f["kernarg_preload_spec_length"], f["kernarg_preload_spec_offset"]
    if not count:
        return True
    layout = kernel.descriptor.user_sgpr_layout()
    first_sgpr = max((start + n for _, start, n in layout), default=0)
    pointer = next(((start, start + 1) for name, start, _ in layout if name == "enable_sgpr_kernarg_segment_ptr"), None)
    loaded: dict[int, int] = {}
    for ins in instructions:
        if ins.address - kernel.code_address >= PRELOAD_SKIP:
            break
        ops = ins.operands
        if (ins.mnemonic.startswith("s_load_dword") and ops[-1].kind == "imm" and pointer
                and tuple(sorted(r[1] for r in operand_regs(ops[1]))) == pointer):
            loaded.update({ops[0].index + j: int(ops[-1].value) // 4 + j for j in range(ops[0].count)})
        elif ins.mnemonic not in ("s_waitcnt", "s_branch", "s_nop"):
            return False
    return all(loaded.get(first_sgpr + j) == first_dword + j for j in range(count))


def barrier_proof(k0: CodeObject, lines: list[str], edited: list[str], blocks: list[tuple[int, int, int]]) -> str:
    """A proof that deleting an `s_barrier` cannot change any result. The barrier only orders the
    waves of a workgroup: without it, a wave's instructions after it may run before another
    wave's instructions before it, and only memory shared by the waves can observe that. So it is
    enough that no `s_sendmsg` is reachable after the barrier; that either no LDS access is, or
    LDS accesses that different waves of a workgroup of each block shape in `blocks` may make in
    the same barrier phase of K1 touch disjoint bytes (`emu.lds_order`: addresses that are
    functions of the work-item id, phases counted over the remaining barriers); and that no global
    access G reachable after it may conflict (same buffer, one of them writing) with a global access
    H that another wave can run before its own arrival at the barrier — every access except those
    the barrier dominates and that cannot reach it again (the same test covers a G before a later
    run of the barrier, as that G can reach it). Buffers are told apart by pointer provenance
    (`_transfer`): an address computed from one buffer argument stays inside that buffer and is
    never computed from a register no instruction wrote (true of every execution without
    out-of-bounds accesses or uninitialized reads in the lanes used, which verification reports),
    and distinct buffer arguments do not overlap (`distinct_buffers` checks the launches); an
    address of unknown provenance may touch any buffer. Kernels with flat accesses or indirect
    control get no proof, nor kernarg-preloading kernels whose preamble does other than the
    preload (`preamble_matches_preload`)."""
    n, new = _changed_line(lines, edited)
    m = _LINE.match(lines[n])
    found = _kernel_of(k0, int(m["addr"], 16)) if m and new is None else None
    if found is None or found[1][found[2]].mnemonic != "s_barrier":
        return ""
    kernel, instructions, i = found
    if (not preamble_matches_preload(kernel, instructions)
            or any(_IMPURE.match(x.mnemonic) or x.mnemonic.startswith("flat_") for x in instructions)):
        return ""
    cfg = build_cfg(instructions)
    b = cfg.block_of[i]
    later = _blocks_reachable(cfg, b, forward=True)
    after = [j for j in range(len(instructions)) if cfg.block_of[j] in later or (cfg.block_of[j] == b and j > i)]
    if any(instructions[j].mnemonic == "s_sendmsg" for j in after):
        return ""
    lds_after = any(_is_lds(instructions[j]) for j in after)
    if lds_after and (not blocks or any(lds_conflicts(instructions, blk, frozenset({i})) for blk in blocks)):
        return ""
    accesses = _global_accesses(kernel, instructions, cfg)
    if accesses is None:
        return ""
    dom = cfg.dominators()
    earlier = _blocks_reachable(cfg, b, forward=False)

    def ordered_after(j: int) -> bool:  # every run of j follows this wave's last arrival at the barrier
        bj = cfg.block_of[j]
        return b in dom.get(bj, ()) and bj not in earlier and (bj != b or j > i)

    before = {j: a for j, a in accesses.items() if not ordered_after(j)}
    for g in (j for j in after if j in accesses):
        g_writes, g_tags = accesses[g]
        for h, (h_writes, h_tags) in before.items():
            if (g_writes or h_writes) and (g_tags & h_tags or UNKNOWN in g_tags | h_tags):
                return ""
    touched = sorted({t for j in after if j in accesses for t in accesses[j][1]})
    lds = ("different waves' LDS accesses that may share a barrier phase without it touch disjoint bytes "
           f"(block {', '.join('x'.join(map(str, blk)) for blk in blocks)})" if lds_after else "no LDS access after it")
    return (f"barrier 0x{instructions[i].address:x}: {lds}, and its later global accesses "
            f"({', '.join(touched) or 'none'}) conflict with no access another wave may make before it")


def same_code_proof(k0: CodeObject, k1: CodeObject) -> str:
    """A proof by identity: every kernel of K1 disassembles to K0's instructions."""
    same = all([x.text() for x in kernel_instructions(k0, k.name)] == [x.text() for x in kernel_instructions(k1, k.name)]
               for k in k0.kernels)
    return "identical code: K1 disassembles to K0's instructions" if same else ""


def distinct_buffers(launches) -> bool:
    """Every launch passes each buffer to at most one argument and no struct arguments (which may
    hold buffer addresses): the barrier proof's buffer arguments then never overlap."""
    return all(not any(isinstance(a, StructArg) for a in vl.spec.args)
               and len(names := [a.name for a in vl.spec.args if isinstance(a, BufferArg)]) == len(set(names))
               for vl in launches)


def equivalence_proof(k0: CodeObject, k1: CodeObject, lines: list[str], edited: list[str], launches) -> str:
    """Why an edit cannot change any result for launches like `launches` (their block shapes, and
    buffers passed as in them; see the module docstring), or "" when unproved."""
    blocks = sorted({tuple(vl.spec.block) for vl in launches})
    return (same_code_proof(k0, k1) or dead_write_proof(k0, lines, edited)
            or (barrier_proof(k0, lines, edited, blocks) if distinct_buffers(launches) else ""))


# ---- semantics-preserving edits -------------------------------------------------------------------

def noop(lines, ss):
    yield "no-op reassembly", list(lines)


def nop_padding(lines, ss):
    picks = ss[::max(1, len(ss) // 5)][:5]
    out = list(lines)
    for s in sorted(picks, key=lambda s: -s.line):
        out.insert(s.line, "\ts_nop 0")
    yield f"s_nop 0 before {len(picks)} instructions", out


def reorder(lines, ss):
    for a, b in zip(ss, ss[1:]):
        if b.line != a.line + 1 or _NOT_ALU.match(a.ins.mnemonic) or _NOT_ALU.match(b.ins.mnemonic) \
                or _MEMORY.match(a.ins.mnemonic) or _MEMORY.match(b.ins.mnemonic):
            continue
        ia, ib = reg_info(a.ins), reg_info(b.ins)
        if ia.defs & (ib.defs | ib.uses) or ib.defs & ia.uses:
            continue
        out = list(lines)
        out[a.line], out[b.line] = lines[b.line], lines[a.line]
        yield f"swap independent {a.ins.text()} / {b.ins.text()} at 0x{a.address:x}", out


BREAKING: dict[str, Callable] = {"swap_operands": swap_operands, "change_offset": change_offset,
                                 "drop_wait": drop_wait, "drop_barrier": drop_barrier,
                                 "delete_instruction": delete_instruction, "rename_into_live": rename_into_live,
                                 "widen_store": widen_store}
PRESERVING: dict[str, Callable] = {"noop": noop, "nop_padding": nop_padding, "reorder": reorder}
# Operators that look at neighbouring instructions get the sites in line order (from a random start).
SEQUENTIAL = frozenset({"rename_into_live", "nop_padding", "reorder"})


def executed_pcs(k0: CodeObject, launches) -> set[int]:
    dev = get_device("emu")
    pcs: set[int] = set()
    for vl in launches:
        _, result = run_launch(dev, k0.data, vl.spec, make_inputs(vl.spec))
        pcs |= {pc for pc, n in result.report.pc_counts.items() if n}
    return pcs


def first_buildable(edits, info: dict, k0: CodeObject, legal: bool) -> tuple[str, list[str], CodeObject] | None:
    """The first edit that assembles (and, for a preserving edit, adds no static finding)."""
    for description, edited in edits:
        try:
            k1 = CodeObject(rebuild_source("\n".join(edited) + "\n", info).data)
        except AsmEvoError:
            continue
        if legal and static_differences(k0, k1):
            continue
        return description, edited, k1
    return None


def run_problem(problem, trials: int, rng: np.random.Generator) -> tuple[list[Outcome], float]:
    k0 = CodeObject.from_path(problem.code_object)
    launches = suite_launches(problem)
    rec = recover(problem.code_object)
    lines = rec.source.splitlines()
    ss = sites(lines, executed_pcs(k0, launches))
    shuffled = [ss[i] for i in rng.permutation(len(ss))]
    rotation = int(rng.integers(len(ss))) if ss else 0
    rotated = ss[rotation:] + ss[:rotation]
    outcomes = []
    full_seconds = 0.0
    cache = ReferenceCache()
    # Preserving edits first: the no-op's verification runs with a cold K0 cache, so its time is
    # that of one complete verification; later candidates reuse K0's results.
    for table, breaking in ((PRESERVING, False), (BREAKING, True)):
        for op, fn in table.items():
            candidates = rotated if op in SEQUENTIAL else shuffled
            picked = first_buildable(fn(lines, candidates), rec.info, k0, legal=not breaking)
            if picked is None:
                continue
            description, edited, k1 = picked
            v = verify(k0, k1, launches, trials=trials, reference=cache)
            if op == "noop":
                full_seconds = v.seconds
            outcome = Outcome(problem.name, op, breaking, description, v.kind, v.reason, v.seconds)
            if breaking and v.equivalent:
                outcome.proof = equivalence_proof(k0, k1, lines, edited, suite_launches(problem, heldout=True))
            if breaking and v.equivalent and not outcome.proof:
                outcome.heldout_verdict = verify(k0, k1, suite_launches(problem, heldout=True), trials=trials,
                                                 reference=cache).kind
            outcomes.append(outcome)
    return outcomes, full_seconds


def problem_rng(seed: int, name: str) -> np.random.Generator:
    """The edit-picking generator of one problem: the same mutants whichever problems run."""
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", help="comma-separated problem names (default: every KernelBench problem)")
    ap.add_argument("--trials", type=int, default=3, help="random input sets per launch (default 3)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="write every outcome here")
    args = ap.parse_args(argv)
    suite = load_suite("kernelbench")
    problems = [suite.problem(n) for n in args.problems.split(",")] if args.problems else list(suite.problems)
    outcomes: list[Outcome] = []
    verify_times: dict[str, float] = {}
    start = time.perf_counter()
    for p in problems:
        try:
            got, full = run_problem(p, args.trials, problem_rng(args.seed, p.name))
        except AsmEvoError as exc:
            print(f"{p.name}: skipped ({exc})", flush=True)
            continue
        outcomes += got
        verify_times[p.name] = full
        bad = [o for o in got if not o.correct]
        print(f"{p.name}: {len(got)} mutants, {len(bad)} misjudged, full verification {full:.2f} s", flush=True)
    proved = [o for o in outcomes if o.proof]
    brk = [o for o in outcomes if o.breaking and not o.proof]
    pres = [o for o in outcomes if not o.breaking]
    print("\noperator             kind        n  correct  proved equivalent")
    for op in [*BREAKING, *PRESERVING]:
        mine = [o for o in outcomes if o.operator == op]
        if mine:
            kind = "breaking" if mine[0].breaking else "preserving"
            print(f"{op:20s} {kind:10s} {len(mine):3d}  {sum(o.correct and not o.proof for o in mine):3d}"
                  f"  {sum(bool(o.proof) for o in mine):3d}")
    for o in proved:
        print(f"EQUIVALENT {o.problem} {o.operator}: {o.description} -- {o.proof}")
    for o in outcomes:
        if not o.correct:
            held = f"; with the held-out shape: {o.heldout_verdict}" if o.heldout_verdict else ""
            what = "SURVIVED" if o.breaking else "REJECTED"
            print(f"{what} {o.problem} {o.operator}: {o.description} -> {o.verdict} ({o.reason}){held}")
    times = sorted(verify_times.values())
    print(f"\nproved equivalent mutants (accepted, not counted as breaking): {len(proved)}")
    print(f"rejection rate of semantics-breaking edits:  {sum(o.correct for o in brk)}/{len(brk)}"
          f" = {100 * sum(o.correct for o in brk) / max(1, len(brk)):.1f}%")
    held = sum(o.heldout_verdict not in ("", "equivalent") for o in brk)
    print(f"  ... including the held-out shape (final acceptance): {sum(o.correct for o in brk) + held}/{len(brk)}")
    print(f"acceptance rate of semantics-preserving edits: {sum(o.correct for o in pres)}/{len(pres)}"
          f" = {100 * sum(o.correct for o in pres) / max(1, len(pres)):.1f}%")
    if times:
        print(f"full verification per kernel (all verify shapes x {args.trials} trials + special sets): "
              f"median {np.median(times):.2f} s, max {times[-1]:.2f} s over {len(times)} kernels")
    print(f"total {time.perf_counter() - start:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps({"outcomes": [asdict(o) for o in outcomes],
                                               "verify_seconds": verify_times}, indent=1) + "\n")
    return 0 if all(o.correct for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
