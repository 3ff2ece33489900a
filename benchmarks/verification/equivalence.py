"""Proofs that an edit accepted by verification is an *equivalent mutant*: it cannot change any
result (the mutation benchmark's `mutations.py` leaves proved ones out of its rejection rate).

* liveness (`dead_write_proof`): the edited instruction's only effect is its register writes, the
  edit keeps the registers written, and no path reads them before overwriting them whole;
* barrier (`barrier_proof`): a deleted `s_barrier` after which no wave can observe the order of
  another wave's accesses (LDS by byte-disjointness per barrier phase, global memory by pointer
  provenance per buffer argument);
* sign (`sign_proof`): a float subtraction with swapped sources whose result is only squared or
  taken in absolute value (equal up to NaN payloads);
* identity (`same_code_proof`): K1 disassembles to K0's instructions.
"""
from __future__ import annotations

import functools
import re
import sys
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from asmevo.codeobj import CodeObject, Kernel  # noqa: E402
from asmevo.device.launch import BufferArg, StructArg  # noqa: E402
from asmevo.emu import PRELOAD_SKIP  # noqa: E402
from asmevo.emu.ds import ds_footprint  # noqa: E402
from asmevo.emu.lds_order import lds_conflicts  # noqa: E402
from asmevo.errors import UnsupportedInstruction  # noqa: E402
from asmevo.isa.cfg import build_cfg  # noqa: E402
from asmevo.isa.instruction import Instruction, parse_instruction  # noqa: E402
from asmevo.isa.regs import (EXEC, SCC, Reg, RegInfo, def_use_all, is_lds_dma, is_returning_atomic,  # noqa: E402
                             operand_regs, reg_info)

LINE = re.compile(r"^\t(?P<text>[a-z_][^;]*?)\s*; 0x(?P<addr>[0-9a-f]+)$")  # an instruction of recovered source
# Instructions whose only effect is writing their registers: ALU, and the LDS lane shuffles (which
# touch no memory). Kernels with mode-setting SALU, register indexing or indirect control flow get
# no dead-write proofs.
_PURE_FAMILIES = frozenset({"salu", "valu", "vopc"})
_LANE_SHUFFLES = frozenset({"ds_bpermute_b32", "ds_permute_b32", "ds_swizzle_b32"})
_IMPURE = re.compile(r"^s_(setreg|set_gpr_idx|setvskip|movrel|setpc|swappc|call|rfe)")


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
        instructions = k0.kernel_instructions(k.name)
        for i, ins in enumerate(instructions):
            if ins.address == address:
                return k, instructions, i
    return None


def dead_write_proof(k0: CodeObject, lines: list[str], edited: list[str]) -> str:
    """A proof that a single-instruction edit (replaced or deleted) cannot change any result: the
    instruction's only effect is its register writes, the edit keeps the registers written, and
    no path reads them afterwards. "" when there is none."""
    n, new = _changed_line(lines, edited)
    m = LINE.match(lines[n])
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


# EXEC = x & ~EXEC: the else branch of structured control flow, none of the lanes active before
_SWITCHES_EXEC = frozenset({"s_andn2_saveexec_b64"})


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
    _flow(ins, info, state, tags)


def _flow(ins: Instruction, info: RegInfo, state: State, tags: Tags, scalar_tags: Tags | None = None) -> None:
    """Give an instruction's destinations `tags` (its SGPR ones `scalar_tags`, when given), with
    the lane bookkeeping of `_transfer`: VGPR writes replace the active lanes' tags, EXEC changes
    park and restore lanes through masks."""
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
            state[d] = (tags if scalar_tags is None else scalar_tags, frozenset() if d in EXEC else mask)
    if gained is None:
        for r, (tags_on, every) in vgprs:
            state[r] = (state[r][0] | every, state[r][1])
        return
    if info.base in _SWITCHES_EXEC:  # the new lanes are all parked ones of the source mask
        for r, (tags_on, every) in vgprs:
            state[r] = (frozenset(), every)
    for r, t in gained:
        state[r] = (_get(state, r)[0] | {t}, _get(state, r)[1])


def _solve(cfg, entry: State, step: Callable[[int, State], bool]) -> dict[int, State] | None:
    """Block-entry states of a forward may-analysis from `entry` to its fixpoint (`step(j, state)`
    applies instruction j, False to give up); None when given up or beyond MAX_ROUNDS rounds."""
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
                if not step(j, state):
                    return None
            changed |= block_out.get(b) != state
            block_out[b] = state
        if not changed:
            return block_in
    return None


