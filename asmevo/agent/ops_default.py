"""Masked loads' defaults out of loops: for a load under a mask, compiled code first moves the value the
masked-off lanes keep (`v_mov_b32 vD, 0`) into the destination, on every iteration:

    v_mov_b32 vD, K                    <- M
    s_and_saveexec_b64 sS, m           <- G: EXEC = E & m, sS = E
    [s_cbranch_execz .Ljoin]
    global_load_dword vD, ...          <- W, the block after G
  .Ljoin:
    s_or_b64 exec, exec, sS            <- EXEC = E again

When m is not written in the loop, W only ever writes lanes of m, and writes all of E & m each iteration, so
the lanes of E outside m hold K from M on, and those in m hold W's value after the join: M can run once,
before the loop, provided (checked) every lane it writes in any iteration is active there (`lanes.lanes_of`:
EXEC after M within EXEC at the hoisted M; between M and G lie only whole masked regions that leave vD alone,
so EXEC at G is EXEC at M, and nothing in G's region writes EXEC before W), nothing in the loop but M and W
writes vD, nothing between M and the join reads it, no read sees the value vD had before the loop (it is
dead at the preheader's end), and no cross-lane instruction reads it (it could see lanes outside EXEC, which
the hoisted move writes). One VALU instruction per iteration fewer (67_conv_standard_1D: ten per input-channel iteration)."""
from __future__ import annotations

from ..isa.instruction import Instruction
from ..isa.operands import SPECIAL_PAIRS
from ..isa.regs import operand_regs, reads_destination
from .body import Body, make_item
from .lanes import lanes_of
from .webs import NotAnalysable, cross_lane, webs_of

_EXEC_REGS = {("s", SPECIAL_PAIRS["exec"]), ("s", SPECIAL_PAIRS["exec"] + 1)}


def default_move(body: Body, i: int) -> int | None:
    """The VGPR a `v_mov_b32_e32 vD, K` of a constant K at i writes."""
    ins = body.instructions[i]
    if ins.mnemonic != "v_mov_b32_e32" or ins.modifiers or len(ins.operands) != 2:
        return None
    dst, src = ins.operands
    if dst.kind != "vgpr" or dst.count != 1 or src.kind not in ("imm", "float", "literal"):
        return None
    return dst.index


def is_guard(ins: Instruction) -> bool:
    """`ins` saves EXEC and masks it with an SGPR pair: `s_and_saveexec_b64 sA, m`."""
    return ins.mnemonic == "s_and_saveexec_b64" and len(ins.operands) == 2 and ins.operands[1].sgpr_range() is not None


def restores(ins: Instruction, saved: frozenset) -> bool:
    """`ins` restores EXEC from the pair `saved`: `s_or_b64 exec, exec, sA`."""
    return ins.mnemonic == "s_or_b64" and [operand_regs(op) for op in ins.operands] == [_EXEC_REGS, _EXEC_REGS, saved]


def masked_region(body: Body, x: int) -> tuple[int, int, int] | None:
    """(G, then block, join block) when block x heads a masked region: it ends with G, `s_and_saveexec_b64`
    (then `s_cbranch_execz` to the join, or not); its next block is the region, which falls through to the
    join, entered only from the two, whose first instruction restores EXEC from G's saved pair."""
    cfg = body.cfg
    if x + 2 >= len(cfg.blocks):
        return None
    blk, then, join = cfg.blocks[x], cfg.blocks[x + 1], cfg.blocks[x + 2]
    g = blk.end - 2 if body.instructions[blk.end - 1].mnemonic == "s_cbranch_execz" else blk.end - 1
    gi, ji = body.instructions[g], body.instructions[join.start]
    if not is_guard(gi):
        return None
    if set(blk.succs) - {x + 1, x + 2} or then.succs != [x + 2] or set(join.preds) != {x, x + 1}:
        return None
    saved = operand_regs(gi.operands[0])
    if not restores(ji, saved):
        return None
    if any(saved & body.infos[j].defs for j in range(then.start, then.end)):
        return None
    return g, x + 1, x + 2


