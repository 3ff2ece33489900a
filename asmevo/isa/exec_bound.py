"""Does EXEC stay within the lanes active at launch? A forward dataflow over the CFG tracks which
SGPRs hold a lane mask *bounded* by the launch EXEC (every set bit is a launch-active lane):
EXEC at the start, compare results (a VALU compare writes 0 for inactive lanes), saved EXECs, and
AND/OR/XOR combinations that keep the bound. Constants other than 0, `s_orn2`, `s_not`, WQM and
anything unmodelled are unbounded. When every write of EXEC is bounded, a VGPR written once at the
wave's start holds its value in every lane any later instruction can read (LLVM's structured
control flow only narrows and restores EXEC; this proves it for the given code)."""
from __future__ import annotations

from .cfg import CFG
from .instruction import Instruction
from .operands import SPECIAL_PAIRS, Operand
from .regs import RegInfo

_EXEC = SPECIAL_PAIRS["exec"]
_CALLS = ("s_setpc_b64", "s_swappc_b64", "s_cbranch_join", "s_cbranch_g_fork", "s_cbranch_i_fork")


def _bounded(op: Operand, state: frozenset[int]) -> bool:
    if op.kind == "imm":
        return op.value == 0
    span = op.sgpr_range()
    return span is not None and len(span) == 2 and all(r in state for r in span)


def _mask_result(base: str, srcs: tuple[Operand, ...], state: frozenset[int]) -> bool | None:
    """Whether a 64-bit scalar mask operation's result is bounded (None: not a mask operation)."""
    b = [_bounded(op, state) for op in srcs]
    if base == "s_mov_b64":
        return b[0]
    if base == "s_and_b64":
        return b[0] or b[1]
    if base == "s_andn2_b64":
        return b[0]
    if base in ("s_or_b64", "s_xor_b64", "s_cselect_b64"):
        return b[0] and b[1]
    return None


def _step(info: RegInfo, state: frozenset[int]) -> tuple[frozenset[int], bool]:
    """(state after the instruction, whether any EXEC it writes is bounded)."""
    exec_ok = _EXEC in state
    base = info.base
    writes_exec = ("s", _EXEC) in info.defs or ("s", _EXEC + 1) in info.defs
    new_exec = False
    if base.startswith("v_cmp"):  # VOPC/VOP3 compare: inactive lanes written 0
        dst_ok = exec_ok
        if base.startswith("v_cmpx"):
            new_exec = exec_ok
    elif base.endswith("_saveexec_b64"):
        src = _bounded(info.srcs[0], state) if info.srcs else False
        dst_ok = exec_ok
        new_exec = {"s_and_saveexec_b64": src or exec_ok, "s_andn2_saveexec_b64": src,
                    "s_or_saveexec_b64": src and exec_ok, "s_xor_saveexec_b64": src and exec_ok}.get(base, False)
    else:
        dst_ok = _mask_result(base, info.srcs, state) if info.family == "salu" else None
        if writes_exec:
            new_exec = bool(dst_ok)
    out = set(state) - {r for kind, r in info.defs if kind == "s"}  # written SGPRs lose the bound ...
    if dst_ok and info.dst:  # ... unless the mask written keeps it
        span = info.dst[0].sgpr_range()
        if span is not None and len(span) == 2:
            out.update(span)
    if new_exec:
        out.update((_EXEC, _EXEC + 1))
    return frozenset(out), not writes_exec or new_exec


def exec_within_launch(instructions: list[Instruction], infos: list[RegInfo], cfg: CFG, start: int = 0) -> bool:
    """Whether every EXEC write from instruction `start` on is bounded by the launch EXEC."""
    if any(ins.mnemonic in _CALLS for ins in instructions):
        return False
    top = frozenset(r for info in infos for kind, r in info.defs | info.uses if kind == "s") | {_EXEC, _EXEC + 1}
    entry = cfg.block_of[start]
    into: dict[int, frozenset[int]] = {b.index: top for b in cfg.blocks}
    into[entry] = frozenset({_EXEC, _EXEC + 1})
    work, seen = [entry], {entry}
    while work:
        blk = cfg.blocks[work.pop()]
        state = into[blk.index]
        for n in range(blk.start, blk.end):  # `start` is a branch target: a block's first
            state, ok = _step(infos[n], state)
            if not ok:
                return False
        for s in blk.succs:
            met = into[s] & state
            if met != into[s] or s not in seen:
                into[s] = met
                seen.add(s)
                work.append(s)
    return True