def _global_accesses(kernel: Kernel, instructions: list[Instruction], cfg) -> dict[int, tuple[bool, Tags]] | None:
    """(writes, buffer tags of its address) of every reachable global memory access except kernarg
    loads, by index; UNKNOWN when the address derives from no buffer argument. A forward
    may-analysis to a fixpoint; None if it takes more than MAX_ROUNDS rounds."""
    entry: State = {r: (frozenset(), frozenset()) for r in EXEC}
    for name, first, _ in kernel.descriptor.user_sgpr_layout():
        if name == "enable_sgpr_kernarg_segment_ptr":
            entry.update({("s", first + k): (frozenset({"kernarg"}), None) for k in (0, 1)})
    block_in = _solve(cfg, entry, lambda j, state: _transfer(kernel, instructions[j], state) or True)
    if block_in is None:
        return None
    accesses = {}
    for b, state in block_in.items():
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
    m = LINE.match(lines[n])
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
    same = all([x.text() for x in k0.kernel_instructions(k.name)] == [x.text() for x in k1.kernel_instructions(k.name)]
               for k in k0.kernels)
    return "identical code: K1 disassembles to K0's instructions" if same else ""


def distinct_buffers(launches) -> bool:
    """Every launch passes each buffer to at most one argument and no struct arguments (which may
    hold buffer addresses): the barrier proof's buffer arguments then never overlap."""
    return all(not any(isinstance(a, StructArg) for a in vl.spec.args)
               and len(names := [a.name for a in vl.spec.args if isinstance(a, BufferArg)]) == len(set(names))
               for vl in launches)


_SIGN, _NAN = "sign", "NaN payload"  # how a value may differ from K0's: its sign, or a NaN's payload bits
_SUB = re.compile(r"^v_(sub|subrev)_f(16|32|64)$")
_MUL = re.compile(r"^v_(mul|fma|fmac|mac|mad)_f(16|32|64)$")
_ACCUMULATES = re.compile(r"^v_(fmac|mac)_")
# Float operations that give NaN exactly when a source is NaN, or pick between sources (min/max,
# selects), so that a NaN payload never turns into other bits.
_NAN_OBLIVIOUS = re.compile(r"^v_(pk_)?(add|sub|subrev|mul|fma|fmac|mac|mad|fmaak|fmamk|min|max|min3|max3|med3|div_scale|"
                            r"div_fmas|div_fixup|rcp|rsq|sqrt|exp|log|ldexp|fract|trunc|floor|ceil|rndne)_f(16|32|64)$|"
                            r"^v_cvt_f(16|32|64)_f(16|32|64)$")
_MOVES = frozenset({"v_mov_b32", "v_cndmask_b32"})
_FLOAT_COMPARE = re.compile(r"^v_cmpx?_(?!class)[a-z]+_f(16|32|64)$")
_FLOAT_STORE = re.compile(r"^(global_store_|buffer_store_|flat_store_|scratch_store_|ds_write|"
                          r"(global|buffer|flat)_atomic_(pk_)?add_f(16|32|64)|ds_add(_rtn)?_f32)")
_LOADS = re.compile(r"^(global_load|buffer_load|flat_load|scratch_load|ds_read|global_atomic|buffer_atomic|"
                    r"flat_atomic|ds_.*_rtn)")
SYMMETRIC_ROUNDING = (0, 3)  # round to nearest even, toward zero: round(-x) = -round(x)
_MEMORY: Reg = ("memory", 0)  # pseudo-register of the taint analysis


def _sign_insensitive(ins: Instruction, info: RegInfo, signed: set[Reg]) -> bool:
    """Every read of a `signed` register gives the same result for x and -x: all its operands take
    |x|, or it is the two multiplicands of a product x*x (same modifiers, not the accumulator)."""
    hit = [k for k, o in enumerate(info.srcs) if operand_regs(o) & signed]
    explained = set().union(*(operand_regs(info.srcs[k]) for k in hit))
    if not hit or (info.uses & signed) - explained or info.encoding in ("dpp", "sdwa"):
        return False
    if _ACCUMULATES.match(info.base) and operand_regs(ins.operands[0]) & signed:
        return False
    if all(info.srcs[k].abs for k in hit):
        return True
    a, b = (info.srcs + (None, None))[:2]
    return bool(_MUL.match(info.base)) and hit == [0, 1] and (a.text, a.neg, a.abs) == (b.text, b.neg, b.abs)


def _read_modify_write(base: str) -> bool:
    """An atomic: reads and writes memory."""
    return "atomic" in base or (base.startswith("ds_") and not base.startswith(("ds_read", "ds_write", "ds_nop"))
                                and base not in _LANE_SHUFFLES)


def _memory_address(ins: Instruction, info: RegInfo) -> set[Reg]:
    """The registers a memory access (or lane shuffle) takes its address from."""
    if info.base in _LANE_SHUFFLES:
        return operand_regs(ins.operands[1])
    if info.base.startswith("ds_"):
        try:
            return operand_regs(ins.operands[ds_footprint(ins)[0]])
        except UnsupportedInstruction:
            return set(info.uses)
    if _GLOBAL.match(info.base) or info.base.startswith(("flat_", "scratch_")):
        return _address_regs(ins)
    return set()