def _masked_write(body: Body, i: int, reg: tuple[str, int], members: set[int]) -> int | None:
    """The W of the module docstring for M at i, along the straight path from i: through whole masked regions
    that neither read nor write `reg` (EXEC is the same after each), to the first region whose block writes
    it (its only access there, masked by a pair the loop never writes); None when the path branches
    otherwise, or reads or writes `reg` or writes EXEC on the way."""
    cfg, infos = body.cfg, body.infos
    touches = lambda j: reg in infos[j].uses | infos[j].defs
    x, start = cfg.block_of[i], i + 1
    while True:
        d = masked_region(body, x)
        if d is None:
            return None
        g, then, join = d[0], cfg.blocks[d[1]], cfg.blocks[d[2]]
        if any(touches(j) or infos[j].defs & _EXEC_REGS for j in range(start, g)):
            return None
        if not any(touches(j) for j in range(then.start, then.end)):
            x, start = join.index, join.start + 1
            continue
        writes = [j for j in range(then.start, then.end) if reg in infos[j].defs]
        if len(writes) != 1 or any(reg in infos[j].uses for j in range(then.start, then.end)):
            return None
        if any(infos[j].defs & _EXEC_REGS for j in range(then.start, writes[0])):
            return None  # W must write all of E & m
        if any(operand_regs(body.instructions[g].operands[1]) & infos[j].defs for j in members):
            return None
        w = writes[0]
        return None if reads_destination(body.instructions[w], body.processor) else w


def hoist_masked_default(body: Body, i: int) -> Body | None:
    """Move the masked-off lanes' default at i (the module docstring's M) to the end of its innermost loop's
    preheader; None unless every condition there holds."""
    vd = default_move(body, i)
    if vd is None:
        return None
    cfg, reg = body.cfg, ("v", vd)
    if masked_region(body, cfg.block_of[i]) is None:  # the cheap test first: most constant moves head no region
        return None
    loop = cfg.innermost_loop(cfg.block_of[i])
    if loop is None:
        return None
    members = {j for x in loop.blocks for j in range(cfg.blocks[x].start, cfg.blocks[x].end)}
    w = _masked_write(body, i, reg, members)
    if w is None or any(reg in body.infos[j].defs for j in members - {i, w}):
        return None
    if any(reg in info.uses and cross_lane(ins) for ins, info in zip(body.instructions, body.infos)):
        return None  # it may read lanes outside EXEC, which the hoisted move writes and M did not
    p = cfg.preheader(loop)
    if p is None:
        return None
    pre = cfg.blocks[p]
    try:
        if (webs_of(body).live_after[pre.end - 1] >> vd) & 1:
            return None
    except NotAnalysable:
        return None
    at = body.pos[pre.end - 1] + (0 if body.instructions[pre.end - 1].is_branch else 1)  # before its branch
    hoisted = make_item(body.items[body.pos[i]].text)
    items = list(body.items)
    del items[body.pos[i]]
    items.insert(at if at < body.pos[i] else at - 1, hoisted)
    new = body.replace(items)
    k = next(n for n, ins in enumerate(new.instructions) if new.items[new.pos[n]] is hoisted)
    g = next(n for n in range(len(new.instructions)) if new.items[new.pos[n]] is body.items[body.pos[i + 1]])
    try:
        if not lanes_of(new).covers(k, g):
            return None
    except NotAnalysable:
        return None
    return new if new.no_worse(body) else None


def hoist_masked_defaults(body: Body, i: int) -> Body | None:
    """`hoist_masked_default` at i, then at every other default of the same loop; None unless the one at i
    moves."""
    new = hoist_masked_default(body, i)
    if new is None:
        return None
    loop = body.cfg.innermost_loop(body.cfg.block_of[i])
    back = body.items[body.pos[body.cfg.blocks[loop.latches[0]].end - 1]]  # the loop's back branch stays put
    while True:
        cfg = new.cfg
        latch = next(b.index for b in cfg.blocks if b.end > b.start and new.items[new.pos[b.end - 1]] is back)
        blocks = next(lp.blocks for lp in cfg.loops() if latch in lp.latches)
        sites = (j for x in sorted(blocks) for j in range(cfg.blocks[x].start, cfg.blocks[x].end))
        step = next((r for j in sites if default_move(new, j) is not None
                     and (r := hoist_masked_default(new, j)) is not None), None)
        if step is None:
            return new
        new = step
