"""Branch operators: drop an `s_cbranch_execz` that only skips a few instructions which are harmless
with an empty EXEC mask (LLVM's SIPreEmitPeephole drops such skips below `amdgpu-skip-threshold`).

With EXEC = 0 a vector instruction writes no VGPR lane and a vector memory instruction accesses no
memory (CDNA3 ISA guide, "EXEC mask"); a VALU writing an SGPR (v_cmp, carry-out) writes zeros, and
SALU runs regardless, so every scalar register the skipped code writes must be dead at the target.
Instructions LLVM lists as unsafe with an empty EXEC (readlane/writelane, messages, GWS, traps,
scalar memory, M0/EXEC writes) and MFMA (full-wave) keep the branch."""
from __future__ import annotations

from ..isa.regs import EXEC, M0, is_lds_dma
from .body import Body, across_loop

SKIP_THRESHOLD = 12  # LLVM amdgpu-skip-threshold default
_UNSAFE = ("v_readfirstlane", "v_readlane", "v_writelane", "s_sendmsg", "s_trap", "s_setreg", "s_barrier",
           "s_endpgm", "s_setpc", "s_swappc", "s_getpc", "s_set_gpr_idx", "s_movrel", "v_movrel", "ds_gws",
           "ds_ordered_count", "exp", "s_sethalt", "s_icache", "s_dcache")
_SPECIAL = EXEC | {M0}


def _safe_without_lanes(body: Body, j: int) -> bool:
    info, ins = body.infos[j], body.instructions[j]
    if ins.is_branch or info.base.startswith(_UNSAFE) or info.family in ("smem", "mfma") \
            or is_lds_dma(ins, body.processor):
        return False
    if info.family == "sopp" and info.base not in ("s_waitcnt", "s_nop"):
        return False
    return not info.defs & _SPECIAL


def remove_skip_branch(body: Body, i: int) -> Body | None:
    """Delete the `s_cbranch_execz` at instruction i when the straight-line code it skips (entered
    only through it, at most SKIP_THRESHOLD instructions) is safe with EXEC = 0 and writes no
    scalar register live at the branch target."""
    ins = body.instructions[i]
    if ins.mnemonic != "s_cbranch_execz":
        return None
    _, labels, _ = body.index
    t = labels.get(ins.label)
    if t is None or not i + 1 < t <= i + 1 + SKIP_THRESHOLD:
        return None
    if any(i < at < t for at in labels.values()):
        return None
    live = body.live_in[body.cfg.block_of[t]]
    for j in range(i + 1, t):
        scalar = {r for r in body.infos[j].defs if r[0] in ("s", "scc")}
        if not _safe_without_lanes(body, j) or scalar & live:
            return None
    items = list(body.items)
    del items[body.pos[i]]
    new = body.replace(items)
    return new if new.no_worse(body, full=False) else None


def remove_skip_branches(body: Body, i: int) -> Body | None:
    """`remove_skip_branch` at every `s_cbranch_execz` in the block range of instruction i's
    innermost loop (the whole body outside loops), first to last, each re-checked on the result."""
    cur, removed = across_loop(body, i, lambda b, j: b.instructions[j].mnemonic == "s_cbranch_execz", remove_skip_branch)
    return cur if removed > 1 else None