def _taint_step(k: int, source: int, ins: Instruction, state: State) -> bool:
    """Taint through instruction k: the kinds of difference from K0 each register's active lanes
    (and any lane) may hold, and `_MEMORY` whether stored bytes may differ in a NaN payload. False
    when the difference may reach something other than a NaN payload."""
    info = reg_info(ins)
    address = _memory_address(ins, info)  # read in the lane itself; other sources of a cross-lane
    cross = info.encoding == "dpp" or bool(_CROSS_LANE.match(info.base))  # read may come from any lane
    read = {}
    for r in info.uses - EXEC - {SCC}:
        on, anywhere = _get(state, r)
        kinds = anywhere if cross and _vector(r) and r not in address else on
        if kinds:
            read[r] = kinds
    stored = _get(state, _MEMORY)[0]
    is_load = bool(_LOADS.match(info.base))
    if stored and _read_modify_write(info.base) and not _FLOAT_STORE.match(info.base):
        return False  # an integer or bitwise atomic may turn a NaN payload into other bits
    out: frozenset[str] = frozenset()
    if k == source:
        if read:
            return False
        out = frozenset({_SIGN})
    elif read or (is_load and stored):
        signed = {r for r, kinds in read.items() if _SIGN in kinds}
        nan = frozenset({_NAN}) if any(_NAN in kinds for kinds in read.values()) or (is_load and stored) else frozenset()
        if set(read) & address:
            return False  # an address or lane index that may differ
        if info.base in _MOVES or info.base in _LANE_SHUFFLES:  # bits moved as they are, between lanes too
            out = frozenset().union(*read.values()) if read else nan
        elif signed and not _sign_insensitive(ins, info, signed):
            return False
        elif signed:
            out = frozenset({_NAN})
        elif _NAN_OBLIVIOUS.match(info.base):
            out = nan
        elif _FLOAT_COMPARE.match(info.base) and not cross:
            out = frozenset()  # NaN compares unordered whatever its payload
        elif _FLOAT_STORE.match(info.base) or (is_load and not read):
            if read:
                state[_MEMORY] = (stored | nan, None)
            out = nan if is_load else frozenset()
        else:
            return False
        flags = info.base.startswith("v_div_scale")  # its SGPR flag compares exponents: no payload
        if out and not flags and any(not _vector(d) for d in info.defs - {SCC}):
            return False
    _flow(ins, info, state, out, scalar_tags=frozenset())  # no SGPR result carries a difference
    return True


def sign_proof(k0: CodeObject, lines: list[str], edited: list[str]) -> str:
    """A proof that swapping the sources of a float subtraction (x - y -> y - x) changes no result
    but, possibly, a NaN payload: under symmetric rounding the new result is the old one negated
    (or the same zero), and a forward taint analysis over K0's CFG shows that every instruction
    that may read it (in the lanes it was written in: VGPR writes clear the active lanes' taint,
    lane masks park and restore it as in `_flow`) takes |x| or x*x, whose result is the
    same except that a NaN may carry another payload (when both operands of the subtraction are NaN
    with different payloads, IEEE 754 leaves which one propagates open); such values flow only
    through NaN-propagating float arithmetic, moves, selects and float compares into stores and
    float-add atomics. "" when there is none."""
    n, new = _changed_line(lines, edited)
    m = LINE.match(lines[n])
    found = _kernel_of(k0, int(m["addr"], 16)) if m and new is not None else None
    if found is None:
        return ""
    kernel, instructions, i = found
    old, mutated = instructions[i], parse_instruction(new.split(";")[0].strip())
    info = reg_info(old)
    ops = [o.text for o in old.operands]
    fields = kernel.descriptor.fields
    if (not _SUB.match(info.base) or info.encoding in ("dpp", "sdwa") or old.modifiers or len(ops) != 3
            or mutated.mnemonic != old.mnemonic or [o.text for o in mutated.operands] != [ops[0], ops[2], ops[1]]
            or fields["float_round_mode_32"] not in SYMMETRIC_ROUNDING
            or fields["float_round_mode_16_64"] not in SYMMETRIC_ROUNDING
            or any(_IMPURE.match(x.mnemonic) or x.mnemonic.startswith(("s_round_mode", "s_denorm_mode"))
                   for x in instructions)):
        return ""
    if _solve(build_cfg(instructions), {}, lambda j, state: _taint_step(j, i, instructions[j], state)) is None:
        return ""
    return (f"sign: {old.text()} at 0x{old.address:x} with swapped sources is its negation (symmetric rounding); "
            "every read takes |x| or x*x, so results differ at most in NaN payloads")


def equivalence_proof(k0: CodeObject, k1: CodeObject, lines: list[str], edited: list[str], launches) -> str:
    """Why an edit cannot change any result for launches like `launches` (their block shapes, and
    buffers passed as in them; see the module docstring), or "" when unproved."""
    blocks = sorted({tuple(vl.spec.block) for vl in launches})
    return (same_code_proof(k0, k1) or dead_write_proof(k0, lines, edited) or sign_proof(k0, lines, edited)
            or (barrier_proof(k0, lines, edited, blocks) if distinct_buffers(launches) else ""))
